"""Heatmaps: a labelled matrix (a mark per cell), small multiples of matrices, and a big matrix as one picture.

A heatmap's rows run top to bottom in matrix order, columns left to right, column labels on top; the colour scale
is the declared one of its kind (palette.py), its legend titled by what it shows; value text is written in the
cells up to 12 x 12 (fonts at least 12 px, for a projector at the back of a room)."""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from . import numbers
from .describe import _describe, _heat_description, _listed, _span, _t
from .engine import (_DEFAULT_TEXT, _PAD, FIRST_DIMENSION, LABEL_FONT, TITLE_FONT, ChartText, _finish,
                     _gradient_legend, _plain_axis, _series_legend, _title, layer, unique_labels)
from .numbers import exact, short_number
from .palette import IMAGE_STOPS, MASK_SCALES, PALETTE, Scale, _dark, color_scale, colour_image, kept, png_data_url
from .palette import legend_title as by_kind

SMALL_MATRIX = 12  # value text is written in the cells up to 12 x 12


def matrix_frame(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object],
                 kind: Scale = "sequential", domain: Sequence[float] = (0.0, 1.0)) -> pd.DataFrame:
    """A matrix in long form: one row per cell with its labels, value (None if not finite) and texts; a mask's
    cells also with their category (kept or blocked, in the session's language)."""
    values = np.asarray(values, dtype=float)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    if values.shape != (len(rows), len(cols)):
        raise ValueError(f"matrix of shape {values.shape} with {len(rows)} row and {len(cols)} column labels")
    n_rows, n_cols = values.shape
    flat = values.ravel()  # (n_rows * n_cols,): cell (i, j) at i * n_cols + j
    finite = np.isfinite(flat)
    cells = flat.tolist()
    lang = numbers.language()  # once: asking the session per cell cost more than building the frame
    df = pd.DataFrame({
        "row": [r for r in rows for _ in cols], "col": cols * n_rows,
        "i": np.repeat(np.arange(n_rows), n_cols), "j": np.tile(np.arange(n_cols), n_rows),
        "value": [v if ok else None for v, ok in zip(cells, finite.tolist())], "finite": finite,
        "exact": [exact(v, lang) for v in cells], "text": [short_number(v, lang) for v in cells],
        "dark": _dark(flat, kind, domain)})
    if kind in MASK_SCALES:  # 1, 0, −∞ as written, and what they mean
        names = {True: _t("chart.kept"), False: _t("chart.blocked")}
        df["category"] = [names[bool(k)] for k in kept(flat, kind)]
        df["text"] = [f"{v:.0f}" if np.isfinite(v) and v.is_integer() else short_number(v, lang) for v in cells]
        df["exact"] = [f"{text} ({name})" for text, name in zip(df["text"], df["category"])]
    return df


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


def _heat_layers(df: pd.DataFrame, rows: list[str], cols: list[str], kind: Scale, scale: alt.Scale,
                 text: ChartText, show_values: bool, cell: tuple[int, int], x_title: str | None,
                 y_title: str | None) -> list:
    """The cells (a ramp over the finite ones and grey non-finite ones; a mask's two categories), their text."""
    x = alt.X("col:N", sort=cols, axis=_axis(cols, cell[0], "top", x_title))
    y = alt.Y("row:N", sort=rows, axis=_axis(rows, cell[1], "left", y_title))
    tooltip = [alt.Tooltip("row:N", title=text.row), alt.Tooltip("col:N", title=text.column),
               alt.Tooltip("exact:N", title=text.value)]
    stroke = {"stroke": "#FFFFFF", "strokeWidth": 1} if min(cell) >= 12 else {}
    if kind in MASK_SCALES:
        color = alt.Color("category:N", scale=scale, legend=_series_legend(text.value, symbolType="square"))
        layers = [alt.Chart().mark_rect(**stroke).encode(x=x, y=y, color=color, tooltip=tooltip)]
    else:
        masked = (alt.Chart().mark_rect(color=PALETTE["masked"], **stroke)
                  .encode(x=x, y=y, tooltip=tooltip).transform_filter("!datum.finite"))
        cells = (alt.Chart().mark_rect(**stroke)
                 .encode(x=x, y=y, color=alt.Color("value:Q", scale=scale, legend=_gradient_legend(text.value)),
                         tooltip=tooltip)
                 .transform_filter("datum.finite"))
        layers = [masked, cells]
    if show_values:
        size = 14 if min(cell) >= 44 else 12
        layers.append(alt.Chart().mark_text(fontSize=size)
                      .encode(x=x, y=y, text=alt.Text("text:N"), tooltip=tooltip,
                              color=alt.ColorValue(PALETTE["ink"], condition={"test": "datum.dark",
                                                                              "value": "#FFFFFF"})))
    return layers


