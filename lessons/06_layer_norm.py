"""Lesson 6: layer normalization (CURRICULUM.md, lesson 6, with the numbers of lesson 11's exercise 3).

X (n x d) -> per token mean and std -> (x - mean) / (std + eps) [annotated] or (x - mean) / sqrt(var + eps)
[torch] -> gamma * normalized + beta, all by core.LayerNorm, read through its hook points (core.hooks.trace).
Four parts, one on screen at a time (ui/parts.py, `PARTS`): the statistics of each token; the two styles side by
side with γ and β (a section of their own, `affine`: moving them reruns it alone) and the pair (a, −a); the axis
of batch normalization; pre-norm vs post-norm (core.lab.gradients.gradient_norms_at_init). The first three start
from the editable tokens. The editor's controls, the LaTeX, tables, diagram and chart that are not the story live
in ui/norm_views.py.
"""
import numpy as np
import pandas as pd
import streamlit as st

import core
from core.lab.gradients import gradient_norms_at_init, parameter_gradient_norm
from core.hooks import trace
from core.lab.norms import both_styles, constant_rows, traced_layer_norm
from core.layers import _Block
from core.norm import DEFAULT_EPS, STYLES
from ui import charts, links, norm_views as views, panels, parts, scenes, state, tables
from ui.i18n import md_escape, t
from ui.presentation import prose

MAX_LAYERS, EXP_MAX_D = 24, 64  # the pre/post experiment: up to 24 layers, d_model <= 64 (EXP_TOKENS tokens)
PARTS = ("statistics", "styles", "batch", "placement")  # the sub-lessons (ui/parts.py), label key ln.part_of.<code>

SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "gain_shift": {"ln_gamma": 2.0, "ln_beta": 0.5, "ln_dims": 2, "ln_part": "styles"},
    "four_dims": {"ln_dims": 4, "ln_gamma": 1.0, "ln_beta": 0.0, "ln_part": "styles"},
    "tiny_pair": {"ln_pair": 0.01, "ln_dims": 2, "ln_gamma": 1.0, "ln_beta": 0.0, "ln_part": "styles"},
    "deep_stack": {"ln_layers": 24, "ln_pair": 1.0, "ln_dims": 2, "ln_gamma": 1.0, "ln_beta": 0.0,
                   "ln_part": "placement"},
}


def intro() -> None:
    st.title(t("ln.title"))
    scenes.picker("ln", SCENES)
    prose(t("ln.intro"))
    st.latex(r"\mu = \frac{1}{d}\sum_{k=1}^{d} x_k \qquad y = \gamma \odot \hat{x} + \beta")
    st.latex(r"\text{annotated: } \hat{x} = \frac{x - \mu}{s + \varepsilon},\ s = \sqrt{\tfrac{1}{d-1}\textstyle"
             r"\sum_k (x_k - \mu)^2} \qquad \text{torch: } \hat{x} = \frac{x - \mu}{\sqrt{\sigma^2 + \varepsilon}},\ "
             r"\sigma^2 = \tfrac{1}{d}\textstyle\sum_k (x_k - \mu)^2")
    prose(t("ln.equations", eps_a=views.eps_tex("annotated"), eps_t=views.eps_tex("torch")))


def inputs() -> tuple[list[str], np.ndarray, dict]:
    """The tokens' vectors (an editable table) beside d, which the first three parts start from; a change reruns
    the whole lesson. Returns the token labels, X (n, d) and both styles' μ, deviations and x̂ without γ and β."""
    st.subheader(t("ln.input_header"))
    editor_col, controls_col = st.columns([3, 2], gap="large")
    with controls_col:
        views.input_controls()
    with editor_col:
        edited = views.editor(int(ss["ln_dims"]))
        st.caption(t("ln.example_caption"))
    if edited.problems:
        panels.problems_box(edited.problems)
    X = edited.values  # (n, d)
    if X.shape[1] == 1:  # what one dimension does to the normalization
        st.info(t("ln.one_dim"), icon=":material/info:")
    return edited.labels, X, both_styles(X, 1.0, 0.0, settings.device)


