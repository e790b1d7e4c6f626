"""Lesson 7 (lessons/07_blocks.py) through AppTest: it runs everywhere, and the numbers it shows are right.

The FFN and dropout numbers are rebuilt here with plain torch/numpy from the same seed (the weights by
redoing core.init_parameters' draws by hand); shapes and parameter counts are checked against real modules.
"""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

import core
from core.lab.analysis import toy_embeddings
from ui.i18n import number as written, t
from conftest import lesson_opener, widget
from widgets import heatmaps, pictures, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "07_blocks.py"
WORDS = ["time", "flies", "like", "an", "arrow"]
TARGET = ["el", "tiempo", "vuela", "como", "una", "flecha"]
# The tables of each part by name: their keys (a matrix panel's numbers are "<panel key>_numbers"; the shapes
# table is keyed by the layer kind on screen); the lesson draws one part at a time (setting "blocks_part").
FRAMES = {"ffn": {"X": "blk_X_numbers", "pre": "blk_pre_numbers", "hidden": "blk_hidden_numbers",
                  "Y": "blk_ffn_out_numbers"},
          "dropout": {"mask": "blk_mask_numbers", "dropped": "blk_dropped_numbers"},
          "residual": {"residual": "blk_residual_numbers"},
          "layers": {"shapes": "blk_shapes_{kind}", "traced": "blk_traced_numbers"}, "gpt2": {}}

start = lesson_opener("lessons/07_blocks.py")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


def frames(at: AppTest) -> dict[str, np.ndarray]:
    """The tables of the part on screen, by name, found by their keys."""
    keys = FRAMES[at.session_state["blocks_part"]]
    assert len(at.dataframe) == len(keys)  # the part's tables and no other
    if "shapes" in keys:
        keys = {**keys, "shapes": keys["shapes"].format(kind=at.session_state["blk_trace_kind"])}
    return {name: table(at, key) for name, key in keys.items()}


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick a part with the lesson's part selector."""
    widget(at, "radio", "blocks_part").set_value(part).run()
    assert_clean(at)
    return at


def every_frame(at: AppTest) -> dict[str, np.ndarray]:
    """The tables of every part, opening each part in turn."""
    return {name: table for part in FRAMES for name, table in frames(open_part(at, part)).items()}


def matrix(at: AppTest, name: str) -> np.ndarray:
    return frames(at)[name].to_numpy(dtype=float)


def xavier(generator: torch.Generator, rows: int, cols: int) -> np.ndarray:
    """What nn.init.xavier_uniform_ draws for a (rows, cols) weight, by hand."""
    bound = math.sqrt(6.0 / (rows + cols))
    return torch.empty(rows, cols).uniform_(-bound, bound, generator=generator).double().numpy()


def reference_ffn(words, d_model: int, d_ff: int, activation: str, seed: int):
    """X, X W1ᵀ, act(X W1ᵀ), FFN(X) in numpy; core.init_parameters draws W1 then W2 and zeroes the biases."""
    g = torch.Generator().manual_seed(seed)
    w1, w2 = xavier(g, d_ff, d_model), xavier(g, d_model, d_ff)  # nn.Linear layout (out, in)
    x = toy_embeddings(list(words), d_model, seed).double().numpy()  # (n, d_model)
    pre = x @ w1.T  # (n, d_ff)
    if activation == "relu":
        hidden = np.maximum(pre, 0.0)
    else:
        hidden = pre * 0.5 * (1.0 + np.vectorize(math.erf)(pre / math.sqrt(2.0)))
    return x, pre, hidden, hidden @ w2.T


def seeded(factory, seed):
    with torch.random.fork_rng(devices=[]):
        module = factory()
    return core.init_parameters(module, seed).eval()


def number(text: str) -> int:
    return int(re.sub(r"[^\d]", "", text))


