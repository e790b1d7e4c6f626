"""Altair chart builders: arrays and labels in, an ``alt.Chart`` out. No Streamlit elements here.

Conventions shared by every page:
- a heatmap's rows run top to bottom in matrix order, columns left to right, column labels on top;
- signed matrices use a diverging scale centred at 0 with a symmetric domain, attention weights a fixed
  0..1 scale (so two heatmaps of weights are comparable), other non-negative matrices a sequential scale;
- non-finite cells (a masked score is -inf) are drawn grey and say "-inf" in the tooltip;
- `PALETTE` fixes the colours of Q, K, V and the output on every page (Okabe-Ito: colour-blind safe);
- fonts are at least 12 px so a projector at the back of a lecture room can still be read;
- every chart carries a text alternative: its top-level ``description`` (Vega shows it to screen readers as the
  chart's aria-label) says what kind of chart it is, its title, what the axes and colours encode and, where it is
  short enough, the numbers themselves. tests/test_accessibility.py checks the colours under simulated colour
  blindness and the descriptions of every chart every page draws.
All user-visible words (axis and tooltip titles) are passed in by the caller, already translated; the few words of
the descriptions come from the catalog (section ``a11y``) in the session's language.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from types import MappingProxyType
from typing import Literal, NamedTuple

import altair as alt
import numpy as np
import pandas as pd
from streamlit.runtime.scriptrunner import get_script_run_ctx

from .i18n import FALLBACK, current_language, t

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


class _Unvalidated:
    """A chart whose ``to_dict()`` skips Altair's JSON-schema validation unless asked (``validate=True``).

    `st.altair_chart` calls ``chart.to_dict()``; with Altair's default that checks the whole spec against the
    Vega-Lite schema on every rerun: ~3/4 of what `st.altair_chart` costs for a small heatmap. A builder returns one
    of these by ending with ``return _finish(chart, width=..., ...)``; their specs are validated in
    tests/test_charts.py instead (each builder, and every chart every page draws). Copies keep the class
    (``.properties()``, ``.encode()``, ``.configure_*()``); combining charts (``+``, ``|``, ``alt.layer``) gives a
    plain Altair chart, validated as usual. Draw them with `st.altair_chart` (`st.write` recognizes only Altair's
    own classes)."""

    def to_dict(self, validate: bool = False, **kwargs) -> dict:
        return super().to_dict(validate, **kwargs)


class _Chart(_Unvalidated, alt.Chart):
    """`alt.Chart` drawn without schema validation (see `_Unvalidated`)."""


class _LayerChart(_Unvalidated, alt.LayerChart):
    """`alt.LayerChart` drawn without schema validation (see `_Unvalidated`)."""


class _FacetChart(_Unvalidated, alt.FacetChart):
    """`alt.FacetChart` drawn without schema validation (see `_Unvalidated`)."""


class _HConcatChart(_Unvalidated, alt.HConcatChart):
    """`alt.HConcatChart` drawn without schema validation (see `_Unvalidated`)."""


class _VConcatChart(_Unvalidated, alt.VConcatChart):
    """`alt.VConcatChart` drawn without schema validation (see `_Unvalidated`)."""


_UNVALIDATED = MappingProxyType({alt.Chart: _Chart, alt.LayerChart: _LayerChart, alt.FacetChart: _FacetChart,
                                 alt.HConcatChart: _HConcatChart, alt.VConcatChart: _VConcatChart})


def _title(title: str | None, size: int = HEADING_FONT) -> alt.TitleParams | None:
    return alt.TitleParams(title, fontSize=size) if title else None


def _finish(chart, **properties):
    """The builder's own new chart with these top-level properties (None: left out), as `_Unvalidated`.

    Same spec as ``chart.properties(...)``, without its costs: that copies the chart (a layered chart then
    deep-copies every layer, twice) and validates each property against the schema."""
    for name, value in properties.items():
        if value is not None:
            setattr(chart, name, value)  # an Altair chart keeps attributes as its spec's properties
    if not isinstance(chart, _Unvalidated):  # same layout: the subclass only adds a method
        object.__setattr__(chart, "__class__", _UNVALIDATED[type(chart)])
    return chart


class ChartText(NamedTuple):
    """Words the charts show (tooltip and legend titles); pass translated ones."""
    row: str = "i"
    column: str = "j"
    value: str = "value"


_DEFAULT_TEXT = ChartText()


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


# ---- text alternatives (the charts' `description`, read by screen readers) ---------------------------------

DESCRIBED_ITEMS = 12  # a description names at most this many labels or values, then "…"


def _t(key: str, /, **kwargs) -> str:
    """`t` in the session's language; in English outside a Streamlit run (plain scripts and unit tests), where
    asking for the session would only log Streamlit's "missing ScriptRunContext" warning."""
    return t(key, lang=current_language() if get_script_run_ctx(suppress_warning=True) else FALLBACK, **kwargs)


def _listed(items: Sequence[object], limit: int = DESCRIBED_ITEMS) -> str:
    """Items for a description: "a, b, c", the first `limit` of them and then "…"; empty ones left out."""
    names = [str(x) for x in items if str(x).strip()]
    return ", ".join(names[:limit]) + (", …" if len(names) > limit else "")


def _pairs(labels: Sequence[object], texts: Sequence[str], limit: int = DESCRIBED_ITEMS) -> str:
    """"label = text" for a description, the first `limit` pairs and then "…"."""
    return _listed([f"{label} = {text}" for label, text in zip(labels, texts)], limit)


def _span(values: np.ndarray) -> tuple[str, str]:
    """The smallest and largest finite value as cell text; the extremes of all values if none is finite."""
    v = np.asarray(values, dtype=float).ravel()
    finite = v[np.isfinite(v)]
    pool = finite if finite.size else v
    return (short_number(float(pool.min())), short_number(float(pool.max()))) if pool.size else ("", "")


def _number(v: float) -> str:
    """An axis position for a description: as short as exact ("1", "0.5", "1e+06")."""
    return f"{float(v):g}"


def _titled(text: str | None) -> str:
    return f" ({text})" if text else ""


