"""Lesson 6's presentation machinery (lessons/06_layer_norm.py): the editable example and its controls, one
token's calculation in LaTeX, the number tables, the pair's table, the pre/post-norm diagram (SVG drawn on the server
by ui/diagram.py, not laid out in the browser) and the cached gradient profile with its chart."""
import numpy as np
import pandas as pd
import streamlit as st

from core.lab.gradients import gradient_norms_at_init
from core.norm import DEFAULT_EPS, STYLES
from ui import charts, links, panels, tables
from ui.diagram import Branch, Column, Node, layout, render
from ui.i18n import number, t

TOKENS = ("t0", "t1", "t2")  # the source tokens [2, 2, 1] at positions 0, 1, 2
COURSE_X = ((0.4513, -0.1872), (1.2927, -0.6469), (0.9508, 0.8249))  # exercise 1's result (lesson 11)
MAX_TOKENS, MAX_DIMS, BOUND = 12, 16, 1000.0
EXP_TOKENS = 8  # the pre/post experiment's sequence length
SHOWN = 6  # entries of a vector written out in the LaTeX
STYLE_TEXT = {"annotated": {"name": "ln.style_annotated", "caption": "ln.normalized_caption_annotated",
                            "after": "ln.after_annotated"},
              "torch": {"name": "ln.style_torch", "caption": "ln.normalized_caption_torch", "after": "ln.after_torch"}}


def example_table(dims: int = 2) -> pd.DataFrame:
    """The course's X with `dims` columns (zeros past its two)."""
    table = {"token": list(TOKENS)}
    for k in range(dims):
        table[f"d{k + 1}"] = [row[k] if k < len(row) else 0.0 for row in COURSE_X]
    return pd.DataFrame(table)


def reset() -> None:
    ss = st.session_state
    ss["ln_dims"], ss["ln_gamma"], ss["ln_beta"] = 2, 1.0, 0.0
    panels.reset_editor("ln_x", example_table())


def input_controls() -> None:
    """d, the reset button (d, γ, β and the table) and what the table accepts."""
    links.control(st.number_input, t("ln.dims"), min_value=1, max_value=MAX_DIMS, step=1, help=t("ln.dims_help"),
                  width=260, setting="ln_dims")
    st.button(t("ln.reset"), on_click=reset, icon=":material/restart_alt:")
    st.caption(t("ln.editor_help", max=MAX_TOKENS, bound=BOUND))


def affine_controls() -> None:
    """γ and β side by side, above the outputs they change."""
    gamma_col, beta_col = st.columns(2, gap="large")
    with gamma_col:
        links.control(st.slider, t("ln.gamma"), -2.0, 3.0, step=0.05, help=t("ln.gamma_help"), setting="ln_gamma")
    with beta_col:
        links.control(st.slider, t("ln.beta"), -2.0, 2.0, step=0.05, help=t("ln.gamma_help"), setting="ln_beta")


def editor(dims: int) -> panels.EditedMatrix:
    """The tokens' vectors as an editable table of `dims` columns."""
    return panels.matrix_editor(
        "ln_x", example_table(), columns=[f"d{k + 1}" for k in range(dims)], label_column="token",
        label_title=t("ln.token"), column_title=lambda k: t("ln.dim", k=k), max_rows=MAX_TOKENS, bound=BOUND,
        alt_text=t("ln.editor_alt"))


def tex(value: float) -> str:
    """A number to 4 decimals for LaTeX, in the reader's marks (a decimal comma is written {,})."""
    return number(value, ".4f", tex=True)


def vector_tex(v: np.ndarray) -> str:
    """(v₀, v₁, ...) with at most SHOWN entries; the separator is the language's (";" beside a decimal comma)."""
    sep = t("ln.tex_sep")
    return "(" + f"{sep} ".join("{" + tex(a) + "}" for a in v[:SHOWN]) + (sep + r"\ \dots)" if len(v) > SHOWN else ")")


