"""Lesson 11: the course's six worked exercises and its conceptual questions (CURRICULUM.md, lesson 11).

Every solution is computed live by the course's model (core.lab.exercise_checks, read through core's hook points):
the embedding, the first LayerNorm, the attention and the second sub-layer of the pre-norm encoder layer. Answers
are typed into tables and checked with a tolerance (ui.exercises draws the tables, Check, Reveal and the score).
Three parts, one on screen at a time (ui/parts.py, `PARTS`): exercises 1 to 3, exercises 4 to 6, the questions; the
answers, the checks and the score live in the session and count across parts.
"""
import numpy as np
import streamlit as st

import core
from core.hooks import trace
from core.lab import exercise_checks as solve
from core.lab.exercises import SOURCE_TOKENS, course_model, dropout_with_mask, wrong_entries
from core.layers import _Block
from ui import links, panels, parts, state
from ui.exercises import DIMS, TOKENS, Part, ask, carried, exercise, fmt, panel, reset_score, start, tex
from ui.i18n import power_of_ten, t
from ui.presentation import prose

STATS, HIDDEN = ("μ", "s"), tuple(f"h{k}" for k in range(1, 9))
TOL_OPTIONS = (0.0005, 0.001, 0.005, 0.01)
EXERCISES = (1, 2, 3, 4, 5, 6)
PARTS = ("embedding", "attention", "questions")  # the sub-lessons (ui/parts.py), label key ex.part_of.<code>
QUESTIONS = (("residuals", 1), ("prenorm", 2), ("decoder", 0), ("training", 3), ("padding", 1), ("inference", 2),
             ("recipe", 0))  # (id, index of the right option); keys ex.q_<id>, its options _o<k>, explanations _e<k>
cached = st.cache_data(max_entries=32, show_spinner=False)
solve_embedding, solve_dropout, solve_norm, solve_sdpa, solve_attention, solve_ffn, whole_layer, course_chain = (
    cached(f) for f in (solve.solve_embedding, solve.solve_dropout, solve.solve_norm, solve.solve_sdpa,
                        solve.solve_attention, solve.solve_ffn, solve.whole_layer, solve.course_chain))
COURSE_EX1 = np.array(solve.COURSE_EX1)


def solution_1(E1: dict) -> None:
    st.latex(r"PE_{(pos,\,2i)} = \sin\!\big(pos / 10000^{2i/d}\big) \quad PE_{(pos,\,2i+1)} = "
             r"\cos\!\big(pos / 10000^{2i/d}\big) \quad d = 2:\ PE_{pos} = (\sin pos,\ \cos pos)")
    st.latex(r"\sqrt{2}\, X + PE")
    for col, (m, title, key) in zip(st.columns(3), ((E1["scaled"], t("ex.scaled_title"), "e1_scaled"),
                                                     (E1["pe"], t("ex.pe_title"), "e1_pe"),
                                                     (E1["out"], t("ex.embedded_title"), "e1_out"))):
        with col:
            panel(m, title, key)
    st.info(t("ex.e1_note"), icon=":material/info:")


def solution_2(D: dict) -> None:
    st.latex(r"\operatorname{dropout}(x)_{ij} = \frac{m_{ij}\, x_{ij}}{1 - p}, \quad m_{ij} \in \{0, 1\}")
    for col, (m, title, key) in zip(st.columns(3), ((D["p01"], t("ex.p01_title"), "e2_p01"),
                                                     (D["keep"], t("ex.mask_title"), "e2_keep"),
                                                     (D["p05"], t("ex.p05_title"), "e2_p05"))):
        with col:
            panel(m, title, key)
    st.info(t("ex.e2_note"), icon=":material/info:")


