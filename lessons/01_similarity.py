"""Lesson 1: from similarity to attention, with no learned weights (CURRICULUM.md, lesson 1).

X (n x d) -> S = X Xᵀ (n x n) -> A = softmax(S) row by row (n x n) -> C = A X (n x d), all by core.contextualize.
The page's controls rerun only what they change (st.fragment): the table and d rerun everything below the
introduction, the √d toggle the matrices and what follows them, the word its own section.
"""
import re

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from ui import charts, links, panels, scenes, state
from ui.i18n import md_escape, number, t
from ui.presentation import prose

WORDS = ("time", "flies", "like", "an", "arrow")  # the course's example, in its order
VECTORS = ((0.2, 0.8, 0.3), (0.7, 0.2, 0.9), (0.3, 0.5, 0.2), (0.1, 0.3, 0.4), (0.8, 0.1, 0.6))
MAX_WORDS, MAX_DIMS, BOUND = 12, 16, 1000.0  # |x| <= 1000 keeps every exp() and dot product well in range


def example_table(dims: int = 3) -> pd.DataFrame:
    table = {"word": list(WORDS)}
    for k in range(dims):
        table[f"d{k + 1}"] = [v[k] if k < len(v) else 0.0 for v in VECTORS]
    return pd.DataFrame(table)


def reset() -> None:
    st.session_state["sim_dims"] = 3
    panels.reset_editor("sim_vectors", example_table())


def compute(values: np.ndarray, scale: bool, device: str) -> list[np.ndarray]:
    """X, S, A, C as float64 numpy arrays, computed by core on `device` (MPS has no float64)."""
    dtype = torch.float32 if device == "mps" else torch.float64
    x = torch.tensor(values, dtype=dtype, device=device)  # (n, d)
    s, a, c = core.contextualize(x, scale)  # (n, n), (n, n), (n, d)
    return [m.detach().cpu().double().numpy() for m in (x, s, a, c)]


def tex_word(word: str) -> str:
    """A word safe inside LaTeX \\text{}: letters, digits, spaces and hyphens only."""
    return r"\text{" + (re.sub(r"[^0-9A-Za-zÀ-ÿ \-]", "", word) or "?") + "}"


def weighted_sum_latex(i: int, words: list[str], a: np.ndarray, c: np.ndarray) -> str:
    terms = [rf"{number(a[i, j], '.4f', tex=True)}\,\mathbf{{x}}_{{{tex_word(w)}}}" for j, w in enumerate(words)]
    lines = [" + ".join(terms[k:k + 4]) for k in range(0, len(terms), 4)]
    values = [f"{{{number(v, '.4f', tex=True)}}}" for v in c[i]]  # braces: a leading minus is a sign, not an operator
    vector = r",\ \\ &\quad ".join(r",\ ".join(values[k:k + 6]) for k in range(0, len(values), 6))
    body = r" \\ &\quad + ".join(lines)
    return rf"\begin{{aligned}} \mathbf{{c}}_{{{tex_word(words[i])}}} &= {body} \\ &= ({vector}) \end{{aligned}}"


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "arrow": {"sim_word": 4, "sim_scale": False, "sim_dims": 3},
    "scaled": {"sim_scale": True, "sim_dims": 3},
    "zero_dims": {"sim_scale": True, "sim_dims": 8},
}

def intro() -> None:
    """Title, scenes and the three equations, from X to C."""
    st.title(t("sim.title"))
    scenes.picker("sim", SCENES)
    prose(t("sim.intro"))
    st.latex(r"S = X X^{\top} \qquad A_{ij} = \frac{e^{\,S_{ij} - m_i}}{\sum_{k} e^{\,S_{ik} - m_i}},"
             r"\quad m_i = \max_k S_{ik} \qquad C = A X")
    prose(t("sim.equations"))


def vectors() -> panels.EditedMatrix:
    """The word vectors to edit, with d and Reset; returns the edited table."""
    st.subheader(t("sim.vectors_header"))
    editor_col, controls_col = st.columns([3, 2], gap="large")
    with controls_col:
        links.control(st.number_input, t("sim.dims"), min_value=1, max_value=MAX_DIMS, step=1,
                      help=t("sim.dims_help"), width=260, setting="sim_dims")
        st.button(t("sim.reset"), on_click=reset, icon=":material/restart_alt:")
        st.caption(t("sim.editor_help", max=MAX_WORDS, bound=BOUND))
    with editor_col:
        edited = panels.matrix_editor(
            "sim_vectors", example_table(), columns=[f"d{k + 1}" for k in range(int(ss["sim_dims"]))],
            label_column="word", label_title=t("sim.word"), column_title=lambda k: t("sim.dim", k=k),
            max_rows=MAX_WORDS, bound=BOUND, alt_text=t("sim.editor_alt"))
    if edited.problems:
        panels.problems_box(edited.problems)
    return edited


