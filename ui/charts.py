"""Altair chart builders: arrays and labels in, an ``alt.Chart`` out. No Streamlit calls here.

Conventions shared by every page:
- a heatmap's rows run top to bottom in matrix order, columns left to right, column labels on top;
- signed matrices use a diverging scale centred at 0 with a symmetric domain, attention weights a fixed
  0..1 scale (so two heatmaps of weights are comparable), other non-negative matrices a sequential scale;
- non-finite cells (a masked score is -inf) are drawn grey and say "-inf" in the tooltip;
- `PALETTE` fixes the colours of Q, K, V and the output on every page (Okabe-Ito: colour-blind safe);
- fonts are at least 12 px so a projector at the back of a lecture room can still be read.
All user-visible words (axis and tooltip titles) are passed in by the caller, already translated.
"""
from __future__ import annotations

import math
from types import MappingProxyType
from typing import Literal, NamedTuple, Sequence

import altair as alt
import numpy as np
import pandas as pd

Scale = Literal["diverging", "weights", "sequential"]

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
PALETTE = MappingProxyType({
    "query": "#0072B2",  # blue
    "key": "#D55E00",  # vermillion
    "value": "#009E73",  # bluish green
    "output": "#CC79A7",  # reddish purple
    "input": "#56B4E9",  # sky blue
    "highlight": "#E69F00",  # orange
    "masked": "#BDBDBD",  # grey, for -inf / blocked cells
    "ink": "#1A1A1A",
})
# Categorical colours for up to 12 series (words, heads): Okabe-Ito first, then Paul Tol's "muted".
CATEGORICAL = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#332288",
               "#882255", "#44AA99", "#999933", "#AA4499")
SMALL_MATRIX = 12  # value text is written in the cells up to 12 x 12
LABEL_FONT, TITLE_FONT, HEADING_FONT = 13, 14, 16
# The given width/height is the plotting area; axes and legends are added around it (Streamlit's default
# "fit" would squeeze them into it).
_PAD = alt.AutoSizeParams(type="pad", contains="padding")
_SCHEMES = MappingProxyType({"diverging": "blueorange", "weights": "blues", "sequential": "viridis"})


class ChartText(NamedTuple):
    """Words the charts show (tooltip and legend titles); pass translated ones."""
    row: str = "i"
    column: str = "j"
    value: str = "value"


def color_scale(kind: Scale, values: np.ndarray) -> alt.Scale:
    """The colour scale for a matrix: see the module docstring."""
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if kind == "weights":
        return alt.Scale(scheme=_SCHEMES["weights"], domain=[0.0, 1.0])
    if kind == "diverging":
        m = float(np.abs(finite).max()) if finite.size else 1.0
        m = m if m > 0 else 1.0
        return alt.Scale(scheme=_SCHEMES["diverging"], domain=[-m, m], domainMid=0.0)
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    return alt.Scale(scheme=_SCHEMES["sequential"], domain=[lo, hi if hi > lo else lo + 1.0])


def auto_scale(values: np.ndarray) -> Scale:
    """Diverging if any finite entry is negative, else sequential."""
    v = np.asarray(values, dtype=float)
    return "diverging" if np.any(v[np.isfinite(v)] < 0) else "sequential"


def unique_labels(labels: Sequence[object]) -> list[str]:
    """Labels as strings, made unique ("a", "a (2)") so they can name heatmap rows and columns."""
    seen: dict[str, int] = {}
    out = []
    for label in map(str, labels):
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


def short_number(v: float) -> str:
    """Cell text: two decimals, or three significant digits for big numbers; -inf as the minus-infinity sign."""
    if not math.isfinite(v):
        return "−∞" if v < 0 else ("+∞" if v > 0 else "NaN")
    return f"{v:.3g}" if abs(v) >= 1000 else f"{v:.2f}"


def _exact(v: float) -> str:
    return f"{v:.4f}" if math.isfinite(v) else ("-inf" if v < 0 else ("inf" if v > 0 else "nan"))


