"""core.lab.heads (lesson 4's computation) against an independent numpy computation of multi-head attention."""
from __future__ import annotations

import numpy as np
import pytest
import torch

import core
from core.lab import heads


def numpy_multi_head(x: np.ndarray, module, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Output (n, d) and weights (h, n, n) written out in numpy from the module's weights, head by head."""
    p = {name: core.to_numpy(t) for name, t in module.state_dict().items()}
    h, d_k = module.n_heads, module.d_k
    q, k, v = (x @ p[f"{m}_proj.weight"].T + p[f"{m}_proj.bias"] for m in "qkv")  # (n, d) each
    outs, weights = [], []
    for i in range(h):
        cols = slice(i * d_k, (i + 1) * d_k)
        s = np.where(keep, q[:, cols] @ k[:, cols].T / np.sqrt(d_k), -np.inf)  # (n, n)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        w = e / e.sum(axis=1, keepdims=True)
        weights.append(w)
        outs.append(w @ v[:, cols])  # (n, d_k)
    out = np.concatenate(outs, axis=1) @ p["out_proj.weight"].T + p["out_proj.bias"]  # (n, d)
    return out, np.stack(weights)


@pytest.mark.parametrize("mask_kind", ["none", "causal", "padding", "both"])
def test_multi_head_matches_numpy(mask_kind):
    tokens, n_pad, d_model, h, seed = ("time", "flies", "like", "time"), 2, 24, 3, 7
    R = heads.multi_head(tokens, n_pad, d_model, h, seed, mask_kind)
    n = len(tokens) + n_pad
    keep = np.ones((n, n), dtype=bool)
    if mask_kind in ("causal", "both"):
        keep &= np.tril(keep)
    if mask_kind in ("padding", "both"):
        keep[:, len(tokens):] = False
    np.testing.assert_array_equal(R["keep"], keep.astype(float))
    out, weights = numpy_multi_head(R["x"], heads.seeded_attention(d_model, h, seed), keep)
    np.testing.assert_allclose(R["out"], out, atol=2e-5)
    np.testing.assert_allclose(R["weights"], weights, atol=2e-6)
    assert R["rebuild_error"] < 1e-5
    assert R["shapes"]["view"] == (1, n, h, d_model // h) and R["shapes"]["split"] == (1, h, n, d_model // h)
    assert sum(c for _, _, c in R["params"]) == 4 * d_model**2 + 4 * d_model


def test_input_is_tokens_plus_sinusoids_and_repeats_share_a_vector():
    R = heads.multi_head(("a", "b", "a"), 0, 8, 2, 3, "none")
    pos = np.array([[np.sin(p / 10000 ** (2 * (j // 2) / 8)) if j % 2 == 0 else np.cos(p / 10000 ** (2 * (j // 2) / 8))
                     for j in range(8)] for p in range(3)])
    e = R["x"] - pos  # the token vectors alone
    np.testing.assert_allclose(e[0], e[2], atol=1e-6)
    assert not np.allclose(e[0], e[1])


def test_seeded_attention_is_reproducible_and_leaves_the_global_generator():
    before = torch.random.get_rng_state()
    a, b = heads.seeded_attention(16, 4, 5), heads.seeded_attention(16, 4, 5)
    assert torch.equal(torch.random.get_rng_state(), before)
    for (name, p), q in zip(a.named_parameters(), b.parameters()):
        assert torch.equal(p, q)
        if name.endswith("bias"):
            assert p.abs().max() <= heads.BIAS and p.abs().max() > 0
    assert not torch.equal(a.q_proj.weight, heads.seeded_attention(16, 4, 6).q_proj.weight)


def test_head_summary_by_hand():
    w = np.array([[[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]],
                  [[0.0, 0.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 1.0]]])  # (h=2, n=3, n)
    s = heads.head_summary(w, n_real=2)
    np.testing.assert_allclose(s["entropy"], [np.log(2) / 2, 0.0], atol=1e-12)
    np.testing.assert_allclose(s["distance"], [0.25, 1.5], atol=1e-12)  # head 1: |0-0|·1, |1-0|·.5; head 2: 2, 1
    np.testing.assert_allclose(s["self_weight"], [0.75, 0.0])
    assert s["favourite"].tolist() == [0, 2]


def test_every_step_has_its_live_shape_and_the_symbols_agree():
    R = heads.multi_head(("a", "b", "c"), 1, 12, 3, 0, "both")
    assert [name for name, _, _ in heads.STEPS] == list(R["shapes"])
    sizes = {"b": 1, "n": 4, "d_model": 12, "h": 3, "d_k": 4}
    for name, _, symbolic in heads.STEPS:
        assert R["shapes"][name] == tuple(sizes[s.strip()] for s in symbolic.strip("()").split(",")), name