def matrices(X: np.ndarray, S: np.ndarray, A: np.ndarray, C: np.ndarray, words: list[str],
             dim_labels: list[str]) -> None:
    """X, S, A and C side by side (two by two while they are small)."""
    n, d = X.shape
    wide = max(n, d) > 6  # big matrices get the full width, one under the other; small ones two by two
    slots = [st.container() for _ in range(4)] if wide else [*st.columns(2, gap="large"), *st.columns(2, gap="large")]
    row_error = float(np.abs(A.sum(axis=1) - 1).max())
    specs = (  # (matrix, title, key, columns, scale, caption)
        (X, t("sim.X_title"), "sim_X", dim_labels, None, t("sim.X_caption")),
        (S, t("sim.S_title_scaled" if ss["sim_scale"] else "sim.S_title"), "sim_S", words, None, t("sim.S_caption")),
        (A, t("sim.A_title"), "sim_A", words, "weights", t("sim.A_caption", error=row_error)),
        (C, t("sim.C_title"), "sim_C", dim_labels, None, t("sim.C_caption")),
    )
    for slot, (matrix, title, key, columns, scale, caption) in zip(slots, specs):
        with slot:
            panels.matrix_panel(matrix, title=title, key=key, row_labels=words, col_labels=columns, scale=scale,
                                caption=caption, max_width=560 if wide else 300)


@st.fragment
def one_word(X: np.ndarray, A: np.ndarray, C: np.ndarray, words: list[str], dim_labels: list[str]) -> None:
    """One word's weights and the weighted sum that makes its new vector; picking the word reruns this section only."""
    st.subheader(t("sim.one_word_header"))
    if ss["sim_word"] >= len(words):
        ss["sim_word"] = 0
    i = links.control(st.selectbox, t("sim.pick_word"), range(len(words)), format_func=lambda j: words[j],
                      width=320, setting="sim_word")
    st.markdown(t("sim.one_word_intro", word=md_escape(words[i])))
    weights_col, parts_col = st.columns(2, gap="large")
    with weights_col:
        panels.svg_image(charts.bars(A[i], words, title=t("sim.weights_of", word=words[i]), label_title=t("sim.word"),
                                     value_title=t("sim.weight")))
    with parts_col:
        panels.svg_image(charts.contributions(A[i], X, words, dim_labels, title=t("sim.parts_of", word=words[i]),
                                              word_title=t("sim.word"), dim_title=t("sim.dimension"),
                                              value_title=t("sim.contribution"), max_width=280))
    st.latex(weighted_sum_latex(i, words, A, C))


def notice(A: np.ndarray, words: list[str]) -> None:
    """What to notice, read off this run's weights."""
    st.subheader(t("sim.notice_header"))
    favourite = A.argmax(axis=1)
    safe = [md_escape(w) for w in words]
    pairs = ", ".join(f"**{safe[r]}** → {safe[favourite[r]]} ({number(A[r, favourite[r]], '.2f')})"
                      for r in range(len(words)))
    st.markdown(t("sim.notice_favourite", pairs=pairs))
    others = [safe[r] for r in range(len(words)) if favourite[r] != r]
    if others:
        st.markdown(t("sim.notice_not_self", words=", ".join(f"**{w}**" for w in others)))
    st.markdown(t("sim.notice_points"))
    st.markdown(t("sim.notice_roles"))


@st.fragment
def workbench() -> None:
    """The table and d, then everything computed from them; a change reruns this (not the introduction)."""
    edited = vectors()
    scaled(edited.values, edited.labels)  # (n, d) float64: the last valid table


@st.fragment
def scaled(values: np.ndarray, words: list[str]) -> None:
    """The √d toggle, the four matrices and what follows from them; the toggle reruns this section only."""
    st.subheader(t("sim.matrices_header"))
    links.control(st.toggle, t("sim.scale"), help=t("sim.scale_help"), setting="sim_scale")
    X, S, A, C = compute(values, bool(ss["sim_scale"]), settings.device)
    scale_note = st.empty()  # one slot, shown or not: the matrices below keep their places
    if ss["sim_scale"]:
        scale_note.info(t("sim.scale_on", d=X.shape[1], root=float(np.sqrt(X.shape[1]))), icon=":material/school:")
    dim_labels = [t("sim.dim_short", k=k) for k in range(X.shape[1])]  # from 0, like every lesson
    matrices(X, S, A, C, words, dim_labels)
    one_word(X, A, C, words, dim_labels)
    panels.show_code(core.similarity, core.softmax, core.contextualize)
    notice(A, words)


settings = state.settings()
ss = st.session_state
ss.setdefault("sim_dims", 3)
ss.setdefault("sim_scale", False)
ss.setdefault("sim_word", 0)

intro()
workbench()