def _dark(v: float, kind: Scale, domain: Sequence[float]) -> bool:
    """Whether a cell's colour is dark (its text is then written in white): the dark ends of each scheme."""
    if not math.isfinite(v):
        return False
    lo, hi = float(domain[0]), float(domain[-1])
    if kind == "diverging":
        dark = abs(v) > 0.6 * hi
    elif kind == "weights":
        dark = v > 0.55
    else:
        dark = (v - lo) / (hi - lo) < 0.45
    return bool(dark)


def matrix_frame(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object],
                 kind: Scale = "sequential", domain: Sequence[float] = (0.0, 1.0)) -> pd.DataFrame:
    """A matrix in long form: one row per cell with its labels, value (None if not finite) and texts."""
    values = np.asarray(values, dtype=float)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    if values.shape != (len(rows), len(cols)):
        raise ValueError(f"matrix of shape {values.shape} with {len(rows)} row and {len(cols)} column labels")
    records = []
    for i, r in enumerate(rows):
        for j, c in enumerate(cols):
            v = float(values[i, j])
            finite = math.isfinite(v)
            records.append({"row": r, "col": c, "i": i, "j": j, "value": v if finite else None,
                            "finite": finite, "exact": _exact(v), "text": short_number(v),
                            "dark": _dark(v, kind, domain)})
    return pd.DataFrame.from_records(records)


