"""Lesson 6: layer normalization (CURRICULUM.md, lesson 6, with the numbers of lesson 11's exercise 3).

X (n x d) -> per token mean and std -> (x - mean) / (std + eps) [annotated] or (x - mean) / sqrt(var + eps)
[torch] -> gamma * normalized + beta, all by core.LayerNorm, read through its hook points (core.hooks.trace).
Then the axis of batch normalization, and pre-norm vs post-norm (core.lab.gradients.gradient_norms_at_init).
"""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

import core
from core.lab.gradients import gradient_norms_at_init, parameter_gradient_norm
from core.hooks import trace
from core.lab.norms import both_styles, constant_rows, traced_layer_norm
from core.layers import _Block
from core.norm import DEFAULT_EPS, STYLES
from ui import charts, links, panels, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose

TOKENS = ("t0", "t1", "t2")  # the source tokens [2, 2, 1] at positions 0, 1, 2
COURSE_X = ((0.4513, -0.1872), (1.2927, -0.6469), (0.9508, 0.8249))  # exercise 1's result (lesson 11)
MAX_TOKENS, MAX_DIMS, BOUND = 12, 16, 1000.0
MAX_LAYERS, EXP_MAX_D, EXP_TOKENS = 24, 64, 8  # the pre/post experiment: up to 24 layers, d_model <= 64, 8 tokens
STYLE_TEXT = {"annotated": {"name": "ln.style_annotated", "caption": "ln.normalized_caption_annotated",
                            "after": "ln.after_annotated"},
              "torch": {"name": "ln.style_torch", "caption": "ln.normalized_caption_torch", "after": "ln.after_torch"}}


def example_table(dims: int = 2) -> pd.DataFrame:
    table = {"token": list(TOKENS)}
    for k in range(dims):
        table[f"d{k + 1}"] = [row[k] if k < len(row) else 0.0 for row in COURSE_X]
    return pd.DataFrame(table)


def reset() -> None:
    ss = st.session_state
    ss["ln_dims"], ss["ln_gamma"], ss["ln_beta"] = 2, 1.0, 0.0
    panels.reset_editor("ln_x", example_table())


@st.cache_data(max_entries=64, show_spinner=False)
def gradient_profile(n_layers: int, d_model: int, n_heads: int, seed: int) -> dict[str, list[float]]:
    """Gradient norm per layer, pre-norm and post-norm, at initialization (cached: same inputs, same numbers)."""
    return {wiring: gradient_norms_at_init(n_layers, d_model, n_heads, wiring == "pre", seed, EXP_TOKENS)
            for wiring in ("pre", "post")}


def wiring_dot(pre: bool) -> str:
    """The residual sub-layer as a graphviz diagram: x -> LN -> sublayer -> + (pre) or x -> sublayer -> + -> LN."""
    norm = '[label="LayerNorm", fillcolor="#E69F00"]'
    sub = f'[label="{t("ln.dia_sublayer")}", fillcolor="#56B4E9"]'
    chain = "x -> ln -> sub -> add -> y" if pre else "x -> sub -> add -> ln -> y"
    skip = 'x -> add [style=dashed, label="  ' + t("ln.dia_residual") + '"]'
    return (f'digraph {{ rankdir=TB; nodesep=0.6; ranksep=0.3; bgcolor="transparent"; '
            f'node [shape=box, style="rounded,filled", fontname="sans-serif", fontsize=14, fillcolor="white"]; '
            f'edge [fontname="sans-serif", fontsize=12]; '
            f'x [label="x", shape=plaintext, style=""]; y [label="{t("ln.dia_out")}", shape=plaintext, style=""]; '
            f'ln {norm}; sub {sub}; add [label="+", shape=circle, fillcolor="white"]; {chain}; {skip}; }}')


def token_latex(x: np.ndarray, r: dict[str, dict[str, np.ndarray]], i: int) -> str:
    """The calculation for token i written out with its numbers (annotated style if d >= 2, then torch)."""
    d, mean = x.shape[1], float(r["torch"]["mean"][i, 0])
    values = " + ".join(f"({v:.4f})" if v < 0 else f"{v:.4f}" for v in x[i][:6]) + (r" + \dots" if d > 6 else "")
    lines = [rf"\mu &= \tfrac{{1}}{{{d}}}\textstyle\sum_k x_k = \tfrac{{1}}{{{d}}}({values}) = {mean:.4f}"]
    if "annotated" in r:
        s, vec = float(r["annotated"]["std"][i, 0]), r["annotated"]["normalized"][i]
        lines.append(rf"s &= \sqrt{{\tfrac{{1}}{{{d - 1}}}\textstyle\sum_k (x_k - \mu)^2}} = {s:.4f}")
        lines.append(r"\hat{x}_{\text{annotated}} &= \tfrac{x - \mu}{s + \varepsilon} = " + vector_tex(vec))
    sigma, vec = float(r["torch"]["std"][i, 0]), r["torch"]["normalized"][i]
    lines.append(rf"\sigma &= \sqrt{{\tfrac{{1}}{{{d}}}\textstyle\sum_k (x_k - \mu)^2 + \varepsilon}} = {sigma:.4f}")
    lines.append(r"\hat{x}_{\text{torch}} &= \tfrac{x - \mu}{\sigma} = " + vector_tex(vec))
    return r"\begin{aligned} " + r" \\ ".join(lines) + r" \end{aligned}"