@pytest.mark.parametrize("path, lang", [(APP, "en"), (APP, "es"), (PAGE, "es")], ids=["app-en", "app-es", "page-es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False)
    if path == APP:
        at.switch_page("lessons/07_blocks.py").run()
    assert_clean(at)
    assert at.title[0].value == t("blocks.title", lang=lang)
    assert not at.error and not at.warning
    assert not at.dataframe and pictures(at)  # the FFN part first; numbers tables only when asked for
    assert widget(at, "radio", "blocks_part").label == t("blocks.part", lang=lang)
    open_part(at, "layers")
    assert len(at.dataframe) == 1  # the shapes table
    assert widget(at, "radio", "blk_trace_kind").label == t("blocks.trace_kind", lang=lang)


@pytest.mark.parametrize("activation, ratio", [("relu", 4), ("gelu", 2)])
def test_ffn_matches_an_independent_computation(activation, ratio):
    at = start(blk_activation=activation, blk_ff_ratio=ratio)
    assert_clean(at)
    want = reference_ffn(WORDS, 64, 64 * ratio, activation, 0)
    for name, expected in zip(("X", "pre", "hidden", "Y"), want):
        np.testing.assert_allclose(matrix(at, name), expected, atol=2e-5, err_msg=name)
    zero = float((want[2] == 0).mean())
    assert at.metric[0].value == f"{zero:.1%}"
    size = f"**{2 * 64 * 64 * ratio + 64 * ratio + 64:,} parameters**"
    assert any(size in m.value for m in at.markdown)


def test_spanish_writes_a_decimal_comma_and_a_thousands_point():
    """Issue 17: the share of zeros (a metric) and the FFN's size (prose) in the reader's marks."""
    at = start(lang="es", numbers=False)
    assert_clean(at)
    zero = float((reference_ffn(WORDS, 64, 256, "relu", 0)[2] == 0).mean())
    assert at.metric[0].value == written(zero, ".1%", "es")
    assert any(f"**{2 * 64 * 256 + 256 + 64:,} parámetros**".replace(",", ".") in m.value for m in at.markdown)


def test_dropout_zeroes_about_p_and_scales_survivors_exactly():
    at = start(blk_dropout=0.5)
    assert_clean(at)
    y = matrix(at, "Y")  # the FFN part: the output that dropout acts on
    open_part(at, "dropout")
    mask, dropped = matrix(at, "mask"), matrix(at, "dropped")
    assert set(np.unique(mask)) == {0.0, 1.0}
    assert 0.35 < 1 - mask.mean() < 0.65  # 320 draws with p = 0.5
    np.testing.assert_array_equal(dropped == 0, mask == 0)
    np.testing.assert_allclose(dropped, y * mask / 0.5, rtol=1e-12, atol=0)
    assert any("**2.0000**" in m.value for m in at.markdown)
    first = mask.copy()
    open_part(at, "residual")
    at.slider(key="blk_layers").set_value(2).run()  # an unrelated control does not redraw
    open_part(at, "dropout")
    np.testing.assert_array_equal(matrix(at, "mask"), first)
    redraw = next(b for b in at.button if b.label == t("blocks.redraw"))
    redraw.click().run()
    assert not np.array_equal(matrix(at, "mask"), first)
    at.toggle(key="blk_train").set_value(False).run()  # eval mode: the identity
    np.testing.assert_array_equal(matrix(at, "dropped"), y)
    assert np.all(matrix(at, "mask") == 1) and at.info


def reference_stream(words, d_model, heads, d_ff, n_layers, seed):
    """Mean token norm per layer, with x + Sublayer(LN(x)) written out here and without the additions."""
    x0 = toy_embeddings(words, d_model, seed)[None]
    with_res, without, out = x0, x0, [[], []]
    with torch.no_grad():
        for i in range(n_layers):
            layer = seeded(lambda: core.EncoderLayer(d_model, heads, d_ff, 0.0, True, "relu"), seed + i)
            attn = lambda h: layer.self_attn(h, h, h)  # noqa: E731
            with_res = with_res + attn(layer.norm_self_attn(with_res))
            with_res = with_res + layer.ff(layer.norm_ff(with_res))
            without = layer.ff(layer.norm_ff(attn(layer.norm_self_attn(without))))
            out[0].append(with_res[0].norm(dim=-1).mean().item())
            out[1].append(without[0].norm(dim=-1).mean().item())
    start_norm = x0[0].norm(dim=-1).mean().item()
    return [start_norm, *out[0]], [start_norm, *out[1]]


def test_residual_stream_norms():
    at = start(blk_layers=3, blocks_part="residual")
    assert_clean(at)
    table = frames(at)["residual"].to_numpy(dtype=float)
    assert table.shape == (4, 5) and list(table[:, 0]) == [0, 1, 2, 3]
    with_res, without = reference_stream(WORDS, 64, 4, 256, 3, 0)
    np.testing.assert_allclose(table[:, 1], with_res, rtol=1e-5)
    np.testing.assert_allclose(table[:, 2], without, rtol=1e-5)
    assert table[-1, 4] > 0.9 > table[-1, 3]  # without residuals the tokens collapse together


def test_traced_tensors_shapes_and_heatmap():
    at = start(blk_trace_kind="decoder", blocks_part="layers")
    assert_clean(at)
    enc = seeded(lambda: core.EncoderLayer(64, 4, 256, 0.1, True, "relu"), 0)
    dec = seeded(lambda: core.DecoderLayer(64, 4, 256, 0.1, True, "relu"), 1)
    x, y = toy_embeddings(WORDS, 64, 0)[None], toy_embeddings(TARGET, 64, 0)[None]
    with torch.no_grad():
        memory, _ = core.hooks.trace(enc, lambda: enc(x))
        _, cache = core.hooks.trace(dec, lambda: dec(y, memory, None, core.causal_mask(6)[None, None]))
    shapes = frames(at)["shapes"]
    want = {"input": (1, 6, 64), "memory": (1, 5, 64)} | {k: tuple(v.shape) for k, v in cache.items()}
    assert dict(zip(shapes.iloc[:, 0], shapes.iloc[:, 1])) == {k: str(v) for k, v in want.items()}
    assert want["cross_attn.hook_k"] == (1, 4, 5, 16) and want["cross_attn.hook_weights"] == (1, 4, 6, 5)
    weights = cache["cross_attn.hook_weights"][0, 0].double().numpy()  # the default pick, head 0
    np.testing.assert_allclose(matrix(at, "traced"), weights, atol=1e-6)
    assert list(frames(at)["traced"].columns) == WORDS and list(frames(at)["traced"].index) == TARGET
    widget(at, "selectbox", "blk_head").set_value(3).run()
    np.testing.assert_allclose(matrix(at, "traced"), cache["cross_attn.hook_weights"][0, 3].numpy(), atol=1e-6)
    widget(at, "selectbox", "blk_tensor_decoder").set_value("self_attn.hook_masked_scores").run()
    assert_clean(at)
    masked = matrix(at, "traced")
    assert np.isneginf(masked[0, 1]) and np.isfinite(np.diag(masked)).all()  # the causal mask, -inf above
    widget(at, "radio", "blk_trace_kind").set_value("encoder").run()
    assert frames(at)["shapes"].shape[0] == 19 and matrix(at, "traced").shape == (5, 64)


def test_sublayers_and_the_gpt2_block():
    at = start(numbers=False, cfg_seed=5, blocks_part="layers")
    assert_clean(at)
    encoder, decoder = at.table[0].value, at.table[1].value  # the residual sub-layers: 2 and 3
    assert len(encoder) == 2 and len(decoder) == 3
    assert list(decoder.iloc[:, 1]) == ["norm_self_attn", "norm_cross_attn", "norm_ff"]
    assert list(decoder.iloc[:, 2]) == ["hook_resid_mid", "hook_resid_cross", "hook_out"]
    texts = [m.value for m in at.markdown]
    assert t("blocks.encoder_sublayers", n=2) in texts and t("blocks.decoder_sublayers", n=3) in texts
    open_part(at, "gpt2")
    block = seeded(lambda: core.DecoderLayer(768, 12, 3072, dropout=0.1, norm_first=True, activation="gelu",
                                             norm_style="torch", bias=False, cross_attention=False), 5)
    total = sum(p.numel() for p in block.parameters())
    with torch.no_grad():
        out = block(torch.randn(2, 4, 768), tgt_mask=core.causal_mask(4)[None, None])
    assert tuple(out.shape) == (2, 4, 768) and total == 7_084_800
    shapes = next(m.value for m in at.markdown if m.value.startswith("Input "))
    assert shapes.startswith("Input (2, 4, 768) → output (2, 4, 768)") and f"**{total:,}**" in shapes
    params = at.table[1].value
    assert number(params.iloc[-1, 0]) == total
    for (name, row) in params.iloc[:-1].iterrows():  # every formula gives its module's count
        formula = row.iloc[1].replace("·", "*").replace("²", "**2")
        assert eval(formula) == number(row.iloc[0]) == sum(p.numel() for p in getattr(block, name).parameters())
    config = at.table[0].value.iloc[:, 0].tolist()
    assert config == ["50,257", "1,024", "768", "12", "12", "3,072", "0.1"]


EXTREMES = {  # the page's controls at both ends, and the shared settings at both ends
    "small": dict(cfg_d_model=8, cfg_heads=1, cfg_seq_len=2, blk_ff_ratio=1, blk_layers=1, blk_dropout=0.0,
                  blk_activation="gelu", blk_norm_first=False, blk_trace_kind="decoder",
                  blk_tensor_decoder="norm_cross_attn.hook_std"),
    "page_max": dict(cfg_seq_len=64, blk_ff_ratio=8, blk_layers=12, blk_dropout=0.9,
                     blk_tensor_encoder="ff.hook_hidden"),
    "shared_max": dict(cfg_d_model=512, cfg_heads=16, cfg_seq_len=64, blk_ff_ratio=1, blk_layers=1,
                       blk_trace_kind="decoder", blk_tensor_decoder="cross_attn.hook_v", blk_head=15),
}


@pytest.mark.parametrize("case, lang", [("small", "es"), ("page_max", "en"), ("shared_max", "es")])
def test_extremes_of_every_control(case, lang):
    long = " ".join(f"w{i}" for i in range(70))
    state = dict(EXTREMES[case])
    if case != "small":
        state |= {"cfg_sentence": long, "cfg_sentence_text": long, "blk_target": long, "blk_target_text": long}
    at = start(lang=lang, **state)
    assert_clean(at)
    assert not at.error and not at.warning
    got = every_frame(at)
    n = 2 if case == "small" else 64
    assert got["X"].shape[0] == n and len(got["residual"]) == state["blk_layers"] + 1
    for name in ("X", "pre", "hidden", "Y", "mask", "dropped", "traced"):
        assert got[name].size <= 4096, name  # heatmaps are capped; the caption says so
    if case == "small":
        assert got["traced"].shape == (2, 1) and np.all(got["mask"].to_numpy() == 1)  # p = 0 drops nothing
    elif case == "page_max":
        open_part(at, "ffn")
        assert any(t("blocks.sliced", lang=lang, shown=64, total=512) in c.value for c in at.caption)
    else:
        assert got["traced"].shape == (64, 32)  # values of head 15: (n_src, d_k)
        open_part(at, "layers")
        assert len(at.info) == 2  # both sentences were cut to 64 tokens


def test_empty_target_warns_and_keeps_the_last_sentence():
    at = start(numbers=False, blocks_part="layers")
    at.text_input(key="blk_target_text").input("   ").run()
    assert_clean(at)
    assert len(at.warning) == 1 and "el tiempo vuela" in at.warning[0].value
    assert at.session_state["blk_target"] == " ".join(TARGET)
    at.text_input(key="blk_target_text").input("hola mundo").run()
    assert not at.warning and at.session_state["blk_target"] == "hola mundo"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_wide_stages_are_pictures_that_name_their_rows_and_keep_their_numbers(lang):
    """Past PICTURE_CELLS a stage is one picture (no Vega mark per cell): its caption names the rows in order, and
    its numbers stay a click away, exact; d_model-wide stages stay heatmaps labelled with the tokens."""
    from ui.panels import PICTURE_CELLS
    at = start(lang=lang)
    assert_clean(at)
    assert [p.pixels.shape[1] // 256 >= 1 for p in pictures(at)] == [True, True]  # X W1 + b1, φ(.): 256 columns
    assert [h.matrix.shape for h in heatmaps(at)] == [(len(WORDS), 64)] * 2  # X, FFN(X): labelled heatmaps
    want = reference_ffn(WORDS, 64, 256, "relu", 0)
    assert [w.size > PICTURE_CELLS for w in want] == [False, True, True, False]
    rows = t("blocks.picture_rows", lang, rows=", ".join(WORDS))
    assert sum(rows in c.value for c in at.caption) == 2
    for name, expected in zip(("pre", "hidden"), want[1:3]):
        np.testing.assert_allclose(matrix(at, name), expected, atol=2e-5, err_msg=name)