def solution_3(x: tuple, N: dict) -> None:
    rows, hats = [], []
    for i, tok in enumerate(TOKENS):
        (a, b), mu, s = x[i], N["mean"][i, 0], N["std"][i, 0]
        plus_b = f"+ ({fmt(b)})" if b < 0 else f"+ {fmt(b)}"
        rows.append(rf"{tok}:\ \mu &= \tfrac{{{fmt(a)} {plus_b}}}{{2}} = {fmt(mu)}, & s &= "
                    rf"\sqrt{{({fmt(a)} - {fmt(mu)})^2 + ({fmt(b)} - {fmt(mu)})^2}} = {fmt(s)}")
        hats.append(rf"\hat{{x}}_{{{tok}}} = {tex(N['normalized'][i])}")
    st.latex(r"\hat{x} = \frac{x - \mu}{s + \varepsilon}, \quad s = \sqrt{\tfrac{1}{d - 1}\textstyle\sum_k "
             r"(x_k - \mu)^2}, \quad d - 1 = 1")
    st.latex(r"\begin{aligned} " + r" \\ ".join(rows) + r" \end{aligned}")
    st.latex(r" \quad ".join(hats))
    left, right = st.columns(2)
    with left:
        panel(np.hstack([N["mean"], N["std"]]), t("ex.stats_title"), "e3_stats", cols=STATS)
    with right:
        panel(N["normalized"], t("ex.normalized_title"), "e3_normalized")
    st.info(t("ex.e3_note"), icon=":material/info:")


def solution_4(A: dict) -> None:
    st.latex(r"A = \operatorname{softmax}\!\Big(\frac{Z Z^\top}{\sqrt{2}}\Big) \qquad \text{out} = A Z")
    for col, (m, title, key, cols) in zip(st.columns(3), (
            (A["scores"], t("ex.scores_title"), "e4_scores", TOKENS),
            (A["weights"], t("ex.weights_title"), "e4_weights", TOKENS),
            (A["out"], t("ex.out_title"), "e4_out", DIMS))):
        with col:
            panel(m, title, key, cols=cols)
    st.info(t("ex.e4_note"), icon=":material/info:")


def inputs_5(z: tuple, caption: str, W: dict) -> None:
    st.caption(caption)
    st.latex(rf"Z = {tex(z)}")
    for names in ("QK", "VO"):
        st.latex(r" \qquad ".join(rf"W_{n} = {tex(W[n][0])},\ b_{n} = {tex(W[n][1])}" for n in names))
    st.caption(t("ex.linear_layout"))


def solution_5(M: dict) -> None:
    st.latex(r"Q = Z W_Q^\top + b_Q,\ K = Z W_K^\top + b_K,\ V = Z W_V^\top + b_V \qquad "
             r"A = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{2}}\Big) \qquad "
             r"\text{out} = (A V)\, W_O^\top + b_O")
    for col, name in zip(st.columns(3), "qkv"):
        with col:
            panel(M[name], name.upper(), f"e5_{name}")
    steps = ((M["scores"], t("ex.scores_qk_title"), "e5_scores", TOKENS, "scores"),
             (M["weights"], t("ex.weights_title"), "e5_weights", TOKENS, "weights"),
             (M["heads"], t("ex.heads_title"), "e5_heads", DIMS, None),
             (M["out"], t("ex.attn_out_title"), "e5_out", DIMS, None))
    for pair in (steps[:2], steps[2:]):
        for col, (m, title, key, cols, scale) in zip(st.columns(2), pair):
            with col:
                panel(m, title, key, cols=cols, scale=scale)
    st.info(t("ex.e5_note"), icon=":material/info:")


def inputs_6(x: tuple, a: tuple, caption: str, W: dict) -> None:
    st.caption(caption)
    st.latex(rf"x = {tex(x)} \qquad \operatorname{{MHA}}(\operatorname{{LN}}_1(x)) = {tex(a)}")
    st.latex(rf"W_1^\top = {tex(W['1'][0].T)} \quad b_1 = {tex(W['1'][1])}")
    st.latex(rf"W_2 = {tex(W['2'][0])} \quad b_2 = {tex(W['2'][1])}")
    st.caption(t("ex.w1_transposed"))


