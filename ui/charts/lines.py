"""Lines drawn by Vega: costs on log-log axes, several runs' curves, and vectors in a plane (plain named series
are drawn on the server: svg_lines.py).

The named-series builders share one long form (`_series_frame`: columns x, y, series) and one colour encoding
(`_series_color`: the series in the given order, `colors` or CATEGORICAL)."""
from __future__ import annotations

import math
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from .describe import _describe, _lines_description, _listed, _number, _pairs, _t
from .engine import _PAD, LABEL_FONT, _finish, _plain_axis, _series_legend, _title, layer, unique_labels
from .numbers import joined, pair
from .palette import CATEGORICAL, PALETTE

DASHES = ([1, 0], [7, 4], [2, 3])  # solid, dashed, dotted: the second grouping of `run_lines`


def _series_frame(x: Sequence[float], series: dict[str, Sequence[float]]) -> pd.DataFrame:
    return pd.DataFrame([{"x": float(xv), "y": float(yv), "series": name}
                         for name in series for xv, yv in zip(x, series[name])])


def _palette(groups: Sequence[str], colors: Sequence[str] | None = None) -> list[str]:
    return list(colors) if colors else [CATEGORICAL[i % len(CATEGORICAL)] for i in range(len(groups))]


def _series_color(field: str, names: list[str], palette: list[str], legend: alt.Legend) -> alt.Color:
    return alt.Color(field, sort=names, scale=alt.Scale(domain=names, range=palette), legend=legend)


def _log_log(x: Sequence[float], series: dict[str, Sequence[float]], x_title: str, y_title: str,
             colors: Sequence[str] | None, x_axis: dict, x_scale: alt.Scale, label_limit: int) -> dict:
    """The encoding of costs on log-log axes (n as a line of slope 1, n² of slope 2), the legend below."""
    names = list(series)
    legend = _series_legend(None, orient="bottom", direction="vertical", labelLimit=label_limit)
    return {"x": alt.X("x:Q", scale=x_scale, axis=_plain_axis(x_title, **x_axis)),
            "y": alt.Y("y:Q", scale=alt.Scale(type="log"), axis=_plain_axis(y_title, format="~s")),
            "color": _series_color("series:N", names, _palette(names, colors), legend),
            "tooltip": [alt.Tooltip("series:N", title=" "), alt.Tooltip("x:Q", title=x_title, format=",.0f"),
                        alt.Tooltip("y:Q", title=y_title, format=",.0f")]}


def growth_lines(x: Sequence[float], series: dict[str, Sequence[float]], *, x_title: str, y_title: str,
                 title: str | None = None, colors: Sequence[str] | None = None, width: int = 340,
                 height: int = 260) -> alt.LayerChart:
    """Costs that grow by orders of magnitude: one line per named series on log-log axes, a dot at every x.

    The legend sits below the plot so the chart fits half of a wide page. All values must be positive."""
    df = _series_frame(x, series)
    ticks = {"format": "d", "values": [float(v) for v in list(x)[::2]]}
    encoding = _log_log(x, series, x_title, y_title, colors, ticks, alt.Scale(type="log", base=2), 400)
    line = alt.Chart(df).mark_line(strokeWidth=2.5).encode(**encoding)
    dots = alt.Chart(df).mark_point(filled=True, size=40, opacity=1).encode(**encoding)
    return _finish(layer(line, dots), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_lines_description(_t("a11y.loglog_kind"), title, x, x_title, y_title, list(series)))


