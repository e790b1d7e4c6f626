"""Reusable widgets: the matrix panel, the editable matrix, "show the code".

The PNG and SVG downloads are rendered lazily: `st.download_button` gets a callable, which Streamlit
runs only when the button is clicked (on a separate thread). A rerun therefore costs no export at all; a
PNG is drawn from the panel's SVG by vl-convert (the first of a process ~0.3 s while it starts, later ones
~60-75 ms for an 8 x 8 panel).
"""
from __future__ import annotations

import base64
import functools
import html
import inspect
import json
import math
from dataclasses import dataclass
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd
import streamlit as st

from . import charts, links, state, tables
from .i18n import current_language, md_escape, number, t


# Past this many cells a matrix is one picture: its cells are too small for a value label anyway, and a Vega mark per
# cell costs ~70 bytes and about 0.1 ms of the browser's CPU on every redraw (issue 15: twelve 16 x 16 heatmaps took
# 0.52 s per step, 0.20 s as pictures; a 64 x 64 heatmap is ~280 kB, its picture a few kB).
PICTURE_CELLS = 1024
NUMBERS_CELLS, NUMBERS_COLUMNS = 4096, 256  # past either, a matrix's numbers are in its CSV only: Streamlit
# copies a styled table's display values column by column (~0.7 ms a column: 5 x 512 took 0.35 s, 64 x 64 0.05 s)
LABEL_MAX_CHARS = 24  # characters of a row label in a table editor (and in a link's table)


def numbers_frame(matrix: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object]) -> pd.DataFrame:
    """The matrix as a DataFrame with its row and column labels (unique strings)."""
    return pd.DataFrame(np.asarray(matrix, dtype=float), index=charts.unique_labels(row_labels),
                        columns=charts.unique_labels(col_labels))


def numbers_limits() -> dict[str, str | int]:
    """NUMBERS_COLUMNS and NUMBERS_CELLS as the catalog's strings name them (``max_cols``, ``max_cells``)."""
    return {"max_cols": NUMBERS_COLUMNS, "max_cells": number(NUMBERS_CELLS, ",")}


def numbers_table(matrix: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object], *,
                  key: str | None = None) -> None:
    """A read-only table of the matrix, 4 decimals in the reader's language, with its labels; past NUMBERS_COLUMNS
    columns or NUMBERS_CELLS cells a caption sends the reader to the CSV in the panel's Download menu instead."""
    n_rows, n_cols = np.shape(matrix)
    if n_cols > NUMBERS_COLUMNS or n_rows * n_cols > NUMBERS_CELLS:
        st.caption(t("panel.numbers_in_csv", rows=n_rows, cols=n_cols, **numbers_limits()))
        return
    tables.dataframe(numbers_frame(matrix, row_labels, col_labels), width="content", key=key)


def csv_text(df: pd.DataFrame) -> str:
    return df.to_csv(float_format="%.10g")


def png_bytes(svg: str) -> bytes:
    import vl_convert
    return vl_convert.svg_to_png(svg, scale=2)  # scale 2: sharp on projectors and slides


def download_menu(svg: Callable[[], str], df: pd.DataFrame, key: str) -> None:
    """A "Download" popover with CSV, PNG and SVG buttons; every file is made only when clicked (`svg` makes the
    picture's SVG, and the PNG is drawn from it).

    The buttons are drawn only while the popover is open (opening it reruns the page or its section): each
    button gets a new file id on every run, so closed menus made the browser redraw every panel's menu."""
    menu = st.popover(t("panel.download"), icon=":material/download:", type="tertiary", key=f"{key}_download",
                      on_change="rerun")
    if not menu.open:
        return
    files = (("panel.csv", "csv", functools.partial(csv_text, df), "text/csv", ":material/table:"),
             ("panel.png", "png", lambda: png_bytes(svg()), "image/png", ":material/image:"),
             ("panel.svg", "svg", svg, "image/svg+xml", ":material/draw:"))
    with menu:
        for label_key, ext, make, mime, icon in files:
            st.download_button(t(label_key), make, file_name=f"{key}.{ext}", mime=mime, key=f"{key}_{ext}",
                               on_click="ignore", icon=icon)


def svg_image(chart: charts.SvgChart) -> None:
    """A chart drawn on the server, shown as an image (the browser only decodes it) with its text alternative."""
    data = base64.b64encode(chart.svg.encode()).decode("ascii")
    st.markdown(f'<img src="data:image/svg+xml;base64,{data}" alt="{html.escape(chart.description)}" '
                f'width="{chart.width}" height="{chart.height}" style="max-width: 100%; height: auto">',
                unsafe_allow_html=True)


