"""A big matrix as one picture drawn by Vega (`image_heatmap`), and what the heatmaps drawn on the server as SVG
(svg.py: a matrix panel, small multiples) are built from: a matrix in long form (`matrix_frame`), the cell size,
and when value text is written (`SMALL_MATRIX`).

A heatmap's rows run top to bottom in matrix order, columns left to right, column labels on top; the colour scale
is the declared one of its kind (palette.py), its legend titled by what it shows; value text is written in the
cells of small matrices (fonts at least 12 px, for a projector at the back of a room)."""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from . import numbers
from .describe import _describe, _span, _t
from .engine import _PAD, FIRST_DIMENSION, _finish, _gradient_legend, _plain_axis, _title, layer, unique_labels
from .numbers import exact, short_number
from .palette import IMAGE_STOPS, MASK_SCALES, Scale, _dark, colour_image, kept, png_data_url
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
    block = (max(1, round(height / rows)), max(1, round(width / cols)))  # each cell a block of whole pixels
    url = png_data_url(colour_image(values, (lo, hi)), block=block)
    image = alt.Chart(pd.DataFrame({"url": [url]})).mark_image(
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
