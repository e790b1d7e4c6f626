"""Text alternatives: every chart's top-level ``description`` (Vega gives it to screen readers as the chart's
aria-label) says what kind of chart it is, its title, what the axes and colours encode and, where it is short
enough, the numbers themselves, in the session's language (catalog section ``a11y``; numbers as numbers.py writes
them). tests/test_accessibility.py checks the description of every chart every page draws."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..i18n import t
from . import numbers
from .numbers import joined, number, short_number

DESCRIBED_ITEMS = 12  # a description names at most this many labels or values, then "…"


def _t(key: str, /, **kwargs) -> str:
    """`t` in the session's language (English outside a Streamlit run: see numbers.language)."""
    return t(key, lang=numbers.language(), **kwargs)


def _listed(items: Sequence[object], limit: int = DESCRIBED_ITEMS) -> str:
    """Items for a description: "a, b, c", the first `limit` of them and then "…"; empty ones left out."""
    names = [str(x) for x in items if str(x).strip()]
    return ", ".join(names[:limit]) + (", …" if len(names) > limit else "")


def _pairs(labels: Sequence[object], texts: Sequence[str], limit: int = DESCRIBED_ITEMS) -> str:
    """"label = number" for a description, the first `limit` pairs and then "…" (separated as numbers are in a
    list: "; " in Spanish, where a comma is the decimal mark)."""
    named = [f"{label} = {text}" for label, text in zip(labels, texts)]
    return joined(named[:limit]) + (joined(["", "…"]) if len(named) > limit else "")


def _span(values: np.ndarray) -> tuple[str, str]:
    """The smallest and largest finite value as cell text; the extremes of all values if none is finite."""
    v = np.asarray(values, dtype=float).ravel()
    finite = v[np.isfinite(v)]
    pool = finite if finite.size else v
    return (short_number(float(pool.min())), short_number(float(pool.max()))) if pool.size else ("", "")


def _number(v: float) -> str:
    """An axis position for a description: as short as exact ("1", "0.5", "1e+06")."""
    return number(float(v), "g")


def _titled(text: str | None) -> str:
    return f" ({text})" if text else ""


def _describe(kind: str, title: str | None, body: str) -> str:
    """A chart's text alternative: "Kind “title”: body" (every part already in the session's language)."""
    head = _t("a11y.titled", kind=kind, title=title) if title else kind
    return f"{head}: {body}"


def named(chart, title: str):
    """Put `title` into the description of a builder's chart whose title is drawn outside it (a panel's heading):
    "Heatmap: 5 × 3; …" becomes "Heatmap “X”: 5 × 3; …". Changes the chart in place (no copy) and returns it.

    Use it instead of `st.altair_chart(..., alt=...)`: Streamlit logs a warning (with a stack) for every chart that
    has both an `alt` and a description."""
    kind, _, body = str(chart.description).partition(": ")
    chart.description = _describe(kind, title, body)
    return chart


def _heat_description(values: np.ndarray, rows: list[str], cols: list[str], value: str, title: str | None,
                      x_title: str | None = None, y_title: str | None = None,
                      kept: np.ndarray | None = None) -> str:
    """A heatmap's: its size, labels and colour range (of a mask: how many cells are kept and blocked)."""
    labels = {"rows": len(rows), "cols": len(cols), "row_title": _titled(y_title), "row_labels": _listed(rows),
              "col_title": _titled(x_title), "col_labels": _listed(cols), "value": value}
    if kept is not None:
        body = _t("a11y.heatmap_mask", **labels, kept=int(kept.sum()), blocked=int(kept.size - kept.sum()))
        return _describe(_t("a11y.heatmap_kind"), title, body)
    low, high = _span(values)
    body = _t("a11y.heatmap", **labels, low=low, high=high)
    masked = int(np.sum(~np.isfinite(np.asarray(values, dtype=float))))
    if masked:
        body += "; " + _t("a11y.masked", count=masked)
    return _describe(_t("a11y.heatmap_kind"), title, body)


def _lines_description(kind: str, title: str | None, x: Sequence[float], x_title: str, y_title: str,
                       names: Sequence[str]) -> str:
    xs = [float(v) for v in x]
    low, high = (_number(min(xs)), _number(max(xs))) if xs else ("", "")
    return _describe(kind, title, _t("a11y.lines", y=y_title, x=x_title, low=low, high=high, series=_listed(names)))
