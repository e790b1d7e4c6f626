"""Lesson 8 (the whole model) through AppTest, and core.lab.costs.

Parameter counts shown are checked against models really built by core.build_model (summing p.numel() here,
per module, without count_parameters); multiply-adds against a count of the matrix products a real layer runs.
"""
from __future__ import annotations

import dataclasses
import html
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest
from torch.overrides import TorchFunctionMode

import core
from core.lab import costs
from ui.diagram import ADD_R
from ui.i18n import t
from conftest import lesson_opener, widget
from widgets import has_table, table

ROOT = Path(__file__).resolve().parents[1]
APP, PAGE = ROOT / "app.py", ROOT / "lessons" / "08_architecture.py"


start = lesson_opener("lessons/08_architecture.py", numbers=False)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


# Each part's tables of numbers by name; a table's key is "arch_<name>_table" (ui/architecture_views.py).
TABLES = {"diagram": (), "parameters": ("model", "layer"), "costs": ("cost", "memory")}


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick a part of the lesson with its part selector (the lesson draws one part at a time)."""
    widget(at, "radio", "arch_part").set_value(part).run()
    assert_clean(at)
    return at


def tables(at: AppTest, part: str = "parameters") -> dict[str, object]:
    """The tables of `part` (opened first) by name, found by their keys, indexed by their first (label) column."""
    if at.session_state["arch_part"] != part:
        open_part(at, part)
    names = TABLES[part]
    assert not at.dataframe and all(has_table(at, f"arch_{name}_table") for name in names)  # plain tables
    frames = {name: table(at, f"arch_{name}_table") for name in names}
    return {name: f.set_index(f.columns[0]) for name, f in frames.items()}


def diagram_spec(at: AppTest) -> str:
    """The SVG of the diagram, drawn on the server (its part opened first)."""
    if at.session_state["arch_part"] != "diagram":
        open_part(at, "diagram")
    svgs = [m.value for m in at.markdown if m.value.startswith("<svg")]
    assert len(svgs) == 1
    return svgs[0]


def real_counts(cfg: core.ModelConfig) -> dict[str, int]:
    """Counts of a really built model, per module, by plain p.numel() sums (tied weights once)."""
    model = core.build_model(cfg, seed=0)
    size = lambda *mods: sum(p.numel() for m in mods for p in m.parameters())  # noqa: E731
    layers = [*model.encoder.layers, *model.decoder.layers]
    attn = [m for layer in layers for m in (layer.self_attn, getattr(layer, "cross_attn", None)) if m is not None]
    norms = [m for name, m in model.named_modules() if name.split(".")[-1].startswith("norm")]
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    return {"total": size(model), "embeddings": size(model.src_embed, model.tgt_embed), "attention": size(*attn),
            "feed_forward": size(*[layer.ff for layer in layers]), "layer_norm": size(*norms),
            "generator": model.generator.bias.numel(), "enc_layer": size(enc), "dec_layer": size(dec),
            "enc_attn": size(enc.self_attn), "dec_cross": size(dec.cross_attn)}


def set_shared(at: AppTest, name: str, value) -> AppTest:
    """A sidebar setting (d_model, heads, seq_len): through the sidebar's widget when the app draws it, else set
    as that widget sets it (the page alone has no sidebar; the lesson draws no second control)."""
    found = [w for kind in ("number_input", "selectbox", "slider") for w in getattr(at.sidebar, kind)
             if w.key == f"cfg_{name}"]
    if found:
        return found[0].set_value(value).run()
    at.session_state[f"cfg_{name}"] = value
    return at.run()


def set_model(at: AppTest, *, d_model=None, heads=None, d_ff=None, layers=None, src=None, tgt=None, pre_norm=None,
              seq_len=None) -> AppTest:
    for name, value in (("d_model", d_model), ("heads", heads), ("seq_len", seq_len)):
        if value is not None:
            at = set_shared(at, name, value)
    if d_ff is not None:
        at.toggle(key="arch_ff_auto").set_value(False).run()
        at.number_input(key="arch_d_ff").set_value(d_ff)
    for key, value in (("arch_layers", layers), ("arch_src_vocab", src), ("arch_tgt_vocab", tgt)):
        if value is not None:
            at.number_input(key=key).set_value(value)
    if pre_norm is not None:
        widget(at, "radio", "arch_pre_norm").set_value(pre_norm)
    return at.run()


COMPONENTS = ("embeddings", "attention", "feed_forward", "layer_norm", "generator", "total")


@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang)
    assert_clean(at)
    assert at.title[0].value == t("arch.title", lang=lang)
    assert not at.error and not at.warning
    dot = diagram_spec(at)  # the first part
    assert t("arch.dot_encoder", lang, n=6) in dot and t("arch.dot_decoder", lang, n=6) in dot  # the two stacks
    assert "(batch, 8, 64)" in dot and "(batch, 8, 37000)" in dot
    assert t("arch.dot_cross_attn", lang=lang).split("\n")[0] in dot
    assert tables(at)["model"].index.name == t("arch.col_component", lang=lang)
    if path == APP:  # the frame is there: the page sits in its section, the sidebar is translated
        assert at.sidebar.toggle[0].label == t("sidebar.show_numbers", lang=lang)


@pytest.mark.parametrize("case", ["small", "course"])
def test_counts_equal_a_really_built_model(case):
    at = start()
    if case == "small":
        at = set_model(at, d_model=16, heads=2, d_ff=40, layers=2, src=11, tgt=13, pre_norm=False)
        cfg = core.ModelConfig(src_vocab=11, tgt_vocab=13, d_model=16, n_heads=2, n_layers=2, d_ff=40,
                               norm_first=False)
    else:
        at.button[0].click().run()  # the course's size: 512, 8 heads, d_ff 4 * 512, 6 layers
        at = set_model(at, src=1000, tgt=1200)
        cfg = core.ModelConfig(src_vocab=1000, tgt_vocab=1200, d_model=512, n_heads=8, n_layers=6, d_ff=2048)
    assert_clean(at)
    want, got = real_counts(cfg), tables(at)
    exact = got["model"].iloc[:, 0].to_numpy(dtype=np.int64)  # the "exact (from the model)" column
    assert list(exact) == [want[k] for k in COMPONENTS]
    assert exact[:-1].sum() == exact[-1] == want["total"]
    layer = got["layer"]
    assert layer.iloc[4, 0] == want["enc_layer"] and layer.iloc[4, 1] == want["dec_layer"]
    assert layer.iloc[0, 0] == want["enc_attn"] and layer.iloc[1, 1] == want["dec_cross"]
    assert f"{want['enc_attn']:,} parameters" in diagram_spec(at)


def test_course_layer_numbers_and_the_honest_note():
    at = start()
    at.button[0].click().run()
    assert_clean(at)
    layer = tables(at)["layer"]
    d, d_ff = 512, 2048
    assert layer.iloc[4, 0] == 4 * d * d + 4 * d + 2 * d * d_ff + d_ff + d + 2 * 2 * d == 3_152_384
    assert layer.iloc[4, -1] == 4 * d * d + 2 * d * d_ff + 4 * d == 3_147_776  # weights only: "about 3.1 M"
    assert layer.iloc[5, -1] == 6 * 3_147_776 == 18_886_656
    note = next(m.value for m in at.markdown if "18.7 M" in m.value)
    for number in ("1,048,576", "2,097,152", "2,048", "3,147,776", "3,152,384", "18,886,656", "18,914,304", "18.6 M"):
        assert number in note, number
    assert "18.7" not in tables(at)["model"].to_string()


def test_weights_only_formulas_and_d_ff_follows_d_model():
    at = set_model(start(), d_model=128)
    assert_clean(at)
    assert at.number_input(key="arch_d_ff").value == 512 and at.session_state["cfg_d_model"] == 128
    model = tables(at)["model"]
    d, d_ff, n_layers, v = 128, 512, 6, 37_000
    weights = model.iloc[:, -1].to_numpy(dtype=np.int64)
    assert list(weights) == [2 * v * d, 3 * n_layers * 4 * d * d, 2 * n_layers * 2 * d * d_ff,
                             (5 * n_layers + 2) * 2 * d, 0, sum(weights[:-1])]


def test_costs_match_the_matrix_products_a_real_layer_runs():
    class CountMacs(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.macs = 0

        def __torch_function__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = getattr(func, "__name__", "")
            if name == "linear":
                self.macs += out.numel() * args[1].shape[1]  # (..., out) outputs, each a dot product of length in
            elif name in ("matmul", "__matmul__"):
                self.macs += out.numel() * args[0].shape[-1]
            return out

    n, d, h, d_ff = 8, 64, 4, 256
    layer = core.EncoderLayer(d, h, d_ff, dropout=0.0).eval()
    with torch.no_grad(), CountMacs() as counter:
        layer(torch.randn(1, n, d))
    macs = costs.encoder_layer_macs(n, d, d_ff)
    assert counter.macs == macs["total"] - macs["layer_norm"] == 4 * n * d * d + 2 * n * n * d + 2 * n * d * d_ff
    decoder = core.DecoderLayer(d, h, d_ff, dropout=0.0).eval()
    with torch.no_grad(), CountMacs() as counter:
        decoder(torch.randn(1, n, d), torch.randn(1, 2 * n, d))
    dec = costs.decoder_layer_macs(n, 2 * n, d, d_ff)
    assert counter.macs == dec["total"] - dec["layer_norm"]


@pytest.mark.parametrize("d, d_ff", [(64, 256), (512, 2048), (8, 100)])
def test_crossovers(d, d_ff):
    cross = costs.crossovers(d, d_ff)
    m = cross["scores_vs_ffn"]
    at_cross = costs.encoder_layer_macs(m, d, d_ff)
    assert at_cross["scores"] + at_cross["weighted_sum"] == at_cross["feed_forward"]
    below, above = costs.encoder_layer_macs(m - 1, d, d_ff), costs.encoder_layer_macs(m + 1, d, d_ff)
    assert below["scores"] * 2 < below["feed_forward"] and above["scores"] * 2 > above["feed_forward"]
    n = cross["order"]
    assert n * n * d == n * d * d and (n + 1) ** 2 * d > (n + 1) * d * d  # the O-notation orders meet at n = d
    p = cross["scores_vs_projections"]
    assert costs.encoder_layer_macs(p, d, d_ff)["scores"] * 2 == costs.encoder_layer_macs(p, d, d_ff)["projections"]


def test_cost_table_chart_and_memory_follow_seq_len():
    at = start()
    before = tables(at, "costs")["cost"].iloc[:, 1].to_numpy(dtype=np.int64)
    at = set_model(at, seq_len=64)
    assert_clean(at)
    got = tables(at, "costs")
    n, d, h, d_ff = 64, 64, 4, 256
    want = costs.encoder_layer_macs(n, d, d_ff)
    cost = got["cost"].iloc[:, 1].to_numpy(dtype=np.int64)
    assert list(cost) == [4 * n * d * d, n * n * d, n * n * d, 2 * n * d * d_ff, 2 * n * d, want["total"]]
    assert not np.array_equal(cost, before)
    assert list(got["memory"].iloc[:, 1]) == [h * n * n, n * d, n * d_ff]
    chart = at.get("vega_lite_chart")[0]
    frames = [dataframe_util.convert_arrow_bytes_to_pandas_df(ds.data.data) for ds in chart.proto.datasets]
    rules = [f for f in frames if "label" in f.columns]  # the dashed marks, the current length, and the labels
    assert {x for f in rules for x in f.x} == {d, 2 * d, d_ff, n} and {x for f in rules for x in f[f.now].x} == {n}
    lines = next(f for f in frames if "series" in f.columns)
    scores = lines[lines.series == t("arch.curve_scores", lang="en")]
    np.testing.assert_allclose(scores.y, 2 * scores.x ** 2 * d)
    assert "(batch, 64, 64)" in diagram_spec(at)  # the diagram's shapes follow n too


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("extreme", ["min", "max"])
def test_extremes_of_every_control(lang, extreme):
    at = start(PAGE if extreme == "min" else APP, lang=lang)
    if extreme == "min":
        at = set_model(at, d_model=8, heads=1, d_ff=1, layers=1, src=1, tgt=1, pre_norm=False, seq_len=2)
        cfg = core.ModelConfig(src_vocab=1, tgt_vocab=1, d_model=8, n_heads=1, n_layers=1, d_ff=1, norm_first=False)
        want = real_counts(cfg)["total"]
    else:
        at = set_model(at, d_model=512, heads=16, d_ff=16_384, layers=48, src=262_144, tgt=262_144, seq_len=64)
        d, d_ff, n_layers, v = 512, 16_384, 48, 262_144
        want = (2 * v * d + 3 * n_layers * (4 * d * d + 4 * d) + 2 * n_layers * (2 * d * d_ff + d_ff + d)
                + (5 * n_layers + 2) * 2 * d + v)  # 2.03 billion: too big to build here, so the formula
    assert_clean(at)
    assert not at.error
    assert tables(at)["model"].iloc[-1, 0] == want


def test_invalid_combination_shows_a_message():
    at = start(cfg_d_model=64, cfg_heads=3)  # 3 does not divide 64: only a hand-made state gets here
    assert_clean(at)
    assert at.error and "d_model = 64" in at.error[0].value
    assert not at.dataframe  # no table at all: the message stands alone


def test_the_sidebar_sets_d_model_heads_and_n_and_the_lesson_draws_them_once():
    at = set_model(start(APP), d_model=96, layers=7)
    assert_clean(at)
    assert at.session_state["cfg_d_model"] == 96 and 96 % at.session_state["cfg_heads"] == 0
    assert tables(at)["layer"].iloc[5, 0] == 7 * tables(at)["layer"].iloc[4, 0]
    assert t("common.sizes_in_sidebar", section=t("sidebar.lesson_settings")) in [c.value for c in at.caption]
    shared = {t("sidebar.d_model"), t("sidebar.heads"), t("sidebar.seq_len")}
    for part in ("diagram", "parameters", "costs"):
        open_part(at, part)
        main = [w.label for kind in ("number_input", "selectbox", "slider") for w in getattr(at.main, kind)]
        assert not shared & set(main), part


def test_meta_model_has_the_real_shapes_and_no_memory():
    cfg = core.ModelConfig(src_vocab=50_000, tgt_vocab=40_000, d_model=256, n_heads=4, n_layers=3, d_ff=1000,
                           positional="learned")
    model = costs.meta_model(cfg)
    real = core.build_model(dataclasses.replace(cfg, src_vocab=5, tgt_vocab=4), seed=0)  # small vocabularies
    shapes = {name: tuple(p.shape) for name, p in model.named_parameters()}
    real_shapes = {name: tuple(p.shape) for name, p in real.named_parameters()}
    assert shapes.keys() == real_shapes.keys()
    assert shapes["src_embed.embed.weight"] == (50_000, 256) and model.generator.weight is model.tgt_embed.embed.weight
    assert shapes["generator.bias"] == (40_000,)
    assert all(shapes[k] == real_shapes[k] for k in shapes if "embed.weight" not in k and k != "generator.bias")
    assert all(p.device.type == "meta" for p in model.parameters() if p.dim() == 2 and p.shape[0] > 256)
    assert costs.parameter_breakdown(cfg)["total"] == core.count_parameters(model)["total"]


def test_cost_curves_chart():
    from ui import charts
    x = np.array([1.0, 10.0, 100.0])
    chart = charts.cost_curves(x, {"a": x ** 2, "b": 10 * x}, [("n = 10", 10.0)], x_title="n", y_title="MACs",
                               now=("now", 3.0)).to_dict()
    assert chart["layer"][0]["encoding"]["x"]["scale"]["type"] == "log"
    assert chart["layer"][0]["encoding"]["y"]["scale"]["type"] == "log"
    rules = [r for ds in chart["datasets"].values() for r in ds if "label" in r]
    assert {(r["x"], r["now"]) for r in rules} == {(10.0, False), (3.0, True)}


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", ["small vocabulary", "big vocabulary"])
def test_the_embeddings_sentence_follows_its_share(case, lang):
    """The "what to notice" sentence says more or less than the layers as the share it prints says."""
    at = start(lang=lang)
    src, tgt = (1000, 1200) if case == "small vocabulary" else (50_000, 50_000)
    at = set_model(at, d_model=64, heads=2, d_ff=256, layers=2, src=src, tgt=tgt)
    assert_clean(at)
    want = real_counts(core.ModelConfig(src_vocab=src, tgt_vocab=tgt, d_model=64, n_heads=2, n_layers=2, d_ff=256))
    share = 100 * want["embeddings"] / want["total"]
    key = "arch.notice_embeddings_most" if share > 50 else "arch.notice_embeddings_less"
    assert (share > 50) == (case == "big vocabulary")
    prefix = t(key, lang, share=0.0).split("**")[0]  # the same in both sentences
    shown = [m.value for m in at.markdown if m.value.startswith(prefix)]
    assert len(shown) == 1, [m.value[:80] for m in at.markdown]
    number = re.search(r"\*\*([\d.,]+) %\*\*", shown[0]).group(1)
    assert ("," in number) == (lang == "es")  # a decimal comma in Spanish
    assert shown[0] == t(key, lang, share=share)  # the sentence that fits the number, which is the share


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_paper_gap_and_the_memory_caption_say_what_their_numbers_say(lang):
    """Claim 2: 63.1 M with one shared matrix at 37,000 tokens, and the two rows' vocabulary ranges (written out
    here); claim 3: the memory rows are examples, and the caption gives what autograd really keeps."""
    at = open_part(start(lang=lang), "parameters")
    note = next(m.value for m in at.markdown if "37" in m.value and "213" in m.value)
    sep = "," if lang == "en" else "."
    assert f"63{sep}119{sep}496" in note
    for millions, d, d_ff in ((65, 512, 2048), (213, 1024, 4096)):
        fixed = 3 * 6 * (4 * d * d + 4 * d) + 2 * 6 * (2 * d * d_ff + d_ff + d) + 5 * 6 * 2 * d  # layers and norms
        fits = [v for v in range(30_000, 45_000) if round((fixed + v * (d + 1)) / 1e6) == millions]
        assert f"{fits[0]:,}".replace(",", sep) in note and f"{fits[-1]:,}".replace(",", sep) in note
    sizes = at.table[-1].value.iloc[:, -1].tolist()  # the published sizes (the last table), in the reader's marks
    assert sizes == (["65 M", "110 M", "1.5 B", "220 M", "175 B"] if lang == "en" else
                     ["65 M", "110 M", "1,5 mil millones", "220 M", "175 mil millones"])
    at = open_part(at, "costs")
    n, d, h, d_ff = 8, 64, 4, 256
    kept = costs.encoder_layer_saved_bytes(n, d, h, d_ff)
    ratio = kept / (4 * (h * n * n + n * d + n * d_ff))
    caption = next(c.value for c in at.caption if "KiB" in c.value)
    mark = "." if lang == "en" else ","
    assert f"{kept / 1024:.1f}".replace(".", mark) in caption and f"{ratio:.1f}".replace(".", mark) in caption
    assert at.markdown[[m.value for m in at.markdown].index(t("arch.memory_header", lang))].value


def diagram_texts(svg: str) -> list[str]:
    """The diagram's lines of text in drawing order (each column's frame title first, then its boxes, top down)."""
    return ["".join(s.itertext()) for s in ET.fromstring(svg).iter("{http://www.w3.org/2000/svg}tspan")]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("pre_norm", [True, False])
def test_the_diagram_puts_each_layernorm_where_the_placement_says(pre_norm, lang):
    """Drawn on the server (no Graphviz laid out in the browser): per sub-layer a LayerNorm before it (pre-norm) or
    after its sum (post-norm), a residual path and a ⊕ each, the final LayerNorms only in pre-norm, N in both
    frames, and a text alternative that says the same."""
    at = set_model(start(lang=lang), layers=3, pre_norm=pre_norm)
    assert_clean(at)
    svg = diagram_spec(at)
    assert not at.get("graphviz_chart")
    norm = t("arch.svg_norm", lang)
    subs = {t(k, lang).split("\n")[0] for k in ("arch.dot_self_attn", "arch.dot_masked_attn", "arch.dot_cross_attn",
                                                "arch.dot_ff")}
    order = "".join("N" if text == norm else "S" for text in diagram_texts(svg) if text == norm or text in subs)
    assert order == ("NS" * 2 + "NS" * 3 if pre_norm else "SN" * 2 + "SN" * 3)  # encoder, then decoder
    assert svg.count(f'r="{ADD_R}"') == 5 and svg.count('stroke-dasharray="5 3"') == 5  # 2 + 3 residual sums
    finals = (t("arch.dot_memory_pre", lang).split("\n")[0], t("arch.dot_final_norm", lang))
    assert all((text in diagram_texts(svg)) == pre_norm for text in finals)
    assert t("arch.dot_encoder", lang, n=3) in svg and t("arch.dot_decoder", lang, n=3) in svg
    sentence = t("arch.diagram_norm_pre" if pre_norm else "arch.diagram_norm_post", lang)
    desc = t("arch.diagram_description", lang, n=8, d=64, layers=3, v=37_000, norm=sentence)
    assert html.escape(desc, quote=False) in svg and 'role="img"' in svg