def vector_tex(v: np.ndarray) -> str:
    shown = ", ".join(f"{{{a:.4f}}}" for a in v[:6])
    return f"({shown}" + (r",\ \dots)" if len(v) > 6 else ")")


def eps_tex(style: str) -> str:
    """A style's default eps as TeX: 1e-06 -> 10^{-6}."""
    return f"10^{{{int(round(np.log10(DEFAULT_EPS[style])))}}}"


def numbers(df: pd.DataFrame, key: str) -> None:
    config = {c: st.column_config.NumberColumn(c, format="%.4f") for c in df.columns}
    st.dataframe(df, column_config=config, width="content", key=key)


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "gain_shift": {"ln_gamma": 2.0, "ln_beta": 0.5, "ln_dims": 2},
    "four_dims": {"ln_dims": 4, "ln_gamma": 1.0, "ln_beta": 0.0},
    "tiny_pair": {"ln_pair": 0.01, "ln_dims": 2, "ln_gamma": 1.0, "ln_beta": 0.0},
    "deep_stack": {"ln_layers": 24, "ln_pair": 1.0, "ln_dims": 2, "ln_gamma": 1.0, "ln_beta": 0.0},
}

def intro() -> None:
    st.title(t("ln.title"))
    scenes.picker("ln", SCENES)
    prose(t("ln.intro"))
    st.latex(r"\mu = \frac{1}{d}\sum_{k=1}^{d} x_k \qquad y = \gamma \odot \hat{x} + \beta")
    st.latex(r"\text{annotated: } \hat{x} = \frac{x - \mu}{s + \varepsilon},\ s = \sqrt{\tfrac{1}{d-1}\textstyle"
             r"\sum_k (x_k - \mu)^2} \qquad \text{torch: } \hat{x} = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}},\ "
             r"\sigma^2 = \tfrac{1}{d}\textstyle\sum_k (x_k - \mu)^2")
    prose(t("ln.equations", eps_a=eps_tex("annotated"), eps_t=eps_tex("torch")))


def inputs() -> tuple[list[str], np.ndarray]:
    """The tokens' vectors (an editable table) beside d, γ and β; a change reruns the whole lesson.
    Returns the token labels and X (n, d)."""
    st.subheader(t("ln.input_header"))
    editor_col, controls_col = st.columns([3, 2], gap="large")
    with controls_col:
        links.control(st.number_input, t("ln.dims"), min_value=1, max_value=MAX_DIMS, step=1, help=t("ln.dims_help"),
                      width=260, setting="ln_dims")
        links.control(st.slider, t("ln.gamma"), -2.0, 3.0, step=0.05, help=t("ln.gamma_help"), setting="ln_gamma")
        links.control(st.slider, t("ln.beta"), -2.0, 2.0, step=0.05, help=t("ln.gamma_help"), setting="ln_beta")
        st.button(t("ln.reset"), on_click=reset, icon=":material/restart_alt:")
        st.caption(t("ln.editor_help", max=MAX_TOKENS, bound=f"{BOUND:g}"))
    with editor_col:
        edited = panels.matrix_editor(
            "ln_x", example_table(), columns=[f"d{k + 1}" for k in range(int(ss["ln_dims"]))], label_column="token",
            label_title=t("ln.token"), column_title=lambda k: t("ln.dim", k=k), max_rows=MAX_TOKENS, bound=BOUND,
            alt_text=t("ln.editor_alt"))
        st.caption(t("ln.example_caption"))
    if edited.problems:
        panels.problems_box(edited.problems)
    return edited.labels, edited.values


def special_inputs(tokens: list[str], X: np.ndarray, beta: float) -> None:
    """What one dimension, or a row of equal values, does to the normalization."""
    if X.shape[1] == 1:
        st.info(t("ln.one_dim"), icon=":material/info:")
    flat = [md_escape(tokens[i]) for i in constant_rows(X)]
    if flat:
        st.info(t("ln.constant_rows", tokens=", ".join(f"**{w}**" for w in flat), beta=f"{beta:.4f}",
                  eps_a=f"{DEFAULT_EPS['annotated']:g}", eps_t=f"{DEFAULT_EPS['torch']:g}"), icon=":material/info:")


