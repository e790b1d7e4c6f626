"""Chart builders: valid Vega-Lite, the agreed colour scales, value text only when small, -inf handled."""
from __future__ import annotations

import numpy as np
import pytest

from ui import charts

WORDS = ["time", "flies", "like", "an", "arrow"]
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
    spec = charts.heatmap(np.eye(5), WORDS, WORDS, text=charts.ChartText("fila", "columna", "valor")).to_dict()
    rect = layers(spec)[1]
    assert rect["encoding"]["y"]["sort"] == WORDS and rect["encoding"]["x"]["sort"] == WORDS
    assert [t["title"] for t in rect["encoding"]["tooltip"]] == ["fila", "columna", "valor"]
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