def cost_curves(x: Sequence[float], series: dict[str, Sequence[float]], marks: Sequence[tuple[str, float]], *,
                x_title: str, y_title: str, now: tuple[str, float] | None = None, title: str | None = None,
                colors: Sequence[str] | None = None) -> alt.LayerChart:
    """Costs against sequence length on log-log axes: one line per named series (positive values), a dashed
    labelled vertical rule per mark (label, x), e.g. the crossover points, and a solid orange one for `now`
    (label, x), e.g. the current length.

    Datasets: the lines have columns x, y, series; the rules have columns x, label, now."""
    x_scale = alt.Scale(type="log", domain=[float(min(x)), float(max(x))], nice=False)
    encoding = _log_log(x, series, x_title, y_title, colors, {"format": "~s"}, x_scale, 520)
    drawn = alt.Chart(_series_frame(x, series)).mark_line(strokeWidth=2.5).encode(**encoding)
    every = [*marks, *([now] if now else [])]
    rules = pd.DataFrame({"x": [float(v) for _, v in every], "label": [label for label, _ in every],
                          "now": [False] * len(marks) + [True] * bool(now),
                          "ypix": [4 + 18 * i for i in range(len(every))]})
    at = {"x": alt.X("x:Q", scale=x_scale), "tooltip": [alt.Tooltip("label:N", title=" ")]}
    rule = alt.Chart(rules[~rules["now"]]).mark_rule(color=PALETTE["ink"], strokeDash=[5, 4],
                                                     strokeWidth=1.5).encode(**at)
    now_rule = alt.Chart(rules[rules["now"]]).mark_rule(color=PALETTE["key"], strokeWidth=2.5).encode(**at)
    label = alt.Chart(rules).mark_text(align="left", dx=4, baseline="top", fontSize=LABEL_FONT,
                                       color=PALETTE["ink"]).encode(
        x=alt.X("x:Q", scale=x_scale), y=alt.Y("ypix:Q", scale=None), text=alt.Text("label:N"))
    description = _lines_description(_t("a11y.loglog_kind"), title, x, x_title, y_title, list(series))
    if every:
        marked = _pairs([name for name, _ in every], [_number(v) for _, v in every])
        description += "; " + _t("a11y.marks", marks=marked)
    return _finish(layer(drawn, rule, now_rule, label), width=560, height=320, autosize=_PAD,
                   title=_title(title), description=description)


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
    legend = {"orient": "bottom", "direction": "horizontal", "titleFontSize": LABEL_FONT,
              "symbolStrokeWidth": 2.5}  # below the plot, so long labels fit
    y_scale = (alt.Scale(type="log") if log_y else alt.Scale(domain=list(y_domain)) if y_domain
               else alt.Scale(zero=False))
    x_scale = alt.Scale(domain=[1, max(2, x_max or int(df["x"].max() if len(df) else 2))])
    encoding = {
        "x": alt.X("x:Q", scale=x_scale, axis=_plain_axis(x_title, format="d", tickMinStep=1)),
        "y": alt.Y("y:Q", scale=y_scale, axis=_plain_axis(y_title)),
        "color": _series_color("color:N", color_groups, palette, _series_legend(color_title, **legend)),
        "tooltip": [alt.Tooltip("run:N", title=" "), alt.Tooltip("x:Q", title=x_title, format="d"),
                    alt.Tooltip("y:Q", title=y_title, format=".4f")]}
    line = alt.Chart(df).mark_line(strokeWidth=2.5).encode(
        **encoding, detail=alt.Detail("run:N"), strokeDash=alt.StrokeDash(
            "dash:N", sort=dash_groups, scale=alt.Scale(domain=dash_groups, range=list(DASHES[:len(dash_groups)])),
            legend=_series_legend(dash_title, symbolType="stroke", symbolSize=400, **legend)))
    dots = alt.Chart(df).mark_point(filled=True, size=36, opacity=1).encode(**encoding)
    body = _t("a11y.runs", y=y_title, x=x_title, color=color_title, colors=_listed(color_groups), dash=dash_title,
              dashes=_listed(dash_groups))
    return _finish(layer(line, dots), width=width, height=height, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.lines_kind"), title, body))


def plane_arrows(points: Sequence[tuple[float, float]], labels: Sequence[str], colors: Sequence[str], *,
                 x_title: str, y_title: str, circles: Sequence[float] = (), size: int = 320,
                 title: str | None = None) -> alt.LayerChart:
    """2-D vectors drawn as arrows from the origin, each labelled at its tip, on equal axes.

    `circles` adds dashed circles of those radii (a rotation keeps a vector on its circle)."""
    pts = np.asarray(points, dtype=float).reshape(-1, 2)  # (m, 2)
    reach = 1.2 * max([float(np.hypot(pts[:, 0], pts[:, 1]).max()) if len(pts) else 0.0, *circles, 1e-9])
    names = unique_labels(labels)
    df = pd.DataFrame({"x": pts[:, 0], "y": pts[:, 1], "x0": 0.0, "y0": 0.0, "label": names, "colour": list(colors),
                       "exact": [pair(a, b, ".4f") for a, b in pts]})
    scale = alt.Scale(domain=[-reach, reach], nice=False)
    x, y = alt.X("x:Q", scale=scale, axis=_plain_axis(x_title)), alt.Y("y:Q", scale=scale, axis=_plain_axis(y_title))
    axes = f"({joined([x_title, y_title])})"  # "(x, y)", separated as the pair of numbers is
    tooltip = [alt.Tooltip("label:N", title=" "), alt.Tooltip("exact:N", title=axes)]
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
    body = f"{axes}: " + _pairs(names, [pair(a, b) for a, b in pts])
    return _finish(layer(*layers), width=size, height=size, autosize=_PAD, title=_title(title),
                   description=_describe(_t("a11y.arrows_kind"), title, body))
