"""Lesson 11: the course's six worked exercises and its conceptual questions (CURRICULUM.md, lesson 11).

Every solution is computed live by core.lab.exercises.course_model() (core.create_model with the course's weights),
read through core's hook points with core.hooks.trace: the embedding, the first LayerNorm, the attention and the
second sub-layer of the pre-norm encoder layer. Answers are typed into tables and checked with a tolerance.
"""
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core.lab.exercises import SOURCE_TOKENS, course_model, dropout_with_mask, wrong_entries
from core.hooks import trace
from core.layers import _Block
from ui import links, panels, state
from ui.i18n import current_language, md_escape, t
from ui.presentation import prose

TOKENS = ("t0", "t1", "t2")  # the source tokens [2, 2, 1] at positions 0, 1, 2
DIMS, STATS, HIDDEN = ("d1", "d2"), ("μ", "s"), tuple(f"h{k}" for k in range(1, 9))
COURSE_EX1 = ((0.4513, -0.1872), (1.2927, -0.6469), (0.9508, 0.8249))  # the course's printed result of exercise 1
KEEP_05 = ((0.0, 1.0), (0.0, 1.0), (0.0, 0.0))  # exercise 2, p = 0.5: first column and last row dropped
TOL_OPTIONS = (0.0005, 0.001, 0.005, 0.01)
EXERCISES = (1, 2, 3, 4, 5, 6)
QUESTIONS = (("residuals", 1), ("prenorm", 2), ("decoder", 0), ("training", 3), ("padding", 1), ("inference", 2),
             ("recipe", 0))  # (id, index of the right option); keys ex.q_<id>, its options _o<k>, explanations _e<k>
OPTIONS = range(4)


@dataclass(frozen=True)
class Part:
    """One table of an answer: its state key, title, labels and the right values."""
    key: str
    title: str
    rows: tuple
    cols: tuple
    expected: np.ndarray


def numpy(x: torch.Tensor) -> np.ndarray:
    return x.detach().double().numpy().copy()


@st.cache_data(max_entries=8, show_spinner=False)
def solve_embedding() -> dict[str, np.ndarray]:
    """Exercise 1 through model.src_embed: X, sqrt(2) X (hook_embed), PE and the result (hook_out)."""
    model = course_model()
    src = torch.tensor([SOURCE_TOKENS])  # (1, 3)
    with torch.no_grad():
        out, seen = trace(model.src_embed, lambda: model.src_embed(src))  # (1, 3, 2)
        pe = model.src_embed.positional(out)  # (3, 2)
        x = model.src_embed.embed(src)  # (1, 3, 2)
    return {"X": numpy(x[0]), "scaled": numpy(seen["hook_embed"][0]), "pe": numpy(pe), "out": numpy(out[0])}


@st.cache_data(max_entries=32, show_spinner=False)
def solve_dropout(x: tuple) -> dict[str, np.ndarray]:
    """Exercise 2: p = 0.1 with nothing dropped, p = 0.5 with the course's mask."""
    xt = torch.tensor(x, dtype=torch.float64)  # (3, 2)
    keep = torch.tensor(KEEP_05, dtype=torch.float64)  # (3, 2)
    return {"p01": numpy(dropout_with_mask(xt, torch.ones_like(xt), 0.1)), "keep": numpy(keep),
            "p05": numpy(dropout_with_mask(xt, keep, 0.5))}


@st.cache_data(max_entries=32, show_spinner=False)
def solve_norm(x: tuple) -> dict[str, np.ndarray]:
    """Exercise 3 through encoder.layers[0].norm_self_attn: mean, unbiased std, normalized."""
    norm = course_model().encoder.layers[0].norm_self_attn
    with torch.no_grad():
        _, seen = trace(norm, lambda: norm(torch.tensor(x, dtype=torch.float64)))
    return {name.removeprefix("hook_"): numpy(v) for name, v in seen.items()}


@st.cache_data(max_entries=32, show_spinner=False)
def solve_sdpa(z: tuple) -> dict[str, np.ndarray]:
    """Exercise 4: core.scaled_dot_product_attention(Z, Z, Z) seen through the layer's attention hook points."""
    attn = course_model().encoder.layers[0].self_attn
    zt = torch.tensor(z, dtype=torch.float64)  # (3, 2)
    with torch.no_grad():
        (out, _), seen = trace(attn, lambda: core.scaled_dot_product_attention(zt, zt, zt, hooks=attn))
    return {"scores": numpy(seen["hook_scores"]), "weights": numpy(seen["hook_weights"]), "out": numpy(out)}


