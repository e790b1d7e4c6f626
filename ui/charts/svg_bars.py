"""Bars drawn on the server as SVG and shown as an image: values per label (`bars`: attention weights, scores,
accuracies), a distribution over tokens with filtered and chosen ones (`distribution_bars`: decoding), and how a
weighted average is built, one stacked piece per word in each dimension (`contributions`, lesson 1).

These bars change with the lesson's own controls (lesson 1's word, lesson 10's temperature, top-k and top-p, lesson
14's next character). The axis is the line charts' (svg_lines.py: d3's ticks, numbers in the reader's language),
each bar's value is written after it, and each bar carries its value as computed (`data-value`) and a tooltip that
shows when the downloaded SVG is opened; in the page an image has no hover, and the written value is what a reader
reads (the exact numbers are in each lesson's tables).
"""
from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence
from html import escape

import numpy as np

from . import numbers
from .describe import _describe, _listed, _pairs, _t
from .engine import HEADING_FONT, LABEL_FONT, TITLE_CHARACTERS, TITLE_FONT, unique_labels
from .palette import CATEGORICAL, PALETTE
from .svg import CHAR_WIDTH, SvgChart, _document, _every, _fit, _text, _width
from .svg_lines import across, axis, tick_label

REMOVED_INK = "#6E6E6E"  # the text of a token a filter removed (5.1:1 on white, tests/test_accessibility.py)
MARK_STROKE = 2.5  # px: the outline of the chosen token's bar


def _bar_chart(values: Sequence[float], labels: Sequence[object], texts: list[str], *, value_title: str,
               label_title: str | None, title: str | None, color: str, domain: tuple[float, float] | None,
               width: int, row_height: int, kept: Sequence[bool] | None = None,
               ghost: Sequence[float] | None = None, ghost_title: str = "", marked: int | None = None) -> SvgChart:
    """Horizontal bars, labels top to bottom in the given order, each with its text after the bar (see
    `distribution_bars` for `kept`, `ghost` and `marked`). `width` is the plot's, the texts written past it."""
    lang = numbers.language()
    names = unique_labels(labels)
    values = [float(v) for v in values]
    kept = [True] * len(names) if kept is None else [bool(k) for k in kept]
    ghosts = None if ghost is None else [float(g) for g in ghost]
    (lo, hi), ticks, step = across(np.array(values + (ghosts or [])), width, domain, False, lang)
    tick_labels = [tick_label(v, step, False, lang) for v in ticks]
    shown = [_fit(name, LABEL_FONT) for name in names]
    left = 8 + (TITLE_FONT + 8 if label_title else 0) + math.ceil(max([_width(s, LABEL_FONT) for s in shown] + [0])) + 8

    def px(v: float) -> float:
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * width

    ends = [px(max(v, g, 0.0)) + 4 for v, g in zip(values, ghosts or values)]  # where each text starts
    right = max([left + width + _width(tick_labels[-1], LABEL_FONT) / 2]
                + [x + _width(text, LABEL_FONT) for x, text in zip(ends, texts)]) + 8
    fits = min(TITLE_CHARACTERS, int((right - 8) / (HEADING_FONT * CHAR_WIDTH)))  # characters a title line holds
    heading = textwrap.wrap(title, fits, break_on_hyphens=False) if title else []
    top = 8 + (HEADING_FONT + 6) * len(heading) + (6 if heading else 0)
    height = row_height * len(names)
    thick = round(row_height * 0.8)  # a bar's thickness, the rest the gap between bars
    parts = [_text(right / 2, 8 + (HEADING_FONT + 6) * (k + 1) - 6, line, size=HEADING_FONT,
                   extra=' font-weight="bold"') for k, line in enumerate(heading)]
    grid = "".join(f'<line x1="{px(v):.1f}" y1="{top}" x2="{px(v):.1f}" y2="{top + height}"/>' for v in ticks)
    parts.append(f'<g stroke="{PALETTE["masked"]}" stroke-opacity="0.6" stroke-width="1">{grid}</g>')
    for k, (name, label, value, text) in enumerate(zip(names, shown, values, texts)):
        middle = top + row_height * (k + 0.5)
        y = middle - thick / 2
        parts.append(_text(left - 6, middle + 4, label, anchor="end", extra=' class="label"'))
        tip = f"{name}, {value_title}: {numbers.exact(value)}"
        if ghosts is not None:
            a, b = sorted((px(0.0), px(ghosts[k])))
            tip += f"; {ghost_title}: {numbers.exact(ghosts[k])}"
            parts.append(f'<rect class="ghost" x="{a:.1f}" y="{y:.1f}" width="{b - a:.1f}" height="{thick}" '
                         f'fill="{PALETTE["masked"]}" fill-opacity="0.5" data-value="{ghosts[k]!r}"/>')
        a, b = sorted((px(0.0), px(value)))
        outline = f' stroke="{PALETTE["ink"]}" stroke-width="{MARK_STROKE}"' if k == marked else ""
        parts.append(f'<rect class="bar" x="{a:.1f}" y="{y:.1f}" width="{b - a:.1f}" height="{thick}" '
                     f'fill="{color if kept[k] else PALETTE["masked"]}"{outline} data-label="{escape(name)}" '
                     f'data-value="{value!r}"><title>{escape(tip)}</title></rect>')
        parts.append(_text(ends[k], middle + 4, text, anchor="start", fill=PALETTE["ink"] if kept[k] else REMOVED_INK,
                           extra=' class="value"'))
    zero = f" M{px(0.0):.1f},{top} V{top + height}" if lo < 0 < hi else ""  # where negative bars start
    parts.append(f'<path d="M{left},{top} V{top + height} H{left + width}{zero}" fill="none" '
                 f'stroke="{PALETTE["ink"]}"/>')
    for v, label in zip(ticks, tick_labels):
        parts.append(_text(px(v), top + height + 16, label))
    parts.append(_text(left + width / 2, top + height + 36, value_title, size=TITLE_FONT, extra=' font-weight="bold"'))
    if label_title:
        mid = top + height / 2
        parts.append(_text(8 + TITLE_FONT, mid, label_title, size=TITLE_FONT,
                           extra=f' font-weight="bold" transform="rotate(-90 {8 + TITLE_FONT} {mid:.1f})"'))
    description = _describe(_t("a11y.bars_kind"), title, f"{value_title}: {_pairs(names, texts)}")
    return _document(right, top + height + 44, description, parts, kind="bars")


