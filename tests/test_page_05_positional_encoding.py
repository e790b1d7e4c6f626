"""Lesson 5 (position information) through AppTest, and its two chart builders.

Every number the page shows is rebuilt here with numpy from the formulas and the same seeds, independently of
core.positional: the sinusoidal table, the frequency factors, PE(p)·PE(p+k), the permutation demonstration,
the √d_model table, the learned table and the RoPE scores.
"""
from __future__ import annotations

import inspect
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from ui import charts
from ui.i18n import t
from conftest import lesson_opener, widget
from widgets import has_table, heatmaps, line_charts, picture_of, pictures, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "05_positional_encoding.py"
SENTENCE = ["time", "flies", "like", "an", "arrow"]


# ---- independent references ---------------------------------------------------------------------------

def pe_formula(n: int, d: int) -> np.ndarray:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(same), in float64."""
    out = np.zeros((n, d))
    for j in range(d):
        angle = np.arange(n) / 10000 ** (2 * (j // 2) / d)
        out[:, j] = np.sin(angle) if j % 2 == 0 else np.cos(angle)
    return out


def token_vectors(tokens: list[str], d: int, seed: int) -> np.ndarray:
    """The page's seeded stand-in vectors: one generator per (seed, word), unit normal entries."""
    return np.stack([torch.randn(d, generator=torch.Generator().manual_seed(zlib.crc32(f"{seed}:{w}".encode())))
                     .double().numpy() for w in tokens])


def attention(x: np.ndarray, seed: int) -> np.ndarray:
    d = x.shape[1]
    w_q, w_k, w_v = (torch.randn(d, d, generator=torch.Generator().manual_seed(seed + j)).double().numpy()
                     / math.sqrt(d) for j in (1, 2, 3))
    s = (x @ w_q) @ (x @ w_k).T / math.sqrt(d)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    return (a / a.sum(axis=1, keepdims=True)) @ (x @ w_v)


