"""Named series over a shared x drawn on the server as SVG and shown as an image (`lines`): losses and accuracies
while a model trains, sinusoids, activations, entropies.

Drawn by Vega, two line charts whose data changes at each redraw of a live section (every 0.5 s, as lesson 9's
curves while a model trains) kept the browser busy 29% of the time; as images 15%, against 10% for the section's
progress bar and metrics alone (measured in session 17 on a page of their own, three 10 s windows, load ~1.5). The axes
here follow Vega's defaults: a domain that includes zero and ends on "nice" ticks about 40 px apart (d3's ticks,
steps of 1, 2 or 5 times a power of ten), numbers in the reader's language, the legend below the plot. Each
series carries its values as computed (`data-x`, `data-y`); an image has no hover, so a caller that offers exact
values shows them in a table.
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from html import escape

import numpy as np

from . import numbers
from .describe import _lines_description, _t
from .engine import HEADING_FONT, LABEL_FONT, TITLE_CHARACTERS, TITLE_FONT
from .palette import CATEGORICAL, PALETTE
from .svg import CHAR_WIDTH, SvgChart, _document, _text, _width

TICK_SPACING = 40  # px between ticks, as Vega's default tick count (an axis's length / 40)
STROKE = 2.5  # px: a series' line
SWATCH = 22  # px: a legend entry's line


def tick_step(lo: float, hi: float, count: int) -> float:
    """d3's tick step: about `count` ticks over [lo, hi], each 1, 2 or 5 times a power of ten."""
    raw = (hi - lo) / max(1, count)
    power = 10.0 ** math.floor(math.log10(raw))
    error = raw / power
    factor = 10 if error >= math.sqrt(50) else 5 if error >= math.sqrt(10) else 2 if error >= math.sqrt(2) else 1
    return power * factor


def axis(values: np.ndarray, length: float, domain: tuple[float, float] | None, whole: bool,
         count: int | None = None) -> tuple[tuple[float, float], list[float], float]:
    """An axis's domain, ticks and tick step: `domain` as given, or the values' extent with zero widened to the
    nearest ticks (`whole`: the values' extent, at least 1 wide, ticks on whole numbers only); about `count`
    ticks (default: one per TICK_SPACING px)."""
    count = count or max(2, round(length / TICK_SPACING))
    finite = values[np.isfinite(values)]
    if domain is None and whole:
        lo = float(finite.min()) if finite.size else 0.0
        domain = (lo, max(lo + 1.0, float(finite.max()) if finite.size else 0.0))
    if domain is not None:
        lo, hi = domain
        step = tick_step(lo, hi, count)
    else:
        lo, hi = (min(0.0, float(finite.min())), max(0.0, float(finite.max()))) if finite.size else (0.0, 1.0)
        if hi == lo:
            hi = lo + 1.0
        step = tick_step(lo, hi, count)
        lo, hi = math.floor(lo / step) * step, math.ceil(hi / step) * step
    if whole:
        step = max(1.0, step)
    first, last = math.ceil(lo / step - 1e-9), math.floor(hi / step + 1e-9)
    return (lo, hi), [k * step for k in range(first, last + 1)], step


def across(values: np.ndarray, length: float, domain: tuple[float, float] | None, whole: bool,
           lang: str) -> tuple[tuple[float, float], list[float], float]:
    """A horizontal axis (see `axis`), with fewer ticks until their labels do not touch (as Vega drops
    overlapping labels)."""
    count = max(2, round(length / TICK_SPACING))
    while True:
        (lo, hi), ticks, step = axis(values, length, domain, whole, count)
        widest = max(_width(tick_label(v, step, False, lang), LABEL_FONT) for v in ticks)
        if count <= 2 or len(ticks) < 3 or widest + 8 <= length / (len(ticks) - 1):
            return (lo, hi), ticks, step
        count //= 2


def tick_label(v: float, step: float, percent: bool, lang: str) -> str:
    """A tick's number with as many decimals as its step needs (",": thousands grouped as Vega writes them)."""
    decimals = max(0, -math.floor(math.log10(step) + 1e-9))
    if percent:
        return numbers.number(v, f".{max(0, decimals - 2)}%", lang)
    return numbers.number(0.0 if abs(v) < step * 1e-9 else v, f",.{decimals}f", lang)


def _segments(points: list[tuple[float, float]]) -> list[list[tuple[float, float]]]:
    """Runs of finite points (a NaN leaves a gap)."""
    runs, run = [], []
    for x, y in points:
        if math.isfinite(x) and math.isfinite(y):
            run.append((x, y))
        elif run:
            runs.append(run)
            run = []
    return runs + ([run] if run else [])


def _numbers(values) -> str:
    return " ".join(repr(float(v)) for v in values)


