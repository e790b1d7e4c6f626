"""The machinery of a graded exercise page (lesson 11): answer tables, Check and Reveal, the score, questions.

State lives in ``st.session_state`` under ``ex_*``: the typed tables (``ex_ans_<part>_table``), the last check
of each exercise (``ex_checks``), what counts in the score (``ex_results``, ``ex_mcq``) and the revealed
solutions (``ex_revealed``). Checking itself is core.lab.exercise_checks.grade.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from core.lab.exercise_checks import grade, parse_cells
from . import links, panels
from .i18n import current_language, md_escape, number, t

TOKENS = ("t0", "t1", "t2")  # the source tokens [2, 2, 1] at positions 0, 1, 2
DIMS = ("d1", "d2")
OPTIONS = range(4)
DEFAULTS = (("ex_tol", lambda: 0.001), ("ex_own", lambda: False), ("ex_results", dict), ("ex_checks", dict),
            ("ex_mcq", dict), ("ex_revealed", set))  # (key, factory): a fresh dict or set for every session


@dataclass(frozen=True)
class Part:
    """One table of an answer: its state key, title, labels and the right values."""
    key: str
    title: str
    rows: tuple
    cols: tuple
    expected: np.ndarray


def start(question_ids: Sequence[str]) -> None:
    """The page's state on its first run: settings, empty score, no option picked."""
    for name, factory in DEFAULTS:
        if name not in st.session_state:
            st.session_state[name] = factory()
    for q in question_ids:
        st.session_state.setdefault(f"ex_q_{q}", None)


def fmt(v: float, digits: int = 4, *, tex: bool = True) -> str:
    """`v` with `digits` decimals in the reader's marks (for LaTeX unless `tex` is False); never "-0.0000"."""
    s = number(v, f".{digits}f", tex=tex)
    return s[1:] if s.startswith("-") and round(v, digits) == 0 else s


def tex(m, digits: int = 4) -> str:
    """A matrix (or a vector, as one row) as a LaTeX bmatrix with 4 decimals."""
    rows = np.atleast_2d(np.asarray(m, dtype=float))
    body = r" \\ ".join(" & ".join(fmt(v, digits) for v in row) for row in rows)
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


def panel(m: np.ndarray, title: str, key: str, rows=TOKENS, cols=DIMS, caption: str | None = None,
          scale: str | None = None) -> None:
    panels.matrix_panel(m, title=title, key=f"ex_{key}", row_labels=rows, col_labels=cols, caption=caption,
                        show_numbers=True, max_width=260, scale=scale)


def read_table(df: pd.DataFrame) -> tuple[np.ndarray, list[tuple[int, int, str]]]:
    return parse_cells(df.to_numpy(dtype=object))


def as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Every cell as typed text ("" when empty): the table a text-column editor can start from again."""
    return df.astype(object).map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))


def cell_name(part: Part, i: int, j: int) -> str:
    return t("ex.cell", row=i + 1, label=part.rows[i], col=j + 1, clabel=part.cols[j])


def answer_editor(part: Part) -> None:
    """A fixed-size table to type an answer into; what is typed survives reruns, page and language switches."""
    ss, key = st.session_state, f"ex_ans_{part.key}"
    ss.setdefault(f"{key}_table", pd.DataFrame("", index=list(part.rows), columns=list(part.cols), dtype=object))
    widget_key = f"{key}_editor_{current_language()}"
    if widget_key not in ss or f"{key}_base" not in ss:
        ss[f"{key}_base"] = ss[f"{key}_table"]
    # text columns: whatever is typed stays in the cell (a number column would silently drop "abc" or "0,5")
    config = {c: st.column_config.TextColumn(c, max_chars=24, width="small") for c in part.cols}
    st.markdown(f"**{part.title}**")
    edited = st.data_editor(ss[f"{key}_base"], key=widget_key, num_rows="fixed", column_config=config,
                            width="content", alt=t("ex.editor_alt", title=part.title))
    typed = as_text(edited)
    changed = not typed.equals(ss[f"{key}_table"])
    ss[f"{key}_table"] = typed
    if changed and ss["ex_own"]:
        st.rerun()  # the whole page: later exercises start from this answer
    for i, j, text in read_table(edited)[1]:
        st.warning(t("ex.not_a_number", where=cell_name(part, i, j), text=md_escape(text)), icon=":material/error:")


def own_answer(key: str) -> np.ndarray | None:
    """The user's complete answer under `key`, or None if it has empty or unreadable cells."""
    table = st.session_state.get(f"ex_ans_{key}_table")
    if table is None:
        return None
    values, bad = read_table(table)
    return None if bad or np.isnan(values).any() else values