def solution_6(F: dict) -> None:
    st.latex(r"x_1 = x + \operatorname{MHA}(\operatorname{LN}_1(x)) \qquad u = \operatorname{LN}_2(x_1) \qquad "
             r"\operatorname{FFN}(u) = \max(0,\ u W_1^\top + b_1)\, W_2^\top + b_2")
    st.markdown(t("ex.e6_which_input"))
    left, right = st.columns(2)
    with left:
        panel(F["resid"], t("ex.resid_title"), "e6_resid")
        panel(np.hstack([F["mean"], F["std"]]), t("ex.stats_title"), "e6_stats", cols=STATS)
    with right:
        panel(F["normalized"], t("ex.ffn_in_title"), "e6_normalized")
        panel(F["out"], t("ex.ffn_out_title"), "e6_out")
    st.latex(r"h_{\text{pre}} = u W_1^\top + b_1 \qquad h = \max(0,\ h_{\text{pre}}) \qquad "
             r"\operatorname{FFN}(u) = h W_2^\top + b_2")
    panel(F["pre"], t("ex.pre_title"), "e6_pre", cols=HIDDEN)
    panel(F["hidden"], t("ex.hidden_title"), "e6_hidden", cols=HIDDEN)
    st.caption(t("ex.e6_relu", negative=int((F["pre"] < 0).sum()), cells=F["pre"].size))
    gap = float(np.abs(whole_layer()["ff.hook_out"] - F["out"]).max())
    st.info(t("ex.e6_note", gap=f"{gap:.1e}"), icon=":material/info:")


def score() -> tuple[int, int]:
    """(exercises that count, questions that count): see ex.score_rules."""
    return (sum(bool(ss["ex_results"].get(n)) for n in EXERCISES),
            sum(record["first"] for record in ss["ex_mcq"].values()))


def score_box() -> None:
    n_ex, n_q = score()
    score_col, reset_col = st.columns([4, 1])
    score_col.markdown(t("ex.score", score=n_ex + n_q, total=len(EXERCISES) + len(QUESTIONS), ex=n_ex,
                         n_ex=len(EXERCISES), q=n_q, n_q=len(QUESTIONS)))
    score_col.caption(t("ex.score_rules"))
    reset_col.button(t("ex.reset_score"), on_click=reset_score, icon=":material/restart_alt:")


@st.fragment
def tolerance() -> None:
    """The tolerance of the next Check: a result already shown keeps the one it was checked with, so moving it
    reruns this control alone."""
    links.control(st.select_slider, t("ex.tolerance"), TOL_OPTIONS, format_func=lambda v: "±" + power_of_ten(v),
                  help=t("ex.tolerance_help"), setting="ex_tol")  # labels the same in both languages


def intro():
    """Title, the rules, the score box (filled last) and the two settings; returns the score's slot."""
    st.title(t("ex.title"))
    prose(t("ex.intro"))
    score_slot = st.container(border=True)  # filled at the end, after this run's checks
    tol_col, own_col = st.columns(2, gap="large")
    with tol_col:
        tolerance()
    links.control(own_col.toggle, t("ex.own"), help=t("ex.own_help"), setting="ex_own")
    st.markdown(t("ex.model", tokens=", ".join(map(str, SOURCE_TOKENS))))
    return score_slot


