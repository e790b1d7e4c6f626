"""Chart builders: valid Vega-Lite (and well-formed SVG), the agreed colour scales, value text only when small,
-inf handled."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest
from chart_examples import (BAR_EXAMPLES, BUILDER_EXAMPLES, LINE_EXAMPLES, PICTURE_EXAMPLES, SVG_EXAMPLES, WORDS,
                            legend_ticks, value_texts)
from widgets import Heatmap, bar_chart_of, heatmap_of, line_chart_of, picture_of

from ui import charts
from ui.charts.palette import SCHEME_STOPS, ramp_domain
from ui.charts.svg import CHAR_WIDTH
from ui.charts.svg_lines import axis, tick_label, tick_step

ROOT = Path(__file__).resolve().parents[1]

OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}


def drawn(chart: charts.SvgChart) -> Heatmap:
    return heatmap_of(chart.svg, chart.description)


def test_diverging_scale_is_symmetric_around_zero():
    m = np.array([[-2.0, 0.5], [1.0, 0.25]])
    assert ramp_domain("diverging", m) == (-2.0, 2.0) and ramp_domain("diverging", m * -3) == (-6.0, 6.0)
    low, mid, high = (c for _, c in SCHEME_STOPS["diverging"][::5])  # the ramp's ends and its middle
    h = drawn(charts.heatmap_svg(m, ["a", "b"], ["c", "d"], scale="diverging"))
    assert legend_ticks(h.texts) == ["2.00", "0.00", "-2.00"] and h.fills[0] == low
    h = drawn(charts.heatmap_svg(m * -3, ["a", "b"], ["c", "d"], scale="diverging"))
    assert legend_ticks(h.texts) == ["6.00", "0.00", "-6.00"] and h.fills[0] == high
    assert drawn(charts.heatmap_svg(np.array([[0.0, 1.0]]), "a", "cd")).fills[0] == mid  # 0 in the middle


def test_weights_scale_is_fixed_from_0_to_1():
    a = np.full((3, 3), 1 / 3)
    assert ramp_domain("weights", a) == (0.0, 1.0)
    h = drawn(charts.heatmap_svg(a, "abc", "abc", scale="weights"))
    assert legend_ticks(h.texts) == ["1.00", "0.50", "0.00"]
    spread = drawn(charts.heatmap_svg(np.array([[1 / 3, 0.0, 1.0]]), "a", "abc", scale="weights"))
    assert set(h.fills) == {spread.fills[0]}  # 1/3 is the same colour whatever else the matrix holds
    assert spread.fills[1:] == [SCHEME_STOPS["weights"][0][1], SCHEME_STOPS["weights"][-1][1]]


def test_sequential_scale_follows_the_data():
    m = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert ramp_domain("sequential", m) == (1.0, 5.0)
    h = drawn(charts.heatmap_svg(m, "ab", "cd", scale="sequential"))
    assert legend_ticks(h.texts) == ["5.00", "3.00", "1.00"]
    assert (h.fills[0], h.fills[-1]) == (SCHEME_STOPS["sequential"][0][1], SCHEME_STOPS["sequential"][-1][1])
    assert charts.auto_scale(m) == "sequential" and charts.auto_scale(-m) == "diverging"


@pytest.mark.parametrize("n, text", [(1, True), (5, True), (12, True), (13, False), (64, False)])
def test_value_text_only_for_small_matrices(n, text):
    svg = charts.heatmap_svg(np.arange(n * n, dtype=float).reshape(n, n), range(n), range(n)).svg
    assert len(value_texts(svg)) == (n * n if text else 0)
    assert min(float(size) for size in re.findall(r'font-size="([\d.]+)"', svg)) >= 12  # readable on a projector


def test_rows_top_to_bottom_in_matrix_order_and_cell_titles():
    h = drawn(charts.heatmap_svg(np.eye(5), WORDS, WORDS))
    assert h.texts[:5] == WORDS and h.texts[5:10] == WORDS  # column labels on top, then row labels on the left
    rows = [float(y) for y in re.findall(r'<text x="[^"]*" y="([^"]*)"[^>]*text-anchor="end"', h.svg)]
    assert rows == sorted(rows) and len(rows) == 5  # top to bottom
    assert len(h.cells) == 25 and h.cells[1] == ("time", "flies", "0.0000")  # each cell's <title>: row, column: value
    assert [row for row, _, _ in h.cells[:5]] == ["time"] * 5 and [col for _, col, _ in h.cells[:5]] == WORDS


def test_minus_infinity_is_drawn_grey_and_says_minus_inf():
    m = np.array([[0.9, -np.inf], [0.6, 0.8]])
    chart = charts.heatmap_svg(m, ["I", "love"], ["I", "love"], scale="diverging")
    h = drawn(chart)
    assert h.cells[1] == ("I", "love", "-inf") and h.matrix[0, 1] == -np.inf
    assert h.fills[1] == charts.PALETTE["masked"] and charts.PALETTE["masked"] not in h.fills[:1] + h.fills[2:]
    assert value_texts(chart.svg)[1][1] == "−∞"
    assert ramp_domain("diverging", m) == (-0.9, 0.9) and legend_ticks(h.texts)[0] == "0.90"  # not stretched by -inf
    assert ET.fromstring(chart.svg).tag.endswith("svg")  # well-formed: a browser draws it


def test_all_masked_matrix_does_not_crash():
    h = drawn(charts.heatmap_svg(np.full((2, 2), -np.inf), "ab", "ab", scale="diverging"))
    assert set(h.fills) == {charts.PALETTE["masked"]} and legend_ticks(h.texts) == ["1.00", "0.00", "-1.00"]


def test_small_multiples_share_one_scale_in_panel_order():
    heads = [np.eye(3) * 0.5, np.full((3, 3), -2.0)]
    h = drawn(charts.facet_svg(heads, ["head 2", "head 1"], "abc", "abc", scale="diverging"))
    assert h.panels == ["head 2", "head 1"] and len(h.fills) == 18
    np.testing.assert_array_equal(h.matrix, np.vstack(heads))
    assert legend_ticks(h.texts) == ["2.00", "0.00", "-2.00"]  # one legend, over both panels' values
    assert h.fills[0] == charts.palette.cell_colours([0.5], "diverging", (-2.0, 2.0))[0]
    five = drawn(charts.facet_svg([np.eye(2)] * 5, list("abcde"), "xy", "xy", columns=2))
    rows = sorted({float(y) for y in re.findall(r'<text x="[^"]*" y="([^"]*)"[^>]*class="panel"', five.svg)})
    assert len(rows) == 3  # five panels, two to a row


def test_bars_keep_order_and_the_weights_domain():
    """Bars top to bottom in the given order, each as long as its value on the 0..1 axis (ticks at both ends), its
    value written after it."""
    chart = charts.bars([0.25, 0.2, 0.55], ["a", "b", "c"], value_title="weight")
    drawn_bars = bar_chart_of(chart.svg)
    assert drawn_bars.labels == ["a", "b", "c"] and drawn_bars.values.tolist() == [0.25, 0.2, 0.55]
    assert drawn_bars.written == ["0.25", "0.20", "0.55"] and {"0.0", "1.0", "weight"} <= set(drawn_bars.texts)
    rects = [(float(x), float(w)) for x, w in re.findall(r'<rect class="bar" x="([^"]+)" y="[^"]+" width="([^"]+)"',
                                                         chart.svg)]
    zero = rects[0][0]
    ones = [w / v for (_, w), v in zip(rects, [0.25, 0.2, 0.55])]  # px per unit: the same for every bar
    assert all(x == zero for x, _ in rects) and max(ones) - min(ones) < 1.0


def test_distribution_bars_mark_removed_ghost_and_chosen_tokens():
    chart = charts.distribution_bars([0.6, 0.0, 0.4], ["a", "b", "c"], kept=[True, False, True], ghost=[0.5, 0.2, 0.3],
                                     marked=2, removed_text="✕ gone", marked_text="◀ here")
    shown = bar_chart_of(chart.svg)
    assert shown.written == ["0.60", "✕ gone", "0.40  ◀ here"] and shown.marked == [2]
    assert shown.fills == [charts.PALETTE["query"], charts.PALETTE["masked"], charts.PALETTE["query"]]
    assert shown.ghosts.tolist() == [0.5, 0.2, 0.3]
    starts = [float(x) for x in re.findall(r'<text x="([^"]+)"[^>]*class="value"', chart.svg)]
    ends = [float(x) + float(w) for x, w in re.findall(r'<rect class="(?:bar|ghost)" x="([^"]+)" y="[^"]+" '
                                                       r'width="([^"]+)"', chart.svg)]  # ghost, bar; per row
    after = [round(start - max(ends[2 * k:2 * k + 2]), 1) for k, start in enumerate(starts)]
    assert after == [4.0] * 3  # each text 4 px after the longer of its two bars
    plain = bar_chart_of(charts.distribution_bars([3, 1], ["x", "y"], domain=None, value_format=".0f").svg)
    assert plain.ghosts is None and plain.marked == [] and plain.written == ["3", "1"]
    assert "✕" not in plain.svg and 'class="ghost"' not in plain.svg


def test_contributions_add_up_to_the_weighted_average():
    """Each piece is a_j x_j, stacked from zero (positive pieces up, negative ones down, in the words' order), and
    each dimension's tick marks the sum, the weighted average."""
    x = np.array([[0.2, -0.8, 0.3], [0.7, 0.2, 0.9]])
    w = np.array([0.4, 0.6])
    chart = charts.contributions(w, x, ["time", "flies"], ["d1", "d2", "d3"])
    pieces = re.findall(r'<rect class="part" x="[^"]+" y="([^"]+)" width="[^"]+" height="([^"]+)" fill="[^"]+" '
                        r'data-word="([^"]+)" data-value="([^"]+)"', chart.svg)  # dimension by dimension, word by word
    assert [word for *_, word, _ in pieces] == ["time", "flies"] * 3
    np.testing.assert_allclose(np.array([float(v) for *_, v in pieces]).reshape(3, 2).T, w[:, None] * x)
    totals = [float(v) for v in re.findall(r'<line class="total" [^>]*data-value="([^"]+)"', chart.svg)]
    np.testing.assert_allclose(totals, w @ x)
    (top0, h0), (top1, h1) = [(float(y), float(h)) for y, h, *_ in pieces[:2]]  # d1: both pieces positive
    assert top1 + h1 == pytest.approx(top0, abs=0.15)  # the second word's piece sits on the first's
    (top2, h2), (top3, _) = [(float(y), float(h)) for y, h, *_ in pieces[2:4]]  # d2: the first piece negative
    assert top3 + float(pieces[3][1]) == pytest.approx(top2, abs=0.15)  # the positive piece ends where zero is


def test_lines_carry_their_values_and_colours_in_order():
    """Each series as computed, in the given order (a short one over the first x values, a NaN kept as a gap),
    coloured CATEGORICAL in order or as given, and named in the legend in that order."""
    drawn_svg = charts.lines([0, 1, 2], {"b": [3, np.nan, 1], "a": [0.125, 2]}, x_title="x", y_title="y").svg
    chart = line_chart_of(drawn_svg)
    assert list(chart.series) == ["b", "a"]
    np.testing.assert_array_equal(chart.series["b"][0], [0, 1, 2])
    np.testing.assert_array_equal(chart.series["b"][1], [3, np.nan, 1])
    np.testing.assert_array_equal(chart.series["a"][0], [0, 1])
    np.testing.assert_array_equal(chart.series["a"][1], [0.125, 2])
    assert re.findall(r'<g class="series" [^>]*fill="([^"]+)"', chart.svg) == list(charts.CATEGORICAL[:2])
    assert chart.svg.count(" M") == 1  # the gap splits b's line in two ("M" starts each run)
    legend = re.findall(r'<text [^>]*class="legend">([^<]*)</text>', chart.svg)
    assert legend == ["b", "a"]
    given = charts.lines([0, 1], {"a": [0, 1]}, x_title="x", y_title="y", colors=[charts.PALETTE["key"]]).svg
    assert f'fill="{charts.PALETTE["key"]}"' in given


def well_formed(chart) -> ET.Element:
    """The SVG's root, once it parses, has the size the page is told and its text alternative as its title."""
    root = ET.fromstring(chart.svg)
    assert (root.get("width"), root.get("height")) == (str(chart.width), str(chart.height))
    assert root.find("{http://www.w3.org/2000/svg}title").text == chart.description
    return root


def assert_labels_inside(chart) -> None:
    """Every 13 px label (ticks, axis labels) lies inside the SVG's width, judged by its anchor and length."""
    for x, anchor, text in re.findall(r'<text x="([^"]+)" y="[^"]+" font-size="13" text-anchor="(\w+)"[^>]*>([^<]*)<',
                                      chart.svg):
        half = len(text) * 13 * CHAR_WIDTH / (2 if anchor == "middle" else 1)
        left = float(x) - (half if anchor != "start" else 0)
        right = float(x) + (half if anchor != "end" else 0)
        assert 0 <= left and right <= chart.width, (text, left, right)


@pytest.mark.parametrize("name", [*LINE_EXAMPLES, *BAR_EXAMPLES])
def test_every_line_and_bar_chart_is_well_formed(name):
    """The SVG parses, its size is the one the page is told, its title is its text alternative, and every point,
    bar and tick label lies inside it."""
    chart = (LINE_EXAMPLES | BAR_EXAMPLES)[name]()
    well_formed(chart)
    coords = [float(v) for path in re.findall(r' d="([^"]+)"', chart.svg) for v in re.findall(r"-?\d+\.?\d*", path)]
    assert coords and all(0 <= v <= max(chart.width, chart.height) for v in coords)
    for x, y, w, h in re.findall(r'<rect class="\w+" x="([^"]+)" y="([^"]+)" width="([^"]+)" height="([^"]+)"',
                                 chart.svg):
        assert 0 <= float(x) <= float(x) + float(w) <= chart.width
        assert 0 <= float(y) <= float(y) + float(h) <= chart.height
    assert_labels_inside(chart)


@pytest.mark.parametrize("name", list(PICTURE_EXAMPLES))
def test_every_picture_is_well_formed(name):
    """The SVG parses, its size is the one the page is told, its title is its text alternative, the picture lies
    inside it at the size asked for with every cell a block of whole pixels, and every label lies inside it."""
    chart = PICTURE_EXAMPLES[name]()
    root = well_formed(chart)
    image = root.find("{http://www.w3.org/2000/svg}image")
    x, y, w, h = (float(image.get(k)) for k in ("x", "y", "width", "height"))
    assert 0 <= x and x + w <= chart.width and 0 <= y and y + h <= chart.height
    rows, cols = map(int, re.search(r"(\d+) × (\d+)", chart.description).groups())
    pixels = picture_of(chart.svg).pixels  # (rows * block, cols * block, 3)
    assert pixels.shape[0] % rows == 0 and pixels.shape[1] % cols == 0
    block = (pixels.shape[0] // rows, pixels.shape[1] // cols)
    assert (np.repeat(np.repeat(pixels[::block[0], ::block[1]], block[0], 0), block[1], 1) == pixels).all()
    assert_labels_inside(chart)


def test_stacked_dimension_labels_never_touch():
    """Under narrow stacks every other dimension is named (as every k-th label of a heatmap), never two touching."""
    chart = BAR_EXAMPLES["contributions, 16 dimensions"]()
    named = [(float(x), text) for x, text in re.findall(r'<text x="([^"]+)" y="[^"]+" font-size="13" '
                                                       r'text-anchor="middle" [^>]*>(\d+)</text>', chart.svg)]
    assert [text for _, text in named] == [str(k) for k in range(0, 16, 2)]
    assert all(b - a >= len(text) * 13 * CHAR_WIDTH for (a, text), (b, _) in zip(named, named[1:]))

def test_line_axes_take_d3s_ticks():
    """The tick steps d3 (and so Vega) takes, and axes that include zero and end on ticks, as Vega's do."""
    assert tick_step(0, 1, 10) == pytest.approx(0.1) and tick_step(-4, 4, 12) == 0.5
    assert tick_step(0, 1200, 12) == 100 and tick_step(0, 5000, 10) == 500 and tick_step(0, 3.2, 6) == 0.5
    (lo, hi), ticks, step = axis(np.array([0.3, 2.7]), 240, None, False)
    assert (lo, hi, step) == (0, 3, 0.5) and ticks == [0, 0.5, 1, 1.5, 2, 2.5, 3]
    (lo, hi), ticks, step = axis(np.array([-0.17, 4.0]), 260, None, False)
    assert lo <= -0.17 and hi >= 4 and ticks[0] == lo and ticks[-1] == hi
    (lo, hi), ticks, step = axis(np.array([1.0, 2.0, 3.0]), 320, None, True)
    assert (lo, hi) == (1, 3) and ticks == [1, 2, 3]  # whole numbers only, from the first layer
    assert axis(np.array([0.0]), 320, None, True)[0] == (0, 1)
    assert axis(np.array([0.2, 0.9]), 260, (0, 1), False)[0] == (0, 1)


def test_line_tick_labels_never_overlap():
    """Fewer ticks on a narrow axis, as Vega drops overlapping labels."""
    for x, width in (([0, 100000], 320), ([-4, 4], 480), ([0, 5000], 380), ([0.001, 0.002], 200)):
        chart = charts.lines(x, {"a": [0, 1]}, x_title="x", y_title="y", width=width).svg
        below = re.findall(r'<text x="([^"]+)" y="([^"]+)" font-size="13" text-anchor="middle"[^>]*>([^<]*)<', chart)
        row = max(float(y) for _, y, _ in below)
        labels = [(float(x), text) for x, y, text in below if float(y) == row]
        assert len(labels) >= 2
        for (x1, a), (x2, b) in zip(labels, labels[1:]):
            assert x2 - x1 >= (len(a) + len(b)) * 13 * CHAR_WIDTH / 2, (a, b)


def test_tick_labels_in_both_languages():
    assert [tick_label(v, 0.5, False, "es") for v in (-0.5, 0.0, 1.5)] == ["-0,5", "0,0", "1,5"]
    assert [tick_label(v, 500, False, "es") for v in (2500, 12000)] == ["2500", "12.000"]
    assert [tick_label(v, 500, False, "en") for v in (2500, 12000)] == ["2,500", "12,000"]
    assert tick_label(0.5, 0.1, True, "es") == "50\u00a0%" and tick_label(0.5, 0.1, True, "en") == "50%"
    assert tick_label(1e-17, 0.1, False, "en") == "0.0"  # a sum's rounding error is zero, not "-0.0"


def test_lines_and_palette():
    qkvo = [charts.PALETTE[k] for k in ("query", "key", "value", "output")]
    assert len(set(qkvo)) == 4 and set(qkvo) <= OKABE_ITO


def test_labels_are_made_unique_and_shapes_checked():
    assert charts.unique_labels(["a", "b", "a", 1]) == ["a", "b", "a (2)", "1"]
    h = drawn(charts.heatmap_svg(np.eye(2), ["a", "a"], [1, 1]))
    assert [cell[:2] for cell in h.cells] == [("a", "1"), ("a", "1 (2)"), ("a (2)", "1"), ("a (2)", "1 (2)")]
    assert h.texts[:4] == ["1", "1 (2)", "a", "a (2)"]
    with pytest.raises(ValueError):
        charts.heatmap_svg(np.zeros((2, 3)), "ab", "ab")


# ---- validation: skipped when drawing, checked here ------------------------------------------------------

@pytest.mark.parametrize("name", list(BUILDER_EXAMPLES))
def test_every_builder_makes_valid_vega_lite(name):
    """Drawing skips Altair's schema validation (see charts._Unvalidated): it happens here instead."""
    chart = BUILDER_EXAMPLES[name]()
    validated = chart.to_dict(validate=True)  # raises SchemaValidationError on an invalid spec
    assert chart.to_dict() == validated  # the unvalidated path gives the same spec


@pytest.mark.parametrize("name", list(SVG_EXAMPLES))
def test_every_svg_heatmap_is_well_formed(name):
    """The SVG parses as XML (an image the browser cannot parse shows nothing), its size is the one the page is
    told, and it has a cell for every entry (a tooltip too where cells are 12 px or more) and its text alternative
    as its title."""
    chart = SVG_EXAMPLES[name]()
    well_formed(chart)
    h = drawn(chart)
    assert h.matrix.size == len(h.fills) > 0 and len(h.cells) in (0, len(h.fills))
    side = min(int(w) for w in re.findall(r'<rect x="[^"]+" y="[^"]+" width="(\d+)"', chart.svg))
    assert bool(h.cells) == (side >= 12), side


def test_drawing_skips_validation_but_tests_can_ask_for_it():
    from altair.utils.schemapi import SchemaValidationError

    chart = charts.value_strips({"a": np.eye(2)}, "ab", value_title="v")
    chart.width = "wide"  # not a valid width; set directly, as .properties() would refuse it
    assert chart.to_dict()["width"] == "wide"  # what st.altair_chart calls: no schema check
    with pytest.raises(SchemaValidationError):
        chart.to_dict(validate=True)
    edited = charts.growth_lines([1, 2], {"a": [1, 2]}, x_title="x", y_title="y").properties(width=100)
    assert isinstance(edited, charts._Unvalidated)  # a page's further edits keep the fast path


def test_matrix_frame_cells_match_a_cell_by_cell_reference():
    m = np.array([[-2.0, 0.3, np.inf], [-np.inf, np.nan, 1.5], [0.0, 1234.5, -0.6]])
    for kind, (lo, hi) in (("diverging", (-2.0, 2.0)), ("weights", (0.0, 1.0)), ("sequential", (-2.0, 1.5))):
        df = charts.matrix_frame(m, ["a", "b", "a"], [1, 2, 3], kind, (lo, hi))
        assert list(df["row"]) == ["a"] * 3 + ["b"] * 3 + ["a (2)"] * 3 and list(df["col"]) == ["1", "2", "3"] * 3
        assert list(df["i"]) == [0, 0, 0, 1, 1, 1, 2, 2, 2] and list(df["j"]) == [0, 1, 2] * 3
        for k, v in enumerate(m.ravel()):
            cell = df.iloc[k]
            finite = bool(np.isfinite(v))
            assert bool(cell["finite"]) is finite
            assert (cell["value"] == v) if finite else (cell["value"] is None or np.isnan(cell["value"]))
            assert cell["exact"] == (f"{v:.4f}" if finite else {np.inf: "inf", -np.inf: "-inf"}.get(v, "nan"))
            dark = {"diverging": v < -0.76 * hi or v > 0.83 * hi, "weights": v > 0.7,
                    "sequential": (v - lo) / (hi - lo) < 0.47}[kind] if finite else False
            assert bool(cell["dark"]) is bool(dark), (kind, v)
    assert list(charts.matrix_frame(m, "abc", "abc")["text"])[:3] == ["-2.00", "0.30", "+∞"]


def _app_pages() -> list[str]:
    """The page files of the app's PAGES."""
    from ui.lessons import PAGES

    return [entry[1] for entry in PAGES]


@pytest.mark.parametrize("page", _app_pages())
def test_every_chart_a_page_draws_is_valid_vega_lite(page):
    """What Streamlit sends (the spec, its data moved to Arrow datasets) for every chart of every lesson at its
    defaults with the numbers shown, including the pages' own edits of the builders' charts."""
    import json

    import altair as alt
    from conftest import start_page

    at = start_page(ROOT / "app.py", lesson=page, numbers=True)
    specs = [json.loads(chart.proto.spec) for chart in at.get("vega_lite_chart")]
    for spec in specs:
        alt.Root.validate(spec)  # raises jsonschema.ValidationError


def test_small_multiples_write_values_up_to_8_x_8():
    small = charts.facet_svg([np.eye(8)], ["h"], range(8), range(8))
    big = charts.facet_svg([np.eye(9)], ["h"], range(9), range(9))
    assert len(value_texts(small.svg)) == 64 and not value_texts(big.svg)


def test_layer_builds_the_same_spec_as_altair_with_or_without_anything_to_lift():
    """charts.engine.layer skips Altair's search of the layers only when they hold nothing to lift; either way the
    spec is Altair's own."""
    from ui.charts.engine import _finish, layer

    df = pd.DataFrame({"x": [0, 1], "y": [1.0, 2.0]})
    bare = [alt.Chart().mark_line().encode(x="x:Q", y="y:Q"), alt.Chart().mark_point().encode(x="x:Q", y="y:Q")]
    with_data = [alt.Chart(df).mark_line().encode(x="x:Q", y="y:Q").properties(width=120),
                 alt.Chart(df).mark_point().encode(x="x:Q", y="y:Q")]
    for layers, kwargs in ((bare, {"data": df}), (with_data, {})):
        ours = _finish(layer(*layers, **kwargs), height=90).to_dict(validate=True)
        theirs = _finish(alt.layer(*layers, **kwargs), height=90).to_dict(validate=True)
        assert ours == theirs


def test_value_strips_name_the_rows_once_on_the_left():
    """Side-by-side panels share their rows: only the first draws the row labels (lesson 6's four panels then fit
    the main area at 1280x720, tests/test_browser_layout.py)."""
    spec = charts.value_strips({"a": np.eye(2, 3), "b": -np.eye(2, 3), "c": np.ones((2, 3))}, ["x", "y"],
                               value_title="v").to_dict()
    axes = [[layer["encoding"]["y"].get("axis", "default") for layer in panel["layer"]] for panel in spec["hconcat"]]
    assert all(axis not in (None, "default") and axis["labelFontSize"] > 0 for axis in axes[0])
    assert all(axis is None for panel in axes[1:] for axis in panel)
    assert all(layer["encoding"]["y"]["sort"] == ["x", "y"] for panel in spec["hconcat"] for layer in panel["layer"])


def test_axis_labels_are_thinned_so_they_never_overlap():
    """A label every k-th cell (k a power of two) once cells are narrower than a label needs: 8 px columns of
    tilted labels get every 4th (32 px apart, 20 px across their lines), 13 px rows every 2nd; wide cells all."""
    wide = drawn(charts.heatmap_svg(np.zeros((8, 64)), range(8), charts.dimension_labels(64)))
    assert [s for s in wide.texts if s.startswith("d")] == [f"d{j}" for j in range(0, 64, 4)]
    assert [s for s in wide.texts if s.isdigit()] == [str(i) for i in range(8)]  # 52 px rows: every one
    square = drawn(charts.heatmap_svg(np.zeros((32, 32)), range(32), [f"k{j}" for j in range(32)], scale="weights"))
    assert [s for s in square.texts if s.isdigit()] == [str(i) for i in range(0, 32, 2)]
    assert [s for s in square.texts if s.startswith("k")] == [f"k{j}" for j in range(0, 32, 2)]