def rotate(v: np.ndarray, p: int) -> np.ndarray:
    """RoPE by hand: pair (2i, 2i+1) turned by p / 10000^(2i/d); an odd last dimension stays."""
    d, out = len(v), v.copy()
    for i in range(d // 2):
        a = p / 10000 ** (2 * i / d)
        out[2 * i] = v[2 * i] * math.cos(a) - v[2 * i + 1] * math.sin(a)
        out[2 * i + 1] = v[2 * i] * math.sin(a) + v[2 * i + 1] * math.cos(a)
    return out


# ---- running the page ----------------------------------------------------------------------------------

start = lesson_opener("lessons/05_positional_encoding.py")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


PARTS = ("order", "naive", "sinusoidal", "offset", "scale", "rope", "compare")
TABLES = {  # every table of the lesson by name: its key (one part is drawn at a time)
    "factors": "pe_factor_table", "offset": "pe_offset_table", "scale": "pe_scale_table", "rope": "pe_rope_table",
    **{f"{kind}_{order}": f"pe_out_{kind}_{order}_numbers"  # the order part's outputs, keyed by their titles
       for kind in ("plain", "pe") for order in ("original", "moved")},
    **{name: f"pe_{name}_numbers" for name in ("index", "learned", "zoom", "dots", "rope_scores")}}  # matrix panels

def open_part(at: AppTest, part: str) -> AppTest:
    """Pick one part of the lesson with its selector, as a learner does."""
    widget(at, "radio", "pe_part").set_value(part).run()
    assert_clean(at)
    return at


def frames(at: AppTest) -> dict[str, object]:
    """The shown part's tables by name, found by their keys."""
    return {name: table(at, key) for name, key in TABLES.items() if has_table(at, key)}


def walk(at: AppTest, lang: str = "en") -> dict[str, object]:
    """Open every part in turn and gather what they show: tables by name, messages, metrics, charts, headers,
    and the sinusoidal table's picture."""
    seen: dict[str, object] = {"frames": {}, "charts": 0, "header": []}
    for kind in ("warning", "info", "caption", "success", "metric", "table"):
        seen[kind] = []
    for part in PARTS:
        open_part(at, part)
        seen["frames"].update(frames(at))
        seen["charts"] += len(at.get("vega_lite_chart")) + len(heatmaps(at)) + len(line_charts(at)) + len(pictures(at))
        seen["header"] += [h.value for h in at.header]
        for kind in ("warning", "info", "caption", "success", "metric", "table"):
            seen[kind] += [e.value for e in getattr(at, kind)]
        if part == "sinusoidal":
            seen["image"] = pictures(at)[0].pixels  # the table of sinusoids
    return seen


# ---- the page -------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path, lang", [(APP, "en"), (PAGE, "es")], ids=["app-en", "page-es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False)
    assert_clean(at)
    assert at.title[0].value == t("pe.title", lang=lang)
    assert at.session_state["pe_part"] == "order" and [h.value for h in at.header] == [t("pe.order_header", lang=lang)]
    assert len(at.get("vega_lite_chart")) + len(heatmaps(at)) == 4  # one part at a time: the first one's four panels
    seen = walk(at, lang)
    assert not seen["warning"]
    assert seen["success"] == [t("pe.learned_fits", lang=lang, n=5, L=16)]
    assert seen["table"][-1].columns[0] == t("pe.kind_sinusoidal", lang=lang)  # the comparison, the last part's
    assert seen["charts"] == 14  # every chart of the lesson, in its own part
    assert seen["header"] == [t(f"pe.{key}_header", lang=lang)
                              for key in ("order", "naive", "sin", "dot", "scale", "rope", "compare")]
    assert sorted(seen["frames"]) == ["factors", "offset", "rope", "scale"]  # no matrix tables: numbers are off


def test_defaults_show_the_right_numbers():
    at = start(show_code=True)  # "show the code" open
    assert_clean(at)
    seen = walk(at)
    got, d, seed = seen["frames"], 64, 0
    x, pe = token_vectors(SENTENCE, d, seed), pe_formula(128, d)
    # the sinusoidal table (float32 in the model) against the formula, and the picture's colours
    np.testing.assert_allclose(got["zoom"].to_numpy(float), pe[:24, :16], atol=2e-6)
    pixels = seen["image"][:: round(360 / 128), :: round(520 / 64)]  # one pixel per value
    assert pixels.shape[:2] == (128, 64)
    assert np.abs(pixels.astype(int) - charts.colour_image(pe, (-1, 1)).astype(int)).max() <= 1
    # the frequency factors: i = 0, d/4, d/2 - 1 by default
    f = got["factors"]
    assert list(f.iloc[:, 0]) == [0, 16, 31]
    np.testing.assert_allclose(f.iloc[:, 3], [10000 ** (2 * i / d) for i in (0, 16, 31)], rtol=1e-12)
    np.testing.assert_allclose(f.iloc[:, 4], [2 * math.pi * 10000 ** (2 * i / d) for i in (0, 16, 31)], rtol=1e-12)
    # PE(p)·PE(p+k) for k = 4: one value for every p, equal to Σ cos(k / factor)
    o = got["offset"]
    expected = sum(math.cos(4 / 10000 ** (2 * i / d)) for i in range(d // 2))
    assert list(o["p"]) == [0, 1, 2, 5, 10, 50, 100] and list(o["p + k"]) == [4, 5, 6, 9, 14, 54, 104]
    np.testing.assert_allclose(o["PE(p)·PE(p+k)"], expected, atol=1e-4)
    np.testing.assert_allclose(got["dots"].to_numpy(float), (pe @ pe.T)[:10, :10], atol=1e-4)
    # the permutation: without PE the same rows reordered, with PE different
    rev = SENTENCE[::-1]
    for name, inputs, rows in (("plain_original", x, SENTENCE), ("plain_moved", x[::-1], rev),
                               ("pe_original", x + pe[:5], SENTENCE), ("pe_moved", x[::-1] + pe[:5], rev)):
        np.testing.assert_allclose(got[name].to_numpy(float), attention(inputs, seed)[:, :8], atol=1e-4, err_msg=name)
        assert list(got[name].index) == rows
    np.testing.assert_allclose(got["plain_moved"].to_numpy(float)[::-1], got["plain_original"].to_numpy(float),
                               atol=1e-5)
    gap_plain, gap_pe = (float(value) for value in seen["metric"][:2])
    assert gap_plain < 1e-5 and gap_pe > 0.1
    want_gap = np.abs(attention(x[::-1] + pe[:5], seed)[::-1] - attention(x + pe[:5], seed)).max()
    assert gap_pe == pytest.approx(want_gap, abs=1e-3)
    # the naive index, the learned table, the √d_model table
    np.testing.assert_allclose(got["index"].to_numpy(float), (x + np.arange(5)[:, None])[:, :8], atol=1e-6)
    table = torch.randn(16, d, generator=torch.Generator().manual_seed(seed + 4)).numpy()
    np.testing.assert_allclose(got["learned"].to_numpy(float), table[:, :8], atol=1e-7)
    s, e = got["scale"], x / math.sqrt(d)
    np.testing.assert_allclose(s["‖PE‖"], math.sqrt(d / 2), atol=1e-5)
    np.testing.assert_allclose(s["‖E‖"], np.linalg.norm(e, axis=1), atol=1e-6)
    cos = [float((a + b) @ a / np.linalg.norm(a + b) / np.linalg.norm(a)) for a, b in zip(e, pe[:5])]
    np.testing.assert_allclose(s[t("pe.col_cos_plain")], cos, atol=1e-5)
    assert (s[t("pe.col_cos_scaled")] > s[t("pe.col_cos_plain")]).all()
    # RoPE on one head (d_k = 64 / 4 = 16): constant in p, and equal to rotating by hand
    g = torch.Generator().manual_seed(seed + 5)
    q, k = torch.randn(16, generator=g).double().numpy(), torch.randn(16, generator=g).double().numpy()
    r, pe16 = got["rope"], pe_formula(128, 16)
    np.testing.assert_allclose(r.iloc[:, 2], [rotate(q, p) @ rotate(k, p + 4) for p in r["p"]], atol=1e-4)
    assert r.iloc[:, 2].max() - r.iloc[:, 2].min() < 1e-4
    added = [(q + pe16[p]) @ (k + pe16[p + 4]) for p in r["p"]]
    np.testing.assert_allclose(r.iloc[:, 3], added, atol=1e-4)
    assert r.iloc[:, 3].max() - r.iloc[:, 3].min() > 0.1
    scores = got["rope_scores"].to_numpy(float)
    np.testing.assert_allclose(scores, [[rotate(q, a) @ rotate(k, b) for b in range(16)] for a in range(16)],
                               atol=1e-4)
    from core import attention as core_attention, positional
    shown = [c.value.strip() for c in at.main.code]  # the code shown is the code that ran
    ran = (positional.sinusoidal_encoding, positional.frequency_factor, positional.index_encoding,
           positional.LearnedPositionalEncoding, positional.rotary_angles, positional.apply_rotary,
           core_attention.scaled_dot_product_attention)
    assert shown == [inspect.getsource(fn).strip() for fn in ran]


def test_largest_settings_in_spanish():
    """d_model 512, 16 heads, a 64-token sentence, 512 positions, the longest table, the largest offset."""
    words = [f"w{i}" for i in range(64)]
    state = {"cfg_d_model": 512, "cfg_heads": 16, "cfg_seq_len": 64, "cfg_sentence": " ".join(words),
             "cfg_sentence_text": " ".join(words), "pe_positions": 512, "pe_offset": 511, "pe_learned_len": 64,
             "pe_perm": "shuffled", "pe_rope_pair": 15}
    at = start(lang="es", state=state)
    assert_clean(at)
    assert at.header[0].value == t("pe.order_header", lang="es")
    seen = walk(at, "es")
    assert not at.error and not seen["warning"] and not seen["info"]
    got = seen["frames"]
    f = got["factors"]  # the course's numbers: 1, 100 and about 9646.6
    assert list(f.iloc[:, 0]) == [0, 128, 255]
    np.testing.assert_allclose(f.iloc[:, 3], [1.0, 100.0, 10000 ** (510 / 512)], rtol=1e-12)
    assert f.iloc[2, 3] == pytest.approx(9646.6, abs=0.05)
    assert got["plain_original"].shape == (64, 8) and got["learned"].shape == (64, 8)
    np.testing.assert_allclose(got["zoom"].to_numpy(float), pe_formula(24, 512)[:, :16], atol=2e-6)
    o = got["offset"]  # k = 511 leaves one start, p = 0
    assert list(o["p"]) == [0] and o.iloc[0, 2] == pytest.approx(o.iloc[0, 3], abs=1e-3)
    assert seen["image"].shape[:2] == (512, 512)  # one pixel per value
    assert len(seen["metric"]) == 4 and all("," in m and "." not in m for m in seen["metric"])  # decimal commas
    captions = " ".join(seen["caption"])  # pair 15 of d_k = 32: θ = 10000^(-30/32) rad
    theta = 10000 ** (-30 / 32)
    assert f"θ = {theta:.4f} rad ({math.degrees(theta):.2f}°)".replace(".", ",") in captions


def test_smallest_settings_and_the_learned_limit():
    """d_model 8 with 8 heads (one dimension per head), 2 tokens, 2 positions, a 1-row table, nothing picked."""
    state = {"cfg_d_model": 8, "cfg_heads": 8, "cfg_seq_len": 2, "pe_positions": 2, "pe_offset": 1,
             "pe_learned_len": 1, "pe_perm": "shuffled", "pe_for_d": 8, "pe_dims": [], "pe_pairs": []}
    at = start(state=state)
    assert_clean(at)
    seen = walk(at)
    assert seen["warning"] == [t("pe.learned_too_long", n=2, L=1)]  # core's ValueError, explained
    assert t("pe.no_dims") in seen["info"]
    assert t("pe.rope_dims_small", d=8) in seen["caption"]  # d_k = 1: RoPE uses all of d_model
    got = seen["frames"]
    assert got["factors"].empty and got["zoom"].shape == (2, 8)
    assert list(got["plain_moved"].index) == ["flies", "time"]
    np.testing.assert_allclose(got["offset"].iloc[:, 2], sum(math.cos(1 / 10000 ** (2 * i / 8)) for i in range(4)),
                               atol=1e-5)


def test_controls_change_what_is_shown():
    at = open_part(start(), "offset")
    before = frames(at)
    at.slider(key="pe_positions").set_value(10)
    widget(at, "slider", "pe_offset").set_value(7).run()  # both in one rerun
    assert_clean(at)
    got = frames(at)
    assert got["dots"].shape == (10, 10) and list(got["offset"]["p"]) == [0, 1, 2]
    expected = sum(math.cos(7 / 10000 ** (2 * i / 64)) for i in range(32))
    np.testing.assert_allclose(got["offset"].iloc[:, 2], expected, atol=1e-4)
    assert not np.allclose(got["offset"].iloc[0, 2], before["offset"].iloc[0, 2])
    assert frames(open_part(at, "sinusoidal"))["zoom"].shape == (10, 16)  # the parts share the positions
    widget(at, "multiselect", "pe_pairs").set_value([5]).run()
    assert list(frames(at)["factors"].iloc[:, 3]) == pytest.approx([10000 ** (10 / 64)])
    widget(open_part(at, "order"), "radio", "pe_perm").set_value("shuffled").run()
    moved = frames(at)["plain_moved"]
    assert sorted(moved.index) == sorted(SENTENCE) and list(moved.index) != SENTENCE[::-1]
    open_part(at, "naive").slider(key="pe_learned_len").set_value(3).run()
    assert [w.value for w in at.warning] == [t("pe.learned_too_long", n=5, L=3)]
    compare = open_part(at, "compare").table[0].value  # the comparison follows the table's length
    assert t("pe.learned_params", params=3 * 64, L=3, d=64) in compare.to_numpy()


def test_odd_d_model_one_token_and_an_empty_sentence():
    state = {"cfg_d_model": 9, "cfg_heads": 1, "cfg_sentence": "hola", "cfg_sentence_text": "hola"}
    at = start(lang="es", state=state)
    assert_clean(at)
    infos = walk(at, "es")["info"]
    assert t("pe.order_one_token", lang="es") in infos and t("pe.odd_d", lang="es", d=9) in infos
    open_part(at, "naive")
    widget(at, "text_input", "cfg_sentence_text").set_value("   ").run()  # bad input: a message, the last sentence stays
    assert_clean(at)
    assert at.warning and frames(at)["index"].index.tolist() == ["hola"]


# ---- the chart builders ---------------------------------------------------------------------------------

def test_colour_image_follows_the_ramp():
    rgb = charts.colour_image(np.array([[-1.0, 0.0, 1.0, 5.0, np.nan]]), (-1.0, 1.0))
    hexes = ["#%02X%02X%02X" % tuple(c) for c in rgb[0]]
    assert hexes == [charts.IMAGE_STOPS[0][1], charts.IMAGE_STOPS[2][1], charts.IMAGE_STOPS[-1][1],
                     charts.IMAGE_STOPS[-1][1], charts.IMAGE_STOPS[2][1]]  # clipped; NaN in the middle colour


def test_a_picture_is_one_image_with_axes():
    values = pe_formula(6, 4)
    chart = charts.picture(values, x_title="dim", y_title="pos", value_title="PE", width=40, height=30)
    drawn = picture_of(chart.svg, chart.description)
    assert drawn.pixels.shape == (30, 40, 3)  # 6 x 4 cells enlarged 5 x 10 times
    np.testing.assert_array_equal(drawn.pixels[::5, ::10], charts.colour_image(values, (-1.0, 1.0)))  # row 0 on top
    # rows 0, 2, 4 down the left, columns 0, 2 along the bottom, the axis titles, the legend from 1 down to -1
    assert drawn.texts == ["0", "2", "4", "0", "2", "dim", "pos", "PE", "1.00", "0.00", "-1.00"]
    assert drawn.legend == "PE" and drawn.description.startswith(t("a11y.heatmap_kind", lang="en"))


def test_plane_arrows_draw_every_vector_from_the_origin():
    chart = charts.plane_arrows([(1.0, 0.0), (0.0, -2.0)], ["q@0", "k@4"], ["#0072B2", "#D55E00"], x_title="d0",
                                y_title="d1", circles=[1.0, 2.0])
    spec = chart.to_dict()
    assert [layer["mark"]["type"] for layer in spec["layer"]] == ["line", "rule", "point", "text"]
    rows = next(ds for ds in spec["datasets"].values() if "label" in ds[0])
    assert [(r["label"], r["x"], r["y"], r["x0"], r["y0"]) for r in rows] == [("q@0", 1.0, 0.0, 0.0, 0.0),
                                                                            ("k@4", 0.0, -2.0, 0.0, 0.0)]
    assert spec["layer"][2]["encoding"]["x"]["scale"]["domain"] == [-2.4, 2.4]