def constant_inputs(tokens: list[str], X: np.ndarray, beta: float) -> None:
    """What a row of equal values does to the normalization (its output is β)."""
    flat = [md_escape(tokens[i]) for i in constant_rows(X)]
    if flat:
        st.info(t("ln.constant_rows", tokens=", ".join(f"**{w}**" for w in flat), beta=beta,
                  eps_a=DEFAULT_EPS["annotated"], eps_t=DEFAULT_EPS["torch"]), icon=":material/info:")


def statistics(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """Each token's mean and standard deviation in both styles."""
    st.subheader(t("ln.stats_header"))
    stats = {t("ln.col_mean"): R["torch"]["mean"][:, 0]}
    if "annotated" in R:
        stats[t("ln.col_std_annotated")] = R["annotated"]["std"][:, 0]
    stats[t("ln.col_std_torch")] = R["torch"]["std"][:, 0]
    tables.table(pd.DataFrame(stats, index=charts.unique_labels(tokens)), key="ln_stats")  # at most 12 rows
    if X.shape == (3, 2) and np.allclose(X, views.COURSE_X):
        st.caption(t("ln.course_check"))


@st.fragment
def one_token(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """One token's calculation written out; picking the token reruns this section only."""
    if ss["ln_token"] >= len(tokens):
        ss["ln_token"] = 0
    pick = links.control(st.selectbox, t("ln.pick_token"), range(len(tokens)), format_func=lambda j: tokens[j],
                         width=320, setting="ln_token")
    st.latex(views.token_latex(X, R, pick))


def centering(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """X and X minus its mean (x̂, γ and β are the next part's)."""
    st.subheader(t("ln.centered_header"))
    dims = [f"d{k}" for k in range(X.shape[1])]
    left, right = st.columns(2, gap="large")
    with left:
        panels.matrix_panel(X, title=t("ln.X_title"), key="ln_X", row_labels=tokens, col_labels=dims, max_width=300)
    with right:
        panels.matrix_panel(X - R["torch"]["mean"], title=t("ln.centered_title"), key="ln_centered",
                            row_labels=tokens, col_labels=dims, caption=t("ln.centered_caption"), max_width=300)


@st.fragment
def affine(tokens: list[str], X: np.ndarray) -> None:
    """γ and β, then each style's x̂ and γ x̂ + β side by side, and the strips; γ and β rerun this section only."""
    views.affine_controls()
    gamma, beta = float(ss["ln_gamma"]), float(ss["ln_beta"])
    R = both_styles(X, gamma, beta, settings.device)  # the annotated style needs d >= 2 (its d - 1)
    constant_inputs(tokens, X, beta)
    dims = [f"d{k}" for k in range(X.shape[1])]
    out_title = t("ln.out_title", gamma=gamma, sign="+" if beta >= 0 else "−", beta=abs(beta))
    for style, col in zip(STYLES, st.columns(2, gap="large")):
        with col:
            st.markdown(f"#### {t(views.STYLE_TEXT[style]['name'])}")
            if style not in R:
                st.info(t("ln.one_dim_short"), icon=":material/block:")
                continue
            panels.matrix_panel(R[style]["normalized"], title=t("ln.normalized_title"), key=f"ln_norm_{style}",
                                row_labels=tokens, col_labels=dims, caption=t(views.STYLE_TEXT[style]["caption"]),
                                max_width=300)
            panels.matrix_panel(R[style]["out"], title=out_title, key=f"ln_out_{style}", row_labels=tokens,
                                col_labels=dims, caption=t("ln.out_caption"), max_width=300)
    pictures(tokens, X, R)


def pictures(tokens: list[str], X: np.ndarray, R: dict) -> None:
    """Each token's values before and after, as strips."""
    st.subheader(t("ln.pictures_header"))
    st.markdown(t("ln.pictures_text"))
    after = {style: t(views.STYLE_TEXT[style]["after"]) for style in STYLES if style in R}
    strips = {t("ln.before"): X} | {label: R[style]["out"] for style, label in after.items()}
    st.altair_chart(charts.value_strips(strips, tokens, value_title=t("ln.value"), row_title=t("ln.token"),
                                        mean_title=t("ln.col_mean"), width=230), width="content")


@st.fragment
def pair() -> None:
    """The pair (a, −a): the two styles' ε apart; moving a reruns this section only."""
    st.subheader(t("ln.pair_header"))
    prose(t("ln.pair_text"))
    a = float(links.control(st.number_input, t("ln.pair_a"), min_value=-views.BOUND, max_value=views.BOUND, step=0.5,
                            width=260, setting="ln_pair"))
    P = both_styles(np.array([[a, -a]]), 1.0, 0.0, settings.device)  # each style on the one row (1, 2)
    views.pair_table(P)
    st.markdown(t("ln.pair_result", a=a, ann=float(P["annotated"]["normalized"][0, 0]),
                  tor=float(P["torch"]["normalized"][0, 0])))


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
            st.markdown(views.wiring_svg(pre), unsafe_allow_html=True)  # SVG (ui/diagram.py)
            st.caption(t("ln.pre_caption" if pre else "ln.post_caption"))
    prose(t("ln.experiment_text"))


@st.fragment
def experiment() -> None:
    """Gradient norm per layer at initialization, pre-norm against post-norm; the depth reruns this section."""
    links.control(st.slider, t("ln.layers"), 1, MAX_LAYERS, step=1, help=t("ln.layers_help"), setting="ln_layers")
    n_layers = int(ss["ln_layers"])
    d_exp = min(settings.d_model, EXP_MAX_D)
    heads_exp = state.closest_heads(d_exp, settings.heads)
    G = views.gradient_profile(n_layers, d_exp, heads_exp, settings.seed)
    st.caption(t("ln.experiment_caption", d=d_exp, cap=EXP_MAX_D, shared=settings.d_model, h=heads_exp,
                 n=views.EXP_TOKENS, seed=settings.seed, ff=4 * d_exp) + " " + t("common.cpu_only"))
    layer_axis = list(range(1, n_layers + 1))
    series = {t("ln.pre_title"): G["pre"], t("ln.post_title"): G["post"]}
    panels.svg_image(views.gradient_chart(layer_axis, series))
    if settings.show_numbers:
        views.numbers(pd.DataFrame(series, index=[t("ln.layer_n", i=i) for i in layer_axis]), "ln_grad_numbers")
    ratios = {w: G[w][-1] / max(G[w][0], 1e-300) for w in ("pre", "post")}
    st.markdown(t("ln.experiment_result", n=n_layers, pre_first=G["pre"][0], pre_last=G["pre"][-1],
                  post_first=G["post"][0], post_last=G["post"][-1], pre_ratio=ratios["pre"],
                  post_ratio=ratios["post"]))


def closing() -> None:
    panels.show_code(traced_layer_norm, both_styles, core.LayerNorm, trace, _Block.residual, gradient_norms_at_init,
                     parameter_gradient_norm)
    st.subheader(t("ln.notice_header"))
    st.markdown(t("ln.notice_points"))


def statistics_part() -> None:
    """Part 1: each token's mean and standard deviation, one token written out, X and X − μ."""
    tokens, X, R = inputs()
    statistics(tokens, X, R)
    one_token(tokens, X, R)
    centering(tokens, X, R)


def styles_part() -> None:
    """Part 2: x̂ in both styles with γ and β, and the pair (a, −a) where the styles differ."""
    tokens, X, _ = inputs()
    st.subheader(t("ln.steps_header"))
    affine(tokens, X)
    pair()


def batch_part() -> None:
    """Part 3: the axis of layer normalization against the axis of batch normalization."""
    tokens, X, R = inputs()
    batch_axis(tokens, X, R)


def placement_part() -> None:
    """Part 4: pre-norm and post-norm drawn, the gradient experiment and what Xiong et al. found."""
    placement()
    experiment()
    prose(t("ln.xiong"))


settings = state.settings()
ss = st.session_state
for name, value in (("ln_dims", 2), ("ln_gamma", 1.0), ("ln_beta", 0.0), ("ln_pair", 1.0), ("ln_layers", 6),
                    ("ln_token", 0)):
    ss.setdefault(name, value)
lang = settings.lang  # the format function gets it now: Streamlit may call it outside the run

intro()
part = parts.pick("ln_part", PARTS, label=t("ln.part"), format_func=lambda p: t(f"ln.part_of.{p}", lang))
{"statistics": statistics_part, "styles": styles_part, "batch": batch_part, "placement": placement_part}[part]()
closing()