def _describe(kind: str, title: str | None, body: str) -> str:
    """A chart's text alternative: "Kind “title”: body" (every part already in the session's language)."""
    head = _t("a11y.titled", kind=kind, title=title) if title else kind
    return f"{head}: {body}"


def named(chart, title: str):
    """Put `title` into the description of a builder's chart whose title is drawn outside it (a panel's heading):
    "Heatmap: 5 × 3; …" becomes "Heatmap “X”: 5 × 3; …". Changes the chart in place (no copy) and returns it.

    Use it instead of `st.altair_chart(..., alt=...)`: Streamlit logs a warning (with a stack) for every chart that
    has both an `alt` and a description."""
    kind, _, body = str(chart.description).partition(": ")
    chart.description = _describe(kind, title, body)
    return chart


def _heat_description(values: np.ndarray, rows: list[str], cols: list[str], value: str, title: str | None,
                      x_title: str | None = None, y_title: str | None = None) -> str:
    low, high = _span(values)
    body = _t("a11y.heatmap", rows=len(rows), cols=len(cols), row_title=_titled(y_title), row_labels=_listed(rows),
             col_title=_titled(x_title), col_labels=_listed(cols), value=value, low=low, high=high)
    masked = int(np.sum(~np.isfinite(np.asarray(values, dtype=float))))
    if masked:
        body += "; " + _t("a11y.masked", count=masked)
    return _describe(_t("a11y.heatmap_kind"), title, body)


def _lines_description(kind: str, title: str | None, x: Sequence[float], x_title: str, y_title: str,
                       names: Sequence[str]) -> str:
    xs = [float(v) for v in x]
    low, high = (_number(min(xs)), _number(max(xs))) if xs else ("", "")
    return _describe(kind, title, _t("a11y.lines", y=y_title, x=x_title, low=low, high=high, series=_listed(names)))


def _dark(values: np.ndarray, kind: Scale, domain: Sequence[float]) -> np.ndarray:
    """Which cells' colours are dark (their text is then written in white): the dark ends of each scheme, cut
    where white and ink text have about the same contrast on the cell (about 4.2:1; tests/test_accessibility.py).
    "blueorange" darkens sooner on its blue side than on its orange side. Non-finite cells are not dark."""
    v = np.asarray(values, dtype=float)
    lo, hi = float(domain[0]), float(domain[-1])
    with np.errstate(invalid="ignore"):  # inf - inf in a non-finite cell; those cells are excluded below
        if kind == "diverging":
            dark = (v < -0.76 * hi) | (v > 0.83 * hi)
        elif kind == "weights":
            dark = v > 0.7
        else:
            dark = (v - lo) / (hi - lo) < 0.47
    return dark & np.isfinite(v)


def matrix_frame(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object],
                 kind: Scale = "sequential", domain: Sequence[float] = (0.0, 1.0)) -> pd.DataFrame:
    """A matrix in long form: one row per cell with its labels, value (None if not finite) and texts."""
    values = np.asarray(values, dtype=float)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    if values.shape != (len(rows), len(cols)):
        raise ValueError(f"matrix of shape {values.shape} with {len(rows)} row and {len(cols)} column labels")
    n_rows, n_cols = values.shape
    flat = values.ravel()  # (n_rows * n_cols,): cell (i, j) at i * n_cols + j
    finite = np.isfinite(flat)
    cells = flat.tolist()
    return pd.DataFrame({
        "row": [r for r in rows for _ in cols], "col": cols * n_rows,
        "i": np.repeat(np.arange(n_rows), n_cols), "j": np.tile(np.arange(n_cols), n_rows),
        "value": [v if ok else None for v, ok in zip(cells, finite.tolist())], "finite": finite,
        "exact": [_exact(v) for v in cells], "text": [short_number(v) for v in cells],
        "dark": _dark(flat, kind, domain)})


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
                    domain=False, labelOverlap=cell < 14 or len(labels) > 32, labelPadding=6)


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
                      .encode(x=x, y=y, text=alt.Text("text:N"), tooltip=tooltip,
                              color=alt.ColorValue(PALETTE["ink"], condition={"test": "datum.dark",
                                                                              "value": "#FFFFFF"})))
    return layers


def heatmap(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object], *,
            scale: Scale = "diverging", title: str | None = None, text: ChartText = _DEFAULT_TEXT,
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
    if not show_values:  # the cells' text and its colour are then not drawn: not sent either (~1/6 of the data)
        df = df.drop(columns=["text", "dark"])
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    chart = alt.layer(*_heat_layers(df, rows, cols, color, text, show_values, cell, x_title, y_title), data=df)
    return _finish(chart, width=cell[0] * n_cols, height=cell[1] * n_rows, autosize=_PAD, title=_title(title),
                   description=_heat_description(values, rows, cols, text.value, title, x_title, y_title))