def _cell_size(n_rows: int, n_cols: int, max_width: int = 560, max_height: int = 440) -> tuple[int, int]:
    w = max(2, min(52, max_width // n_cols))
    h = max(2, min(52, max_height // n_rows))
    if max(n_rows, n_cols) <= 4 * min(n_rows, n_cols):
        w = h = min(w, h)
    return w, h


def _axis(labels: list[str], cell: int, orient: str, title: str | None) -> alt.Axis:
    longest = max((len(s) for s in labels), default=1)
    angle = 0 if orient != "top" or longest * 8 <= cell else -40
    return alt.Axis(orient=orient, title=title, labelAngle=angle, labelFontSize=LABEL_FONT, titleFontSize=TITLE_FONT,
                    labelColor=PALETTE["ink"], titleColor=PALETTE["ink"], labelLimit=140, ticks=False,
                    domain=False, labelOverlap=len(labels) > 32, labelPadding=6)


def _plain_axis(title: str | None, label_size: int = 12, **kw) -> alt.Axis:
    return alt.Axis(title=title, labelFontSize=label_size, titleFontSize=TITLE_FONT, labelColor=PALETTE["ink"],
                    titleColor=PALETTE["ink"], **kw)


def _heat_layers(df: pd.DataFrame, rows: list[str], cols: list[str], scale: alt.Scale, text: ChartText,
                 show_values: bool, cell: tuple[int, int], x_title: str | None, y_title: str | None) -> list:
    x = alt.X("col:N", sort=cols, axis=_axis(cols, cell[0], "top", x_title))
    y = alt.Y("row:N", sort=rows, axis=_axis(rows, cell[1], "left", y_title))
    tooltip = [alt.Tooltip("row:N", title=text.row), alt.Tooltip("col:N", title=text.column),
               alt.Tooltip("exact:N", title=text.value)]
    stroke = {"stroke": "#FFFFFF", "strokeWidth": 1} if min(cell) >= 12 else {}
    masked = (alt.Chart().mark_rect(color=PALETTE["masked"], **stroke)
              .encode(x=x, y=y, tooltip=tooltip).transform_filter("!datum.finite"))
    legend = alt.Legend(title=text.value, labelFontSize=12, titleFontSize=13, gradientLength=160,
                        labelColor=PALETTE["ink"], titleColor=PALETTE["ink"])
    cells = (alt.Chart().mark_rect(**stroke)
             .encode(x=x, y=y, color=alt.Color("value:Q", scale=scale, legend=legend), tooltip=tooltip)
             .transform_filter("datum.finite"))
    layers = [masked, cells]
    if show_values:
        size = 14 if min(cell) >= 44 else 12
        layers.append(alt.Chart().mark_text(fontSize=size)
                      .encode(x=x, y=y, text="text:N", tooltip=tooltip,
                              color=alt.condition("datum.dark", alt.value("#FFFFFF"), alt.value(PALETTE["ink"]))))
    return layers


def heatmap(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object], *,
            scale: Scale = "diverging", title: str | None = None, text: ChartText = ChartText(),
            show_values: bool | None = None, x_title: str | None = None, y_title: str | None = None,
            max_width: int = 560, max_height: int = 440) -> alt.LayerChart:
    """A labelled heatmap of a 2-D matrix. `show_values` defaults to "the matrix is at most 12 x 12".

    Cells are square (at most 52 px) and shrink so the plotting area fits in max_width x max_height."""
    values = np.asarray(values, dtype=float)
    n_rows, n_cols = values.shape
    cell = _cell_size(n_rows, n_cols, max_width, max_height)
    if show_values is None:  # and only if "-0.25" fits in a cell
        show_values = n_rows <= SMALL_MATRIX and n_cols <= SMALL_MATRIX and cell[0] >= 28
    color = color_scale(scale, values)
    df = matrix_frame(values, row_labels, col_labels, scale, color.domain)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    chart = alt.layer(*_heat_layers(df, rows, cols, color, text, show_values, cell, x_title, y_title), data=df)
    chart = chart.properties(width=cell[0] * n_cols, height=cell[1] * n_rows, autosize=_PAD)
    return chart.properties(title=alt.TitleParams(title, fontSize=HEADING_FONT)) if title else chart


def facet_heatmaps(matrices: Sequence[np.ndarray], panel_titles: Sequence[str], row_labels: Sequence[object],
                   col_labels: Sequence[object], *, scale: Scale = "weights", columns: int = 4,
                   text: ChartText = ChartText(), show_values: bool | None = None) -> alt.FacetChart:
    """Small multiples: one heatmap per head or layer, one shared colour scale, panels in the given order."""
    stack = np.stack([np.asarray(m, dtype=float) for m in matrices])  # (panels, n_rows, n_cols)
    _, n_rows, n_cols = stack.shape
    if show_values is None:
        show_values = n_rows <= 8 and n_cols <= 8  # panels are smaller than a single heatmap
    color = color_scale(scale, stack)
    titles = list(panel_titles)
    frames = [matrix_frame(m, row_labels, col_labels, scale, color.domain).assign(panel=p)
              for m, p in zip(stack, titles)]
    df = pd.concat(frames, ignore_index=True)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    w, h = _cell_size(n_rows, n_cols)
    cell = (max(2, w * 2 // 3), max(2, h * 2 // 3))
    layered = alt.layer(*_heat_layers(df, rows, cols, color, text, show_values, cell, None, None), data=df)
    layered = layered.properties(width=cell[0] * n_cols, height=cell[1] * n_rows)
    header = alt.Header(labelFontSize=TITLE_FONT, labelFontWeight="bold", title=None)
    facet = layered.facet(facet=alt.Facet("panel:N", sort=titles, header=header), columns=columns)
    return facet.properties(autosize=_PAD)


def bars(values: Sequence[float], labels: Sequence[object], *, color: str = PALETTE["highlight"],
         title: str | None = None, value_title: str = "value", label_title: str | None = None,
         domain: tuple[float, float] | None = (0.0, 1.0), width: int = 300) -> alt.LayerChart:
    """Horizontal bars, one per label, top to bottom in the given order, each with its value written."""
    names = unique_labels(labels)
    values = [float(v) for v in values]
    df = pd.DataFrame({"label": names, "value": values, "text": [short_number(v) for v in values],
                       "exact": [_exact(v) for v in values]})
    y = alt.Y("label:N", sort=names, axis=_plain_axis(label_title, ticks=False, label_size=LABEL_FONT))
    scale = alt.Scale(domain=list(domain)) if domain else alt.Scale(zero=True)
    x = alt.X("value:Q", scale=scale, axis=_plain_axis(value_title))
    tooltip = [alt.Tooltip("label:N", title=label_title or ""), alt.Tooltip("exact:N", title=value_title)]
    bar = alt.Chart().mark_bar(color=color, cornerRadiusEnd=3).encode(x=x, y=y, tooltip=tooltip)
    label = alt.Chart().mark_text(align="left", dx=4, fontSize=LABEL_FONT).encode(x=x, y=y, text="text:N")
    chart = alt.layer(bar, label, data=df).properties(width=width, height=max(60, 30 * len(names)),
                                                      autosize=_PAD)
    return chart.properties(title=alt.TitleParams(title, fontSize=HEADING_FONT)) if title else chart


def contributions(weights: np.ndarray, vectors: np.ndarray, labels: Sequence[object], dim_labels: Sequence[object],
                  *, title: str | None = None, word_title: str = "word", dim_title: str = "dimension",
                  value_title: str = "value", max_width: int = 420) -> alt.LayerChart:
    """How c = Σ_j a_j x_j is built: per dimension, one stacked piece a_j x_j per word, and a tick at the sum."""
    weights = np.asarray(weights, dtype=float)  # (n,)
    vectors = np.asarray(vectors, dtype=float)  # (n, d)
    names, dims = unique_labels(labels), unique_labels(dim_labels)
    parts = weights[:, None] * vectors  # (n, d)
    df = pd.DataFrame([{"word": names[j], "order": j, "dim": dims[k], "part": parts[j, k],
                        "exact": f"{weights[j]:.4f} × {vectors[j, k]:.4f} = {parts[j, k]:.4f}"}
                       for j in range(len(names)) for k in range(len(dims))])
    totals = pd.DataFrame({"dim": dims, "total": parts.sum(axis=0), "exact": [_exact(v) for v in parts.sum(axis=0)]})
    x = alt.X("dim:N", sort=dims, axis=_plain_axis(dim_title, labelAngle=0, label_size=LABEL_FONT))
    colors = alt.Scale(domain=names, range=[CATEGORICAL[j % len(CATEGORICAL)] for j in range(len(names))])
    stacked = alt.Chart(df).mark_bar().encode(
        x=x, y=alt.Y("sum(part):Q", axis=_plain_axis(value_title)),
        color=alt.Color("word:N", scale=colors, sort=names,
                        legend=alt.Legend(title=word_title, labelFontSize=LABEL_FONT, titleFontSize=13,
                                          labelColor=PALETTE["ink"], titleColor=PALETTE["ink"])),
        order=alt.Order("order:Q"),
        tooltip=[alt.Tooltip("word:N", title=word_title), alt.Tooltip("dim:N", title=dim_title),
                 alt.Tooltip("exact:N", title=value_title)])
    tick_size = max(6, min(34, int(0.6 * max(160, min(max_width, 56 * len(dims))) / len(dims))))
    tick = alt.Chart(totals).mark_tick(color=PALETTE["ink"], thickness=3, size=tick_size).encode(
        x=x, y="total:Q", tooltip=[alt.Tooltip("dim:N", title=dim_title), alt.Tooltip("exact:N", title="Σ")])
    width = max(160, min(max_width, 56 * len(dims)))
    chart = alt.layer(stacked, tick).properties(width=width, height=260, autosize=_PAD)
    return chart.properties(title=alt.TitleParams(title, fontSize=HEADING_FONT)) if title else chart


def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, x_title: str, y_title: str,
          title: str | None = None, colors: Sequence[str] | None = None) -> alt.Chart:
    """One line per named series over a shared x (curves of losses, sines, entropies...)."""
    names = list(series)
    df = pd.DataFrame([{"x": float(xv), "y": float(yv), "series": name}
                       for name in names for xv, yv in zip(x, series[name])])
    palette = list(colors) if colors else [CATEGORICAL[i % len(CATEGORICAL)] for i in range(len(names))]
    chart = alt.Chart(df).mark_line(strokeWidth=2.5).encode(
        x=alt.X("x:Q", axis=_plain_axis(x_title)),
        y=alt.Y("y:Q", axis=_plain_axis(y_title)),
        color=alt.Color("series:N", sort=names, scale=alt.Scale(domain=names, range=palette),
                        legend=alt.Legend(title=None, labelFontSize=LABEL_FONT, labelColor=PALETTE["ink"])),
        tooltip=[alt.Tooltip("series:N", title=" "), alt.Tooltip("x:Q", title=x_title, format=".4~f"),
                 alt.Tooltip("y:Q", title=y_title, format=".4f")])
    chart = chart.properties(width=480, height=260, autosize=_PAD)
    return chart.properties(title=alt.TitleParams(title, fontSize=HEADING_FONT)) if title else chart
