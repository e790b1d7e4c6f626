"""Lesson 6's presentation machinery (lessons/06_layer_norm.py): the editable example and its controls, one
token's calculation in LaTeX, the number tables, the pair's table, the pre/post-norm diagram (an SVG drawn here: a
Graphviz diagram would be laid out in the browser, about a second of its CPU) and the cached gradient profile with its
chart."""
import html

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core.lab.gradients import gradient_norms_at_init
from core.norm import DEFAULT_EPS, STYLES
from ui import charts, links, panels, tables
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
    """Each style's mean, denominator and x̂ on the one row (a, −a)."""
    numbers(pd.DataFrame([[P[s]["mean"][0, 0], P[s]["std"][0, 0], *P[s]["normalized"][0]] for s in STYLES],
                         index=[t(STYLE_TEXT[s]["name"]) for s in STYLES],
                         columns=[t("ln.col_mean"), t("ln.col_denominator"), "x̂₁", "x̂₂"]), "ln_pair_table")


NODE_H, GAP, FONT = 34, 26, 14  # the wiring diagram: box height, space between nodes, label size (px)
FILL = {"ln": "#E69F00", "sub": "#56B4E9", "add": "#FFFFFF"}  # Okabe-Ito orange and sky blue, as in lesson 8


def _text_width(text: str, size: int) -> int:
    """About how wide `text` is in a sans-serif font of `size` px (no font metrics on the server)."""
    return int(len(text) * size * 0.56) + 1


def wiring_svg(pre: bool) -> str:
    """The residual sub-layer as an SVG drawn here (no layout in the browser): x -> LN -> sublayer -> + -> output
    (pre-norm) or x -> sublayer -> + -> LN -> output (post-norm), and the dashed residual path from x to +."""
    labels = {"x": "x", "ln": "LayerNorm", "sub": t("ln.dia_sublayer"), "add": "+", "y": t("ln.dia_out")}
    chain = ["x", "ln", "sub", "add", "y"] if pre else ["x", "sub", "add", "ln", "y"]
    box = max(_text_width(labels[k], FONT) for k in ("ln", "sub")) + 28  # every box as wide as the widest
    cx, skip = 8 + box // 2, 8 + box + 26  # the chain's centre line; the residual path's x
    ys = {name: 14 + i * (NODE_H + GAP) + NODE_H // 2 for i, name in enumerate(chain)}  # each node's centre
    width, height = skip + 14 + _text_width(t("ln.dia_residual"), 12), ys["y"] + NODE_H // 2 + 6
    parts = ['<defs><marker id="ln-arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
             'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#1A1A1A"/></marker></defs>']
    for name in chain:
        y, label = ys[name], html.escape(labels[name])
        if name in ("ln", "sub"):
            parts.append(f'<rect x="{cx - box // 2}" y="{y - NODE_H // 2}" width="{box}" height="{NODE_H}" rx="8" '
                         f'fill="{FILL[name]}" stroke="#1A1A1A"/>')
        elif name == "add":
            parts.append(f'<circle cx="{cx}" cy="{y}" r="{NODE_H // 2}" fill="{FILL[name]}" stroke="#1A1A1A"/>')
        parts.append(f'<text x="{cx}" y="{y}" text-anchor="middle" dominant-baseline="central">{label}</text>')
    for upper, lower in zip(chain, chain[1:]):  # solid arrows down the chain, from edge to edge
        parts.append(f'<line x1="{cx}" y1="{ys[upper] + NODE_H // 2}" x2="{cx}" y2="{ys[lower] - NODE_H // 2}" '
                     'stroke="#1A1A1A" stroke-width="1.5" marker-end="url(#ln-arrow)"/>')
    top, bottom = ys["x"], ys["add"]
    parts.append(f'<path d="M{cx + 12},{top} H{skip} V{bottom} H{cx + NODE_H // 2}" fill="none" stroke="#1A1A1A" '
                 'stroke-width="1.5" stroke-dasharray="6 4" marker-end="url(#ln-arrow)"/>')
    parts.append(f'<text x="{skip + 6}" y="{(top + bottom) // 2}" font-size="12" dominant-baseline="central">'
                 f'{html.escape(t("ln.dia_residual"))}</text>')
    path = " → ".join(labels[name] for name in chain)
    description = html.escape(t("ln.dia_alt", path=path), quote=True)
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="{description}" width="{width}" '
            f'height="{height}" viewBox="0 0 {width} {height}" style="max-width:100%;height:auto" '
            f'font-family="sans-serif" font-size="{FONT}" fill="#1A1A1A"><title>{description}</title>'
            + "".join(parts) + "</svg>")


@st.cache_data(max_entries=64, show_spinner=False)
def gradient_profile(n_layers: int, d_model: int, n_heads: int, seed: int) -> dict[str, list[float]]:
    """Gradient norm per layer, pre-norm and post-norm, at initialization (cached: same inputs, same numbers)."""
    return {wiring: gradient_norms_at_init(n_layers, d_model, n_heads, wiring == "pre", seed, EXP_TOKENS)
            for wiring in ("pre", "post")}


def gradient_chart(layer_axis: list[int], series: dict[str, list[float]]) -> alt.Chart:
    """Both wirings' gradient norms as lines with points (N = 1 is one dot), one tick per layer."""
    chart = charts.lines(layer_axis, series, x_title=t("ln.layer_index"), y_title=t("ln.grad_norm"),
                         colors=(charts.PALETTE["value"], charts.PALETTE["key"]))
    return chart.mark_line(point={"size": 60, "filled": True}, strokeWidth=2.5).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[1, max(2, len(layer_axis))]),
                axis=alt.Axis(title=t("ln.layer_index"), format="d", tickMinStep=1, labelFontSize=12,
                              titleFontSize=14)))
