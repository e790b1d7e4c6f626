"""Chart builders, issue #17: legends titled by what they show, one declared scale per kind of matrix (masks as two
categories), dimensions numbered one way, and numbers in the session's language (decimal comma in Spanish)."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest
from chart_examples import legend_ticks, value_texts
from widgets import Heatmap, bar_chart_of, bar_charts, heatmap_of, line_chart_of, picture_of

from ui import charts
from ui.charts import numbers
from ui.charts.palette import ramp_domain
from ui.i18n import t

CAUSAL = np.tril(np.ones((3, 3)))  # 1 = keep (core's convention)


def spec_layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec["spec"]["layer"]


def drawn(chart: charts.SvgChart) -> Heatmap:
    return heatmap_of(chart.svg, chart.description)


def colour_encodings(spec: dict) -> list[dict]:
    return [layer["encoding"]["color"] for layer in spec_layers(spec)
            if "field" in layer.get("encoding", {}).get("color", {})]


@pytest.fixture
def spanish(monkeypatch):
    """The builders as in a Spanish session (they ask `numbers.language()`)."""
    monkeypatch.setattr(numbers, "language", lambda: "es")


# ---- legend titles --------------------------------------------------------------------------------------

def legend_title(encoding: dict) -> str:
    """A colour legend's title as one string (a ramp's title is written one word a line)."""
    title = encoding["legend"]["title"]
    return " ".join(title) if isinstance(title, list) else title


@pytest.mark.parametrize("kind, key", [("weights", "chart.weight_legend"), ("diverging", "chart.signed_legend"),
                                       ("scores", "chart.score_legend"), ("sequential", "chart.entry_legend"),
                                       ("mask", "chart.mask_legend")])
def test_a_legend_is_titled_by_its_scale_kind_never_value(kind, key):
    generic = [None, "value", t("chart.value", lang="en"), t("chart.value", lang="es")]
    for value in generic:
        h = drawn(charts.heatmap_svg(CAUSAL, "abc", "abc", scale=kind, legend=value))
        assert h.legend == t(key, lang="en") != t("chart.value", lang="en")
        assert f"colour: {h.legend}" in h.description  # what the colour shows, said as the legend says it
    assert drawn(charts.heatmap_svg(CAUSAL, "abc", "abc", scale=kind, legend="score")).legend == "score"


def test_every_builder_with_a_colour_ramp_titles_it_by_what_it_shows():
    facet = drawn(charts.facet_svg([CAUSAL / 3, CAUSAL / 2], ["h1", "h2"], "abc", "abc"))
    assert facet.legend == t("chart.weight_legend", lang="en")
    assert drawn(charts.facet_svg([CAUSAL], ["h1"], "abc", "abc", legend="w")).legend == "w"
    image = picture_of(charts.picture(np.eye(3) - 0.5, x_title="x", y_title="y", value_title="value").svg)
    assert image.legend == t("chart.signed_legend", lang="en")
    weights = picture_of(charts.picture(np.eye(3), x_title="x", y_title="y", kind="weights").svg)
    assert weights.legend == t("chart.weight_legend", lang="en")
    grid = charts.attention_grid(np.full((1, 2, 3, 3), 1 / 3), ["L1"], ["h1", "h2"], value_title="value").to_dict()
    assert legend_title(colour_encodings(grid)[0]) == t("chart.weight_legend", lang="en")
    view = charts.head_view(np.full((1, 3, 3), 1 / 3), "abc", [0], ["h1"]).to_dict()
    assert view["layer"][0]["encoding"]["tooltip"][-1]["title"] == t("chart.weight_legend", lang="en")



def test_scores_are_drawn_like_signed_values_and_titled_score(spanish):
    """S, S/√d_k and masked scores (−∞ where blocked): the signed ramp centred at 0, grey −∞, legend
    "Puntuación"."""
    scores = np.array([[2.5, -np.inf, -np.inf], [0.4, -1.0, -np.inf], [-3.0, 0.0, 1.2]])
    svgs = {kind: charts.heatmap_svg(scores, "abc", "abc", scale=kind) for kind in ("scores", "diverging")}
    score, signed = (drawn(svgs[k]) for k in ("scores", "diverging"))
    assert score.fills == signed.fills and score.fills[1] == charts.PALETTE["masked"]
    assert ramp_domain("scores", scores) == ramp_domain("diverging", scores) == (-3.0, 3.0)
    assert legend_ticks(score.texts) == legend_ticks(signed.texts) == ["3,00", "0,00", "-3,00"]
    assert value_texts(svgs["scores"].svg) == value_texts(svgs["diverging"].svg)  # the same white text
    assert score.legend == "Puntuación" == t("chart.score_legend", lang="es")
    assert signed.legend == t("chart.signed_legend", lang="es")
    assert charts.legend_title("scores") == "Puntuación" and charts.legend_title("scores", "S/√d_k") == "S/√d_k"

# ---- masks: two categories, whatever the convention ---------------------------------------------------------

CONVENTIONS = {  # the same causal mask written three ways: kind -> matrix
    "mask": CAUSAL,  # 1 = keep
    "mask_blocked": 1 - CAUSAL,  # 1 = block (nn.MultiheadAttention's True, TensorFlow's 1)
    "mask_additive": np.where(CAUSAL == 1, 0.0, -np.inf),  # 0 = keep, −∞ = block
}


@pytest.mark.parametrize("kind", list(CONVENTIONS))
def test_a_mask_is_two_categories_kept_and_blocked(kind):
    matrix = CONVENTIONS[kind]
    chart = charts.heatmap_svg(matrix, "abc", "abc", scale=kind)
    h = drawn(chart)
    kept, blocked = t("chart.kept", lang="en"), t("chart.blocked", lang="en")
    assert "linearGradient" not in chart.svg and h.texts[-2:] == [kept, blocked]  # not a ramp: two categories
    swatches = re.findall(r'<rect [^>]*width="12" height="12" fill="(#[0-9A-F]{6})"/>', chart.svg)
    assert swatches == [charts.PALETTE["query"], charts.PALETTE["masked"]]  # the legend, in that order
    assert set(h.fills) == {charts.PALETTE["query"], charts.PALETTE["masked"]}
    got = np.array([fill == charts.PALETTE["query"] for fill in h.fills]).reshape(3, 3)
    np.testing.assert_array_equal(got, CAUSAL == 1)  # the same cells kept in every convention
    assert [cell[2].endswith(f"({kept})") for cell in h.cells] == got.ravel().tolist()
    texts = value_texts(chart.svg)
    assert {text for _, text in texts} <= {"0", "1", "−∞"}  # written as the convention writes it
    assert [colour == "#FFFFFF" for colour, _ in texts] == got.ravel().tolist()  # white text on the blue
    assert "6 cells kept and 3 blocked" in chart.description


def test_mask_colours_are_apart_and_their_text_readable():
    """WCAG 2 contrast, computed here from the sRGB formula: white text on kept, ink on blocked, and the two
    fills apart in lightness (which every colour-vision deficiency keeps)."""
    def luminance(hex_colour: str) -> float:
        c = np.array([int(hex_colour[k:k + 2], 16) for k in (1, 3, 5)]) / 255
        linear = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
        return float(linear @ [0.2126, 0.7152, 0.0722])

    def contrast(a: str, b: str) -> float:
        hi, lo = sorted([luminance(a), luminance(b)], reverse=True)
        return (hi + 0.05) / (lo + 0.05)

    kept, blocked = charts.MASK_COLOURS["kept"], charts.MASK_COLOURS["blocked"]
    assert contrast("#FFFFFF", kept) >= 4.5 and contrast(charts.PALETTE["ink"], blocked) >= 4.5
    assert contrast(kept, blocked) >= 2.0


def test_kept_follows_each_convention():
    assert charts.kept([1, 0, np.nan], "mask").tolist() == [True, False, False]
    assert charts.kept([1, 0, -0.0], "mask_blocked").tolist() == [False, True, True]
    assert charts.kept([0, -np.inf, -1e9], "mask_additive").tolist() == [True, False, False]


# ---- dimensions ---------------------------------------------------------------------------------------------

def test_dimensions_are_numbered_from_d0_everywhere():
    assert charts.FIRST_DIMENSION == 0 and charts.dimension_labels(3) == ["d0", "d1", "d2"]
    assert charts.dimension_labels(2, start=4) == ["d4", "d5"]  # the second head's dimensions at d_k = 4
    strips = charts.value_strips({"x": np.zeros((2, 3))}, ["a", "b"], value_title="v").to_dict()
    dims = next(rows for rows in strips["datasets"].values() if rows and "dim" in rows[0])
    assert [r["dim"] for r in dims[:3]] == ["d0", "d1", "d2"]
    image = picture_of(charts.picture(np.zeros((4, 6)), x_title="d", y_title="p", value_title="v", width=240,
                                      height=160).svg)
    assert image.texts[:10] == ["0", "1", "2", "3", "0", "1", "2", "3", "4", "5"]  # rows, then columns, from 0


# ---- numbers in the reader's language -----------------------------------------------------------------------

def test_numbers_follow_the_language():
    assert charts.number(12345.5, ",.2f", "en") == "12,345.50" and charts.number(12345.5, ",.2f", "es") == "12.345,50"
    assert charts.short_number(-0.25, "es") == "-0,25" and charts.short_number(float("-inf"), "es") == "−∞"
    assert charts.exact(0.5, "es") == "0,5000" and charts.exact(0.5, "en") == "0.5000"
    assert numbers.pair(0.5, -1.25, lang="es") == "(0,50; -1,25)" and numbers.pair(0.5, -1.25, lang="en") == "(0.50, -1.25)"


def test_every_builder_carries_its_number_locale(spanish):
    from chart_examples import BUILDER_EXAMPLES

    for name, build in BUILDER_EXAMPLES.items():
        spec = build().to_dict()
        assert spec["config"]["locale"]["number"] == {"decimal": ",", "thousands": ".", "grouping": [3],
                                                      "currency": ["", ""]}, name
        assert "locale" not in json.dumps({k: v for k, v in spec.items() if k != "config"}), name  # top level only


def test_every_svg_heatmap_writes_its_numbers_in_the_language(spanish):
    """An SVG carries no locale: its numbers are written in Python, each with the session's decimal comma."""
    from chart_examples import SVG_EXAMPLES

    for name, build in SVG_EXAMPLES.items():
        h = drawn(build())
        english = [text for text in h.texts + [exact for *_, exact in h.cells] if re.fullmatch(r"-?\d+\.\d+", text)]
        assert not english, (name, english)
        assert not re.search(r"\d\.\d\d\b", h.description), name