def facet_heatmaps(matrices: Sequence[np.ndarray], panel_titles: Sequence[str], row_labels: Sequence[object],
                   col_labels: Sequence[object], *, scale: Scale = "weights", columns: int = 4,
                   text: ChartText = _DEFAULT_TEXT, show_values: bool | None = None) -> alt.FacetChart:
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
    if not show_values:
        df = df.drop(columns=["text", "dark"])
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    w, h = _cell_size(n_rows, n_cols)
    cell = (max(2, w * 2 // 3), max(2, h * 2 // 3))
    layered = alt.layer(*_heat_layers(df, rows, cols, color, text, show_values, cell, None, None), data=df)
    layered = _finish(layered, width=cell[0] * n_cols, height=cell[1] * n_rows)
    header = alt.Header(labelFontSize=TITLE_FONT, labelFontWeight="bold", title=None)
    facet = layered.facet(facet=alt.Facet("panel:N", sort=titles, header=header), columns=columns)
    low, high = _span(stack)
    body = _t("a11y.facet", count=len(titles), panels=_listed(titles), rows=n_rows, cols=n_cols,
             row_labels=_listed(rows), col_labels=_listed(cols), value=text.value, low=low, high=high)
    return _finish(facet, autosize=_PAD, description=_describe(_t("a11y.facet_kind"), None, body))


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
    label = alt.Chart().mark_text(align="left", dx=4, fontSize=LABEL_FONT).encode(x=x, y=y, text=alt.Text("text:N"))
    description = _describe(_t("a11y.bars_kind"), title, f"{value_title}: {_pairs(names, df['text'])}")
    return _finish(alt.layer(bar, label, data=df), width=width, height=max(60, 30 * len(names)), autosize=_PAD,
                   title=_title(title), description=description)


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
        x=x, y=alt.Y("total:Q"), tooltip=[alt.Tooltip("dim:N", title=dim_title), alt.Tooltip("exact:N", title="Σ")])
    width = max(160, min(max_width, 56 * len(dims)))
    body = _t("a11y.stacked", value=value_title, dim=dim_title, dims=_listed(dims), word=word_title,
             words=_listed(names), totals=_pairs(dims, [short_number(v) for v in parts.sum(axis=0)]))
    return _finish(alt.layer(stacked, tick), width=width, height=260, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.stacked_kind"), title, body))


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
    return _finish(chart, width=480, height=260, autosize=_PAD, title=_title(title),
                   description=_lines_description(_t("a11y.lines_kind"), title, x, x_title, y_title, names))


# ---- multi-head attention (lesson 4) -------------------------------------------------------------------

# One colour per head, up to 16 heads: CATEGORICAL, then the four remaining colours of Paul Tol's "muted".
HEAD_COLORS = CATEGORICAL + ("#CC6677", "#DDCC77", "#117733", "#88CCEE")


def head_view_lines(weights: np.ndarray, heads: Sequence[int], *, threshold: float = 0.05,
                    top_k: int = 5) -> pd.DataFrame:
    """The lines a head view draws: per chosen head and query, its `top_k` strongest keys with weight >= threshold.

    weights (h, n_q, n_k) -> one row per line: head, q, k, weight (strongest first within a query)."""
    weights = np.asarray(weights, dtype=float)  # (h, n_q, n_k)
    heads = np.asarray(list(heads), dtype=int)  # (m,)
    n_q, n_k = weights.shape[1:]
    k = min(top_k, n_k)
    order = np.argsort(-weights[heads], axis=-1, kind="stable")[..., :k]  # (m, n_q, k): strongest keys first
    picked = np.take_along_axis(weights[heads], order, axis=-1)  # (m, n_q, k)
    keep = picked >= threshold  # (m, n_q, k)
    head_index = np.broadcast_to(heads[:, None, None], keep.shape)  # (m, n_q, k)
    query_index = np.broadcast_to(np.arange(n_q)[None, :, None], keep.shape)  # (m, n_q, k)
    return pd.DataFrame({"head": head_index[keep], "q": query_index[keep], "k": order[keep],
                         "weight": picked[keep]}).astype({"head": int, "q": int, "k": int})


def head_view(weights: np.ndarray, tokens: Sequence[object], heads: Sequence[int], head_names: Sequence[str], *,
              threshold: float = 0.05, top_k: int = 5, text: ChartText = _DEFAULT_TEXT, head_title: str = "head",
              title: str | None = None) -> alt.LayerChart:
    """BertViz-style head view: queries on the left, keys on the right, a line from each query to the keys it
    attends to; opacity = weight, one colour per head (`HEAD_COLORS[h]`). Pointing at a query token keeps
    only its lines. `text` names the query (row), key (column) and weight (value) in tooltips.

    weights (h, n_q, n_k); `heads` are the head indices to draw; see `head_view_lines` for the cap."""
    weights = np.asarray(weights, dtype=float)  # (h, n_q, n_k)
    n_q, n_k = weights.shape[1:]
    labels = unique_labels(tokens)
    lines = head_view_lines(weights, heads, threshold=threshold, top_k=top_k)
    lines = lines.assign(name=[head_names[h] for h in lines["head"]], query=[labels[q] for q in lines["q"]],
                         key=[labels[k] for k in lines["k"]], exact=[_exact(w) for w in lines["weight"]],
                         x0=0.0, x1=1.0)
    side = pd.DataFrame({"x": [0.0] * n_q + [1.0] * n_k, "y": [*range(n_q), *range(n_k)],
                         "q": [*range(n_q), *[-1] * n_k], "label": labels[:n_q] + labels[:n_k],
                         "align": ["right"] * n_q + ["left"] * n_k})
    longest = max(n_q, n_k, 2)
    row = 36 if longest <= 8 else 26 if longest <= 16 else 20 if longest <= 24 else 16
    x = alt.X("x0:Q", scale=alt.Scale(domain=[0, 1]), axis=None)
    y_scale = alt.Scale(domain=[-0.5, max(n_q, n_k) - 0.5], reverse=True)
    names = [head_names[h] for h in heads]
    pick = alt.selection_point(fields=["q"], on="pointerover", clear="pointerout", empty=True)
    color = alt.Color("name:N", sort=names, scale=alt.Scale(domain=names, range=[HEAD_COLORS[h % 16] for h in heads]),
                      legend=alt.Legend(title=head_title, labelFontSize=LABEL_FONT, titleFontSize=13,
                                        labelColor=PALETTE["ink"], titleColor=PALETTE["ink"], orient="top",
                                        direction="horizontal", columns=4, symbolStrokeWidth=4))
    opacity = alt.Opacity("weight:Q", scale=alt.Scale(domain=[0, 1], range=[0, 1]), legend=None)
    picked = alt.condition(pick, opacity, alt.value(0.0))["condition"]  # the weight's opacity where picked, else 0
    drawn = (alt.Chart(lines).mark_rule(strokeWidth=2.5)
             .encode(x=x, x2=alt.X2("x1:Q"), y=alt.Y("q:Q", scale=y_scale, axis=None), y2=alt.Y2("k:Q"),
                     color=color, opacity=alt.OpacityValue(0.0, condition=picked),
                     tooltip=[alt.Tooltip("name:N", title=head_title), alt.Tooltip("query:N", title=text.row),
                              alt.Tooltip("key:N", title=text.column), alt.Tooltip("exact:N", title=text.value)]))
    words = []
    for side_x, align, dx in ((0.0, "right", -8), (1.0, "left", 8)):
        part = side[side["x"] == side_x]
        layer = (alt.Chart(part).mark_text(align=align, dx=dx, fontSize=13 if row >= 20 else 12,
                                           color=PALETTE["ink"])
                 .encode(x=alt.X("x:Q", scale=alt.Scale(domain=[0, 1]), axis=None),
                         y=alt.Y("y:Q", scale=y_scale, axis=None), text=alt.Text("label:N")))
        words.append(layer.add_params(pick) if side_x == 0.0 else layer)
    body = _t("a11y.head_view", query=text.row, key=text.column, weight=text.value, head=head_title,
             heads=_listed(names), tokens=_listed(labels))
    chart = _finish(alt.layer(drawn, *words), width=300, height=row * longest, autosize=_PAD, title=_title(title),
                    description=_describe(_t("a11y.head_view_kind"), title, body))
    chart.config = alt.Config(view=alt.ViewConfig(stroke=None))  # what .configure_view does, without its copy
    return chart


# ---- layer normalization (lesson 6) --------------------------------------------------------------------

def value_strips(panels: dict[str, np.ndarray], row_labels: Sequence[object], *, value_title: str,
                 row_title: str | None = None, mean_title: str = "mean", width: int = 240) -> alt.HConcatChart:
    """How each row's values are spread: one panel per matrix (side by side, each with its own x axis),
    one line per row, a tick at every value and a black diamond at the row's mean.

    panels {title: (n, d) matrix}, all with the same rows. Used for "before and after a normalization"."""
    rows = unique_labels(row_labels)
    charts = []
    for title, matrix in panels.items():
        matrix = np.asarray(matrix, dtype=float)  # (n, d)
        values = pd.DataFrame([{"row": rows[i], "k": k + 1, "value": float(matrix[i, k]),
                                "exact": _exact(float(matrix[i, k]))}
                               for i in range(matrix.shape[0]) for k in range(matrix.shape[1])])
        means = pd.DataFrame({"row": rows, "mean": matrix.mean(axis=1),
                              "exact": [_exact(v) for v in matrix.mean(axis=1)]})
        y = alt.Y("row:N", sort=rows, axis=_plain_axis(row_title, ticks=False, label_size=LABEL_FONT))
        ticks = alt.Chart(values).mark_tick(color=PALETTE["input"], thickness=3, size=22).encode(
            x=alt.X("value:Q", axis=_plain_axis(value_title), scale=alt.Scale(zero=False, nice=True)), y=y,
            tooltip=[alt.Tooltip("row:N", title=row_title or " "), alt.Tooltip("k:Q", title="k"),
                     alt.Tooltip("exact:N", title=value_title)])
        mean = alt.Chart(means).mark_point(shape="diamond", filled=True, size=110, color=PALETTE["ink"]).encode(
            x=alt.X("mean:Q"), y=y, tooltip=[alt.Tooltip("row:N", title=row_title or " "),
                                      alt.Tooltip("exact:N", title=mean_title)])
        charts.append(_finish(alt.layer(ticks, mean), width=width, height=max(60, 30 * len(rows)),
                              title=_title(title, TITLE_FONT)))
    body = _t("a11y.strips", panels=_listed(list(panels)), row_title=_titled(row_title), rows=_listed(rows),
             value=value_title, mean=mean_title)
    return _finish(alt.hconcat(*charts, spacing=24), autosize=_PAD,
                   description=_describe(_t("a11y.strips_kind"), None, body))


# ---- the whole model: costs as the sequence grows (lesson 8) -----------------------------------------------

def cost_curves(x: Sequence[float], series: dict[str, Sequence[float]], marks: Sequence[tuple[str, float]], *,
                x_title: str, y_title: str, now: tuple[str, float] | None = None, title: str | None = None,
                colors: Sequence[str] | None = None) -> alt.LayerChart:
    """Costs against sequence length on log-log axes: one line per named series (positive values), a dashed
    labelled vertical rule per mark (label, x), e.g. the crossover points, and a solid orange one for `now`
    (label, x), e.g. the current length.

    Datasets: the lines have columns x, y, series; the rules have columns x, label, now."""
    names = list(series)
    df = pd.DataFrame([{"x": float(xv), "y": float(yv), "series": name}
                       for name in names for xv, yv in zip(x, series[name])])
    palette = list(colors) if colors else [CATEGORICAL[i % len(CATEGORICAL)] for i in range(len(names))]
    x_scale = alt.Scale(type="log", domain=[float(min(x)), float(max(x))], nice=False)
    drawn = alt.Chart(df).mark_line(strokeWidth=2.5).encode(
        x=alt.X("x:Q", scale=x_scale, axis=_plain_axis(x_title, format="~s")),
        y=alt.Y("y:Q", scale=alt.Scale(type="log"), axis=_plain_axis(y_title, format="~s")),
        color=alt.Color("series:N", sort=names, scale=alt.Scale(domain=names, range=palette),
                        legend=alt.Legend(title=None, orient="bottom", direction="vertical", labelLimit=520,
                                          labelFontSize=LABEL_FONT, labelColor=PALETTE["ink"])),
        tooltip=[alt.Tooltip("series:N", title=" "), alt.Tooltip("x:Q", title=x_title, format=",.0f"),
                 alt.Tooltip("y:Q", title=y_title, format=",.0f")])
    every = [*marks, *([now] if now else [])]
    rules = pd.DataFrame({"x": [float(v) for _, v in every], "label": [label for label, _ in every],
                          "now": [False] * len(marks) + [True] * bool(now),
                          "ypix": [4 + 18 * i for i in range(len(every))]})
    marked = rules[~rules["now"]]
    rule = alt.Chart(marked).mark_rule(color=PALETTE["ink"], strokeDash=[5, 4], strokeWidth=1.5).encode(
        x=alt.X("x:Q", scale=x_scale), tooltip=[alt.Tooltip("label:N", title=" ")])
    now_rule = alt.Chart(rules[rules["now"]]).mark_rule(color=PALETTE["key"], strokeWidth=2.5).encode(
        x=alt.X("x:Q", scale=x_scale), tooltip=[alt.Tooltip("label:N", title=" ")])
    label = alt.Chart(rules).mark_text(align="left", dx=4, baseline="top", fontSize=LABEL_FONT,
                                       color=PALETTE["ink"]).encode(
        x=alt.X("x:Q", scale=x_scale), y=alt.Y("ypix:Q", scale=None), text=alt.Text("label:N"))
    description = _lines_description(_t("a11y.loglog_kind"), title, x, x_title, y_title, names)
    if every:
        description += "; " + _t("a11y.marks", marks=_pairs([name for name, _ in every], [_number(v) for _, v in every]))
    return _finish(alt.layer(drawn, rule, now_rule, label), width=560, height=320, autosize=_PAD,
                   title=_title(title), description=description)


# ---- big matrices as one picture, and vectors in a plane (lesson 5) -------------------------------------

# The diverging ramp of `image_heatmap`: dark blue (low), near white (0 when the domain is symmetric), orange.
IMAGE_STOPS = ((0.0, "#1F4E8C"), (0.25, "#6FA8DC"), (0.5, "#F4F4F4"), (0.75, "#F0A35E"), (1.0, "#A8430A"))


def colour_image(values: np.ndarray, domain: tuple[float, float]) -> np.ndarray:
    """Every cell's RGB colour on `IMAGE_STOPS` over `domain` (linear in RGB, clipped): (rows, cols, 3) uint8.

    Non-finite cells get the middle colour."""
    v = np.asarray(values, dtype=float)
    lo, hi = float(domain[0]), float(domain[1])
    f = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0.0, 1.0)
    f = np.where(np.isfinite(f), f, 0.5)
    where = np.array([s for s, _ in IMAGE_STOPS])
    rgb = np.array([[int(c[k:k + 2], 16) for k in (1, 3, 5)] for _, c in IMAGE_STOPS], dtype=float)  # (stops, 3)
    out = np.stack([np.interp(f, where, rgb[:, ch]) for ch in range(3)], axis=-1)  # (rows, cols, 3)
    return np.rint(out).astype(np.uint8)


def png_data_url(pixels: np.ndarray) -> str:
    """An (h, w, 3) uint8 array as a ``data:image/png;base64,...`` URL."""
    import base64
    import io

    from PIL import Image
    buffer = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels)).save(buffer, format="PNG", compress_level=3)  # fast, small enough
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def image_heatmap(values: np.ndarray, *, x_title: str, y_title: str, value_title: str,
                  domain: tuple[float, float] | None = None, width: int = 520, height: int = 360,
                  title: str | None = None) -> alt.LayerChart:
    """A large matrix (e.g. 512 x 512, far too many cells for one mark each) as one PNG inside a chart.

    Row 0 is at the top, column 0 at the left; the axes count rows and columns (cell j spans [j, j + 1]).
    Cells are enlarged by whole pixels (to about the plot size) so small matrices stay sharp. The legend is the
    image's colour ramp; `domain` defaults to symmetric around 0. There are no per-cell tooltips: show exact
    values elsewhere."""
    values = np.asarray(values, dtype=float)
    rows, cols = values.shape
    if domain is None:
        finite = values[np.isfinite(values)]
        m = float(np.abs(finite).max()) if finite.size else 1.0
        domain = (-m, m) if m > 0 else (-1.0, 1.0)
    lo, hi = float(domain[0]), float(domain[1])
    pixels = colour_image(values, (lo, hi))
    pixels = np.repeat(np.repeat(pixels, max(1, round(height / rows)), axis=0),  # whole-pixel blocks: no blur
                       max(1, round(width / cols)), axis=1)
    image = alt.Chart(pd.DataFrame({"url": [png_data_url(pixels)]})).mark_image(
        width=width, height=height, aspect=False, align="left", baseline="top").encode(
        x=alt.XValue(0), y=alt.YValue(0), url=alt.Url("url:N"))
    ramp = alt.Scale(domain=[lo + s * (hi - lo) for s, _ in IMAGE_STOPS], range=[c for _, c in IMAGE_STOPS],
                     interpolate="rgb")
    frame = pd.DataFrame({"x": [0.0, float(cols)], "y": [0.0, float(rows)], "value": [lo, hi]})
    whole = {"tickMinStep": 1, "format": "d"}  # the axes count rows and columns
    axes = alt.Chart(frame).mark_point(size=0, filled=False, opacity=1).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[0, cols], nice=False, zero=True), axis=_plain_axis(x_title, **whole)),
        y=alt.Y("y:Q", scale=alt.Scale(domain=[0, rows], nice=False, reverse=True), axis=_plain_axis(y_title, **whole)),
        color=alt.Color("value:Q", scale=ramp,
                        legend=alt.Legend(title=value_title, labelFontSize=12, titleFontSize=13, gradientLength=160,
                                          labelColor=PALETTE["ink"], titleColor=PALETTE["ink"])))
    low, high = _span(values)
    body = _t("a11y.image", rows=rows, cols=cols, y=y_title, x=x_title, value=value_title, low=low, high=high)
    return _finish(alt.layer(image, axes), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.heatmap_kind"), title, body))


def plane_arrows(points: Sequence[tuple[float, float]], labels: Sequence[str], colors: Sequence[str], *,
                 x_title: str, y_title: str, circles: Sequence[float] = (), size: int = 320,
                 title: str | None = None) -> alt.LayerChart:
    """2-D vectors drawn as arrows from the origin, each labelled at its tip, on equal axes.

    `circles` adds dashed circles of those radii (a rotation keeps a vector on its circle)."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)  # (m, 2)
    reach = 1.2 * max([float(np.hypot(pts[:, 0], pts[:, 1]).max()) if len(pts) else 0.0, *circles, 1e-9])
    names = unique_labels(labels)
    df = pd.DataFrame({"x": pts[:, 0], "y": pts[:, 1], "x0": 0.0, "y0": 0.0, "label": names, "colour": list(colors),
                       "exact": [f"({a:.4f}, {b:.4f})" for a, b in pts]})
    scale = alt.Scale(domain=[-reach, reach], nice=False)
    x, y = alt.X("x:Q", scale=scale, axis=_plain_axis(x_title)), alt.Y("y:Q", scale=scale, axis=_plain_axis(y_title))
    tooltip = [alt.Tooltip("label:N", title=" "), alt.Tooltip("exact:N", title=f"({x_title}, {y_title})")]
    colour = alt.Color("colour:N", scale=None)
    shaft = alt.Chart(df).mark_rule(strokeWidth=2.5).encode(x=alt.X("x0:Q"), y=alt.Y("y0:Q"), x2=alt.X2("x:Q"),
                                                            y2=alt.Y2("y:Q"), color=colour)
    tip = alt.Chart(df).mark_point(filled=True, size=70, opacity=1).encode(x=x, y=y, color=colour, tooltip=tooltip)
    text = alt.Chart(df).mark_text(dx=8, dy=-8, align="left", fontSize=LABEL_FONT).encode(
        x=x, y=y, text=alt.Text("label:N"), color=colour)
    layers = [shaft, tip, text]
    angles = np.linspace(0.0, 2.0 * np.pi, 97)
    ring = pd.DataFrame([{"x": r * np.cos(a), "y": r * np.sin(a), "ring": k, "order": j}
                         for k, r in enumerate(circles) for j, a in enumerate(angles)])
    if len(ring):
        layers.insert(0, alt.Chart(ring).mark_line(strokeDash=[4, 4], color=PALETTE["masked"]).encode(
            x=alt.X("x:Q", scale=scale), y=alt.Y("y:Q", scale=scale), detail=alt.Detail("ring:N"),
            order=alt.Order("order:Q")))
    body = f"({x_title}, {y_title}): " + _pairs(names, [f"({a:.2f}, {b:.2f})" for a, b in pts])
    return _finish(alt.layer(*layers), width=size, height=size, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.arrows_kind"), title, body))


def growth_lines(x: Sequence[float], series: dict[str, Sequence[float]], *, x_title: str, y_title: str,
                 title: str | None = None, colors: Sequence[str] | None = None, width: int = 340,
                 height: int = 260) -> alt.LayerChart:
    """Costs that grow by orders of magnitude: one line per named series on log-log axes, a dot at every x.

    On log-log axes n grows as a line of slope 1 and n² as a line of slope 2. The legend sits below the plot
    so the chart fits half of a wide page. All values must be positive."""
    names = list(series)
    df = pd.DataFrame([{"x": float(xv), "y": float(yv), "series": name}
                       for name in names for xv, yv in zip(x, series[name])])
    palette = list(colors) if colors else [CATEGORICAL[i % len(CATEGORICAL)] for i in range(len(names))]
    encoding = {
        "x": alt.X("x:Q", scale=alt.Scale(type="log", base=2),
                   axis=_plain_axis(x_title, format="d", values=[float(v) for v in list(x)[::2]])),
        "y": alt.Y("y:Q", scale=alt.Scale(type="log"), axis=_plain_axis(y_title, format="~s")),
        "color": alt.Color("series:N", sort=names, scale=alt.Scale(domain=names, range=palette),
                           legend=alt.Legend(title=None, orient="bottom", direction="vertical",
                                             labelFontSize=LABEL_FONT, labelColor=PALETTE["ink"], labelLimit=400)),
        "tooltip": [alt.Tooltip("series:N", title=" "), alt.Tooltip("x:Q", title=x_title, format=",d"),
                    alt.Tooltip("y:Q", title=y_title, format=",d")]}
    line = alt.Chart(df).mark_line(strokeWidth=2.5).encode(**encoding)
    dots = alt.Chart(df).mark_point(filled=True, size=40, opacity=1).encode(**encoding)
    return _finish(alt.layer(line, dots), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_lines_description(_t("a11y.loglog_kind"), title, x, x_title, y_title, names))


# ---- decoding strategies (lesson 10) -------------------------------------------------------------------

def distribution_bars(values: Sequence[float], labels: Sequence[object], *, kept: Sequence[bool] | None = None,
                      ghost: Sequence[float] | None = None, marked: int | None = None, value_title: str = "p",
                      ghost_title: str = "before", label_title: str | None = None, removed_text: str = "✕",
                      marked_text: str = "◀", title: str | None = None, color: str = PALETTE["query"],
                      domain: tuple[float, float] | None = (0.0, 1.0), value_format: str = ".2f", width: int = 240,
                      row_height: int = 26) -> alt.LayerChart:
    """A distribution over tokens as horizontal bars, tokens top to bottom in the given order.

    `kept` False marks a token a filter removed: its bar is grey and its text `removed_text`. `ghost` draws
    other values as light grey bars behind (e.g. the distribution before the filter, so a removed token still
    shows what it had). `marked` is the index of one token (the chosen one): outlined, text + `marked_text`."""
    names = unique_labels(labels)
    n = len(names)
    values = [float(v) for v in values]
    kept = [True] * n if kept is None else [bool(k) for k in kept]
    ghosts = [float(g) for g in ghost] if ghost is not None else [0.0] * n
    texts = [(format(v, value_format) if k else removed_text) + (f"  {marked_text}" if i == marked else "")
             for i, (v, k) in enumerate(zip(values, kept))]
    df = pd.DataFrame({"label": names, "value": values, "ghost": ghosts, "kept": kept, "text": texts,
                       "marked": [i == marked for i in range(n)], "end": [max(v, g) for v, g in zip(values, ghosts)],
                       "exact": [_exact(v) for v in values], "exact_ghost": [_exact(g) for g in ghosts]})
    scale = alt.Scale(domain=list(domain)) if domain else alt.Scale(zero=True)
    y = alt.Y("label:N", sort=names, axis=_plain_axis(label_title, ticks=False, label_size=LABEL_FONT))
    x = alt.X("value:Q", scale=scale, axis=_plain_axis(value_title))
    tooltip = [alt.Tooltip("label:N", title=label_title or " "), alt.Tooltip("exact:N", title=value_title)]
    layers = []
    if ghost is not None:
        tooltip.append(alt.Tooltip("exact_ghost:N", title=ghost_title))
        layers.append(alt.Chart().mark_bar(color=PALETTE["masked"], opacity=0.5, cornerRadiusEnd=3).encode(
            x=alt.X("ghost:Q", scale=scale), y=y, tooltip=tooltip))
    layers.append(alt.Chart().mark_bar(cornerRadiusEnd=3).encode(
        x=x, y=y, tooltip=tooltip,  # typed conditions: alt.condition's dicts cost ~20 ms of schema checks here
        color=alt.ColorValue(PALETTE["masked"], condition={"test": "datum.kept", "value": color}),
        stroke=alt.StrokeValue("transparent", condition={"test": "datum.marked", "value": PALETTE["ink"]}),
        strokeWidth=alt.StrokeWidthValue(0, condition={"test": "datum.marked", "value": 2.5})))
    layers.append(alt.Chart().mark_text(align="left", dx=4, fontSize=LABEL_FONT).encode(
        x=alt.X("end:Q", scale=scale), y=y, text="text:N", tooltip=tooltip,
        color=alt.ColorValue("#6E6E6E", condition={"test": "datum.kept", "value": PALETTE["ink"]})))
    description = _describe(_t("a11y.bars_kind"), title, f"{value_title}: {_pairs(names, texts)}")
    return _finish(alt.layer(*layers, data=df), width=width, height=max(60, row_height * n), autosize=_PAD,
                   title=_title(title), description=description)


# ---- a real model's attention: every layer and head in one picture (lesson 13) ---------------------------

# The sequential ramp of `attention_grid` (0 white, 1 dark blue: "blues", like the weights heatmaps).
WEIGHT_STOPS = ((0.0, "#FFFFFF"), (0.25, "#C6DBEF"), (0.5, "#6BAED6"), (0.75, "#2171B5"), (1.0, "#08306B"))
GRID_GAP, GRID_EMPTY = 3, (217, 217, 217)  # pixels between panels, and their colour (light grey)


def ramp_image(values: np.ndarray, stops: Sequence[tuple[float, str]], domain: tuple[float, float]) -> np.ndarray:
    """Every cell's RGB colour on `stops` over `domain` (linear in RGB, clipped); non-finite cells light grey.
    (rows, cols) -> (rows, cols, 3) uint8."""
    v = np.asarray(values, dtype=float)
    lo, hi = float(domain[0]), float(domain[1])
    f = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0.0, 1.0)
    where = np.array([s for s, _ in stops])
    rgb = np.array([[int(c[k:k + 2], 16) for k in (1, 3, 5)] for _, c in stops], dtype=float)  # (stops, 3)
    out = np.stack([np.interp(np.nan_to_num(f), where, rgb[:, ch]) for ch in range(3)], axis=-1)  # (rows, cols, 3)
    out[~np.isfinite(f)] = GRID_EMPTY
    return np.rint(out).astype(np.uint8)


def grid_pixels(weights: np.ndarray, cell: int) -> np.ndarray:
    """(rows, cols, n, m) matrices tiled into one picture, `cell` pixels per entry and `GRID_GAP` between panels."""
    rows, cols, n, m = weights.shape
    ph, pw = n * cell, m * cell
    canvas = np.empty((rows * ph + (rows - 1) * GRID_GAP, cols * pw + (cols - 1) * GRID_GAP, 3), dtype=np.uint8)
    canvas[...] = GRID_EMPTY
    for r in range(rows):
        for c in range(cols):
            tile = np.repeat(np.repeat(ramp_image(weights[r, c], WEIGHT_STOPS, (0.0, 1.0)), cell, 0), cell, 1)
            canvas[r * (ph + GRID_GAP): r * (ph + GRID_GAP) + ph, c * (pw + GRID_GAP): c * (pw + GRID_GAP) + pw] = tile
    return canvas


def attention_grid(weights: np.ndarray, row_names: Sequence[str], col_names: Sequence[str], *, value_title: str,
                   notes: Sequence[str] | None = None, note_title: str = " ", width: int = 960,
                   title: str | None = None) -> alt.LayerChart:
    """BertViz-style model view: weights (rows, cols, n, m), e.g. (layers, heads, n, n), as small multiples in ONE
    PNG (fast for 6 x 12 panels of 128 x 128), row names on the left, column names on top, a 0..1 legend.
    Pointing at a panel shows its row and column name and `notes[r * cols + c]` (e.g. what the head does)."""
    weights = np.asarray(weights, dtype=float)
    rows, cols, n, m = weights.shape
    pixels = grid_pixels(weights, max(1, math.ceil(72 / max(n, m))))  # at least ~72 px per panel before scaling
    left, top = 76, 24  # room for the row and column names
    s = (width - left) / pixels.shape[1]  # display pixels per picture pixel
    height = top + round(pixels.shape[0] * s)
    image = alt.Chart(pd.DataFrame({"url": [png_data_url(pixels)]})).mark_image(
        width=width - left, height=height - top, aspect=False, align="left", baseline="top").encode(
        x=alt.XValue(left), y=alt.YValue(top), url="url:N")
    ph, pw = (pixels.shape[0] + GRID_GAP) / rows * s, (pixels.shape[1] + GRID_GAP) / cols * s  # panel pitch
    panels = pd.DataFrame([{"x": left + c * pw, "x2": left + c * pw + pw - GRID_GAP * s, "y": top + r * ph,
                            "y2": top + r * ph + ph - GRID_GAP * s, "row": row_names[r], "col": col_names[c],
                            "note": notes[r * cols + c] if notes is not None else ""}
                           for r in range(rows) for c in range(cols)])
    px = alt.Scale(domain=[0, width], range=[0, width], nice=False, zero=False)
    py = alt.Scale(domain=[0, height], range=[0, height], nice=False, zero=False)
    tips = [alt.Tooltip("row:N", title=" "), alt.Tooltip("col:N", title="  ")]
    tips += [alt.Tooltip("note:N", title=note_title)] if notes is not None else []
    hover = alt.Chart(panels).mark_rect(color=PALETTE["ink"], opacity=0.001).encode(
        x=alt.X("x:Q", scale=px, axis=None), x2="x2:Q", y=alt.Y("y:Q", scale=py, axis=None), y2="y2:Q", tooltip=tips)
    heads = pd.DataFrame({"x": [left + c * pw + (pw - GRID_GAP * s) / 2 for c in range(cols)], "y": [top - 6] * cols,
                          "label": list(col_names)})
    layers = pd.DataFrame({"x": [left - 8] * rows, "y": [top + r * ph + (ph - GRID_GAP * s) / 2 for r in range(rows)],
                           "label": list(row_names)})
    texts = [alt.Chart(df).mark_text(align=align, baseline=base, fontSize=12, color=PALETTE["ink"]).encode(
        x=alt.X("x:Q", scale=px, axis=None), y=alt.Y("y:Q", scale=py, axis=None), text="label:N")
        for df, align, base in ((heads, "center", "bottom"), (layers, "right", "middle"))]
    ramp = alt.Scale(domain=[s_ for s_, _ in WEIGHT_STOPS], range=[c for _, c in WEIGHT_STOPS], interpolate="rgb")
    legend = alt.Chart(pd.DataFrame({"x": [0.0, 0.0], "y": [0.0, 0.0], "value": [0.0, 1.0]})).mark_point(
        size=0, opacity=0).encode(x=alt.X("x:Q", scale=px, axis=None), y=alt.Y("y:Q", scale=py, axis=None),
                                  color=alt.Color("value:Q", scale=ramp, legend=alt.Legend(
                                      title=value_title, labelFontSize=12, titleFontSize=13, gradientLength=160,
                                      labelColor=PALETTE["ink"], titleColor=PALETTE["ink"])))
    body = _t("a11y.grid", rows=rows, cols=cols, n=n, m=m, value=value_title)
    if _listed(row_names) or _listed(col_names):
        body += "; " + _t("a11y.grid_names", rows=_listed(row_names), cols=_listed(col_names))
    chart = _finish(alt.layer(image, hover, *texts, legend), width=width, height=height, autosize=_PAD,
                    title=_title(title), description=_describe(_t("a11y.grid_kind"), title, body))
    return chart.configure_view(stroke=None)


# ---- training curves of several runs (lesson 12) ---------------------------------------------------------

DASHES = ([1, 0], [7, 4], [2, 3])  # solid, dashed, dotted: the second grouping of `run_lines`


def run_lines(runs: Sequence[tuple[str, str, Sequence[float | None]]], *, x_title: str, y_title: str,
              color_title: str, dash_title: str, colors: dict[str, str] | None = None, log_y: bool = False,
              y_domain: tuple[float, float] | None = None, x_max: int | None = None, title: str | None = None,
              width: int = 400, height: int = 260) -> alt.LayerChart:
    """Curves of several runs on one chart, a dot at every value: each run is (colour group, dash group, values at
    x = 1, 2, ...), e.g. (depth, norm placement, test accuracy per epoch). Colour follows the first group (`colors`
    maps a group to its colour, else CATEGORICAL in order of appearance), the dash pattern the second (DASHES in
    order of appearance). None, NaN, infinite values (and values <= 0 with `log_y`) leave a gap."""
    color_groups = list(dict.fromkeys(c for c, _, _ in runs))
    dash_groups = list(dict.fromkeys(d for _, d, _ in runs))
    records = []
    for c, d, values in runs:
        for x, v in enumerate(values, start=1):
            ok = v is not None and math.isfinite(v) and (v > 0 or not log_y)
            records.append({"run": f"{c} · {d}", "color": c, "dash": d, "x": x, "y": float(v) if ok else None})
    df = pd.DataFrame(records, columns=["run", "color", "dash", "x", "y"])
    palette = [(colors or {}).get(c, CATEGORICAL[i % len(CATEGORICAL)]) for i, c in enumerate(color_groups)]
    legend = {"orient": "bottom", "direction": "horizontal", "labelFontSize": LABEL_FONT, "titleFontSize": LABEL_FONT,
              "labelColor": PALETTE["ink"], "symbolStrokeWidth": 2.5}  # below the plot, so long labels fit
    y_scale = alt.Scale(type="log") if log_y else alt.Scale(domain=list(y_domain)) if y_domain else alt.Scale(zero=False)
    x_scale = alt.Scale(domain=[1, max(2, x_max or int(df["x"].max() if len(df) else 2))])
    encoding = {
        "x": alt.X("x:Q", scale=x_scale, axis=_plain_axis(x_title, format="d", tickMinStep=1)),
        "y": alt.Y("y:Q", scale=y_scale, axis=_plain_axis(y_title)),
        "color": alt.Color("color:N", sort=color_groups, scale=alt.Scale(domain=color_groups, range=palette),
                           legend=alt.Legend(title=color_title, **legend)),
        "tooltip": [alt.Tooltip("run:N", title=" "), alt.Tooltip("x:Q", title=x_title, format="d"),
                    alt.Tooltip("y:Q", title=y_title, format=".4f")]}
    line = alt.Chart(df).mark_line(strokeWidth=2.5).encode(
        **encoding, detail="run:N", strokeDash=alt.StrokeDash(
            "dash:N", sort=dash_groups, scale=alt.Scale(domain=dash_groups, range=list(DASHES[:len(dash_groups)])),
            legend=alt.Legend(title=dash_title, symbolType="stroke", symbolSize=400, **legend)))
    dots = alt.Chart(df).mark_point(filled=True, size=36, opacity=1).encode(**encoding)
    body = _t("a11y.runs", y=y_title, x=x_title, color=color_title, colors=_listed(color_groups), dash=dash_title,
             dashes=_listed(dash_groups))
    return _finish(alt.layer(line, dots), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.lines_kind"), title, body))