@st.cache_data(max_entries=32, show_spinner=False)
def solve_attention(z: tuple) -> dict[str, np.ndarray]:
    """Exercise 5: the layer's one-head self-attention on Z; every name is a hook point of self_attn."""
    attn = course_model().encoder.layers[0].self_attn
    zt = torch.tensor([z], dtype=torch.float64)  # (1, 3, 2)
    with torch.no_grad():
        _, seen = trace(attn, lambda: attn(zt, zt, zt))
    return {name.removeprefix("hook_"): numpy(v[0, 0] if v.dim() == 4 else v[0]) for name, v in seen.items()}


@st.cache_data(max_entries=32, show_spinner=False)
def solve_ffn(x: tuple, a: tuple) -> dict[str, np.ndarray]:
    """Exercise 6: x1 = x + attention output (the first residual), then the layer's norm_ff and ff."""
    layer = course_model().encoder.layers[0]
    x1 = torch.tensor(x, dtype=torch.float64) + torch.tensor(a, dtype=torch.float64)  # (3, 2) residual
    with torch.no_grad():
        _, seen = trace(layer, lambda: layer.ff(layer.norm_ff(x1)))
    found = {name.replace(".hook_", "_"): numpy(v) for name, v in seen.items()}
    return {"resid": numpy(x1), "mean": found["norm_ff_mean"], "std": found["norm_ff_std"],
            "normalized": found["norm_ff_normalized"], "hidden": found["ff_hidden"], "out": found["ff_out"]}


@st.cache_data(max_entries=2, show_spinner=False)
def whole_layer() -> dict[str, np.ndarray]:
    """The same layer run in one go by core.run_with_trace from the tokens (no rounding between steps)."""
    _, cache = core.run_with_trace(course_model(), torch.tensor([SOURCE_TOKENS]), torch.tensor([[1]]))
    return {name: numpy(cache[f"encoder.layers.0.{name}"][0]) for name in ("hook_resid_mid", "ff.hook_out")}


def fmt(v: float, digits: int = 4) -> str:
    s = f"{v:.{digits}f}"
    return s[1:] if s.startswith("-") and float(s) == 0 else s  # no "-0.0000"


def tex(m, digits: int = 4) -> str:
    """A matrix (or a vector, as one row) as a LaTeX bmatrix with 4 decimals."""
    rows = np.atleast_2d(np.asarray(m, dtype=float))
    body = r" \\ ".join(" & ".join(fmt(v, digits) for v in row) for row in rows)
    return rf"\begin{{bmatrix}} {body} \end{{bmatrix}}"


def read_cells(df: pd.DataFrame) -> tuple[np.ndarray, list[tuple[int, int, str]]]:
    """An answer table as floats (NaN where empty) and its unreadable cells [(row, col, text)]."""
    values, bad = np.full(df.shape, np.nan), []
    for i in range(df.shape[0]):
        for j in range(df.shape[1]):
            v = df.iat[i, j]
            if v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip()):
                continue  # empty: only an issue when the answer is checked
            try:
                f = float(v.strip().replace(",", ".")) if isinstance(v, str) else float(v)
            except (TypeError, ValueError):
                f = np.nan
            if np.isfinite(f):
                values[i, j] = f
            else:
                bad.append((i, j, str(v)[:20]))
    return values, bad


def as_text(df: pd.DataFrame) -> pd.DataFrame:
    """Every cell as typed text ("" when empty): the table a text-column editor can start from again."""
    return df.astype(object).map(lambda v: "" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v))


def cell_name(part: Part, i: int, j: int) -> str:
    return t("ex.cell", row=i + 1, label=part.rows[i], col=j + 1, clabel=part.cols[j])


def answer_editor(part: Part) -> None:
    """A fixed-size table to type an answer into; what is typed survives reruns, page and language switches."""
    key = f"ex_ans_{part.key}"
    empty = pd.DataFrame("", index=list(part.rows), columns=list(part.cols), dtype=object)
    ss.setdefault(f"{key}_table", empty)
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
    for i, j, text in read_cells(edited)[1]:
        st.warning(t("ex.not_a_number", where=cell_name(part, i, j), text=md_escape(text)), icon=":material/error:")


def own_answer(key: str) -> np.ndarray | None:
    """The user's complete answer under `key`, or None if it has empty or unreadable cells."""
    table = ss.get(f"ex_ans_{key}_table")
    if table is None:
        return None
    values, bad = read_cells(table)
    return None if bad or np.isnan(values).any() else values