def _matrix_data(stack: np.ndarray, row_labels, col_labels, kind: Scale, show_values: bool,
                 panels: Sequence[str] | None = None) -> tuple[pd.DataFrame, alt.Scale]:
    """The long-form cells of one matrix (n_rows, n_cols) or of panels (p, n_rows, n_cols) and their colour scale.
    Unwritten cell text and its colour are not sent either (~1/6 of the data)."""
    scale = color_scale(kind, stack)
    if panels is None:
        df = matrix_frame(stack, row_labels, col_labels, kind, scale.domain)
    else:
        df = pd.concat([matrix_frame(m, row_labels, col_labels, kind, scale.domain).assign(panel=p)
                        for m, p in zip(stack, panels)], ignore_index=True)
    return (df if show_values else df.drop(columns=["text", "dark"])), scale


def heatmap(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object], *,
            scale: Scale = "diverging", title: str | None = None, text: ChartText = _DEFAULT_TEXT,
            show_values: bool | None = None, x_title: str | None = None, y_title: str | None = None,
            max_width: int = 560, max_height: int = 440, legend_title: str | None = None) -> alt.LayerChart:
    """A labelled heatmap of a 2-D matrix. `show_values` defaults to "the matrix is at most 12 x 12". The legend
    (and the tooltip's value line) is titled `legend_title`, else ``text.value``, else by the scale kind.

    Cells are square (at most 52 px) and shrink so the plotting area fits in max_width x max_height."""
    values = np.asarray(values, dtype=float)
    n_rows, n_cols = values.shape
    cell = _cell_size(n_rows, n_cols, max_width, max_height)
    if show_values is None:  # and only if "-0.25" fits in a cell
        show_values = n_rows <= SMALL_MATRIX and n_cols <= SMALL_MATRIX and cell[0] >= 28
    text = text._replace(value=legend_title or by_kind(scale, text.value))
    df, color = _matrix_data(values, row_labels, col_labels, scale, show_values)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    chart = layer(*_heat_layers(df, rows, cols, scale, color, text, show_values, cell, x_title, y_title), data=df)
    mask = kept(values, scale) if scale in MASK_SCALES else None
    return _finish(chart, width=cell[0] * n_cols, height=cell[1] * n_rows, autosize=_PAD, title=_title(title),
                   description=_heat_description(values, rows, cols, text.value, title, x_title, y_title, mask))


