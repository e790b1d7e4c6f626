"""Lesson 2's presentation machinery (lessons/02_attention.py): the cached matrices and curves, the capped matrix
panel, the one-query bars, one side of the scaling experiment (metrics, softmax row, Jacobian check) and the two
saturation curves."""
import math

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.lab.analysis import entropy, qkv_attention
from core.lab.saturation import entropy_by_d_k, saturation_by_d_k, softmax_jacobian, softmax_jacobian_formula
from ui import charts, panels, state, tables
from ui.i18n import md_escape, number, t

CELL_CAP, ROW_CAP = 4096, 64  # at most 4096 drawn cells per chart, at most 64 rows
D_KS = tuple(2**k for k in range(11))  # the experiment's d_k: 1, 2, 4, ..., 1024
N_KEYS = 10  # keys in the experiment's softmax row
DRAWS = 256  # random queries behind the median ‖J‖ and the share of saturated rows
MAX_BARS = 24  # the one-query view draws bars up to 24 keys, a compact panel beyond


@st.cache_data(max_entries=64, show_spinner=False)
def compute(words: tuple[str, ...], d_model: int, d_k: int, seed: int, causal: bool, tied: bool,
            device: str) -> dict[str, np.ndarray]:
    """Every matrix of the page (core.lab.analysis.qkv_attention on `device`) as float64 numpy."""
    return {name: core.to_numpy(m) for name, m in qkv_attention(list(words), d_model, d_k, seed, causal, tied,
                                                                  device).items()}


@st.cache_data(max_entries=64, show_spinner=False)
def curves(seed: int):
    """Mean entropy over 16 queries (without, with scaling) and the saturation over DRAWS queries, per d_k."""
    return entropy_by_d_k(D_KS, N_KEYS, seed), saturation_by_d_k(D_KS, N_KEYS, seed, DRAWS)


