"""Labelled heatmaps drawn on the server as SVG and shown in the page as images: one matrix (`heatmap_svg`, what a
matrix panel of ui/panels.py shows up to its PICTURE_CELLS) and small multiples, one matrix per head (`facet_svg`).

These heatmaps change with almost every control of a lesson. Drawn by Vega in the browser, each cost the browser
~0.05 s of CPU per change (five labelled 8 x 8 heatmaps: 0.24-0.29 s per slider step; as images 0.07-0.08 s, the
same as an empty page's slider: measured in session 16 with tests/benchmarks/bench_browser.py's floor pages).
Here each is an SVG written in a few milliseconds: cells coloured on the same ramps Vega draws
(`palette.SCHEME_STOPS`, checked against Vega's own in tests/test_accessibility.py), the value in each cell of a
small matrix, labels on the left and on top, and the colour legend beside it. Every cell carries its value as
computed (`data-value`) and, where it is big enough to point at, a tooltip that shows when the downloaded SVG is
opened; in the page an image has no hover, so a panel's exact numbers are under "show the numbers" and in its CSV.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape
from typing import NamedTuple

import numpy as np

from ..i18n import t
from . import numbers
from .describe import _describe, _heat_description, _listed, _span, _t
from .engine import LABEL_FONT, TITLE_FONT, unique_labels
from .heatmaps import SMALL_MATRIX, _cell_size, matrix_frame
from .palette import MASK_COLOURS, MASK_SCALES, PALETTE, Scale, cell_colours, kept, legend_title, ramp_domain

CHAR_WIDTH = 0.6  # a character's width in font sizes (a generous average for a sans-serif face)
LABEL_LIMIT = 140  # px: a longer axis label is cut with "…", as Vega's labelLimit does
GAP, LEGEND_BAR, LEGEND_LENGTH = 14, 14, 160  # px: plot to legend, the ramp's width and length
AIMABLE = 12  # px: smaller cells get no white border and no tooltip (too small to aim at; 20 bytes a cell)
FONT = "font-family=\"'Source Sans Pro', 'Source Sans 3', Arial, sans-serif\""


class SvgChart(NamedTuple):
    svg: str  # a whole SVG document
    description: str  # its text alternative (the img's alt)
    width: int  # px
    height: int


def _width(text: str, size: float) -> float:
    return len(text) * size * CHAR_WIDTH


def _fit(label: str, size: float) -> str:
    """The label cut with "…" to LABEL_LIMIT px."""
    if _width(label, size) <= LABEL_LIMIT:
        return label
    return label[:max(1, int(LABEL_LIMIT / (size * CHAR_WIDTH)) - 1)] + "…"


def _text(x: float, y: float, text: str, *, size: int = LABEL_FONT, anchor: str = "middle", fill: str = PALETTE["ink"],
          extra: str = "") -> str:
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{extra}>'
            f'{escape(text)}</text>')


def _legend(x: float, y: float, kind: Scale, domain: tuple[float, float], title: str, lang: str,
            stops: Sequence[tuple[float, str]] | None = None,
            length: float = LEGEND_LENGTH) -> tuple[list, float, float]:
    """The colour legend at (x, y): its SVG parts, width and height. A ramp (the kind's, or `stops` over the
    domain from 0 to 1): its title one word a line, then a bar `length` px long from the high end (top) to the low
    end; a mask: a swatch per category."""
    parts, lines = [], title.split() or [title]
    for k, line in enumerate(lines):
        parts.append(_text(x, y + 13 * (k + 1), line, size=13, anchor="start",
                           extra=' font-weight="bold" class="legend"'))
    top = y + 13 * len(lines) + 14
    width = max(_width(line, 13) for line in lines)
    if kind in MASK_SCALES:
        for k, (name, colour) in enumerate(MASK_COLOURS.items()):
            row = top + 20 * k
            parts.append(f'<rect x="{x:.1f}" y="{row:.1f}" width="12" height="12" fill="{colour}"/>')
            label = t(f"chart.{name}", lang=lang)
            parts.append(_text(x + 18, row + 11, label, anchor="start"))
            width = max(width, 18 + _width(label, LABEL_FONT))
        return parts, width, top + 40 - y
    lo, hi = domain
    if stops is None:  # the kind's colours at 11 steps
        stops = list(zip(np.linspace(0, 1, 11).tolist(), cell_colours(np.linspace(lo, hi, 11), kind, domain)))
    gradient = "".join(f'<stop offset="{1 - s:.2f}" stop-color="{c}"/>' for s, c in reversed(stops))  # top: high
    parts.append(f'<defs><linearGradient id="ramp" x1="0" y1="0" x2="0" y2="1">{gradient}</linearGradient></defs>')
    parts.append(f'<rect x="{x:.1f}" y="{top:.1f}" width="{LEGEND_BAR}" height="{length}" fill="url(#ramp)"/>')
    ticks = (hi, (lo + hi) / 2, lo)
    for k, v in enumerate(ticks):
        label = numbers.short_number(v, lang)
        parts.append(_text(x + LEGEND_BAR + 6, top + length * k / 2 + 4, label, anchor="start"))
        width = max(width, LEGEND_BAR + 6 + _width(label, LABEL_FONT))
    return parts, width, top + length + 6 - y


class _Grid(NamedTuple):
    """Where one matrix's cells go: cell size, the room its labels take (left, top), its size with them."""
    w: int
    h: int
    left: int
    top: int
    width: float  # labels, cells and a last tilted label's overhang
    height: int
    rows: list[str]
    cols: list[str]
    tilted: bool
    row_step: int  # every row_step-th row is labelled (1: all), so labels never overlap
    col_step: int


