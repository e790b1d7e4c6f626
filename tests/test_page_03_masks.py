"""Lesson 3 (masks): the mask conventions against PyTorch, the pattern counts, the cost chart, and the page through
AppTest (the course's causal weights, the live batch against plain torch/numpy, controls, extremes, bad input).

Reference numbers are rebuilt here with numpy and plain torch, independently of the page's code path.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import core
from core.lab import mask_conventions as conv
from core.lab.analysis import toy_embeddings
from core.masks import causal_mask, decoder_mask, global_local_mask, sliding_window_mask, to_block_mask, to_tf_mask
from ui import charts
from ui.i18n import number, t
from conftest import lesson_opener, widget
from widgets import heatmaps, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "03_masks.py"
SCORES = np.array([[0.9, 0.7, 0.3, 0.2], [0.6, 0.8, 0.9, 0.4], [0.2, 0.5, 0.7, 0.9], [0.4, 0.3, 0.8, 0.6]])
BATCH = [["I", "love", "deep", "learning"], ["attention", "is", "all", "you", "need"], ["hello", "world"]]


def softmax_rows(masked: np.ndarray) -> np.ndarray:
    """Row softmax of a matrix with -inf entries; an all -inf row gives zeros."""
    top = np.max(masked, axis=-1, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    e = np.exp(masked - top)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total > 0, total, 1.0)


def course_causal_weights() -> np.ndarray:
    """Row i: softmax over j <= i of the course's fixed scores, 0 elsewhere (a loop, to stay independent)."""
    w = np.zeros((4, 4))
    for i in range(4):
        e = np.exp(SCORES[i, :i + 1] - SCORES[i, :i + 1].max())
        w[i, :i + 1] = e / e.sum()
    return w


def live_reference(sentences, d_model, heads, seed, kind):
    """Scores and weights (batch, h, n, n) of the page's live batch, by plain torch/numpy from the same seed."""
    n = max(map(len, sentences))
    tokens = [s + ["PAD"] * (n - len(s)) for s in sentences]
    x = toy_embeddings([w for s in tokens for w in s], d_model, seed).double().view(len(sentences), n, d_model)
    mha = core.init_parameters(core.MultiHeadAttention(d_model, heads), seed)
    d_k = d_model // heads

    def project(linear):
        y = x @ linear.weight.double().T + linear.bias.double()  # (b, n, d)
        return y.view(len(sentences), n, heads, d_k).transpose(1, 2)  # (b, h, n, d_k)

    scores = (project(mha.q_proj) @ project(mha.k_proj).transpose(-1, -2) / math.sqrt(d_k)).detach().numpy()
    keep = np.ones((len(sentences), n, n), dtype=bool)
    if kind in ("causal", "both"):
        keep &= np.tril(np.ones((n, n), dtype=bool))
    if kind in ("padding", "both"):
        keep &= np.array([[j < len(s) for j in range(n)] for s in sentences])[:, None, :]
    masked = np.where(keep[:, None], scores, -np.inf)
    return tokens, keep, scores, softmax_rows(masked)


start = lesson_opener("lessons/03_masks.py")


STEPS = ("scores", "mask", "additive", "masked", "weights")  # ui.mask_views.show_steps' panels, in order


def numbers(at: AppTest, key: str) -> np.ndarray:
    """The "show the numbers" table of the matrix panel `key`, as numbers."""
    return table(at, f"{key}_numbers").to_numpy(dtype=float)


def steps(at: AppTest, key: str) -> list[np.ndarray]:
    """The five steps' tables of `show_steps(..., key)`: "masks_ex" (the course's example) or "masks_live"."""
    return [numbers(at, f"{key}_{name}") for name in STEPS]


def chart_matrices(at: AppTest) -> list[np.ndarray]:
    """Every matrix panel's matrix, as computed (the values its SVG carries, ui/charts/svg.py)."""
    return [h.matrix for h in heatmaps(at)]


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


# ---- core: conventions, counts; ui: the cost chart ---------------------------------------------------