def test_every_picture_writes_its_numbers_in_the_language(spanish):
    from chart_examples import PICTURE_EXAMPLES

    for name, build in PICTURE_EXAMPLES.items():
        chart = build()
        drawn = picture_of(chart.svg, chart.description)
        english = [text for text in drawn.texts if re.fullmatch(r"-?\d+\.\d+", text)]
        assert not english, (name, english)
        assert not re.search(r"\d\.\d\d\b", drawn.description), name
    assert picture_of(PICTURE_EXAMPLES["picture, one row of 512"]().svg).texts[-3:] == ["3,00", "0,00", "-3,00"]


def test_every_line_chart_writes_its_numbers_in_the_language(spanish):
    from chart_examples import LINE_EXAMPLES

    for name, build in LINE_EXAMPLES.items():
        chart = line_chart_of(build().svg)
        english = [text for text in chart.texts if re.fullmatch(r"-?[\d,]*\d\.\d+", text)
                   and not re.fullmatch(r"-?\d{1,3}(\.\d{3})+", text)]  # a point between thousands is Spanish
        assert not english, (name, english)
    texts = line_chart_of(LINE_EXAMPLES["lines, thousands"]().svg).texts
    assert "12.000" in texts and "2500" in texts


def test_every_bar_chart_writes_its_numbers_in_the_language(spanish):
    from chart_examples import BAR_EXAMPLES

    for name, build in BAR_EXAMPLES.items():
        chart = bar_chart_of(build().svg)
        english = [text for text in chart.texts if re.search(r"\d\.\d", text)]
        assert not english, (name, english)
        assert any(re.fullmatch(r"-?\d+,\d+", text) for text in chart.texts) or name.endswith("counts"), name