def _grid(n_rows: int, n_cols: int, row_labels, col_labels, w: int, h: int) -> _Grid:
    rows = [_fit(r, LABEL_FONT) for r in unique_labels(row_labels)]
    cols = [_fit(c, LABEL_FONT) for c in unique_labels(col_labels)]
    longest = max(_width(c, LABEL_FONT) for c in cols)
    tilted = longest > w  # as Vega's axis did: a label wider than its cell is written at -40 degrees
    left = math.ceil(max(_width(r, LABEL_FONT) for r in rows)) + 8
    top = math.ceil(longest * math.sin(math.radians(40)) + LABEL_FONT if tilted else LABEL_FONT) + 10
    overhang = longest * math.cos(math.radians(40)) - w / 2 if tilted else 0  # the last column's label
    # Tilted labels k cells apart are w * k * sin(40°) apart across their lines: at least a line of text.
    col_step = _every(w, (LABEL_FONT + 2) / math.sin(math.radians(40))) if tilted else 1
    return _Grid(w, h, left, top, left + w * n_cols + max(0, overhang), top + h * n_rows, rows, cols, tilted,
                 _every(h, LABEL_FONT + 2), col_step)


def _every(cell: float, room: float) -> int:
    """Label every k-th cell, k the smallest power of two that gives each label `room` px (as Vega's axes drop
    every other label until none overlap)."""
    k = 1
    while cell * k < room:
        k *= 2
    return k


def _matrix(values: np.ndarray, df, kind: Scale, domain: tuple[float, float], g: _Grid, x0: float, y0: float,
            show_values: bool) -> list[str]:
    """One matrix's labels, cells (each with its value as computed and a tooltip) and value texts, its grid's
    top left corner at (x0, y0)."""
    n_rows, n_cols = values.shape
    left, top, w, h = x0 + g.left, y0 + g.top, g.w, g.h
    parts = []
    for j, label in list(enumerate(g.cols))[::g.col_step]:
        x, y = left + w * (j + 0.5), top - 8
        extra = f' transform="rotate(-40 {x:.1f} {y:.1f})"' if g.tilted else ""
        parts.append(_text(x, y, label, anchor="start" if g.tilted else "middle", extra=extra))
    for i, label in list(enumerate(g.rows))[::g.row_step]:
        parts.append(_text(left - 6, top + h * (i + 0.5) + 4, label, anchor="end"))
    fills = cell_colours(values.ravel(), kind, domain)  # (n_rows * n_cols,)
    aimable = min(w, h) >= AIMABLE
    stroke = ' stroke="#FFFFFF" stroke-width="1"' if aimable else ""
    size = 14 if min(w, h) >= 44 else 12
    rects, written = [f"<g{stroke}>"], [f'<g font-size="{size}" text-anchor="middle">']  # shared attributes once
    cells = zip(values.ravel().tolist(), df["row"], df["col"], df["exact"], df["text"], df["dark"])
    for k, (value, row, col, exact, text, dark) in enumerate(cells):
        i, j = divmod(k, n_cols)
        x, y = left + w * j, top + h * i
        tip = f"<title>{escape(f'{row}, {col}: {exact}')}</title>" if aimable else ""  # hover, in a download
        rects.append(f'<rect x="{x:g}" y="{y:g}" width="{w}" height="{h}" fill="{fills[k]}" data-value="{value!r}">'
                     f'{tip}</rect>')  # data-value: the value as computed
        if show_values:
            written.append(f'<text x="{x + w / 2:g}" y="{y + h / 2 + size * 0.35:.1f}" '
                           f'fill="{"#FFFFFF" if dark else PALETTE["ink"]}">{escape(text)}</text>')
    return parts + rects + ["</g>"] + written + ["</g>"]