def picture(matrix: np.ndarray, scale: charts.Scale | None, width: int, legend_title: str | None = None,
            title: str | None = None) -> charts.SvgChart:
    """A large matrix as one picture `width` px wide: attention weights on their 0..1 ramp, anything else centred
    on 0; `title` names it in its text alternative."""
    n_rows, n_cols = matrix.shape
    height = int(np.clip(width * n_rows / n_cols, 80, 440))  # about the matrix's own aspect
    return charts.picture(matrix, x_title=t("chart.column"), y_title=t("chart.row"), value_title=legend_title,
                          kind="weights" if scale == "weights" else "diverging", width=width, height=height,
                          title=title)


def matrix_panel(matrix: np.ndarray, *, title: str, key: str, row_labels: Sequence[object],
                 col_labels: Sequence[object], scale: charts.Scale | None = None, caption: str | None = None,
                 show_numbers: bool | None = None, max_width: int = 560,
                 legend_title: str | None = None) -> None:
    """Title with the shape ("S = X Xᵀ  (5 × 5)"), the heatmap (an SVG image drawn on the server, see
    charts/svg.py; past PICTURE_CELLS one picture with axes, svg_picture.py), the numbers if asked, and downloads.

    `scale=None` picks diverging for signed matrices and sequential otherwise; pass "weights" for attention
    weights, "mask" (or "mask_blocked", "mask_additive") for masks. `legend_title` says what the colour shows
    (default: by the scale kind, see charts.legend_title). `show_numbers=None` follows the sidebar's "show the
    numbers". `max_width` bounds the plotting area in pixels (about 300 in half of a wide page).

    The panel is one block and its numbers a block of their own, empty while hidden: Streamlit redraws every element
    whose place moves, so a table that comes and goes moves neither the menu nor the panels after it."""
    matrix = np.asarray(matrix, dtype=float)
    n_rows, n_cols = matrix.shape
    if show_numbers is None:
        show_numbers = state.current().show_numbers
    shape = t("panel.shape", rows=n_rows, cols=n_cols).replace(" ", "\u00a0")  # never split "(5 × 5)"
    with st.container():
        st.markdown(f"##### {title} &nbsp; {shape}")
        if caption:
            st.caption(caption)
        if matrix.size > PICTURE_CELLS:
            st.caption(t("panel.as_picture"))
            drawn = picture(matrix, scale, max_width, legend_title, title)
        else:
            drawn = charts.heatmap_svg(matrix, row_labels, col_labels, scale=scale or charts.auto_scale(matrix),
                                       title=title, legend=legend_title, max_width=max_width)
        svg_image(drawn)
        with st.container():
            if show_numbers:
                numbers_table(matrix, row_labels, col_labels, key=f"{key}_numbers")
        download_menu(lambda: drawn.svg, numbers_frame(matrix, row_labels, col_labels), key)


CODE_KEY = "show_code"  # the open state of a page's "Show the code"


def show_code(*functions: Callable[..., Any], key: str = CODE_KEY) -> None:
    """An expander with the source of the functions that computed the page: the code shown is the code run.

    The code is sent only while the expander is open (opening it reruns the page, or the section it is in): the
    browser highlighted every line of a closed expander on each cold open, up to 0.5 s of its CPU. A section that
    shows its own code beside the page's passes a `key` of its own."""
    code = st.expander(t("common.show_code"), icon=":material/code:", key=key, on_change="rerun")
    if code.open:
        with code:
            st.caption(t("common.show_code_caption"))
            for fn in functions:
                st.code(inspect.getsource(fn), language="python")


# ---- an editable matrix with validation ----------------------------------------------------------------

@dataclass(frozen=True)
class EditedMatrix:
    """What `matrix_editor` returns: the last valid labels and values, and the current table's problems."""
    labels: list[str]
    values: np.ndarray  # (n, d) float64
    problems: list[str]  # translated messages; empty when the table on screen is valid

    @property
    def valid(self) -> bool:
        return not self.problems