def bars(values: Sequence[float], labels: Sequence[object], *, color: str = PALETTE["highlight"],
         title: str | None = None, value_title: str = "value", label_title: str | None = None,
         domain: tuple[float, float] | None = (0.0, 1.0), width: int = 300) -> SvgChart:
    """Horizontal bars, one per label, top to bottom in the given order, each with its value written. `domain`
    None: the values' extent with zero, ending on ticks."""
    texts = [numbers.short_number(float(v)) for v in values]
    return _bar_chart(values, labels, texts, value_title=value_title, label_title=label_title, title=title,
                      color=color, domain=domain, width=width, row_height=30)


def distribution_bars(values: Sequence[float], labels: Sequence[object], *, kept: Sequence[bool] | None = None,
                      ghost: Sequence[float] | None = None, marked: int | None = None, value_title: str = "p",
                      ghost_title: str = "before", label_title: str | None = None, removed_text: str = "✕",
                      marked_text: str = "◀", title: str | None = None, color: str = PALETTE["query"],
                      domain: tuple[float, float] | None = (0.0, 1.0), value_format: str = ".2f", width: int = 180,
                      row_height: int = 26) -> SvgChart:
    """A distribution over tokens as horizontal bars, tokens top to bottom in the given order.

    `kept` False marks a token a filter removed: its bar is grey and its text `removed_text`. `ghost` draws
    other values as light grey bars behind (e.g. the distribution before the filter, so a removed token still
    shows what it had). `marked` is the index of one token (the chosen one): outlined, text + `marked_text`."""
    shown = [True] * len(values) if kept is None else kept
    texts = [(numbers.number(float(v), value_format) if k else removed_text) + (f"  {marked_text}" if i == marked
                                                                                else "")
             for i, (v, k) in enumerate(zip(values, shown))]
    return _bar_chart(values, labels, texts, value_title=value_title, label_title=label_title, title=title,
                      color=color, domain=domain, width=width, row_height=row_height, kept=kept, ghost=ghost,
                      ghost_title=ghost_title, marked=marked)