def statistics(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """Each token's mean and standard deviation in both styles."""
    st.subheader(t("ln.stats_header"))
    stats = {t("ln.col_mean"): R["torch"]["mean"][:, 0]}
    if "annotated" in R:
        stats[t("ln.col_std_annotated")] = R["annotated"]["std"][:, 0]
    stats[t("ln.col_std_torch")] = R["torch"]["std"][:, 0]
    numbers(pd.DataFrame(stats, index=charts.unique_labels(tokens)), "ln_stats")
    if X.shape == (3, 2) and np.allclose(X, COURSE_X):
        st.caption(t("ln.course_check"))


@st.fragment
def one_token(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """One token's calculation written out; picking the token reruns this section only."""
    if ss["ln_token"] >= len(tokens):
        ss["ln_token"] = 0
    pick = links.control(st.selectbox, t("ln.pick_token"), range(len(tokens)), format_func=lambda j: tokens[j],
                         width=320, setting="ln_token", identity=tuple(tokens))
    st.latex(token_latex(X, R, pick))


def steps(tokens: list[str], X: np.ndarray, R: dict, gamma: float, beta: float) -> None:
    """X, X minus its mean, then each style's x̂ and γ x̂ + β side by side."""
    st.subheader(t("ln.steps_header"))
    dims = [f"d{k}" for k in range(X.shape[1])]
    left, right = st.columns(2, gap="large")
    with left:
        panels.matrix_panel(X, title=t("ln.X_title"), key="ln_X", row_labels=tokens, col_labels=dims, max_width=300)
    with right:
        panels.matrix_panel(X - R["torch"]["mean"], title=t("ln.centered_title"), key="ln_centered",
                            row_labels=tokens, col_labels=dims, caption=t("ln.centered_caption"), max_width=300)
    out_title = t("ln.out_title", gamma=f"{gamma:g}", beta=f"+ {beta:g}" if beta >= 0 else f"− {-beta:g}")
    for style, col in zip(STYLES, st.columns(2, gap="large")):
        with col:
            st.markdown(f"#### {t(STYLE_TEXT[style]['name'])}")
            if style not in R:
                st.info(t("ln.one_dim_short"), icon=":material/block:")
                continue
            panels.matrix_panel(R[style]["normalized"], title=t("ln.normalized_title"), key=f"ln_norm_{style}",
                                row_labels=tokens, col_labels=dims, caption=t(STYLE_TEXT[style]["caption"]),
                                max_width=300)
            panels.matrix_panel(R[style]["out"], title=out_title, key=f"ln_out_{style}", row_labels=tokens,
                                col_labels=dims, caption=t("ln.out_caption"), max_width=300)


def pictures(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """Each token's values before and after, as strips."""
    st.subheader(t("ln.pictures_header"))
    st.markdown(t("ln.pictures_text"))
    strips = {t("ln.before"): X} | {t(STYLE_TEXT[style]["after"]): R[style]["out"] for style in STYLES if style in R}
    st.altair_chart(charts.value_strips(strips, tokens, value_title=t("ln.value"), row_title=t("ln.token"),
                                        mean_title=t("ln.col_mean"), width=230), width="content")


@st.fragment
def pair() -> None:
    """The pair (a, −a): the two styles' ε apart; moving a reruns this section only."""
    st.subheader(t("ln.pair_header"))
    prose(t("ln.pair_text"))
    a = float(links.control(st.number_input, t("ln.pair_a"), min_value=-BOUND, max_value=BOUND, step=0.5, width=260,
                            setting="ln_pair"))
    P = both_styles(np.array([[a, -a]]), 1.0, 0.0, settings.device)  # each style on the one row (1, 2)
    numbers(pd.DataFrame([[P[s]["mean"][0, 0], P[s]["std"][0, 0], *P[s]["normalized"][0]] for s in STYLES],
                         index=[t(STYLE_TEXT[s]["name"]) for s in STYLES],
                         columns=[t("ln.col_mean"), t("ln.col_denominator"), "x̂₁", "x̂₂"]), "ln_pair_table")
    st.markdown(t("ln.pair_result", a=f"{a:g}", ann=f"{P['annotated']['normalized'][0, 0]:.4f}",
                  tor=f"{P['torch']['normalized'][0, 0]:.4f}"))


def batch_axis(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """Layer norm normalizes each row; batch norm would normalize each column."""
    st.subheader(t("ln.batch_header"))
    prose(t("ln.batch_text"))
    dims = [f"d{k}" for k in range(X.shape[1])]
    across_tokens = traced_layer_norm(X.T, "torch", 1.0, 0.0, settings.device)["normalized"].T  # (n, d), per column
    layer_col, batch_col = st.columns(2, gap="large")
    with layer_col:
        panels.matrix_panel(R["torch"]["normalized"], title=t("ln.layer_axis_title"), key="ln_axis_layer",
                            row_labels=tokens, col_labels=dims, caption=t("ln.layer_axis_caption"), max_width=300)
    with batch_col:
        panels.matrix_panel(across_tokens, title=t("ln.batch_axis_title"), key="ln_axis_batch", row_labels=tokens,
                            col_labels=dims, caption=t("ln.batch_axis_caption"), max_width=300)
    if X.shape[0] == 1:
        st.info(t("ln.batch_of_one"), icon=":material/info:")


def placement() -> None:
    """Where the norm sits in the residual sub-layer: pre-norm and post-norm drawn."""
    st.subheader(t("ln.placement_header"))
    prose(t("ln.placement_text"))
    for col, pre in zip(st.columns(2, gap="large"), (True, False)):
        with col:
            st.markdown(f"#### {t('ln.pre_title' if pre else 'ln.post_title')}")
            st.graphviz_chart(wiring_dot(pre), width="content")
            st.caption(t("ln.pre_caption" if pre else "ln.post_caption"))
    prose(t("ln.experiment_text"))


@st.fragment
def experiment() -> None:
    """Gradient norm per layer at initialization, pre-norm against post-norm; the depth reruns this section."""
    links.control(st.slider, t("ln.layers"), 1, MAX_LAYERS, step=1, help=t("ln.layers_help"), setting="ln_layers")
    n_layers = int(ss["ln_layers"])
    d_exp = min(settings.d_model, EXP_MAX_D)
    heads_exp = state.closest_heads(d_exp, settings.heads)
    G = gradient_profile(n_layers, d_exp, heads_exp, settings.seed)
    st.caption(t("ln.experiment_caption", d=d_exp, cap=EXP_MAX_D, shared=settings.d_model, h=heads_exp,
                 n=EXP_TOKENS, seed=settings.seed, ff=4 * d_exp) + " " + t("common.cpu_only"))
    layer_axis = list(range(1, n_layers + 1))
    series = {t("ln.pre_title"): G["pre"], t("ln.post_title"): G["post"]}
    st.altair_chart(gradient_chart(layer_axis, series), width="content")
    if settings.show_numbers:
        numbers(pd.DataFrame(series, index=[t("ln.layer_n", i=i) for i in layer_axis]), "ln_grad_numbers")
    ratios = {w: G[w][-1] / max(G[w][0], 1e-300) for w in ("pre", "post")}
    st.markdown(t("ln.experiment_result", n=n_layers, pre_first=f"{G['pre'][0]:.4f}",
                  pre_last=f"{G['pre'][-1]:.4f}", post_first=f"{G['post'][0]:.4f}",
                  post_last=f"{G['post'][-1]:.4f}", pre_ratio=f"{ratios['pre']:.2f}",
                  post_ratio=f"{ratios['post']:.2f}"))


def gradient_chart(layer_axis: list[int], series: dict[str, list[float]]) -> alt.Chart:
    """Both wirings' gradient norms as lines with points (N = 1 is one dot), one tick per layer."""
    chart = charts.lines(layer_axis, series, x_title=t("ln.layer_index"), y_title=t("ln.grad_norm"),
                         colors=(charts.PALETTE["value"], charts.PALETTE["key"]))
    return chart.mark_line(point={"size": 60, "filled": True}, strokeWidth=2.5).encode(
        x=alt.X("x:Q", scale=alt.Scale(domain=[1, max(2, len(layer_axis))]),
                axis=alt.Axis(title=t("ln.layer_index"), format="d", tickMinStep=1, labelFontSize=12,
                              titleFontSize=14)))


def closing() -> None:
    prose(t("ln.xiong"))
    panels.show_code(traced_layer_norm, both_styles, core.LayerNorm, trace, _Block.residual, gradient_norms_at_init,
                     parameter_gradient_norm)
    st.subheader(t("ln.notice_header"))
    st.markdown(t("ln.notice_points"))


settings = state.settings()
ss = st.session_state
for name, value in (("ln_dims", 2), ("ln_gamma", 1.0), ("ln_beta", 0.0), ("ln_pair", 1.0), ("ln_layers", 6),
                    ("ln_token", 0)):
    ss.setdefault(name, value)

intro()
tokens, X = inputs()
gamma, beta = float(ss["ln_gamma"]), float(ss["ln_beta"])
R = both_styles(X, gamma, beta, settings.device)  # the annotated style needs d >= 2 (its d - 1)
special_inputs(tokens, X, beta)
statistics(tokens, X, R)
one_token(tokens, X, R)
steps(tokens, X, R, gamma, beta)
pictures(tokens, X, R)
pair()
batch_axis(tokens, X, R)
placement()
experiment()
closing()