def test_spanish_cells_tooltips_and_descriptions_write_a_decimal_comma(spanish):
    chart = charts.heatmap_svg(np.array([[0.5, -1.25], [2.0, -np.inf]]), "ab", "ab", scale="diverging")
    assert [text for _, text in value_texts(chart.svg)] == ["0,50", "-1,25", "2,00", "−∞"]
    assert [exact for *_, exact in drawn(chart).cells] == ["0,5000", "-1,2500", "2,0000", "-inf"]
    assert legend_ticks(drawn(chart).texts) == ["2,00", "0,00", "-2,00"]
    assert "de -1,25 a 2,00" in chart.description
    bars = charts.bars([0.25, 0.75], ["p", "q"], value_title="w")
    assert bars.description.endswith("w: p = 0,25; q = 0,75")
    assert bar_chart_of(bars.svg).written == ["0,25", "0,75"] and "0,4" in bar_chart_of(bars.svg).texts
    arrows = charts.plane_arrows([(1, -0.5)], ["q"], ["#0072B2"], x_title="d0", y_title="d1").to_dict()
    assert arrows["description"].endswith("(d0; d1): q = (1,00; -0,50)")
    parts = charts.contributions(np.array([0.5]), np.array([[0.25]]), ["a"], ["d0"])
    assert "<title>a, d0: 0,5000 × 0,2500 = 0,1250</title>" in parts.svg and "d0 = 0,12" in parts.description