def carried(n: int, key: str, course: np.ndarray) -> tuple[tuple, str]:
    """The input an exercise builds on: the course's result (default) or the user's own answer, and a caption."""
    if ss["ex_own"]:
        own = own_answer(key)
        if own is not None:
            return tuple(map(tuple, own)), t("ex.from_you", n=n)
        return tuple(map(tuple, course)), t("ex.own_missing", n=n)
    return tuple(map(tuple, course)), t("ex.from_course", n=n)


def check(n: int, parts: list[Part]) -> None:
    """Compare every part with its expected values; store what is wrong (not the right values) and the score."""
    tol, report = float(ss["ex_tol"]), []
    for part in parts:
        values, _ = read_cells(ss[f"ex_ans_{part.key}_table"])  # unreadable cells are NaN, like empty ones
        empty = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.isnan(values)))]
        filled = np.where(np.isnan(values), part.expected, values)  # empty cells are reported, not compared
        wrong = [(i, j, float(values[i, j]), d) for i, j, d in wrong_entries(filled, part.expected, tol)]
        report.append({"empty": empty, "wrong": wrong})
    right = all(not r["empty"] and not r["wrong"] for r in report)
    ss["ex_checks"][n] = {"tol": tol, "parts": report, "right": right}
    if n not in ss["ex_revealed"]:
        ss["ex_results"][n] = right


def feedback(n: int, parts: list[Part]) -> None:
    result = ss["ex_checks"].get(n)
    if result is None:
        return
    tol = f"±{result['tol']:g}"
    lines = []
    for part, r in zip(parts, result["parts"]):
        for i, j in r["empty"]:
            lines.append(t("ex.cell_empty", part=part.title, where=cell_name(part, i, j)))
        for i, j, value, diff in r["wrong"]:
            lines.append(t("ex.cell_high" if diff > 0 else "ex.cell_low", part=part.title,
                           where=cell_name(part, i, j), value=fmt(value)))
    if result["right"]:
        st.success(t("ex.all_right", tol=tol), icon=":material/check_circle:")
    else:
        st.error(t("ex.some_wrong", tol=tol, n=len(lines)) + "\n\n" + "\n".join(f"- {x}" for x in lines),
                 icon=":material/cancel:")
    if n in ss["ex_revealed"] and not ss["ex_results"].get(n):
        st.caption(t("ex.after_reveal"))


@st.fragment
def exercise(n: int, draw_inputs, parts: list[Part], draw_solution) -> None:
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
        ss["ex_revealed"].add(n)
    feedback(n, parts)
    if n in ss["ex_revealed"]:
        with st.expander(t("ex.solution"), expanded=True, icon=":material/lightbulb:"):
            draw_solution()


def panel(m: np.ndarray, title: str, key: str, rows=TOKENS, cols=DIMS, caption: str | None = None) -> None:
    panels.matrix_panel(m, title=title, key=f"ex_{key}", row_labels=rows, col_labels=cols, caption=caption,
                        show_numbers=True, max_width=260)


def reset_score() -> None:
    ss["ex_results"], ss["ex_checks"], ss["ex_mcq"], ss["ex_revealed"] = {}, {}, {}, set()


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
    steps = ((M["scores"], t("ex.scores_qk_title"), "e5_scores", TOKENS),
             (M["weights"], t("ex.weights_title"), "e5_weights", TOKENS),
             (M["heads"], t("ex.heads_title"), "e5_heads", DIMS), (M["out"], t("ex.attn_out_title"), "e5_out", DIMS))
    for pair in (steps[:2], steps[2:]):
        for col, (m, title, key, cols) in zip(st.columns(2), pair):
            with col:
                panel(m, title, key, cols=cols)
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
    panel(F["hidden"], t("ex.hidden_title"), "e6_hidden", cols=HIDDEN)
    gap = float(np.abs(whole_layer()["ff.hook_out"] - F["out"]).max())
    st.info(t("ex.e6_note", gap=f"{gap:.1e}"), icon=":material/info:")


@st.fragment
def ask(q: str, right: int) -> None:
    """One conceptual question: a radio with nothing picked, Check, then every option explained. A fragment."""
    lang = settings.lang
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
    links.control(st.select_slider, t("ex.tolerance"), TOL_OPTIONS, format_func=lambda v: f"±{v:g}",
                  help=t("ex.tolerance_help"), setting="ex_tol")


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