def token_latex(x: np.ndarray, r: dict[str, dict[str, np.ndarray]], i: int) -> str:
    """The calculation for token i written out with its numbers (annotated style if d >= 2, then torch)."""
    d, mean = x.shape[1], float(r["torch"]["mean"][i, 0])
    values = " + ".join(f"({tex(v)})" if v < 0 else tex(v) for v in x[i][:SHOWN]) + (r" + \dots" if d > SHOWN else "")
    lines = [rf"\mu &= \tfrac{{1}}{{{d}}}\textstyle\sum_k x_k = \tfrac{{1}}{{{d}}}({values}) = {tex(mean)}"]
    if "annotated" in r:
        s, vec = float(r["annotated"]["std"][i, 0]), r["annotated"]["normalized"][i]
        lines.append(rf"s &= \sqrt{{\tfrac{{1}}{{{d - 1}}}\textstyle\sum_k (x_k - \mu)^2}} = {tex(s)}")
        lines.append(r"\hat{x}_{\text{annotated}} &= \tfrac{x - \mu}{s + \varepsilon} = " + vector_tex(vec))
    sigma, vec = float(r["torch"]["std"][i, 0]), r["torch"]["normalized"][i]
    lines.append(rf"\sigma &= \sqrt{{\tfrac{{1}}{{{d}}}\textstyle\sum_k (x_k - \mu)^2 + \varepsilon}} = {tex(sigma)}")
    lines.append(r"\hat{x}_{\text{torch}} &= \tfrac{x - \mu}{\sigma} = " + vector_tex(vec))
    return r"\begin{aligned} " + r" \\ ".join(lines) + r" \end{aligned}"


def eps_tex(style: str) -> str:
    """A style's default eps as TeX: 1e-06 -> 10^{-6}."""
    return f"10^{{{int(round(np.log10(DEFAULT_EPS[style])))}}}"


def numbers(df: pd.DataFrame, key: str) -> None:
    """A read-only table of numbers to 4 decimals."""
    tables.dataframe(df, width="content", key=key)


def pair_table(P: dict[str, dict[str, np.ndarray]]) -> None:
    """Each style's mean, denominator and x̂ on the one row (a, −a): three rows, read whole."""
    rows = [[P[s]["mean"][0, 0], P[s]["std"][0, 0], *P[s]["normalized"][0]] for s in STYLES]
    tables.table(pd.DataFrame(rows, index=[t(STYLE_TEXT[s]["name"]) for s in STYLES],
                              columns=[t("ln.col_mean"), t("ln.col_denominator"), "x̂₁", "x̂₂"]), key="ln_pair_table")


def wiring_svg(pre: bool) -> str:
    """The residual sub-layer as SVG drawn on the server (ui/diagram.py): x -> LayerNorm -> sub-layer -> ⊕ -> output
    (pre-norm) or x -> sub-layer -> ⊕ -> LayerNorm -> output (post-norm), the dashed residual path from x to the ⊕.
    Show it with st.markdown(..., unsafe_allow_html=True)."""
    x, out = Node(("x",)), Node((t("ln.dia_out"),))
    norm = Node(("LayerNorm",), charts.PALETTE["highlight"])  # the lesson's subject, in colour
    sub, add = Node((t("ln.dia_sublayer"),), charts.PALETTE["input"]), Node(kind="add")
    chain = [x, Branch(add), norm, sub, add, out] if pre else [x, Branch(add), sub, add, norm, out]
    column = Column(chain, lane="right")
    path = " → ".join("+" if node is add else node.lines[0] for node in column.nodes())
    return render([column], [], layout([column]), title=t("ln.pre_title" if pre else "ln.post_title"),
                  description=t("ln.dia_alt", path=path), name="ln-pre" if pre else "ln-post")


@st.cache_data(max_entries=64, show_spinner=False)
def gradient_profile(n_layers: int, d_model: int, n_heads: int, seed: int) -> dict[str, list[float]]:
    """Gradient norm per layer, pre-norm and post-norm, at initialization (cached: same inputs, same numbers)."""
    return {wiring: gradient_norms_at_init(n_layers, d_model, n_heads, wiring == "pre", seed, EXP_TOKENS)
            for wiring in ("pre", "post")}


def gradient_chart(layer_axis: list[int], series: dict[str, list[float]]) -> charts.SvgChart:
    """Both wirings' gradient norms as lines with points (N = 1 is one dot), one tick per layer."""
    return charts.lines(layer_axis, series, x_title=t("ln.layer_index"), y_title=t("ln.grad_norm"),
                        colors=(charts.PALETTE["value"], charts.PALETTE["key"]), points=True, whole_x=True)
