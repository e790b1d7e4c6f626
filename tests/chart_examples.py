"""Every chart builder of ui.charts at small and at edge-case inputs, shared by the chart and accessibility tests:
the Vega-Lite ones (`BUILDER_EXAMPLES`), the heatmaps drawn as SVG (`SVG_EXAMPLES`, with two readers of its SVG
that tests/widgets.py's `heatmap_of` leaves out), and the pictures, line charts and bars drawn as SVG
(`PICTURE_EXAMPLES`, `LINE_EXAMPLES`, `BAR_EXAMPLES`)."""
from __future__ import annotations

import re

import numpy as np

from ui import charts

WORDS = ["time", "flies", "like", "an", "arrow"]


def _weights(h: int, n: int) -> np.ndarray:
    w = np.random.default_rng(h * 100 + n).random((h, n, n))  # (h, n, n)
    return w / w.sum(axis=-1, keepdims=True)


BUILDER_EXAMPLES = {  # every Vega-Lite builder, at small and at edge-case inputs
    "head view": lambda: charts.head_view(_weights(4, 6), WORDS + ["x"], [0, 2], ["h0", "h1", "h2", "h3"], title="H"),
    "head view one head": lambda: charts.head_view(_weights(1, 3), "abc", [0], ["h0"], threshold=0.9, top_k=1),
    "value strips": lambda: charts.value_strips({"before": np.eye(5, 8), "after": -np.eye(5, 8)}, WORDS,
                                                value_title="v", row_title="r"),
    "cost curves": lambda: charts.cost_curves([1, 10, 100, 1000], {"a": [1, 10, 100, 1000], "b": [1, 1e2, 1e4, 1e6]},
                                              [("x", 10.0)], x_title="n", y_title="c", now=("now", 100.0), title="T"),
    "cost curves, no marks": lambda: charts.cost_curves([1, 10], {"a": [1, 2]}, [], x_title="n", y_title="c"),
    "plane arrows": lambda: charts.plane_arrows([(1, 0.5), (-0.3, 0.2)], ["a", "a"], ["#000000", "#0072B2"],
                                                x_title="x", y_title="y", circles=(1.0, 0.5), title="P"),
    "growth lines": lambda: charts.growth_lines([2, 4, 8, 16], {"n": [2, 4, 8, 16], "n²": [4, 16, 64, 256]},
                                                x_title="n", y_title="c", title="G"),
    "attention grid": lambda: charts.attention_grid(_weights(6, 5).reshape(2, 3, 5, 5), ["L1", "L2"],
                                                    ["h1", "h2", "h3"], value_title="w", notes=list("abcdef"),
                                                    title="G"),
    "run lines": lambda: charts.run_lines([("N = 1", "pre", [0.5, None, 0.9]), ("N = 2", "post", [0.1, 0.2])],
                                          x_title="epoch", y_title="acc", color_title="N", dash_title="norm"),
}

PICTURE_EXAMPLES = {  # charts.picture (drawn as SVG) at small and at edge-case inputs
    "picture": lambda: charts.picture(np.outer(np.arange(64.0), np.ones(32)) - 30, x_title="x", y_title="y",
                                      value_title="v", title="I"),
    "picture, all masked": lambda: charts.picture(np.full((5, 7), -np.inf), x_title="x", y_title="y",
                                                  value_title="v", domain=(0.0, 1.0)),
    "picture, weights": lambda: charts.picture(np.full((40, 40), 1 / 40), x_title="column", y_title="row",
                                               kind="weights", width=300, height=300),
    "picture, one row of 512": lambda: charts.picture(np.linspace(-2, 3, 512)[None], x_title="d", y_title="p",
                                                      width=520, height=80, value_title="Ausgabe des Encoders"),
}