def lines(x: Sequence[float], series: dict[str, Sequence[float]], *, x_title: str, y_title: str,
          title: str | None = None, colors: Sequence[str] | None = None, width: int = 480, height: int = 260,
          points: bool = False, whole_x: bool = False, y_domain: tuple[float, float] | None = None,
          y_percent: bool = False) -> SvgChart:
    """One line per named series over a shared x (a series shorter than x covers its first x values; NaN leaves a
    gap), coloured `colors` or CATEGORICAL in order, the legend below the plot. `width` x `height` is the plot's
    size. `points` marks every value with a dot; `whole_x` spans the x values on whole-number ticks (layers);
    `y_domain` fixes the y axis; `y_percent` writes its ticks as percentages."""
    lang = numbers.language()
    names = list(series)
    palette = list(colors) if colors else [CATEGORICAL[i % len(CATEGORICAL)] for i in range(len(names))]
    xs = np.asarray(list(x), dtype=float)  # (n,)
    ys = {name: np.asarray(list(values), dtype=float)[:len(xs)] for name, values in series.items()}  # each (<= n,)
    every_y = np.concatenate([*ys.values(), np.zeros(0)])
    (x_lo, x_hi), x_ticks, x_step = across(xs, width, None, whole_x, lang)
    (y_lo, y_hi), y_ticks, y_step = axis(every_y, height, y_domain, False)
    y_labels = [tick_label(v, y_step, y_percent, lang) for v in y_ticks]
    fits = min(TITLE_CHARACTERS, int(width / (HEADING_FONT * CHAR_WIDTH)))  # characters a title line holds
    heading = textwrap.wrap(title, fits, break_on_hyphens=False) if title else []
    top = 8 + (HEADING_FONT + 6) * len(heading) + 6
    left = 8 + TITLE_FONT + 8 + math.ceil(max(_width(s, LABEL_FONT) for s in y_labels)) + 8
    right = left + width

    def px(v: float) -> float:
        return left + (v - x_lo) / (x_hi - x_lo) * width

    def py(v: float) -> float:
        return top + (y_hi - v) / (y_hi - y_lo) * height

    parts = [_text(left + width / 2, 8 + (HEADING_FONT + 6) * (k + 1) - 6, line, size=HEADING_FONT,
                   extra=' font-weight="bold"') for k, line in enumerate(heading)]
    grid = [f'<line x1="{left}" y1="{py(v):.1f}" x2="{right}" y2="{py(v):.1f}"/>' for v in y_ticks]
    grid += [f'<line x1="{px(v):.1f}" y1="{top}" x2="{px(v):.1f}" y2="{top + height}"/>' for v in x_ticks]
    parts.append(f'<g stroke="{PALETTE["masked"]}" stroke-opacity="0.6" stroke-width="1">{"".join(grid)}</g>')
    parts.append(f'<path d="M{left},{top} V{top + height} H{right}" fill="none" stroke="{PALETTE["ink"]}"/>')
    for v, label in zip(y_ticks, y_labels):
        parts.append(_text(left - 6, py(v) + 4, label, anchor="end"))
    x_labels = [tick_label(v, x_step, False, lang) for v in x_ticks]
    for v, label in zip(x_ticks, x_labels):
        parts.append(_text(px(v), top + height + 16, label))
    parts.append(_text(left + width / 2, top + height + 36, x_title, size=TITLE_FONT, extra=' font-weight="bold"'))
    mid = top + height / 2
    parts.append(_text(8 + TITLE_FONT, mid, y_title, size=TITLE_FONT,
                       extra=f' font-weight="bold" transform="rotate(-90 {8 + TITLE_FONT} {mid:.1f})"'))
    for name, colour in zip(names, palette):
        values = ys[name]
        drawn = [[(px(a), py(b)) for a, b in run] for run in _segments(list(zip(xs.tolist(), values.tolist())))]
        path = " ".join("M" + " L".join(f"{a:.1f},{b:.1f}" for a, b in run) for run in drawn)
        dots = "".join(f'<circle cx="{a:.1f}" cy="{b:.1f}" r="3.5"/>' for run in drawn for a, b in run
                       if points)
        parts.append(f'<g class="series" data-name="{escape(name)}" data-x="{_numbers(xs[:len(values)])}" '
                     f'data-y="{_numbers(values)}" fill="{colour}"><path d="{path}" fill="none" stroke="{colour}" '
                     f'stroke-width="{STROKE}" stroke-linejoin="round" stroke-linecap="round"/>{dots}</g>')
    legend_top = top + height + 52
    for k, (name, colour) in enumerate(zip(names, palette)):
        y = legend_top + 20 * k
        parts.append(f'<line x1="{left}" y1="{y - 4}" x2="{left + SWATCH}" y2="{y - 4}" stroke="{colour}" '
                     f'stroke-width="{STROKE}"/>')
        parts.append(_text(left + SWATCH + 6, y, name, anchor="start", extra=' class="legend"'))
    legend_width = max([_width(name, LABEL_FONT) + SWATCH + 6 for name in names] + [0])
    description = _lines_description(_t("a11y.lines_kind"), title, xs.tolist(), x_title, y_title, names)
    overhang = _width(x_labels[-1], LABEL_FONT) / 2 if x_labels else 0  # the last x label, centred on the edge
    return _document(max(right + max(12, overhang + 4), left + legend_width + 4), legend_top + 20 * len(names) - 4,
                     description, parts, kind="lines")