def facet_heatmaps(matrices: Sequence[np.ndarray], panel_titles: Sequence[str], row_labels: Sequence[object],
                   col_labels: Sequence[object], *, scale: Scale = "weights", columns: int = 4,
                   text: ChartText = _DEFAULT_TEXT, show_values: bool | None = None,
                   legend_title: str | None = None) -> alt.FacetChart:
    """Small multiples: one heatmap per head or layer, one shared colour scale, panels in the given order."""
    stack = np.stack([np.asarray(m, dtype=float) for m in matrices])  # (panels, n_rows, n_cols)
    _, n_rows, n_cols = stack.shape
    if show_values is None:
        show_values = n_rows <= 8 and n_cols <= 8  # panels are smaller than a single heatmap
    text = text._replace(value=legend_title or by_kind(scale, text.value))
    titles = list(panel_titles)
    df, color = _matrix_data(stack, row_labels, col_labels, scale, show_values, titles)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    w, h = _cell_size(n_rows, n_cols)
    cell = (max(2, w * 2 // 3), max(2, h * 2 // 3))
    layered = layer(*_heat_layers(df, rows, cols, scale, color, text, show_values, cell, None, None), data=df)
    layered = _finish(layered, top=False, width=cell[0] * n_cols, height=cell[1] * n_rows)
    header = alt.Header(labelFontSize=TITLE_FONT, labelFontWeight="bold", title=None)
    facet = layered.facet(facet=alt.Facet("panel:N", sort=titles, header=header), columns=columns)
    low, high = _span(stack)
    body = _t("a11y.facet", count=len(titles), panels=_listed(titles), rows=n_rows, cols=n_cols,
              row_labels=_listed(rows), col_labels=_listed(cols), value=text.value, low=low, high=high)
    return _finish(facet, autosize=_PAD, description=_describe(_t("a11y.facet_kind"), None, body))


def image_heatmap(values: np.ndarray, *, x_title: str, y_title: str, value_title: str | None = None,
                  domain: tuple[float, float] | None = None, width: int = 520, height: int = 360,
                  title: str | None = None) -> alt.LayerChart:
    """A large matrix (e.g. 512 x 512, far too many cells for one mark each) as one PNG inside a chart.

    Row 0 is at the top, column 0 at the left; the axes number rows and columns at their centres from
    FIRST_DIMENSION (0, as `dimension_labels` does). Cells are enlarged by whole pixels (to about the plot size) so
    small matrices stay sharp. The legend is the image's diverging ramp, titled `value_title` (the generic
    "value": by the scale kind); `domain` defaults to symmetric around 0. There are no per-cell tooltips: show
    exact values elsewhere."""
    values = np.asarray(values, dtype=float)
    rows, cols = values.shape
    if domain is None:
        finite = values[np.isfinite(values)]
        m = float(np.abs(finite).max()) if finite.size else 1.0
        domain = (-m, m) if m > 0 else (-1.0, 1.0)
    lo, hi = float(domain[0]), float(domain[1])
    value_title = by_kind("diverging", value_title)
    pixels = colour_image(values, (lo, hi))
    pixels = np.repeat(np.repeat(pixels, max(1, round(height / rows)), axis=0),  # whole-pixel blocks: no blur
                       max(1, round(width / cols)), axis=1)
    image = alt.Chart(pd.DataFrame({"url": [png_data_url(pixels)]})).mark_image(
        width=width, height=height, aspect=False, align="left", baseline="top").encode(
        x=alt.XValue(0), y=alt.YValue(0), url=alt.Url("url:N"))
    ramp = alt.Scale(domain=[lo + s * (hi - lo) for s, _ in IMAGE_STOPS], range=[c for _, c in IMAGE_STOPS],
                     interpolate="rgb")
    first = FIRST_DIMENSION - 0.5  # cell k spans [first + k, first + k + 1]: its number at its centre
    frame = pd.DataFrame({"x": [first, first + cols], "y": [first, first + rows], "value": [lo, hi]})
    whole = {"tickMinStep": 1, "format": "d"}  # the axes number rows and columns
    axes = alt.Chart(frame).mark_point(size=0, filled=False, opacity=1).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[first, first + cols], nice=False, zero=False),
                axis=_plain_axis(x_title, **whole)),
        y=alt.Y("y:Q", scale=alt.Scale(domain=[first, first + rows], nice=False, zero=False, reverse=True),
                axis=_plain_axis(y_title, **whole)),
        color=alt.Color("value:Q", scale=ramp, legend=_gradient_legend(value_title)))
    low, high = _span(values)
    body = _t("a11y.image", rows=rows, cols=cols, y=y_title, x=x_title, value=value_title, low=low, high=high)
    return _finish(layer(image, axes), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.heatmap_kind"), title, body))