def _cell(value: Any) -> float | None:
    """A cell as a float, or None if it is not a number. Text such as "0,5" is read as 0.5."""
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, str):
        try:
            return float(value.strip().replace(",", "."))
        except ValueError:
            return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def validate_table(df: pd.DataFrame, label_column: str, *, min_rows: int, max_rows: int,
                   bound: float) -> tuple[list[str], np.ndarray, list[str]]:
    """Check an edited table: (labels, values (n, d), translated problems). Pure apart from `t`."""
    problems: list[str] = []
    n = len(df)
    if n < min_rows:
        problems.append(t("editor.too_few", min=min_rows))
    if n > max_rows:
        problems.append(t("editor.too_many", max=max_rows, n=n))
    labels = ["" if v is None or (isinstance(v, float) and math.isnan(v)) else str(v).strip()
              for v in df[label_column]]
    value_columns = [c for c in df.columns if c != label_column]
    values = np.zeros((n, len(value_columns)))
    for i, label in enumerate(labels):
        if not label:
            problems.append(t("editor.empty_label", row=i + 1))
        elif len(label) > LABEL_MAX_CHARS:  # the editor's own limit; a link must not pass it either
            problems.append(t("editor.long_label", row=i + 1, max=LABEL_MAX_CHARS))
    for label in sorted({x for x in labels if x and labels.count(x) > 1}):
        problems.append(t("editor.duplicate", label=md_escape(label)))
    for i in range(n):
        for k, column in enumerate(value_columns):
            where = t("editor.where", row=i + 1, label=md_escape(labels[i]) or "?", column=k + 1)
            v = _cell(df.iat[i, df.columns.get_loc(column)])
            if v is None or math.isnan(v):
                problems.append(t("editor.not_a_number", where=where))
            elif math.isinf(v):
                problems.append(t("editor.not_finite", where=where))
            elif abs(v) > bound:
                problems.append(t("editor.too_large", where=where, value=v, bound=bound))
            else:
                values[i, k] = v
    return labels, values, problems


def _resized(df: pd.DataFrame, label_column: str, columns: list[str]) -> pd.DataFrame:
    out = pd.DataFrame({label_column: df[label_column]})
    for c in columns:
        out[c] = df[c] if c in df.columns else 0.0
    return out.reset_index(drop=True)


def table_from_url(text: str, label_column: str, columns: list[str], **limits: Any) -> pd.DataFrame:
    """A table from a link: JSON rows ``[label, number, ...]`` with one number per column that pass
    `validate_table` with `limits` (min_rows, max_rows, bound); raises `links.Rejected` otherwise."""
    try:
        rows = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: a link of a thousand "["
        rows = None
    width = 1 + len(columns)
    if isinstance(rows, list) and all(isinstance(row, list) and len(row) == width and isinstance(row[0], str)
                                      and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in row[1:])
                                      for row in rows):
        table = pd.DataFrame(rows, columns=[label_column, *columns])
        if not validate_table(table, label_column, **limits)[2]:
            return table
    raise links.Rejected("state.allowed_table", lo=limits["min_rows"], hi=limits["max_rows"], n=len(columns),
                         bound=limits["bound"])


def table_to_url(labels: Sequence[str], values: np.ndarray) -> str:
    """The link's text of a valid table: JSON rows ``[label, number, ...]`` (floats written exactly)."""
    return json.dumps([[label, *map(float, row)] for label, row in zip(labels, values)], ensure_ascii=False,
                      separators=(",", ":"))


def _editor_link(key: str, label_column: str, columns: list[str], limits: dict[str, Any]) -> None:
    """Apply the link's table for editor `key`, if one is waiting (a rejected one is reported)."""
    text = links.take(key)
    if text is None:
        return
    try:
        reset_editor(key, table_from_url(text, label_column, columns, **limits))
        st.session_state[links.APPLIED] = True
    except links.Rejected as rejected:
        links.report(key, text, rejected, t("editor.link_fallback"))


def reset_editor(key: str, table: pd.DataFrame) -> None:
    """Replace the table of editor `key` (e.g. "back to the example"); usable as an on_click callback."""
    ss = st.session_state
    ss[f"{key}_table"] = table.copy()
    ss[f"{key}_version"] = ss.get(f"{key}_version", 0) + 1


