"""Chart builders: valid Vega-Lite, the agreed colour scales, value text only when small, -inf handled."""
from __future__ import annotations

from pathlib import Path

import altair as alt
import numpy as np
import pandas as pd
import pytest
from chart_examples import BUILDER_EXAMPLES, WORDS

from ui import charts

ROOT = Path(__file__).resolve().parents[1]

OKABE_ITO = {"#000000", "#E69F00", "#56B4E9", "#009E73", "#F0E442", "#0072B2", "#D55E00", "#CC79A7"}


def layers(spec: dict) -> list[dict]:
    return spec.get("layer") or spec["spec"]["layer"]


def color_scale(spec: dict) -> dict:
    return next(l["encoding"]["color"]["scale"] for l in layers(spec)
                if l["mark"]["type"] == "rect" and "color" in l.get("encoding", {}))


def dataset(spec: dict) -> list[dict]:
    (rows,) = spec["datasets"].values()
    return rows


def has_text(spec: dict) -> bool:
    return any(l["mark"]["type"] == "text" for l in layers(spec))


def font_sizes(node) -> list[float]:
    if isinstance(node, dict):
        own = [v for k, v in node.items() if k.lower().endswith("fontsize") and isinstance(v, (int, float))]
        return own + [s for v in node.values() for s in font_sizes(v)]
    if isinstance(node, list):
        return [s for v in node for s in font_sizes(v)]
    return []


def test_diverging_scale_is_symmetric_around_zero():
    m = np.array([[-2.0, 0.5], [1.0, 0.25]])
    scale = color_scale(charts.heatmap(m, ["a", "b"], ["c", "d"], scale="diverging").to_dict())
    assert scale["domain"] == [-2.0, 2.0] and scale["domainMid"] == 0.0
    scale = color_scale(charts.heatmap(m * -3, ["a", "b"], ["c", "d"], scale="diverging").to_dict())
    assert scale["domain"] == [-6.0, 6.0]


def test_weights_scale_is_fixed_from_0_to_1():
    a = np.full((3, 3), 1 / 3)
    assert color_scale(charts.heatmap(a, "abc", "abc", scale="weights").to_dict())["domain"] == [0.0, 1.0]


def test_sequential_scale_follows_the_data():
    m = np.array([[1.0, 2.0], [3.0, 5.0]])
    assert color_scale(charts.heatmap(m, "ab", "cd", scale="sequential").to_dict())["domain"] == [1.0, 5.0]
    assert charts.auto_scale(m) == "sequential" and charts.auto_scale(-m) == "diverging"


@pytest.mark.parametrize("n, text", [(1, True), (5, True), (12, True), (13, False), (64, False)])
def test_value_text_only_for_small_matrices(n, text):
    spec = charts.heatmap(np.arange(n * n, dtype=float).reshape(n, n), range(n), range(n)).to_dict()
    assert has_text(spec) is text
    assert min(font_sizes(spec)) >= 12  # readable on a projector


def test_rows_top_to_bottom_in_matrix_order_and_tooltips():
    spec = charts.heatmap(np.eye(5), WORDS, WORDS, text=charts.ChartText("fila", "columna", "peso")).to_dict()
    rect = layers(spec)[1]
    assert rect["encoding"]["y"]["sort"] == WORDS and rect["encoding"]["x"]["sort"] == WORDS
    assert [t["title"] for t in rect["encoding"]["tooltip"]] == ["fila", "columna", "peso"]
    cells = dataset(spec)
    assert len(cells) == 25 and cells[1] == {**cells[1], "row": "time", "col": "flies", "exact": "0.0000"}


def test_minus_infinity_is_drawn_grey_and_says_minus_inf():
    m = np.array([[0.9, -np.inf], [0.6, 0.8]])
    chart = charts.heatmap(m, ["I", "love"], ["I", "love"], scale="diverging")
    spec = chart.to_dict()
    masked = next(c for c in dataset(spec) if c["col"] == "love" and c["row"] == "I")
    assert masked["value"] is None and masked["finite"] is False and masked["exact"] == "-inf"
    assert masked["text"] == "−∞"
    grey = layers(spec)[0]
    assert grey["mark"]["color"] == charts.PALETTE["masked"] and grey["transform"] == [{"filter": "!datum.finite"}]
    assert color_scale(spec)["domain"] == [-0.9, 0.9]  # -inf does not stretch the scale
    import vl_convert
    assert "<svg" in vl_convert.vegalite_to_svg(spec)  # and Vega renders it