def _document(width: float, height: float, description: str, parts: list[str], kind: str = "heatmap") -> SvgChart:
    """The whole SVG: white, `kind` its class (what tests/widgets.py tells heatmaps and line charts apart by)."""
    width, height = math.ceil(width), math.ceil(height)
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" class="{kind}" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" {FONT} role="img"><title>{escape(description)}</title>'
           f'<rect width="{width}" height="{height}" fill="#FFFFFF"/>{"".join(parts)}</svg>')
    return SvgChart(svg, description, width, height)


def heatmap_svg(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object], *,
                scale: Scale = "diverging", title: str | None = None, legend: str | None = None,
                show_values: bool | None = None, max_width: int = 560, max_height: int = 440) -> SvgChart:
    """The heatmap of a 2-D matrix as SVG: rows top to bottom, columns left to right with their labels on top,
    cells square (at most 52 px) within max_width x max_height, the value written in each cell when
    `show_values` (default: at most 12 x 12 and "-0.25" fits), non-finite cells grey, and the legend titled
    `legend` (default: by the scale kind). `title` names the chart in its text alternative."""
    values = np.asarray(values, dtype=float)
    n_rows, n_cols = values.shape
    w, h = _cell_size(n_rows, n_cols, max_width, max_height)
    if show_values is None:
        show_values = n_rows <= SMALL_MATRIX and n_cols <= SMALL_MATRIX and w >= 28
    legend = legend_title(scale, legend)
    domain = ramp_domain(scale, values)
    df = matrix_frame(values, row_labels, col_labels, scale, domain)
    g = _grid(n_rows, n_cols, row_labels, col_labels, w, h)
    parts = _matrix(values, df, scale, domain, g, 0, 0, show_values)
    key, key_width, key_height = _legend(g.left + w * n_cols + GAP, g.top, scale, domain, legend, numbers.language())
    mask = kept(values, scale) if scale in MASK_SCALES else None
    description = _heat_description(values, unique_labels(row_labels), unique_labels(col_labels), legend, title,
                                     kept=mask)
    return _document(max(g.width, g.left + w * n_cols + GAP + key_width) + 4,
                     g.top + max(h * n_rows, key_height) + 4, description, parts + key)


def facet_svg(matrices: Sequence[np.ndarray], panel_titles: Sequence[str], row_labels: Sequence[object],
              col_labels: Sequence[object], *, scale: Scale = "weights", columns: int = 4,
              show_values: bool | None = None, legend: str | None = None) -> SvgChart:
    """Small multiples: one heatmap per head or layer, titled, in rows of `columns`, on one shared colour scale
    with one legend; cells two thirds of a single heatmap's, values written up to 8 x 8."""
    stack = np.stack([np.asarray(m, dtype=float) for m in matrices])  # (panels, n_rows, n_cols)
    _, n_rows, n_cols = stack.shape
    if show_values is None:
        show_values = n_rows <= 8 and n_cols <= 8  # panels are smaller than a single heatmap
    legend = legend_title(scale, legend)
    domain = ramp_domain(scale, stack)
    w, h = _cell_size(n_rows, n_cols)
    g = _grid(n_rows, n_cols, row_labels, col_labels, max(2, w * 2 // 3), max(2, h * 2 // 3))
    pitch_x, pitch_y = g.width + 20, g.height + TITLE_FONT + 16  # a panel with its title, and the gap after it
    parts = []
    for k, (values, name) in enumerate(zip(stack, panel_titles)):
        x0, y0 = pitch_x * (k % columns), pitch_y * (k // columns)
        parts.append(_text(x0 + g.left + g.w * n_cols / 2, y0 + TITLE_FONT, str(name), size=TITLE_FONT,
                           extra=' font-weight="bold" class="panel"'))
        df = matrix_frame(values, row_labels, col_labels, scale, domain)
        parts += _matrix(values, df, scale, domain, g, x0, y0 + TITLE_FONT + 6, show_values)
    shown = min(columns, len(stack))
    key, key_width, key_height = _legend(pitch_x * shown, TITLE_FONT + 6 + g.top, scale, domain, legend,
                                         numbers.language())
    panel_rows = -(-len(stack) // columns)
    low, high = _span(stack)
    rows, cols, titles = unique_labels(row_labels), unique_labels(col_labels), [str(n) for n in panel_titles]
    body = _t("a11y.facet", count=len(titles), panels=_listed(titles), rows=n_rows, cols=n_cols,
             row_labels=_listed(rows), col_labels=_listed(cols), value=legend, low=low, high=high)
    description = _describe(_t("a11y.facet_kind"), None, body)
    return _document(pitch_x * shown + key_width + 4, max(pitch_y * panel_rows, key_height + TITLE_FONT + 6 + g.top),
                     description, parts + key)
