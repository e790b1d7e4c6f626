"""A big matrix as one picture (`picture`): its cells a PNG of whole-pixel blocks inside an SVG drawn on the
server, with axes that number rows and columns and the colour legend, shown in the page as an image.

A matrix past a panel's PICTURE_CELLS (a 64 x 512 embedding, the 128 x 64 table of sinusoids) has too many cells
for a mark or an SVG rectangle each. Drawn by Vega (the PNG in an image mark, the axes and legend as Vega's), such
a picture cost the browser 0.09-0.12 s of CPU on every redraw; as one image 0.05-0.07 s, about an empty page's
0.05-0.06 s (measured in session 18 with tests/benchmarks/bench_browser.py's floor pages). The picture's pixels are
what `palette.ramp_image` makes of the values, on the diverging ramp of pictures (`IMAGE_STOPS`) or the weights'
(`WEIGHT_STOPS`), row 0 at the top; the PNG rides in the SVG as a data URL, which an SVG shown as an image may
load (it may load nothing from elsewhere).
"""
from __future__ import annotations

from typing import Literal

import numpy as np

from . import numbers
from .describe import _describe, _span, _t
from .engine import FIRST_DIMENSION, LABEL_FONT, TITLE_FONT
from .palette import (IMAGE_STOPS, PALETTE, WEIGHT_STOPS, colour_image, legend_title, png_data_url, ramp_domain,
                      ramp_image)
from .svg import GAP, LEGEND_LENGTH, SvgChart, _document, _legend, _text, _width
from .svg_lines import across, axis, tick_label

Ramp = Literal["diverging", "weights"]
_STOPS = {"diverging": IMAGE_STOPS, "weights": WEIGHT_STOPS}


def picture(values: np.ndarray, *, x_title: str, y_title: str, value_title: str | None = None,
            kind: Ramp = "diverging", domain: tuple[float, float] | None = None, width: int = 520,
            height: int = 360, title: str | None = None) -> SvgChart:
    """A large matrix (up to 512 x 512) as one picture of `width` x `height` px in an SVG with axes and legend.

    Cells are enlarged by whole pixels (to about the plot size) so small matrices stay sharp. The axes number rows
    (top to bottom) and columns at their centres from FIRST_DIMENSION (0, as `dimension_labels` does). `kind`
    picks the ramp: "diverging" centred on 0 (`domain` defaults to symmetric around 0; non-finite cells in its
    middle colour) or "weights" over 0..1 (non-finite cells grey). The legend is titled `value_title` (the
    generic "value": by the kind); `title` names the chart in its text alternative. No cell has a tooltip: the
    numbers are shown elsewhere (a panel's table and CSV)."""
    values = np.asarray(values, dtype=float)  # (rows, cols)
    rows, cols = values.shape
    stops = _STOPS[kind]
    lo, hi = domain or ramp_domain(kind, values)  # diverging: symmetric around 0; weights: 0..1
    pixels = colour_image(values, (lo, hi)) if kind == "diverging" else ramp_image(values, stops, (lo, hi))
    block = (max(1, round(height / rows)), max(1, round(width / cols)))  # each cell a block of whole pixels
    lang = numbers.language()
    first = FIRST_DIMENSION - 0.5  # cell k spans [first + k, first + k + 1]: its number at its centre
    _, x_ticks, x_step = across(np.zeros(0), width, (first, first + cols), True, lang)
    _, y_ticks, y_step = axis(np.zeros(0), height, (first, first + rows), True)
    y_labels = [tick_label(v, y_step, False, lang) for v in y_ticks]
    left = 8 + TITLE_FONT + 8 + max(_width(s, LABEL_FONT) for s in y_labels) + 8
    top, right = 8, left + width
    grey, ink = PALETTE["masked"], PALETTE["ink"]  # the frame, the ticks
    parts = [f'<image x="{left:.1f}" y="{top}" width="{width}" height="{height}" preserveAspectRatio="none" '
             f'image-rendering="optimizeSpeed" style="image-rendering: pixelated" '  # no blur (SVG's, CSS's word)
             f'href="{png_data_url(pixels, block=block)}"/>',
             f'<rect x="{left:.1f}" y="{top}" width="{width}" height="{height}" fill="none" stroke="{grey}"/>']
    for v, label in zip(y_ticks, y_labels):
        y = top + (v - first) / rows * height
        parts.append(f'<line x1="{left - 5:.1f}" y1="{y:.1f}" x2="{left:.1f}" y2="{y:.1f}" stroke="{ink}"/>')
        parts.append(_text(left - 8, y + 4, label, anchor="end"))
    for v in x_ticks:
        x = left + (v - first) / cols * width
        parts.append(f'<line x1="{x:.1f}" y1="{top + height}" x2="{x:.1f}" y2="{top + height + 5}" stroke="{ink}"/>')
        parts.append(_text(x, top + height + 18, tick_label(v, x_step, False, lang)))
    parts.append(_text(left + width / 2, top + height + 40, x_title, size=TITLE_FONT, extra=' font-weight="bold"'))
    mid = top + height / 2
    parts.append(_text(8 + TITLE_FONT, mid, y_title, size=TITLE_FONT,
                       extra=f' font-weight="bold" transform="rotate(-90 {8 + TITLE_FONT} {mid:.1f})"'))
    value_title = legend_title(kind, value_title)
    key, key_width, key_height = _legend(right + GAP, top, kind, (lo, hi), value_title, lang, stops=stops,
                                         length=max(60, min(LEGEND_LENGTH, height)))  # no taller than the plot
    low, high = _span(values)
    body = _t("a11y.image", rows=rows, cols=cols, y=y_title, x=x_title, value=value_title, low=low, high=high)
    return _document(right + GAP + key_width + 4, max(top + height + 48, top + key_height + 4),
                     _describe(_t("a11y.heatmap_kind"), title, body), parts + key, kind="picture")