def layer_weights() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The course layer's weights and biases by the exercises' names (Q, K, V, O, and the FFN's 1 and 2)."""
    layer = course_model().encoder.layers[0]
    return {name: (numpy(mod.weight), numpy(mod.bias)) for name, mod in (
        ("Q", layer.self_attn.q_proj), ("K", layer.self_attn.k_proj), ("V", layer.self_attn.v_proj),
        ("O", layer.self_attn.out_proj), ("1", layer.ff.linear1), ("2", layer.ff.linear2))}


def embedding_dropout_norm() -> None:
    """Exercises 1 to 3: the embedding, dropout on its result and the first LayerNorm."""
    E1 = solve_embedding()
    exercise(1, lambda: st.latex(rf"\text{{tokens}} = [2, 2, 1] \qquad X = {tex(E1['X'])}"),
             [Part("1_out", t("ex.part_embedded"), TOKENS, DIMS, E1["out"])], lambda: solution_1(E1))
    x_in, x_caption = carried(1, "1_out", np.array(COURSE_EX1))
    D = solve_dropout(x_in)
    exercise(2, lambda: (st.caption(x_caption), st.latex(rf"x = {tex(x_in)} \qquad m_{{p = 0.5}} = {tex(KEEP_05, 0)}")),
             [Part("2_p01", t("ex.part_p01"), TOKENS, DIMS, D["p01"]),
              Part("2_p05", t("ex.part_p05"), TOKENS, DIMS, D["p05"])], lambda: solution_2(D))
    N = solve_norm(x_in)
    exercise(3, lambda: (st.caption(x_caption), st.latex(rf"x = {tex(x_in)} \qquad \varepsilon = 10^{{-6}},\ "
                                                          r"\gamma = 1,\ \beta = 0")),
             [Part("3_stats", t("ex.part_stats"), TOKENS, STATS, np.hstack([N["mean"], N["std"]])),
              Part("3_normalized", t("ex.part_normalized"), TOKENS, DIMS, N["normalized"])],
             lambda: solution_3(x_in, N))


def attention_and_ffn(W: dict) -> None:
    """Exercises 4 to 6: plain attention, the layer's attention with its weights, and the feed-forward sub-layer."""
    course_z = np.round(solve_norm(COURSE_EX1)["normalized"], 4)  # the course's chain, 4 decimals at every step
    course_a = np.round(solve_attention(tuple(map(tuple, course_z)))["out"], 4)
    z_in, z_caption = carried(3, "3_normalized", course_z)
    A = solve_sdpa(z_in)
    exercise(4, lambda: (st.caption(z_caption), st.latex(rf"Q = K = V = Z = {tex(z_in)}")),
             [Part("4_weights", t("ex.part_weights"), TOKENS, TOKENS, A["weights"]),
              Part("4_out", t("ex.part_out"), TOKENS, DIMS, A["out"])], lambda: solution_4(A))
    M = solve_attention(z_in)
    exercise(5, lambda: inputs_5(z_in, z_caption, W),
             [Part("5_weights", t("ex.part_weights"), TOKENS, TOKENS, M["weights"]),
              Part("5_out", t("ex.part_attn_out"), TOKENS, DIMS, M["out"])], lambda: solution_5(M))
    x6, x6_caption = carried(1, "1_out", np.array(COURSE_EX1))
    a6, a6_caption = carried(5, "5_out", course_a)
    F = solve_ffn(x6, a6)
    exercise(6, lambda: inputs_6(x6, a6, f"{x6_caption} {a6_caption}", W),
             [Part("6_normalized", t("ex.part_ffn_in"), TOKENS, DIMS, F["normalized"]),
              Part("6_out", t("ex.part_ffn_out"), TOKENS, DIMS, F["out"])], lambda: solution_6(F))


def questions() -> None:
    """The conceptual questions, each its own fragment."""
    st.header(t("ex.mcq_header"), divider="gray")
    st.markdown(t("ex.mcq_intro"))
    for q, right in QUESTIONS:
        ask(q, right)


settings = state.settings()
ss = st.session_state
for name, value in (("ex_tol", 0.001), ("ex_own", False), ("ex_results", {}), ("ex_checks", {}), ("ex_mcq", {}),
                    ("ex_revealed", set())):
    ss.setdefault(name, value)
for q, _ in QUESTIONS:
    ss.setdefault(f"ex_q_{q}", None)

score_slot = intro()
embedding_dropout_norm()
attention_and_ffn(layer_weights())
questions()
panels.show_code(course_model, core.Embeddings.forward, dropout_with_mask, core.LayerNorm.forward,
                 core.scaled_dot_product_attention, core.MultiHeadAttention.forward, core.EncoderLayer.forward,
                 _Block.residual, core.FeedForward.forward, trace, wrong_entries)
st.subheader(t("ex.notice_header"))
st.markdown(t("ex.notice_points"))
with score_slot:
    score_box()