def carried(n: int, key: str, course: np.ndarray) -> tuple[tuple, str]:
    """The input an exercise builds on: the course's result (default) or the user's own answer, and a caption."""
    if st.session_state["ex_own"]:
        own = own_answer(key)
        if own is not None:
            return tuple(map(tuple, own)), t("ex.from_you", n=n)
        return tuple(map(tuple, course)), t("ex.own_missing", n=n)
    return tuple(map(tuple, course)), t("ex.from_course", n=n)


def check(n: int, parts: list[Part]) -> None:
    """Grade every part; store what is wrong (not the right values) and whether the exercise counts."""
    ss = st.session_state
    tol = float(ss["ex_tol"])
    report = [grade(read_table(ss[f"ex_ans_{part.key}_table"])[0], part.expected, tol) for part in parts]
    right = all(not r["empty"] and not r["wrong"] for r in report)
    ss["ex_checks"][n] = {"tol": tol, "parts": report, "right": right}
    if n not in ss["ex_revealed"]:
        ss["ex_results"][n] = right


def feedback(n: int, parts: list[Part]) -> None:
    ss = st.session_state
    result = ss["ex_checks"].get(n)
    if result is None:
        return
    tol, lines = f"±{number(result['tol'], 'g')}", []
    for part, r in zip(parts, result["parts"]):
        lines += [t("ex.cell_empty", part=part.title, where=cell_name(part, i, j)) for i, j in r["empty"]]
        lines += [t("ex.cell_high" if diff > 0 else "ex.cell_low", part=part.title, where=cell_name(part, i, j),
                    value=fmt(value, tex=False)) for i, j, value, diff in r["wrong"]]
    if result["right"]:
        st.success(t("ex.all_right", tol=tol), icon=":material/check_circle:")
    else:
        st.error(t("ex.some_wrong", tol=tol, n=len(lines)) + "\n\n" + "\n".join(f"- {x}" for x in lines),
                 icon=":material/cancel:")
    if n in ss["ex_revealed"] and not ss["ex_results"].get(n):
        st.caption(t("ex.after_reveal"))


@st.fragment
def exercise(n: int, draw_inputs: Callable[[], object], parts: list[Part], draw_solution: Callable[[], None],
             score: Callable[[], tuple[int, int]]) -> None:
    """One step: inputs, question, answer tables, Check, Reveal and (once revealed) the worked solution.

    A fragment: typing, checking or revealing reruns this exercise alone (the revealed solutions of the others
    cost ~0.3 s each); the whole page reruns only when the score changes or an answer carried forward changed."""
    st.header(t(f"ex.e{n}_title"), divider="gray")
    draw_inputs()
    st.markdown(t(f"ex.e{n}_question"))
    for col, part in zip(st.columns(len(parts), gap="large"), parts):
        with col:
            answer_editor(part)
    check_col, reveal_col = st.columns([1, 3])
    if check_col.button(t("ex.check"), key=f"ex_check_{n}", icon=":material/rule:"):
        before = score()
        check(n, parts)
        if score() != before:
            st.rerun()  # the whole page: the score at the top
    if reveal_col.button(t("ex.reveal"), key=f"ex_reveal_{n}", icon=":material/visibility:"):
        st.session_state["ex_revealed"].add(n)
    feedback(n, parts)
    if n in st.session_state["ex_revealed"]:
        with st.expander(t("ex.solution"), expanded=True, icon=":material/lightbulb:"):
            draw_solution()


@st.fragment
def ask(q: str, right: int, lang: str, score: Callable[[], tuple[int, int]]) -> None:
    """One conceptual question: a radio with nothing picked, Check, then every option explained. A fragment."""
    ss = st.session_state
    choice = links.control(st.radio, t(f"ex.q_{q}"), OPTIONS, format_func=lambda k: t(f"ex.q_{q}_o{k}", lang),
                           index=None, setting=f"ex_q_{q}")
    if st.button(t("ex.check"), key=f"ex_qcheck_{q}", icon=":material/rule:"):
        if choice is None:
            st.warning(t("ex.choose_first"), icon=":material/touch_app:")
        else:
            before = score()
            ss["ex_mcq"].setdefault(q, {"first": choice == right})["last"] = choice
            if score() != before:
                st.rerun()  # the whole page: the score at the top
    record = ss["ex_mcq"].get(q)
    if record is not None:
        last = record["last"]
        (st.success if last == right else st.error)(
            t("ex.mcq_right" if last == right else "ex.mcq_wrong", answer=t(f"ex.q_{q}_o{last}")))
        marks = [":green[:material/check_circle:]" if k == right else ":red[:material/cancel:]" for k in OPTIONS]
        st.markdown("\n".join(f"- {marks[k]} **{t(f'ex.q_{q}_o{k}')}**{t('ex.your_pick') if k == last else ''}: "
                              f"{t(f'ex.q_{q}_e{k}')}" for k in OPTIONS))


def reset_score() -> None:
    ss = st.session_state
    ss["ex_results"], ss["ex_checks"], ss["ex_mcq"], ss["ex_revealed"] = {}, {}, {}, set()
