"""What every builder shares: charts drawn without schema validation, the finishing touch (size, title, text
alternative, number locale), fonts, axes, legends and labels. No Streamlit elements here."""
from __future__ import annotations

import textwrap

from collections.abc import Sequence
from types import MappingProxyType
from typing import NamedTuple

import altair as alt
from altair.utils import schemapi

from .numbers import label_config, locale_spec
from .palette import PALETTE

LABEL_FONT, TITLE_FONT, HEADING_FONT = 13, 14, 16
# The given width/height is the plotting area; axes and legends are added around it (Streamlit's default
# "fit" would squeeze them into it).
_PAD = alt.AutoSizeParams(type="pad", contains="padding")


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
    """`alt.LayerChart` drawn without schema validation (see `_Unvalidated`), and built without Altair's search
    of its layers for what to lift to the top (selection parameters, sizes, data) when they hold none of it.

    That search deep-copies every layer twice, and runs again on each copy (``to_dict`` copies the chart): about a
    quarter of the server's time on a lesson of heatmaps, whose layers share their encodings and hold nothing to
    lift. Build one with `layer`."""

    def __init__(self, data=alt.Undefined, layer=(), **kwargs):
        layer = list(layer)
        if any(name in spec._kwds and spec._kwds[name] is not alt.Undefined
               for spec in layer for name in _LIFTED):
            super().__init__(data=data, layer=layer, **kwargs)
        else:
            alt.TopLevelLayerSpec.__init__(self, data=data, layer=layer, **kwargs)


_LIFTED = ("params", "width", "height", "view", "data")  # what alt.LayerChart moves out of a layer


def layer(*charts, **kwargs) -> _LayerChart:
    """``alt.layer(*charts, **kwargs)``, built as `_LayerChart` (no search of the layers when they hold nothing
    to lift, no schema validation)."""
    return _LayerChart(layer=charts, **kwargs)


class _FacetChart(_Unvalidated, alt.FacetChart):
    """`alt.FacetChart` drawn without schema validation (see `_Unvalidated`)."""


class _HConcatChart(_Unvalidated, alt.HConcatChart):
    """`alt.HConcatChart` drawn without schema validation (see `_Unvalidated`)."""


class _VConcatChart(_Unvalidated, alt.VConcatChart):
    """`alt.VConcatChart` drawn without schema validation (see `_Unvalidated`)."""


_UNVALIDATED = MappingProxyType({alt.Chart: _Chart, alt.LayerChart: _LayerChart, alt.FacetChart: _FacetChart,
                                 alt.HConcatChart: _HConcatChart, alt.VConcatChart: _VConcatChart})


# Altair's debug mode (on by default) also validates every schema object as it is built (each alt.X, alt.Color,
# alt.Scale...): about a sixth of the server's time on a lesson of heatmaps. Off for the same reason as above.
schemapi.disable_debug_mode()

TITLE_CHARACTERS = 48  # a longer title is written on several lines, so it never widens its chart


def _title(title: str | None, size: int = HEADING_FONT) -> alt.TitleParams | None:
    if not title:
        return None
    lines = textwrap.wrap(title, TITLE_CHARACTERS)
    return alt.TitleParams(lines if len(lines) > 1 else title, fontSize=size)


def _finish(chart, *, top: bool = True, frame: bool = True, **properties):
    """The builder's own new chart with these top-level properties (None: left out), as `_Unvalidated`.

    A `top` chart (the one a page draws; not a panel inside a facet or a concatenation) also gets the config
    every chart carries: numbers in the session's language (``config.locale``, see numbers.py) and, with
    ``frame=False``, no frame around the plot. Same spec as ``chart.properties(...)``, without its costs: that
    copies the chart (a layered chart then deep-copies every layer, twice) and validates each property."""
    for name, value in properties.items():
        if value is not None:
            setattr(chart, name, value)  # an Altair chart keeps attributes as its spec's properties
    if top:  # a plain dict: the same spec as alt.Config(...), without building and checking its objects
        chart.config = {"locale": locale_spec(), **label_config(), **({} if frame else {"view": {"stroke": None}})}
    if not isinstance(chart, _Unvalidated):  # same layout: the subclass only adds a method
        object.__setattr__(chart, "__class__", _UNVALIDATED[type(chart)])
    return chart


class ChartText(NamedTuple):
    """Words the charts show (tooltip and legend titles); pass translated ones. `value` None (or the catalog's
    generic "value") titles the colour legend by the chart's scale kind (see palette.legend_title)."""
    row: str = "i"
    column: str = "j"
    value: str | None = None


_DEFAULT_TEXT = ChartText()


def _plain_axis(title: str | None, label_size: int = 12, **kw) -> alt.Axis:
    return alt.Axis(title=title, labelFontSize=label_size, titleFontSize=TITLE_FONT, labelColor=PALETTE["ink"],
                    titleColor=PALETTE["ink"], **kw)


def _gradient_legend(title: str) -> alt.Legend:
    """The legend of a colour ramp (heatmaps, pictures, attention grids). Its title takes one line per word, so
    a long title ("Attention weight") does not widen the chart past the column it was sized for."""
    return alt.Legend(title=title.split() or title, labelFontSize=12, titleFontSize=13, gradientLength=160,
                      labelColor=PALETTE["ink"], titleColor=PALETTE["ink"])


def _series_legend(title: str | None = None, **kw) -> alt.Legend:
    """The legend of named series or groups (lines, words, heads, categories)."""
    style = {"labelFontSize": LABEL_FONT, "titleFontSize": 13, "labelColor": PALETTE["ink"],
             "titleColor": PALETTE["ink"]}
    return alt.Legend(title=title, **(style | kw))


def unique_labels(labels: Sequence[object]) -> list[str]:
    """Labels as strings, made unique ("a", "a (2)") so they can name heatmap rows and columns."""
    seen: dict[str, int] = {}
    out = []
    for label in map(str, labels):
        seen[label] = seen.get(label, 0) + 1
        out.append(label if seen[label] == 1 else f"{label} ({seen[label]})")
    return out


# Dimensions (the entries of a vector) are numbered as the code indexes them and as the paper's PE(pos, 2i) does:
# from 0. Every chart and every lesson labels them with `dimension_labels`.
FIRST_DIMENSION = 0


def dimension_labels(count: int, start: int = 0) -> list[str]:
    """Labels of `count` dimensions from the `start`-th one (0-based position in the vector): "d0", "d1", ..."""
    return [f"d{FIRST_DIMENSION + k}" for k in range(start, start + count)]
