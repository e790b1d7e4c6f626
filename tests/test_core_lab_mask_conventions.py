"""core.lab.mask_conventions' lesson-3 helpers (the three conventions at once, patterns, the batch parser, the
all-blocked row) against masks written out by hand and torch's own nn.MultiheadAttention."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core.lab import heads, mask_conventions as conv

IDS = torch.tensor([[5, 6, 7, 8], [5, 6, 0, 0], [9, 0, 0, 0]])  # 0 = PAD


def hand_keep(kind: str) -> np.ndarray:
    """(batch, n, n) keep-masks written from the definitions."""
    real = (IDS != 0).numpy()
    keep = np.ones((3, 4, 4), dtype=bool)
    if kind in ("causal", "both"):
        keep &= np.tril(np.ones((4, 4), dtype=bool))
    if kind in ("padding", "both"):
        keep &= real[:, None, :]
    return keep


@pytest.mark.parametrize("kind", ["none", "causal", "padding", "both"])
def test_three_conventions_write_one_mask_three_ways_and_match_torch(kind):
    x = torch.randn(3, 4, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)  # (b, n, d)
    scores = (x @ x.transpose(-1, -2) / math.sqrt(8))[:, None]  # (b, 1, n, n)
    found = conv.three_conventions(scores, IDS, kind, 0)
    keep = hand_keep(kind)
    np.testing.assert_array_equal(found.masks[0][:, 0].numpy(), keep)
    np.testing.assert_array_equal(found.masks[1][:, 0].numpy(), ~keep)  # TensorFlow: 1.0 = blocked
    np.testing.assert_array_equal(found.masks[2][:, 0].numpy(), ~keep)  # PyTorch: True = blocked
    assert found.converters_agree
    mha = torch.nn.MultiheadAttention(8, 1, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(8).repeat(3, 1))
        mha.in_proj_bias.zero_()
    causal = torch.ones(4, 4, dtype=torch.bool).triu(1) if kind in ("causal", "both") else None
    pad = IDS == 0 if kind in ("padding", "both") else None
    _, reference = mha(x, x, x, attn_mask=causal, key_padding_mask=pad, need_weights=True)
    for w in found.weights:
        torch.testing.assert_close(w[:, 0], reference, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind, width, dilation, n_global", [("window", 2, 1, 1), ("dilated", 3, 2, 1),
                                                             ("global", 1, 1, 2), ("global", 1, 1, 9)])
def test_patterns_and_their_counts(kind, width, dilation, n_global):
    n = 7
    i, j = np.indices((n, n))
    want = (np.abs(i - j) <= width * (dilation if kind == "dilated" else 1))
    if kind == "dilated":
        want &= (i - j) % dilation == 0
    if kind == "global":
        want |= (i < n_global) | (j < n_global)
    np.testing.assert_array_equal(conv.pattern_mask(kind, n, width, dilation, n_global).numpy(), want)
    ns = (1, 2, 7, 30)
    assert conv.pattern_kept(kind, ns, width, dilation, n_global) == [
        int(conv.pattern_mask(kind, m, width, dilation, n_global).sum()) for m in ns]


def test_parse_batch_says_what_is_wrong():
    assert conv.parse_batch("a b\n\n  c ", 2, 4, 100) == ([["a", "b"], ["c"]], None)
    assert conv.parse_batch("one line", 2, 4, 100)[1] == "count"
    assert conv.parse_batch("a\nb\nc\nd\ne", 2, 4, 100)[1] == "count"
    assert conv.parse_batch("a\nb" + " " * 200, 2, 4, 100)[1] == "too_long"


def test_mask_shapes_broadcast_against_the_scores():
    assert conv.mask_shapes(IDS, 0) == {"padding": (3, 1, 1, 4), "causal": (1, 1, 4, 4), "both": (3, 1, 4, 4)}


def test_the_first_pad_query_with_every_key_blocked():
    scores = torch.arange(16.0).view(4, 4)
    edge = conv.blocked_query_row(scores, IDS[1], 0)  # sentence 2: the first PAD query is position 3
    assert torch.isnan(edge[0]).all() and torch.equal(edge[1], torch.zeros(4))


def test_batch_attention_pads_masks_and_attends():
    B = heads.batch_attention([["a", "b", "c"], ["d"]], "PAD", 8, 2, 0, "both")
    assert B.tokens == [["a", "b", "c"], ["d", "PAD", "PAD"]]
    assert B.ids.tolist() == [[1, 2, 3], [4, 0, 0]]
    keep = np.tril(np.ones((3, 3), dtype=bool))
    np.testing.assert_array_equal(B.keep.numpy(), [keep, keep & [True, False, False]])
    w = B.steps["weights"]  # (2, h, 3, 3)
    assert w.shape == (2, 2, 3, 3) and torch.all(w[~B.keep[:, None].expand_as(w)] == 0)
    torch.testing.assert_close(w.sum(-1), torch.ones(2, 2, 3))
    assert heads.batch_attention([["a"], ["b"]], "PAD", 8, 2, 0, "none").keep.all()
