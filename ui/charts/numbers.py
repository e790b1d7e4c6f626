"""Numbers in the reader's language, the same way in the charts' own text (cells, tooltips, descriptions, written
in Python) and in what Vega formats (axes, legends, tooltips with a `format`), which follows the chart's
``config.locale`` (set on every builder's chart by `engine._finish`; Streamlit 1.67 keeps it, a browser test checks).

Spanish writes a decimal comma, a point between thousands from five digits on ("2048", "37.000", as the RAE asks
and the browsers' es-ES number format does), and separates a list of numbers by semicolons ("(0,50; −1,25)").
"""
from __future__ import annotations

import math
from types import MappingProxyType
from typing import NamedTuple

import altair as alt
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ..i18n import FALLBACK, MARKS, current_language
from ..i18n import number as i18n_number


class NumberLocale(NamedTuple):
    decimal: str  # the decimal mark
    thousands: str  # between groups of three digits, where a format asks for grouping (",")
    separator: str  # between numbers in a list or a pair


NUMBER_LOCALES = MappingProxyType({lang: NumberLocale(*MARKS[lang], separator)
                                   for lang, separator in (("en", ", "), ("es", "; "))})


def language() -> str:
    """The session's language, the one place the charts ask (as ``numbers.language()``). English outside a
    Streamlit run (plain scripts and unit tests), where asking for the session would only log Streamlit's
    "missing ScriptRunContext" warning."""
    return current_language() if get_script_run_ctx(suppress_warning=True) else FALLBACK


def number(v: float, spec: str = ".2f", lang: str | None = None) -> str:
    """`ui.i18n.number` in the chart's language: "12,345.5" is "12.345,5" in Spanish."""
    return i18n_number(v, spec, lang or language())


def short_number(v: float, lang: str | None = None) -> str:
    """Cell text: two decimals, or three significant digits for big numbers; -inf as the minus-infinity sign."""
    if not math.isfinite(v):
        return "−∞" if v < 0 else ("+∞" if v > 0 else "NaN")
    return number(v, ".3g" if abs(v) >= 1000 else ".2f", lang)


def exact(v: float, lang: str | None = None) -> str:
    """A tooltip's number: four decimals; "-inf", "inf" or "nan" when not finite."""
    return number(v, ".4f", lang) if math.isfinite(v) else ("-inf" if v < 0 else ("inf" if v > 0 else "nan"))


def joined(texts, lang: str | None = None) -> str:
    """Numbers (already formatted) in a list: "0.5, 1.2" in English, "0,5; 1,2" in Spanish."""
    return NUMBER_LOCALES[lang or language()].separator.join(texts)


def pair(a: float, b: float, spec: str = ".2f", lang: str | None = None) -> str:
    """A point in the plane: "(0.50, -1.25)", in Spanish "(0,50; -1,25)"."""
    return f"({joined([number(a, spec, lang), number(b, spec, lang)], lang)})"


def locale_spec(lang: str | None = None) -> dict:
    """A chart's ``config.locale`` (a new dict): the number locale Vega's axes, legends and formats write with."""
    marks = NUMBER_LOCALES[lang or language()]
    return {"number": {"decimal": marks.decimal, "thousands": marks.thousands, "grouping": [3], "currency": ["", ""]}}


# Spanish writes a four-digit number without a separator ("2048", as the RAE asks; a point from five digits on),
# which no d3 locale can say (its grouping starts at four digits): axes and legends drop that one point.
FOUR_DIGITS = "abs(datum.value) >= 1000 && abs(datum.value) < 10000 ? replace(datum.label, '.', '') : datum.label"


def label_config(lang: str | None = None) -> dict:
    """The config that writes a four-digit number of an axis or legend unseparated in Spanish (empty in English)."""
    if (lang or language()) != "es":
        return {}
    return {"axis": {"labelExpr": FOUR_DIGITS}, "legend": {"labelExpr": FOUR_DIGITS}}


def vega_locale(lang: str | None = None) -> alt.Locale:
    """`locale_spec` as Altair's object, for a chart built outside the builders (``alt.Config(locale=...)``)."""
    return alt.Locale.from_dict(locale_spec(lang))