def embedding_dropout_norm() -> None:
    """Exercises 1 to 3: the embedding, dropout on its result and the first LayerNorm."""
    E1 = solve_embedding()
    exercise(1, lambda: st.latex(rf"\text{{tokens}} = [2, 2, 1] \qquad X = {tex(E1['X'])}"),
             [Part("1_out", t("ex.part_embedded"), TOKENS, DIMS, E1["out"])], lambda: solution_1(E1), score)
    x_in, x_caption = carried(1, "1_out", COURSE_EX1)
    D = solve_dropout(x_in)
    keep = tex(solve.KEEP_05, 0)
    exercise(2, lambda: (st.caption(x_caption), st.latex(rf"x = {tex(x_in)} \qquad m_{{p = 0.5}} = {keep}")),
             [Part("2_p01", t("ex.part_p01"), TOKENS, DIMS, D["p01"]),
              Part("2_p05", t("ex.part_p05"), TOKENS, DIMS, D["p05"])], lambda: solution_2(D), score)
    N = solve_norm(x_in)
    exercise(3, lambda: (st.caption(x_caption), st.latex(rf"x = {tex(x_in)} \qquad \varepsilon = 10^{{-6}},\ "
                                                          r"\gamma = 1,\ \beta = 0")),
             [Part("3_stats", t("ex.part_stats"), TOKENS, STATS, np.hstack([N["mean"], N["std"]])),
              Part("3_normalized", t("ex.part_normalized"), TOKENS, DIMS, N["normalized"])],
             lambda: solution_3(x_in, N), score)


def attention_and_ffn(W: dict) -> None:
    """Exercises 4 to 6: plain attention, the layer's attention with its weights, and the feed-forward sub-layer."""
    course_z, course_a = course_chain()  # the course's chain, 4 decimals at every step
    z_in, z_caption = carried(3, "3_normalized", course_z)
    A = solve_sdpa(z_in)
    exercise(4, lambda: (st.caption(z_caption), st.latex(rf"Q = K = V = Z = {tex(z_in)}")),
             [Part("4_weights", t("ex.part_weights"), TOKENS, TOKENS, A["weights"]),
              Part("4_out", t("ex.part_out"), TOKENS, DIMS, A["out"])], lambda: solution_4(A), score)
    M = solve_attention(z_in)
    exercise(5, lambda: inputs_5(z_in, z_caption, W),
             [Part("5_weights", t("ex.part_weights"), TOKENS, TOKENS, M["weights"]),
              Part("5_out", t("ex.part_attn_out"), TOKENS, DIMS, M["out"])], lambda: solution_5(M), score)
    x6, x6_caption = carried(1, "1_out", COURSE_EX1)
    a6, a6_caption = carried(5, "5_out", course_a)
    F = solve_ffn(x6, a6)
    exercise(6, lambda: inputs_6(x6, a6, f"{x6_caption} {a6_caption}", W),
             [Part("6_normalized", t("ex.part_ffn_in"), TOKENS, DIMS, F["normalized"]),
              Part("6_out", t("ex.part_ffn_out"), TOKENS, DIMS, F["out"])], lambda: solution_6(F), score)


def questions() -> None:
    """The conceptual questions, each its own fragment."""
    st.header(t("ex.mcq_header"), divider="gray")
    st.markdown(t("ex.mcq_intro"))
    for q, right in QUESTIONS:
        ask(q, right, settings.lang, score)


settings = state.settings()
ss = st.session_state
start(q for q, _ in QUESTIONS)

lang = settings.lang  # the format function gets it now: Streamlit may call it outside the run

score_slot = intro()
part = parts.pick("ex_part", PARTS, label=t("ex.part"), format_func=lambda p: t(f"ex.part_of.{p}", lang))
if part == "embedding":
    embedding_dropout_norm()
elif part == "attention":
    attention_and_ffn(cached(solve.layer_weights)())
else:
    questions()
panels.show_code(course_model, core.Embeddings.forward, dropout_with_mask, core.LayerNorm.forward,
                 core.scaled_dot_product_attention, core.MultiHeadAttention.forward, core.EncoderLayer.forward,
                 _Block.residual, core.FeedForward.forward, trace, wrong_entries)
st.subheader(t("ex.notice_header"))
st.markdown(t("ex.notice_points"))
with score_slot:
    score_box()