def panel(matrix: np.ndarray, key: str, title: str, rows: list[str], cols: list[str], caption: str = "",
          scale=None, width: int = 300, picture: bool = False) -> None:
    """A matrix panel that draws at most ROW_CAP rows and CELL_CAP cells; a bigger matrix shows its top-left
    slice, says so, and offers the whole matrix as CSV. `picture`: drawn as one picture (see picture_panel)."""
    r = min(len(rows), ROW_CAP)
    c = min(len(cols), max(1, CELL_CAP // r))
    if (r, c) != matrix.shape:
        caption = " ".join(filter(None, [caption, t("qkv.slice", r=r, c=c, rows=len(rows), cols=len(cols))]))
    if picture:
        picture_panel(matrix[:r, :c], key, title, rows[:r], cols[:c], caption, width)
    else:
        panels.matrix_panel(matrix[:r, :c], title=title, key=key, row_labels=rows[:r], col_labels=cols[:c],
                            scale=scale, caption=caption or None, max_width=width)
    if (r, c) != matrix.shape:
        full = lambda: panels.csv_text(panels.numbers_frame(matrix, rows, cols))  # noqa: E731 (made when clicked)
        st.download_button(t("qkv.full_csv"), full, type="tertiary", file_name=f"{key}_full.csv", mime="text/csv",
                           key=f"{key}_full", on_click="ignore", icon=":material/table:")


def picture_panel(matrix: np.ndarray, key: str, title: str, rows: list[str], cols: list[str], caption: str | None,
                  width: int) -> None:
    """A matrix panel drawn as one picture (a weight matrix's d_model x d_k cells are a few pixels each, and a
    mark per cell costs the browser time on every change): title, shape, picture, numbers if asked, downloads.
    Its axes number rows and columns from 0, as its labels d0, d1, ... do; its cells are as big as a heatmap's
    would be in `width`."""
    shape = t("panel.shape", rows=matrix.shape[0], cols=matrix.shape[1]).replace(" ", "\u00a0")
    st.markdown(f"##### {title} &nbsp; {shape}")
    st.caption(" ".join(filter(None, [caption, t("panel.as_picture")])))
    cell = max(2, min(52, width // matrix.shape[1], 440 // matrix.shape[0]))  # square, as a heatmap's cells are
    drawn = panels.picture(matrix, None, cell * matrix.shape[1], title=title)
    panels.svg_image(drawn)
    if state.current().show_numbers:
        panels.numbers_table(matrix, rows, cols, key=f"{key}_numbers")
    panels.download_menu(lambda: drawn.svg, panels.numbers_frame(matrix, rows, cols), key)


def query_row(words: list[str], i: int, sums: np.ndarray, M: dict[str, np.ndarray]) -> None:
    """Query i's dot products and softmax weights: two bar charts, or one compact panel past MAX_BARS keys."""
    if len(words) <= MAX_BARS:
        sums_col, soft_col = st.columns(2, gap="large")
        with sums_col:
            panels.svg_image(charts.bars(sums, words, color=charts.PALETTE["query"], domain=None,
                                         title=t("qkv.sums_title", word=words[i]), label_title=t("qkv.key"),
                                         value_title=t("qkv.sum")))
        with soft_col:
            panels.svg_image(charts.bars(M["A"][i], words, color=charts.PALETTE["highlight"],
                                         title=t("qkv.softmax_title", word=words[i]), label_title=t("qkv.key"),
                                         value_title=t("qkv.weight")))
    else:  # 64 bars would be 2000 px tall: one compact panel of the same numbers instead
        row = np.stack([sums, M["S_scaled"][i], M["A"][i]])  # (3, n)
        panel(row, "qkv_row", t("qkv.row_panel_title", word=md_escape(words[i])),
              [t("qkv.sum"), t("qkv.scaled_sum"), t("qkv.weight")], words, t("qkv.row_panel_caption"), width=760)


def scaling_side(side: str, exp, dk: int, key_labels: list[str]) -> float:
    """One side of the experiment (raw or scaled): its metrics and softmax row; returns this query's ‖J‖."""
    s = getattr(exp, f"{side}_scores").double()  # (N_KEYS,)
    p = core.softmax(s)  # (N_KEYS,)
    jac = softmax_jacobian(s)  # (N_KEYS, N_KEYS), by autograd
    st.markdown(f"##### {t(f'qkv.{side}_header', d_k=dk)}")
    values = ((t("qkv.variance"), number(getattr(exp, f"{side}_variance"), ".2f")),
              (t("qkv.entropy"), number(float(entropy(p)), ".4f")),
              (t("qkv.max_weight"), number(float(p.max()), ".4f")),
              (t("qkv.jacobian"), number(float(jac.norm()), ".2e")))
    for slot, (label, value) in zip([*st.columns(2), *st.columns(2)], values):  # two rows of two
        slot.metric(label, value)
    panels.svg_image(charts.bars(p.numpy(), key_labels, color=charts.PALETTE["highlight"], title=t("qkv.row_title"),
                                 label_title=t("qkv.key"), value_title=t("qkv.weight")))
    st.caption(t("qkv.jacobian_check", err=float((jac - softmax_jacobian_formula(p)).abs().max())))
    return float(jac.norm())


def saturation_charts(entropies: tuple, C) -> None:
    """Mean entropy and median ‖J‖ as d_k grows, without and with scaling (x: log₂ d_k); their numbers in a
    table when asked for (the charts are images, with no hover)."""
    colours, x = [charts.PALETTE["key"], charts.PALETTE["query"], charts.PALETTE["masked"]], np.log2(D_KS)
    names = (t("qkv.curve_raw"), t("qkv.curve_scaled"))
    entropy_col, jacobian_col = st.columns(2, gap="large")
    with entropy_col:
        panels.svg_image(charts.lines(x, {**dict(zip(names, (e.numpy() for e in entropies))),
                                          t("qkv.curve_max"): [math.log(N_KEYS)] * len(D_KS)},
                                      x_title=t("qkv.log_dk"), y_title=t("qkv.entropy_axis"),
                                      title=t("qkv.curve_title"), colors=colours, width=320))
    with jacobian_col:
        panels.svg_image(charts.lines(x, dict(zip(names, (C.raw_median.numpy(), C.scaled_median.numpy()))),
                                      x_title=t("qkv.log_dk"), y_title=t("qkv.jacobian_axis"),
                                      title=t("qkv.jacobian_curve_title", draws=DRAWS), colors=colours[:2],
                                      width=320))
    if state.settings().show_numbers:
        curves = {"d_k": list(D_KS)}
        for axis, (raw, scaled) in ((t("qkv.entropy_axis"), entropies), (t("qkv.jacobian_axis"),
                                                                          (C.raw_median, C.scaled_median))):
            curves |= {f"{names[0]} · {axis}": raw.numpy(), f"{names[1]} · {axis}": scaled.numpy()}
        tables.dataframe(pd.DataFrame(curves), hide_index=True, key="qkv_saturation_numbers")