def test_all_masked_matrix_does_not_crash():
    spec = charts.heatmap(np.full((2, 2), -np.inf), "ab", "ab", scale="diverging").to_dict()
    assert color_scale(spec)["domain"] == [-1.0, 1.0]


def test_small_multiples_share_one_scale_in_panel_order():
    heads = [np.eye(3) * 0.5, np.full((3, 3), -2.0)]
    spec = charts.facet_heatmaps(heads, ["head 2", "head 1"], "abc", "abc", scale="diverging").to_dict()
    assert spec["facet"]["sort"] == ["head 2", "head 1"] and spec["columns"] == 4
    assert color_scale(spec)["domain"] == [-2.0, 2.0]
    assert {c["panel"] for c in dataset(spec)} == {"head 1", "head 2"} and len(dataset(spec)) == 18


def test_bars_keep_order_and_the_weights_domain():
    spec = charts.bars([0.25, 0.2, 0.55], ["a", "b", "c"], value_title="weight").to_dict()
    bar = layers(spec)[0]
    assert bar["encoding"]["y"]["sort"] == ["a", "b", "c"] and bar["encoding"]["x"]["scale"]["domain"] == [0, 1]
    assert [r["text"] for r in dataset(spec)] == ["0.25", "0.20", "0.55"]


def test_contributions_add_up_to_the_weighted_average():
    x = np.array([[0.2, 0.8, 0.3], [0.7, 0.2, 0.9]])
    w = np.array([0.4, 0.6])
    spec = charts.contributions(w, x, ["time", "flies"], ["d1", "d2", "d3"]).to_dict()
    totals = next(rows for rows in spec["datasets"].values() if "total" in rows[0])
    np.testing.assert_allclose([r["total"] for r in totals], w @ x)


def test_lines_and_palette():
    spec = charts.lines([0, 1, 2], {"a": [1, 2, 3], "b": [3, 2, 1]}, x_title="x", y_title="y").to_dict()
    assert spec["encoding"]["color"]["sort"] == ["a", "b"]
    qkvo = [charts.PALETTE[k] for k in ("query", "key", "value", "output")]
    assert len(set(qkvo)) == 4 and set(qkvo) <= OKABE_ITO


def test_labels_are_made_unique_and_shapes_checked():
    assert charts.unique_labels(["a", "b", "a", 1]) == ["a", "b", "a (2)", "1"]
    with pytest.raises(ValueError):
        charts.heatmap(np.zeros((2, 3)), "ab", "ab")


# ---- validation: skipped when drawing, checked here ------------------------------------------------------

@pytest.mark.parametrize("name", list(BUILDER_EXAMPLES))
def test_every_builder_makes_valid_vega_lite(name):
    """Drawing skips Altair's schema validation (see charts._Unvalidated): it happens here instead."""
    chart = BUILDER_EXAMPLES[name]()
    validated = chart.to_dict(validate=True)  # raises SchemaValidationError on an invalid spec
    assert chart.to_dict() == validated  # the unvalidated path gives the same spec


def test_drawing_skips_validation_but_tests_can_ask_for_it():
    from altair.utils.schemapi import SchemaValidationError

    chart = charts.heatmap(np.eye(2), "ab", "ab")
    chart.width = "wide"  # not a valid width; set directly, as .properties() would refuse it
    assert chart.to_dict()["width"] == "wide"  # what st.altair_chart calls: no schema check
    with pytest.raises(SchemaValidationError):
        chart.to_dict(validate=True)
    edited = charts.lines([0, 1], {"a": [0, 1]}, x_title="x", y_title="y").properties(width=100)
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


def test_cell_text_is_sent_only_when_written():
    small = dataset(charts.heatmap(np.eye(3), "abc", "abc").to_dict())
    big = dataset(charts.heatmap(np.eye(20), range(20), range(20)).to_dict())
    assert {"text", "dark"} <= set(small[0]) and not {"text", "dark"} & set(big[0])
    assert {"row", "col", "i", "j", "value", "finite", "exact"} <= set(big[0])


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
