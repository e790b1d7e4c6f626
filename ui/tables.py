"""Read-only tables of numbers in the reader's language: `dataframe` (Streamlit's grid: scrolls, sorts, for a
matrix's numbers) and `table` (a plain table for a few rows a learner reads whole).

Streamlit's grid writes a number the way a column's ``format`` says, and none of its formats follows the app's
language (``"localized"`` follows the browser's, the printf formats always write a decimal point). A pandas
Styler's display values are what the grid shows when the column has no ``format``, so `dataframe` passes the
table as a Styler whose every cell is written by `ui.i18n.number` ("0,1234" and "1.234" in Spanish). The cells
keep their numbers underneath: a click on a column header still sorts by value, and ``AppTest``'s ``.value``
(and the sweep's NaN check) still read numbers.

Cost (server, per table, measured on this project's 2-core machine in session 18, pandas 3.1): a 16 x 16 table
~11 ms instead of ~0.8 ms, a 64 x 64 one ~60 ms instead of ~2.7 ms: pandas' ``_translate`` and Streamlit's copy of
the display values into pyarrow strings, column by column. It is most of lesson 4's rerun at its largest settings
(eight such tables; see the README's ``--largest`` table).
Editable tables (`st.data_editor`) are inputs: they keep the grid's own number editor and are not shown this way.
"""
from __future__ import annotations

import math
import numbers
import re
from typing import Any, Mapping

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from .i18n import current_language, md_escape, number

DECIMALS = ".4f"  # a float column's default: four decimals, enough to check a hand calculation


def cell_text(value: Any, spec: str | None, lang: str) -> str:
    """One cell as text: a float in `spec` (an int too, when `spec` is given) with the language's marks; −∞ and +∞
    for infinities, an empty cell for a missing value; anything else as ``str``."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    if isinstance(value, numbers.Integral):
        return number(int(value), spec, lang) if spec else str(value)
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return ""
        if math.isinf(v):
            return "−∞" if v < 0 else "+∞"
        return number(v, spec or DECIMALS, lang)
    return str(value)


def styled(df: pd.DataFrame, formats: Mapping[Any, str] | None = None, lang: str | None = None,
           markdown: bool = False) -> Styler:
    """`df` as a Styler whose cells are written by `cell_text`: `formats` maps a column to a ``format()`` spec
    (".1f", ",d" for an integer with thousands, ".2%"); other float columns get DECIMALS, other ints stay as
    they are. With `markdown`, each cell's text is escaped for a table that reads it as Markdown. Only the
    display changes: the Styler's data is `df`."""
    lang = lang or current_language()
    formats = dict(formats or {})
    missing = set(formats) - set(df.columns)
    if missing:
        raise KeyError(f"formats for columns the table does not have: {sorted(map(str, missing))}")
    write = md_escape if markdown else str
    writers = {c: (lambda v, spec=formats.get(c): write(cell_text(v, spec, lang))) for c in df.columns}
    return df.style.format(writers).set_uuid("table")  # not pandas' random id: an unchanged table is not resent


SCROLL_ROWS, SCROLL_HEIGHT = 16, 560  # a longer plain table scrolls inside 560 px (~15 rows)


def _plain_header(label: Any) -> Any:
    """A header `st.table` shows as Markdown, kept from starting a list or a heading ("+ token" stays text)."""
    if not isinstance(label, str):
        return label
    label = re.sub(r"^(\s*)([-+*#>])(?=\s|$)", r"\1\\\2", label)  # "+ token" -> "\+ token"
    return re.sub(r"^(\s*\d+)([.)])(?=\s|$)", r"\1\\\2", label)  # "1. one" -> "1\. one"


def table(df: pd.DataFrame, *, key: str | None = None, formats: Mapping[Any, str] | None = None,
          **kwargs: Any) -> None:
    """A read-only table a learner reads whole (a summary, a list of parameters, results that follow a control),
    drawn as a plain HTML table (``st.table``) with its numbers in the reader's language (see `styled`); past
    SCROLL_ROWS rows it scrolls inside SCROLL_HEIGHT px. Streamlit's grid (`dataframe`) loads ~0.6 s of script in
    the browser the first time a page shows one, and a grid whose numbers change ends the change ~0.15 s later
    than a plain table (lesson 8's costs, three tables, in the browser benchmark: 0.35-0.37 s against 0.21-0.22 s
    from a sidebar setting to a quiet page). ``st.table`` writes every cell and header as Markdown, so cells and
    row labels are escaped and a column header is kept from starting a list ("+ token"); the data stays as it
    is. `kwargs` go to ``st.table`` (``hide_index``, ``width``...)."""
    kwargs.setdefault("height", "content" if len(df) <= SCROLL_ROWS else SCROLL_HEIGHT)
    shown = df.rename(columns=_plain_header)
    if not isinstance(df.index, pd.RangeIndex):  # a range stays one (st.table leaves it out)
        shown.index = shown.index.map(lambda label: md_escape(label) if isinstance(label, str) else label)
    formats = {_plain_header(column): spec for column, spec in (formats or {}).items()}
    with st.container(key=key):  # the table carries no key of its own: its container names it (tests)
        st.table(styled(shown, formats, markdown=True), **kwargs)


def dataframe(df: pd.DataFrame, *, key: str | None = None, formats: Mapping[Any, str] | None = None,
              column_config: Mapping[Any, Any] | None = None, **kwargs: Any) -> None:
    """A read-only ``st.dataframe`` of `df` with its numbers in the reader's language (see `styled`).
    `column_config` may name columns' labels, widths and help, never a ``format`` (it would win over the
    language's marks); `kwargs` go to ``st.dataframe`` (``hide_index``, ``width``, ``height``...)."""
    for name, config in (column_config or {}).items():
        if isinstance(config, Mapping) and config.get("type_config", {}).get("format"):
            raise ValueError(f"column {name!r}: a column_config format would hide the language's marks")
    with st.container(key=key):  # a read-only grid carries no key of its own: its container names it (tests)
        st.dataframe(styled(df, formats), column_config=column_config, **kwargs)
