"""Attention views: BertViz-style head view (lines from queries to keys, lesson 4 and 13) and model view (every
layer and head in one picture, lesson 13)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from .describe import _describe, _listed, _t
from .engine import (_DEFAULT_TEXT, _PAD, ChartText, _finish, _gradient_legend, _series_legend, _title, layer,
                     unique_labels)
from .numbers import exact
from .palette import GRID_EMPTY, HEAD_COLORS, PALETTE, WEIGHT_STOPS, legend_title, png_data_url, ramp_image

GRID_GAP = 3  # pixels between the panels of a model view


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


def _token_columns(labels: list[str], n_q: int, n_k: int, y_scale: alt.Scale, size: int, pick) -> list:
    """The query tokens (left, where pointing picks a query) and the key tokens (right) of a head view."""
    side = pd.DataFrame({"x": [0.0] * n_q + [1.0] * n_k, "y": [*range(n_q), *range(n_k)],
                         "q": [*range(n_q), *[-1] * n_k], "label": labels[:n_q] + labels[:n_k]})
    words = []
    for side_x, align, dx in ((0.0, "right", -8), (1.0, "left", 8)):
        layer = (alt.Chart(side[side["x"] == side_x])
                 .mark_text(align=align, dx=dx, fontSize=size, color=PALETTE["ink"])
                 .encode(x=alt.X("x:Q", scale=alt.Scale(domain=[0, 1]), axis=None),
                         y=alt.Y("y:Q", scale=y_scale, axis=None), text=alt.Text("label:N")))
        words.append(layer.add_params(pick) if side_x == 0.0 else layer)
    return words


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
    text = text._replace(value=legend_title("weights", text.value))
    lines = head_view_lines(weights, heads, threshold=threshold, top_k=top_k)
    lines = lines.assign(name=[head_names[h] for h in lines["head"]], query=[labels[q] for q in lines["q"]],
                         key=[labels[k] for k in lines["k"]], exact=[exact(w) for w in lines["weight"]],
                         x0=0.0, x1=1.0)
    longest = max(n_q, n_k, 2)
    row = 36 if longest <= 8 else 26 if longest <= 16 else 20 if longest <= 24 else 16
    y_scale = alt.Scale(domain=[-0.5, max(n_q, n_k) - 0.5], reverse=True)
    names = [head_names[h] for h in heads]
    pick = alt.selection_point(fields=["q"], on="pointerover", clear="pointerout", empty=True)
    color = alt.Color("name:N", sort=names, scale=alt.Scale(domain=names, range=[HEAD_COLORS[h % 16] for h in heads]),
                      legend=_series_legend(head_title, orient="top", direction="horizontal", columns=4,
                                            symbolStrokeWidth=4))
    opacity = alt.Opacity("weight:Q", scale=alt.Scale(domain=[0, 1], range=[0, 1]), legend=None)
    picked = alt.condition(pick, opacity, alt.value(0.0))["condition"]  # the weight's opacity where picked, else 0
    drawn = (alt.Chart(lines).mark_rule(strokeWidth=2.5)
             .encode(x=alt.X("x0:Q", scale=alt.Scale(domain=[0, 1]), axis=None), x2=alt.X2("x1:Q"),
                     y=alt.Y("q:Q", scale=y_scale, axis=None), y2=alt.Y2("k:Q"),
                     color=color, opacity=alt.OpacityValue(0.0, condition=picked),
                     tooltip=[alt.Tooltip("name:N", title=head_title), alt.Tooltip("query:N", title=text.row),
                              alt.Tooltip("key:N", title=text.column), alt.Tooltip("exact:N", title=text.value)]))
    words = _token_columns(labels, n_q, n_k, y_scale, 13 if row >= 20 else 12, pick)
    body = _t("a11y.head_view", query=text.row, key=text.column, weight=text.value, head=head_title,
              heads=_listed(names), tokens=_listed(labels))
    return _finish(layer(drawn, *words), frame=False, width=300, height=row * longest, autosize=_PAD,
                   title=_title(title), description=_describe(_t("a11y.head_view_kind"), title, body))


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


def _grid_names(row_names: Sequence[str], col_names: Sequence[str], left: float, top: float, pitch: tuple,
                inner: tuple, px: alt.Scale, py: alt.Scale) -> list:
    """The column names above the panels and the row names left of them."""
    (ph, pw), (ih, iw) = pitch, inner
    heads = pd.DataFrame({"x": [left + c * pw + iw / 2 for c in range(len(col_names))],
                          "y": [top - 6] * len(col_names), "label": list(col_names)})
    layers = pd.DataFrame({"x": [left - 8] * len(row_names), "label": list(row_names),
                           "y": [top + r * ph + ih / 2 for r in range(len(row_names))]})
    return [alt.Chart(df).mark_text(align=align, baseline=base, fontSize=12, color=PALETTE["ink"]).encode(
        x=alt.X("x:Q", scale=px, axis=None), y=alt.Y("y:Q", scale=py, axis=None), text=alt.Text("label:N"))
        for df, align, base in ((heads, "center", "bottom"), (layers, "right", "middle"))]


def attention_grid(weights: np.ndarray, row_names: Sequence[str], col_names: Sequence[str], *,
                   value_title: str | None = None, notes: Sequence[str] | None = None, note_title: str = " ",
                   width: int = 960,
                   title: str | None = None) -> alt.LayerChart:
    """BertViz-style model view: weights (rows, cols, n, m), e.g. (layers, heads, n, n), as small multiples in ONE
    PNG (fast for 6 x 12 panels of 128 x 128), row names on the left, column names on top, a 0..1 legend titled
    `value_title` (the generic "value": "Attention weight"). Pointing at a panel shows its row and column name
    and `notes[r * cols + c]` (e.g. what the head does)."""
    weights = np.asarray(weights, dtype=float)
    rows, cols, n, m = weights.shape
    value_title = legend_title("weights", value_title)
    pixels = grid_pixels(weights, max(1, math.ceil(72 / max(n, m))))  # at least ~72 px per panel before scaling
    left, top = 76, 24  # room for the row and column names
    s = (width - left) / pixels.shape[1]  # display pixels per picture pixel
    height = top + round(pixels.shape[0] * s)
    image = alt.Chart(pd.DataFrame({"url": [png_data_url(pixels)]})).mark_image(
        width=width - left, height=height - top, aspect=False, align="left", baseline="top").encode(
        x=alt.XValue(left), y=alt.YValue(top), url=alt.Url("url:N"))
    ph, pw = (pixels.shape[0] + GRID_GAP) / rows * s, (pixels.shape[1] + GRID_GAP) / cols * s  # panel pitch
    ih, iw = ph - GRID_GAP * s, pw - GRID_GAP * s  # a panel's own size
    panels = pd.DataFrame([{"x": left + c * pw, "x2": left + c * pw + iw, "y": top + r * ph, "y2": top + r * ph + ih,
                            "row": row_names[r], "col": col_names[c],
                            "note": notes[r * cols + c] if notes is not None else ""}
                           for r in range(rows) for c in range(cols)])
    px = alt.Scale(domain=[0, width], range=[0, width], nice=False, zero=False)
    py = alt.Scale(domain=[0, height], range=[0, height], nice=False, zero=False)
    tips = [alt.Tooltip("row:N", title=" "), alt.Tooltip("col:N", title="  ")]
    tips += [alt.Tooltip("note:N", title=note_title)] if notes is not None else []
    hover = alt.Chart(panels).mark_rect(color=PALETTE["ink"], opacity=0.001).encode(
        x=alt.X("x:Q", scale=px, axis=None), x2=alt.X2("x2:Q"), y=alt.Y("y:Q", scale=py, axis=None), y2=alt.Y2("y2:Q"),
        tooltip=tips)
    ramp = alt.Scale(domain=[s_ for s_, _ in WEIGHT_STOPS], range=[c for _, c in WEIGHT_STOPS], interpolate="rgb")
    legend = alt.Chart(pd.DataFrame({"x": [0.0, 0.0], "y": [0.0, 0.0], "value": [0.0, 1.0]})).mark_point(
        size=0, opacity=0).encode(x=alt.X("x:Q", scale=px, axis=None), y=alt.Y("y:Q", scale=py, axis=None),
                                  color=alt.Color("value:Q", scale=ramp, legend=_gradient_legend(value_title)))
    body = _t("a11y.grid", rows=rows, cols=cols, n=n, m=m, value=value_title)
    if _listed(row_names) or _listed(col_names):
        body += "; " + _t("a11y.grid_names", rows=_listed(row_names), cols=_listed(col_names))
    names = _grid_names(row_names, col_names, left, top, (ph, pw), (ih, iw), px, py)
    return _finish(layer(image, hover, *names, legend), frame=False, width=width, height=height, autosize=_PAD,
                   title=_title(title), description=_describe(_t("a11y.grid_kind"), title, body))