def matrix_editor(key: str, default: pd.DataFrame, *, columns: list[str], label_column: str, label_title: str,
                  column_title: Callable[[int], str], min_rows: int = 1, max_rows: int = 12,
                  bound: float = 1000.0, alt_text: str | None = None) -> EditedMatrix:
    """A table of labelled rows of numbers to edit, that never loses the user's work.

    It opens as a plain table with an "Edit the table" switch (``_editing``, a control of the lesson) that turns
    it into an `st.data_editor`: Streamlit's grid loads ~0.6 s of script in the browser the first time a page
    shows one (issue 15), and a learner reads the example before changing it. State (all under `key`):
    ``_table`` the table as last edited (valid or not), ``_valid`` the last valid (labels, values), ``_base`` the
    data the editor widget started from, ``_version``, ``_example`` the `default` of the last run (a table still
    equal to it follows a new default, e.g. in the other language). The widget key includes the version and the
    language: a new widget (first run, page switch, language switch, resize, reset, the switch turned on) starts
    from the last edited table, so nothing typed is lost; an invalid table stays on screen to be fixed while the
    caller keeps computing with the last valid values. The last valid table is in the link (parameter `key`,
    JSON rows) when it differs from `default`; a link's table is checked like an edit."""
    ss = st.session_state
    ss.setdefault(f"{key}_table", default.copy())
    ss.setdefault(f"{key}_version", 0)
    example = ss.get(f"{key}_example")
    if example is not None and not example.equals(default) and ss[f"{key}_table"].equals(example):
        reset_editor(key, default)  # an example nobody edited follows the language (and the lesson's settings)
        ss.pop(f"{key}_valid", None)
    ss[f"{key}_example"] = default
    limits = {"min_rows": min_rows, "max_rows": max_rows, "bound": bound}
    _editor_link(key, label_column, columns, limits)
    links.warnings(key)
    _follow_width(key, label_column, columns)
    titles = {label_column: label_title, **{c: column_title(k) for k, c in enumerate(columns)}}
    if links.control(st.toggle, t("editor.edit"), setting=f"{key}_editing"):
        edited = _grid(key, titles, label_column, alt_text)
    else:
        edited = ss[f"{key}_table"]
        tables.table(edited.rename(columns=titles), formats={titles[c]: "g" for c in columns}, hide_index=True,
                     width="content", alt=alt_text, key=f"{key}_plain")
    return _kept(key, edited, _resized(default, label_column, columns), label_column, limits)


def _grid(key: str, titles: dict[str, str], label_column: str, alt_text: str | None) -> pd.DataFrame:
    """The editor widget of `matrix_editor`; returns the table as edited."""
    ss = st.session_state
    widget_key = f"{key}_editor_{ss[f'{key}_version']}_{current_language()}"
    if widget_key not in ss or f"{key}_base" not in ss:  # a new widget starts from the last edited table
        ss[f"{key}_base"] = ss[f"{key}_table"]
    config = {c: st.column_config.NumberColumn(title, required=True) for c, title in titles.items()}
    config[label_column] = st.column_config.TextColumn(titles[label_column], required=True, max_chars=LABEL_MAX_CHARS)
    edited = st.data_editor(ss[f"{key}_base"], key=widget_key, num_rows="dynamic", hide_index=True,
                            column_config=config, width="content", alt=alt_text)
    if not edited.equals(ss[f"{key}_base"]):  # the user edits the table: a link warning about it is settled
        state.settle(key)
    ss[f"{key}_table"] = edited.copy()
    return edited


def _follow_width(key: str, label_column: str, columns: list[str]) -> None:
    """A new number of columns (the lesson's d changed): the edited table and the last valid values take it; new
    dimensions start at 0."""
    ss = st.session_state
    table = ss[f"{key}_table"]
    if list(table.columns) == [label_column, *columns]:
        return
    reset_editor(key, _resized(table, label_column, columns))
    if f"{key}_valid" in ss:
        labels, values = ss[f"{key}_valid"]
        keep = min(values.shape[1], len(columns))
        resized = np.zeros((len(labels), len(columns)))
        resized[:, :keep] = values[:, :keep]
        ss[f"{key}_valid"] = (labels, resized)


def _kept(key: str, edited: pd.DataFrame, default: pd.DataFrame, label_column: str, limits: dict) -> EditedMatrix:
    """What the caller computes with: the edited table if it is valid, else the last valid one (the default when
    the very first is broken), with the edit's problems. The link carries it when it is not the default."""
    ss = st.session_state
    labels, values, problems = validate_table(edited, label_column, **limits)
    d_labels, d_values, _ = validate_table(default, label_column, **limits)
    if not problems:
        ss[f"{key}_valid"] = (labels, values)
    elif f"{key}_valid" not in ss:
        ss[f"{key}_valid"] = (d_labels, d_values)
    valid_labels, valid_values = ss[f"{key}_valid"]
    unchanged = list(valid_labels) == list(d_labels) and np.array_equal(valid_values, d_values)
    links.publish(key, None if unchanged else table_to_url(valid_labels, valid_values))
    return EditedMatrix(list(valid_labels), np.array(valid_values, dtype=float), problems)


def problems_box(problems: list[str], *, limit: int = 6) -> None:
    """One error box listing what is wrong (at most `limit` lines) and saying the last valid values are shown."""
    lines = [f"- {p}" for p in problems[:limit]]
    if len(problems) > limit:
        lines.append(f"- {t('editor.more', n=len(problems) - limit)}")
    st.error(t("editor.invalid") + "\n\n" + "\n".join(lines), icon=":material/error:")