def contributions(weights: np.ndarray, vectors: np.ndarray, labels: Sequence[object], dim_labels: Sequence[object],
                  *, title: str | None = None, word_title: str = "word", dim_title: str = "dimension",
                  value_title: str = "value", max_width: int = 420) -> SvgChart:
    """How c = Σ_j a_j x_j is built: per dimension, one piece a_j x_j per word stacked from zero (positive pieces
    up, negative ones down, in the words' order, as Vega stacks them), a black tick at the sum, and the words'
    colours in a legend on the right."""
    lang = numbers.language()
    weights = np.asarray(weights, dtype=float)  # (n,)
    vectors = np.asarray(vectors, dtype=float)  # (n, d)
    names, dims = unique_labels(labels), unique_labels(dim_labels)
    parts = weights[:, None] * vectors  # (n, d)
    sums = parts.sum(axis=0)  # (d,)
    ups = np.cumsum(np.where(parts > 0, parts, 0.0), axis=0)  # (n, d): each stack's top after word j
    downs = np.cumsum(np.where(parts < 0, parts, 0.0), axis=0)  # (n, d)
    width, height = max(160, min(max_width, 56 * len(dims))), 260
    (lo, hi), ticks, step = axis(np.concatenate([ups[-1], downs[-1], sums]), height, None, False)
    tick_labels = [tick_label(v, step, False, lang) for v in ticks]
    left = 8 + TITLE_FONT + 8 + math.ceil(max(_width(s, LABEL_FONT) for s in tick_labels)) + 8
    fits = min(TITLE_CHARACTERS, int((left + width) / (HEADING_FONT * CHAR_WIDTH)))
    heading = textwrap.wrap(title, fits, break_on_hyphens=False) if title else []
    top = 8 + (HEADING_FONT + 6) * len(heading) + 6
    band = width / len(dims)
    written = [_fit(dim, LABEL_FONT) for dim in dims]  # under the stacks, every `every`-th: never touching
    every = _every(band, max(_width(dim, LABEL_FONT) for dim in written) + 6)
    thick, tick = band * 0.8, max(6, min(34, int(0.6 * band)))  # a stack's width; the sum's tick, as before

    def py(v: float) -> float:
        return top + (hi - v) / (hi - lo) * height

    parts_svg = [_text((left + width) / 2, 8 + (HEADING_FONT + 6) * (k + 1) - 6, line, size=HEADING_FONT,
                       extra=' font-weight="bold"') for k, line in enumerate(heading)]
    grid = "".join(f'<line x1="{left}" y1="{py(v):.1f}" x2="{left + width}" y2="{py(v):.1f}"/>' for v in ticks)
    parts_svg.append(f'<g stroke="{PALETTE["masked"]}" stroke-opacity="0.6" stroke-width="1">{grid}</g>')
    colours = [CATEGORICAL[j % len(CATEGORICAL)] for j in range(len(names))]
    for k, dim in enumerate(dims):
        x = left + band * k + (band - thick) / 2
        for j, name in enumerate(names):
            value = float(parts[j, k])
            end = ups[j, k] if value > 0 else downs[j, k]
            a, b = sorted((py(end - value), py(end)))
            product = f"{numbers.exact(weights[j])} × {numbers.exact(vectors[j, k])} = {numbers.exact(value)}"
            parts_svg.append(f'<rect class="part" x="{x:.1f}" y="{a:.1f}" width="{thick:.1f}" height="{b - a:.1f}" '
                             f'fill="{colours[j]}" data-word="{escape(name)}" data-value="{value!r}">'
                             f'<title>{escape(f"{name}, {dim}: {product}")}</title></rect>')
        middle = left + band * (k + 0.5)
        total = escape(f"{dim}, Σ: {numbers.exact(sums[k])}")
        parts_svg.append(f'<line class="total" x1="{middle - tick / 2:.1f}" y1="{py(sums[k]):.1f}" '
                         f'x2="{middle + tick / 2:.1f}" y2="{py(sums[k]):.1f}" stroke="{PALETTE["ink"]}" '
                         f'stroke-width="3" data-value="{float(sums[k])!r}"><title>{total}</title></line>')
        if k % every == 0:
            parts_svg.append(_text(middle, top + height + 16, written[k]))
    zero = f" M{left},{py(0.0):.1f} H{left + width}" if lo < 0 < hi else ""  # where the stacks start
    parts_svg.append(f'<path d="M{left},{top} V{top + height} H{left + width}{zero}" fill="none" '
                     f'stroke="{PALETTE["ink"]}"/>')
    for v, label in zip(ticks, tick_labels):
        parts_svg.append(_text(left - 6, py(v) + 4, label, anchor="end"))
    parts_svg.append(_text(left + width / 2, top + height + 36, dim_title, size=TITLE_FONT,
                           extra=' font-weight="bold"'))
    mid = top + height / 2
    parts_svg.append(_text(8 + TITLE_FONT, mid, value_title, size=TITLE_FONT,
                           extra=f' font-weight="bold" transform="rotate(-90 {8 + TITLE_FONT} {mid:.1f})"'))
    key = left + width + 16  # the legend: the words' colours
    parts_svg.append(_text(key, top + 12, word_title, anchor="start", extra=' font-weight="bold" class="legend"'))
    for j, (name, colour) in enumerate(zip(names, colours)):
        row = top + 24 + 20 * j
        parts_svg.append(f'<rect x="{key}" y="{row:.1f}" width="12" height="12" fill="{colour}"/>')
        parts_svg.append(_text(key + 18, row + 11, _fit(name, LABEL_FONT), anchor="start", extra=' class="legend"'))
    legend_width = max([_width(word_title, LABEL_FONT)] + [18 + _width(_fit(n, LABEL_FONT), LABEL_FONT) for n in names])
    body = _t("a11y.stacked", value=value_title, dim=dim_title, dims=_listed(dims), word=word_title,
              words=_listed(names), totals=_pairs(dims, [numbers.short_number(v) for v in sums]))
    return _document(key + legend_width + 8, max(top + height + 44, top + 24 + 20 * len(names) + 8),
                     _describe(_t("a11y.stacked_kind"), title, body), parts_svg, kind="stacked")