@pytest.mark.parametrize("kind", ["none", "causal", "padding", "both"])
def test_three_conventions_give_pytorch_weights(kind):
    g = torch.Generator().manual_seed(3)
    batch, n, d = 3, 6, 8
    ids = torch.tensor([[5, 6, 7, 8, 9, 4], [5, 6, 7, 0, 0, 0], [9, 0, 0, 0, 0, 0]])  # 0 = PAD
    x = torch.randn(batch, n, d, generator=g, dtype=torch.float64)
    causal, padding = kind in ("causal", "both"), kind in ("padding", "both")
    keep = torch.ones(batch, 1, n, n, dtype=torch.bool)
    keep = keep & causal_mask(n) if causal else keep
    keep = keep & (ids != 0)[:, None, None, :] if padding else keep
    attn_mask = conv.torch_attn_mask(n) if causal else None
    key_padding = conv.torch_key_padding_mask(ids, 0) if padding else None
    tf = torch.zeros(1, 1, n, n, dtype=torch.float64)
    if causal:
        tf = torch.maximum(tf, conv.tf_look_ahead_mask(n).double())
    if padding:
        tf = torch.maximum(tf, conv.tf_padding_mask(ids, 0).double())
    # PyTorch's own attention, fed the PyTorch-convention masks; identity projections so the scores are x xᵀ / √d
    mha = torch.nn.MultiheadAttention(d, 1, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        mha.in_proj_weight.copy_(torch.eye(d).repeat(3, 1))
        mha.in_proj_bias.zero_()
    _, reference = mha(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding, need_weights=True)
    scores = (x @ x.transpose(-1, -2) / math.sqrt(d))[:, None]  # (batch, 1, n, n)
    got = [conv.keep_convention_weights(scores, keep), conv.tf_convention_weights(scores, tf),
           conv.torch_convention_weights(scores, attn_mask, key_padding)]
    for w in got:
        torch.testing.assert_close(w[:, 0], reference, rtol=0, atol=1e-12)
    assert torch.equal(got[0], got[1]) and torch.equal(got[0], got[2])  # exactly the same, not just close
    assert torch.equal(tf.expand(batch, 1, n, n), to_tf_mask(keep))
    if causal and padding:
        assert torch.equal(conv.tf_combined_mask(ids, 0), to_tf_mask(decoder_mask(ids, 0)))
    if causal:
        assert torch.equal(attn_mask, to_block_mask(causal_mask(n)))


def test_an_all_blocked_row_is_where_the_conventions_differ():
    scores = torch.tensor([[0.9, 0.7, 0.3], [0.6, 0.8, 0.9]])
    keep = torch.tensor([[True, False, False], [False, False, False]])
    minus_big = conv.keep_convention_weights(scores, keep)
    minus_inf = core.softmax(core.apply_mask(scores, keep))
    torch.testing.assert_close(minus_big[1], torch.full((3,), 1 / 3))  # -1e9 everywhere: a uniform, meaningless row
    assert torch.equal(minus_inf[1], torch.zeros(3))  # -inf with core's softmax: zeros, not NaN
    assert torch.isnan(torch.softmax(core.apply_mask(scores, keep), -1)[1]).all()  # a plain softmax: NaN
    assert torch.equal(minus_big[0], minus_inf[0]) and minus_inf[0, 0] == 1.0


@pytest.mark.parametrize("n", [1, 2, 7, 30])
def test_closed_form_counts_match_the_masks(n):
    for width in range(0, 5):
        for dilation in (1, 2, 3):
            assert torch.equal(conv.window_kept_per_row(n, width, dilation),
                               sliding_window_mask(n, width, dilation).sum(-1))
        for globals_ in ([0], [0, n - 1], [n // 2, 0], list(range(min(4, n))), [], list(range(n + 3))):
            got = conv.global_local_kept_per_row(n, width, globals_)
            mask = global_local_mask(n, width, globals_) if globals_ else sliding_window_mask(n, width)
            assert torch.equal(got, mask.sum(-1)), (n, width, globals_)
    assert int(conv.window_kept_per_row(8192, 2).sum()) == 8192 * 5 - 6  # 2w + 1 per row, minus the edges


def test_growth_lines_is_log_log_with_every_point():
    chart = charts.growth_lines([16, 32, 64], {"full": [256, 1024, 4096], "window": [70, 150, 310]},
                                x_title="n", y_title="cost", title="Cost")
    spec = chart.to_dict()
    enc = spec["layer"][0]["encoding"]
    assert enc["x"]["scale"]["type"] == "log" and enc["y"]["scale"]["type"] == "log"
    data = next(iter(spec["datasets"].values()))
    assert len(data) == 6 and {row["series"] for row in data} == {"full", "window"}
    assert spec["title"]["text"] == "Cost"


# ---- the page ----------------------------------------------------------------------------------------

def test_defaults_show_the_course_causal_weights():
    at = start()
    assert_clean(at)
    assert not at.error and not at.warning
    assert at.session_state["cfg_mask"] == "none"  # the page does not change the shared setting by itself
    scores, mask, additive, masked, weights = steps(at, "masks_ex")
    want = course_causal_weights()
    np.testing.assert_allclose(scores, SCORES, atol=1e-12)
    np.testing.assert_array_equal(mask, np.tril(np.ones((4, 4))))
    np.testing.assert_array_equal(additive, np.where(np.tril(np.ones((4, 4))) > 0, 0.0, -np.inf))
    np.testing.assert_array_equal(masked, np.where(np.tril(np.ones((4, 4))) > 0, SCORES, -np.inf))
    np.testing.assert_allclose(weights, want, atol=1e-12)
    np.testing.assert_allclose(weights.sum(axis=1), 1.0, atol=1e-12)
    assert np.all(weights[np.triu_indices(4, 1)] == 0.0)  # blocked entries exactly 0
    assert weights[0, 0] == 1.0 and weights[1, 0] == pytest.approx(0.45016600268752216)
    shown = table(at, "masks_ex_weights_numbers")
    assert list(shown.index) == ["I", "love", "deep", "learning"] == list(shown.columns)
    charted = chart_matrices(at)[:5]  # the pictures carry the same numbers
    np.testing.assert_allclose(charted[4], want, atol=1e-12)
    np.testing.assert_array_equal(charted[2], additive)


def test_live_batch_matches_plain_torch_and_numpy():
    at = start(cfg_mask="both", cfg_seed=5, masks_part="batch")
    widget(at, "selectbox", "masks_sentence").set_value(2)
    widget(at, "selectbox", "masks_head").set_value(3).run()
    assert_clean(at)
    tokens, keep, scores, weights = live_reference(BATCH, 64, 4, 5, "both")
    grid = table(at, "masks_grid")
    assert grid.to_numpy().tolist() == tokens
    key_mask, live = numbers(at, "masks_key_mask"), steps(at, "masks_live")
    np.testing.assert_array_equal(key_mask, [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    np.testing.assert_allclose(live[0], scores[2, 3], atol=2e-5)
    np.testing.assert_array_equal(live[1], keep[2].astype(float))
    np.testing.assert_allclose(live[4], weights[2, 3], atol=2e-5)
    assert np.all(live[4][~keep[2]] == 0.0) and np.all(live[4][:, 2:] == 0.0)  # PAD columns exactly 0
    np.testing.assert_allclose(live[4].sum(axis=1), 1.0, atol=1e-6)
    assert list(table(at, "masks_live_masked_numbers").index) == ["hello", "world", "PAD", "PAD (2)", "PAD (3)"]
    edge = numbers(at, "masks_edge")  # the all-blocked row: torch.softmax NaN, core.softmax zeros
    assert np.isnan(edge[0]).all() and np.array_equal(edge[1], np.zeros(5))
    assert any("IGNORE_INDEX = -100" in m.value and "**0**" in m.value for m in at.markdown)  # no NaN in the batch
    widget(at, "radio", "masks_part").set_value("conventions").run()  # the same sentence, written three ways
    assert_clean(at)
    assert len(at.dataframe) == 3  # the three conventions' tables, no other: same picture, opposite numbers
    keep_conv, tf_conv, torch_conv = (numbers(at, f"masks_conv_{name}") for name in ("keep", "tf", "torch"))
    np.testing.assert_array_equal(keep_conv, keep[2].astype(float))
    np.testing.assert_array_equal(tf_conv, 1.0 - keep_conv)
    np.testing.assert_array_equal(torch_conv, 1.0 - keep_conv)
    assert at.success and at.success[0].value == t("masks.conv_agree", diff=0.0)


def test_controls_change_what_is_shown():
    at = start(masks_part="batch")
    before = steps(at, "masks_live")
    assert not [s for s in at.main.selectbox if s.label == t("sidebar.mask")]  # the mask is the sidebar's setting
    at.session_state["cfg_mask"] = "causal"  # as the sidebar sets it
    widget(at, "selectbox", "masks_head").set_value(1).run()
    assert_clean(at)
    assert at.session_state["cfg_mask"] == "causal"
    after = steps(at, "masks_live")
    np.testing.assert_array_equal(after[1], np.tril(np.ones((5, 5))))
    assert not np.allclose(after[0], before[0])  # another head, other scores
    assert not np.allclose(after[4], before[4])  # and other weights
    widget(at, "radio", "masks_part").set_value("example").run()
    np.testing.assert_allclose(numbers(at, "masks_ex_weights"), course_causal_weights())  # the example stays causal
    widget(at, "radio", "masks_part").set_value("patterns").run()
    i, j = np.indices((8, 8))  # efficient patterns at n = 8, compared with numpy: first a window of 2
    np.testing.assert_array_equal(numbers(at, "masks_pattern_mask"), np.abs(i - j) <= 2)
    assert any("34" in m.value and "64" in m.value for m in at.markdown)
    assert all(s.label != t("sidebar.seq_len") for s in at.main.slider)  # n is the sidebar's sequence length
    at.session_state["masks_dilation"] = 3
    widget(at, "selectbox", "masks_pattern").set_value("dilated").run()
    np.testing.assert_array_equal(numbers(at, "masks_pattern_mask"), (np.abs(i - j) <= 6) & ((i - j) % 3 == 0))
    at.session_state["masks_globals"] = 2
    widget(at, "selectbox", "masks_pattern").set_value("global")
    at.slider(key="masks_width").set_value(1).run()
    assert_clean(at)
    np.testing.assert_array_equal(numbers(at, "masks_pattern_mask"), (np.abs(i - j) <= 1) | (i < 2) | (j < 2))
    assert at.slider(key="masks_globals").value == 2


LONG = " ".join(f"wörd{k}😀" for k in range(64))


@pytest.mark.parametrize("path, lang, settings, batch, pattern", [
    (APP, "es", {"cfg_d_model": 512, "cfg_heads": 16, "cfg_seq_len": 64, "cfg_mask": "both"},
     f"{LONG}\nñandú café\n¿qué?\nx", ("global", 8, 4)),
    (PAGE, "en", {"cfg_d_model": 8, "cfg_heads": 8, "cfg_seq_len": 2, "cfg_mask": "padding"},
     "é\n😀 🙂 👍", ("dilated", 1, 4)),
    (APP, "en", {"cfg_d_model": 8, "cfg_heads": 1, "cfg_seq_len": 64, "cfg_mask": "causal"},
     "same length\ntwo words", ("window", 8, 2)),
], ids=["largest-es", "smallest-en", "no-pad"])
def test_extremes_of_the_controls(path, lang, settings, batch, pattern):
    kind, width, extra = pattern
    state = {**settings, "masks_batch_text": batch, "masks_pattern": kind, "masks_width": width,
             "masks_dilation" if kind == "dilated" else "masks_globals": extra}
    at = start(path, lang=lang, numbers=True, masks_part="batch", **state)
    assert_clean(at)
    assert at.title[0].value == t("masks.title", lang=lang)
    assert not at.error and not at.warning
    n = min(64, settings["cfg_seq_len"])
    live_weights = table(at, "masks_live_weights_numbers").to_numpy(dtype=float)  # 64 x 64: a picture, its numbers
    assert not np.isnan(live_weights).any()
    np.testing.assert_allclose(live_weights.sum(axis=1), 1.0, atol=1e-5)
    if "same length" in batch:
        assert at.info and any(i.value == t("masks.no_pad", lang=lang) for i in at.info)
    if n == 2:  # one-token and three-token sentences cut to 2 tokens: a message says so
        assert any(i.value == t("masks.truncated", lang=lang, seq_len=2) for i in at.info)
        assert chart_matrices(at)[0].shape == (2, 2)
    for part in ("conventions", "patterns"):
        widget(at, "radio", "masks_part").set_value(part).run()
        assert_clean(at)
        assert not at.error and not at.warning
    assert table(at, "masks_pattern_mask_numbers").shape == (n, n)  # the pattern


def test_bad_batch_warns_and_keeps_the_last_valid_one():
    at = start(lang="es", numbers=True, masks_part="batch")
    first = table(at, "masks_grid")
    for text in ("", "only one sentence", "a\nb\nc\nd\ne"):
        at.text_area(key="masks_batch_text").set_value(text).run()
        assert_clean(at)
        assert len(at.warning) == 1 and "I love deep learning" in at.warning[0].value
        assert table(at, "masks_grid").equals(first)  # the last valid batch stays on screen
        assert at.session_state["masks_batch_text"] == text  # and what the learner typed is kept, to be fixed
    at.text_area(key="masks_batch_text").set_value("one two three\nfour").run()
    grid = table(at, "masks_grid").to_numpy().tolist()
    assert not at.warning and grid == [["one", "two", "three"], ["four", "PAD", "PAD"]]


def test_spanish_numbers_have_a_decimal_comma_and_thousands_points():
    at = start(lang="es", numbers=False, masks_part="patterns")  # n = 8, a window of 2: 34 of 64 entries kept
    assert_clean(at)
    assert any("34 de 64 (53,1\u00a0%)" in m.value for m in at.markdown)  # RAE: a space before %
    full, kept = 8192 ** 2, 8192 * 5 - 6  # full attention and the window's count at the chart's largest n
    assert any("n = 8192" in c.value and "67.108.864" in c.value and "40.954" in c.value
               and f"unas {number(full / kept, ',.0f', 'es')} veces" in c.value for c in at.caption)