def test_vega_writes_the_axes_with_the_charts_locale(spanish):
    """Vega itself (vl-convert runs it; so do the PNG and SVG downloads) writes the axis labels with a comma."""
    import vl_convert

    strips = charts.value_strips({"a": np.array([[0.1, 0.9]])}, ["r"], value_title="v")
    svg = vl_convert.vegalite_to_svg(strips.to_dict())
    labels = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    assert {"0,2", "0,4", "0,6", "0,8"} <= set(labels) and not any(re.fullmatch(r"\d\.\d", s) for s in labels)


def test_a_spanish_session_draws_every_chart_with_a_decimal_comma():
    """The session's language reaches the charts of a real lesson (what Streamlit sends)."""
    from conftest import ROOT, start_page

    at = start_page(ROOT / "app.py", lesson="lessons/01_similarity.py", lang="es", numbers=False)
    bars = bar_charts(at)  # drawn on the server: the word's weights, and its pieces stacked
    assert bars and all(re.search(r"= \d+,\d\d", b.description) for b in bars)
    assert all(re.fullmatch(r"\d+,\d\d", text) for b in bars for text in b.written)
    stacked = bar_charts(at, "stacked")
    assert len(stacked) == 1 and re.search(r"= -?\d+,\d\d", stacked[0].description)
    assert any(re.fullmatch(r"-?\d+,\d", text) for text in stacked[0].texts)  # its axis
    at = start_page(ROOT / "app.py", lesson="lessons/06_layer_norm.py", lang="es", numbers=False,
                    state={"ln_part": "styles"})  # the value strips, drawn by Vega
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    assert specs and all(s["config"]["locale"]["number"]["decimal"] == "," for s in specs)


def test_the_lessons_score_matrices_are_drawn_as_scores():
    """S = Q Kᵀ (scaled, masked) in lessons 2 and 4 carries the "scores" kind: its legend says "Score"."""
    from conftest import ROOT, start_page
    from widgets import heatmaps

    for lesson, titles, part in (
            ("lessons/02_attention.py", ("qkv.S_title", "qkv.S_scaled_title"), {"qkv_part": "scores"}),
            ("lessons/04_multi_head.py", ("mha.scores_title",), {"mha_part": "inside"})):  # the parts that have them
        at = start_page(ROOT / "app.py", lesson=lesson, numbers=False, state=part)
        scored = [h for h in heatmaps(at) if h.legend == t("chart.score_legend", lang="en")]
        assert len(scored) >= len(titles), lesson


def test_spanish_axes_and_legends_write_four_digits_unseparated(spanish):
    from ui.charts import numbers

    spec = charts.growth_lines([0, 1], {"a": [0.2, 0.9]}, x_title="x", y_title="y").to_dict()
    assert spec["config"]["axis"]["labelExpr"] == spec["config"]["legend"]["labelExpr"] == numbers.FOUR_DIGITS
    assert numbers.label_config("en") == {}
    # The expression drops the one thousands point of a label from 1000 to 9999 and nothing else: Vega's
    # replace() with a string pattern replaces the first match, as JavaScript's String.replace does.
    for value, label, shown in ((2048, "2.048", "2048"), (-1500.5, "-1.500,5", "-1500,5"), (37000, "37.000", "37.000"),
                                (0.5, "0,5", "0,5")):
        assert (label.replace(".", "", 1) if 1000 <= abs(value) < 10000 else label) == shown