SVG_EXAMPLES = {  # charts.heatmap_svg and facet_svg at the inputs the Vega heatmaps were checked at
    "heatmap small": lambda: charts.heatmap_svg(np.eye(3) - 0.5, "abc", "abc", title="T"),
    "heatmap masked": lambda: charts.heatmap_svg(np.array([[0.9, -np.inf], [np.nan, np.inf]]), "ab", "ab",
                                                 scale="weights"),
    "heatmap all masked": lambda: charts.heatmap_svg(np.full((2, 2), -np.inf), "ab", "ab", scale="sequential"),
    "heatmap 64 x 64": lambda: charts.heatmap_svg(np.arange(4096.0).reshape(64, 64), range(64), range(64)),
    "heatmap 1 x 40": lambda: charts.heatmap_svg(np.ones((1, 40)), ["only"], range(40), max_width=300),
    "mask": lambda: charts.heatmap_svg(np.tril(np.ones((4, 4))), "abcd", "abcd", scale="mask", title="M"),
    "additive mask, big": lambda: charts.heatmap_svg(np.triu(np.full((20, 20), -np.inf), 1), range(20), range(20),
                                                     scale="mask_additive"),
    "facet": lambda: charts.facet_svg(list(_weights(16, 8)), [f"h{k}" for k in range(16)], range(8), range(8)),
    "facet signed": lambda: charts.facet_svg([np.eye(3), -np.eye(3)], ["a", "b"], "abc", "abc", scale="diverging",
                                             columns=2, show_values=False),
    "facet masks": lambda: charts.facet_svg([np.eye(3), 1 - np.eye(3)], ["a", "b"], "abc", "abc",
                                            scale="mask_blocked", legend="m"),
}


LINE_EXAMPLES = {  # charts.lines (drawn as SVG) at small and at edge-case inputs
    "lines": lambda: charts.lines([0, 1, 2], {"a": [1, 2, 3], "b": [3, 2, 1]}, x_title="x", y_title="y", title="L"),
    "lines, a gap and a short series": lambda: charts.lines(range(5), {"a": [1, np.nan, 3, 4, 5], "b": [0.5, 0.25]},
                                                            x_title="x", y_title="y"),
    "lines, one point": lambda: charts.lines([3], {"a": [0.5]}, x_title="x", y_title="y", points=True),
    "lines, constant": lambda: charts.lines([0, 1], {"a": [0.0, 0.0]}, x_title="x", y_title="y"),
    "lines, percent": lambda: charts.lines([10, 20, 30], {"a": [0.0, 0.5, 1.0], "b": [0.2, 0.4, 0.9]},
                                           x_title="step", y_title="acc", points=True, y_domain=(0, 1), y_percent=True),
    "lines, layers": lambda: charts.lines([1, 2, 3], {"pre": [1.5, 1.2, 1.1]}, x_title="layer", y_title="g",
                                          whole_x=True, points=True, width=320,
                                          title="A title long enough to be written on two lines or more"),
    "lines, thousands": lambda: charts.lines([0, 2500, 5000], {"a": [12000.5, 3.25, -4.5]}, x_title="x", y_title="y"),
}


def value_texts(svg: str) -> list[tuple[str, str]]:
    """(colour, text) of the value written in each cell of a heatmap_svg, in matrix order (a cell's text carries
    only its place and colour; every other text of the SVG its font size too)."""
    return re.findall(r'<text x="[^"]*" y="[^"]*" fill="(#[0-9A-F]{6})">([^<]*)</text>', svg)


def legend_ticks(texts: list[str]) -> list[str]:
    """A ramp legend's tick labels, high to low: the last three texts of a heatmap_svg."""
    return texts[-3:]


BAR_EXAMPLES = {  # charts.bars and distribution_bars (drawn as SVG) at small and at edge-case inputs
    "bars": lambda: charts.bars([0.25, 0.2, 0.55], ["a", "b", "a"], title="B", label_title="w"),
    "bars free domain": lambda: charts.bars(np.arange(30) - 3.5, range(30), domain=None, width=200),
    "bars, all negative, long labels": lambda: charts.bars([-2.5, -0.125], ["a label far too long to be written whole",
                                                                           "b"], domain=None, value_title="score"),
    "distribution bars": lambda: charts.distribution_bars([0.6, 0.0, 0.4], "abc", kept=[True, False, True],
                                                          ghost=[0.5, 0.2, 0.3], marked=2, title="D"),
    "distribution bars, counts": lambda: charts.distribution_bars([30, 0, 12], "xyz", ghost=[25.5, 3.0, 13.5],
                                                                  kept=[True, False, True], domain=None,
                                                                  value_format=".0f", label_title="token",
                                                                  title="A title long enough to be written on "
                                                                        "two lines or more"),
    "contributions": lambda: charts.contributions(np.array([0.4, 0.6]), np.array([[0.2, -0.8, 0.3], [0.7, 0.2, 0.9]]),
                                                  WORDS[:2], ["d1", "d2", "d3"], title="C"),
    "contributions, 16 dimensions": lambda: charts.contributions(np.full(5, 0.2), np.linspace(-2, 3, 80).reshape(5, 16),
                                                                 WORDS, range(16), max_width=280),
}
