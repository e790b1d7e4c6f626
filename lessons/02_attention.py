"""Lesson 2: queries, keys, values and scaled dot-product attention (CURRICULUM.md, lesson 2).

X = E + PE (n x d_model) -> Q, K, V = X W_Q, X W_K, X W_V (n x d_k) -> softmax(Q Kᵀ / sqrt(d_k)) V, computed by
core.scaled_dot_product_attention; then the asymmetry of Q Kᵀ, one query's dot products dimension by dimension,
and the scaling experiment (core.lab.analysis.scaling_experiment, core.lab.saturation).
"""
import math

import numpy as np
import streamlit as st
import torch

import core
from core.lab.analysis import (PROJECTIONS, entropy, qkv_attention, scaling_experiment, seeded_linear_weights,
                               toy_embeddings, weight_seeds)
from core.lab.saturation import (SATURATED, entropy_by_d_k, jacobian_size, saturation_by_d_k, softmax_jacobian,
                                 softmax_jacobian_formula)
from ui import charts, links, panels, scenes, state, tokens
from ui.i18n import md_escape, t
from ui.presentation import prose

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


def thousands(value: int) -> str:
    """1234567 -> "1 234 567" with narrow no-break spaces: read the same way in English and Spanish."""
    return f"{value:,}".replace(",", "\u202f")


def panel(matrix: np.ndarray, key: str, title: str, rows: list[str], cols: list[str], caption: str = "",
          scale=None, width: int = 300) -> None:
    """A matrix panel that draws at most ROW_CAP rows and CELL_CAP cells; a bigger matrix shows its top-left
    slice, says so, and offers the whole matrix as CSV."""
    r = min(len(rows), ROW_CAP)
    c = min(len(cols), max(1, CELL_CAP // r))
    if (r, c) != matrix.shape:
        caption = " ".join(filter(None, [caption, t("qkv.slice", r=r, c=c, rows=len(rows), cols=len(cols))]))
    panels.matrix_panel(matrix[:r, :c], title=title, key=key, row_labels=rows[:r], col_labels=cols[:c],
                        scale=scale, caption=caption or None, max_width=width)
    if (r, c) != matrix.shape:
        full = lambda: panels.csv_text(panels.numbers_frame(matrix, rows, cols))  # noqa: E731 (made when clicked)
        st.download_button(t("qkv.full_csv"), full, type="tertiary", file_name=f"{key}_full.csv", mime="text/csv",
                           key=f"{key}_full", on_click="ignore", icon=":material/table:")


@st.fragment
def one_query(words: list[str], M: dict[str, np.ndarray], d_k: int, causal: bool) -> None:
    """The per-query view: q ⊙ k_j per dimension, the sums, the softmax. A fragment: picking another query
    reruns only this part of the page."""
    n, head_dims = len(words), [f"d{c}" for c in range(d_k)]
    st.subheader(t("qkv.neuron_header"))
    ss["qkv_query"] = ss["qkv_query"] if ss["qkv_query"] < n else 0
    i = links.control(st.selectbox, t("qkv.pick_query"), range(n), format_func=lambda j: f"{j + 1} · {words[j]}",
                      width=320, setting="qkv_query", identity=tuple(words))
    prose(t("qkv.neuron_text", word=md_escape(words[i]), d_k=d_k))
    products = M["Q"][i][None, :] * M["K"]  # (n, d_k): q_i ⊙ k_j, one row per key
    sums = products.sum(axis=1)  # (n,) = row i of Q Kᵀ
    panel(products, "qkv_prod", t("qkv.prod_title", word=md_escape(words[i])), words, head_dims,
          t("qkv.prod_caption"), width=760)
    if n <= MAX_BARS:
        sums_col, soft_col = st.columns(2, gap="large")
        sums_col.altair_chart(charts.bars(sums, words, color=charts.PALETTE["query"], domain=None,
                                          title=t("qkv.sums_title", word=words[i]), label_title=t("qkv.key"),
                                          value_title=t("qkv.sum")), width="content")
        soft_col.altair_chart(charts.bars(M["A"][i], words, color=charts.PALETTE["highlight"],
                                          title=t("qkv.softmax_title", word=words[i]), label_title=t("qkv.key"),
                                          value_title=t("qkv.weight")), width="content")
    else:  # 64 bars would be 2000 px tall: one compact panel of the same numbers instead
        row = np.stack([sums, M["S_scaled"][i], M["A"][i]])  # (3, n)
        panel(row, "qkv_row", t("qkv.row_panel_title", word=md_escape(words[i])),
              [t("qkv.sum"), t("qkv.scaled_sum"), t("qkv.weight")], words, t("qkv.row_panel_caption"), width=760)
    check = t("qkv.neuron_check", err=f"{np.abs(sums - M['S'][i]).max():.1e}", root=f"{math.sqrt(d_k):.4f}")
    st.caption(check + (" " + t("qkv.neuron_masked") if causal and i < n - 1 else ""))


def scaling_side(side: str, exp, dk: int, key_labels: list[str]) -> float:
    """One side of the experiment (raw or scaled): its metrics and softmax row; returns this query's ‖J‖."""
    s = getattr(exp, f"{side}_scores").double()  # (N_KEYS,)
    p = core.softmax(s)  # (N_KEYS,)
    jac = softmax_jacobian(s)  # (N_KEYS, N_KEYS), by autograd
    st.markdown(f"##### {t(f'qkv.{side}_header', d_k=dk)}")
    values = ((t("qkv.variance"), f"{getattr(exp, f'{side}_variance'):.2f}"),
              (t("qkv.entropy"), f"{float(entropy(p)):.4f}"), (t("qkv.max_weight"), f"{float(p.max()):.4f}"),
              (t("qkv.jacobian"), f"{float(jac.norm()):.2e}"))
    for slot, (label, value) in zip([*st.columns(2), *st.columns(2)], values):  # two rows of two
        slot.metric(label, value)
    st.altair_chart(charts.bars(p.numpy(), key_labels, color=charts.PALETTE["highlight"], title=t("qkv.row_title"),
                                label_title=t("qkv.key"), value_title=t("qkv.weight")), width="content")
    st.caption(t("qkv.jacobian_check", err=f"{float((jac - softmax_jacobian_formula(p)).abs().max()):.1e}"))
    return float(jac.norm())


def saturation_curves(dk: int, entropies: tuple, C, norms: dict[str, float]) -> None:
    """Entropy and median ‖J‖ as d_k grows, both ways, and the sentence the lesson rests on, at this d_k."""
    colours, x = [charts.PALETTE["key"], charts.PALETTE["query"], charts.PALETTE["masked"]], np.log2(D_KS)
    names = (t("qkv.curve_raw"), t("qkv.curve_scaled"))
    entropy_col, jacobian_col = st.columns(2, gap="large")
    entropy_col.altair_chart(charts.lines(x, {**dict(zip(names, (e.numpy() for e in entropies))),
                                              t("qkv.curve_max"): [math.log(N_KEYS)] * len(D_KS)},
                                          x_title=t("qkv.log_dk"), y_title=t("qkv.entropy_axis"),
                                          title=t("qkv.curve_title"), colors=colours, width=320), width="content")
    jacobian_col.altair_chart(charts.lines(x, dict(zip(names, (C.raw_median.numpy(), C.scaled_median.numpy()))),
                                           x_title=t("qkv.log_dk"), y_title=t("qkv.jacobian_axis"),
                                           title=t("qkv.jacobian_curve_title", draws=DRAWS), colors=colours[:2],
                                           width=320),
                              width="content")
    i = D_KS.index(dk)
    prose(t("qkv.gradient_text", d_k=dk, draws=DRAWS, n_keys=N_KEYS, raw=float(C.raw_median[i]),
            scaled=float(C.scaled_median[i]), raw_share=t("qkv.percent", value=round(100 * float(C.raw_saturated[i]))),
            scaled_share=t("qkv.percent", value=round(100 * float(C.scaled_saturated[i]))), threshold=SATURATED,
            one_raw=norms["raw"], one_scaled=norms["scaled"]))  # floats: t() writes the reader's decimal mark


@st.fragment
def scaling(seed: int) -> None:
    """The scaling experiment: one random query against N_KEYS keys, with and without 1/sqrt(d_k), then many
    queries. A fragment: moving the d_k slider reruns only this part of the page."""
    st.subheader(t("qkv.scaling_header"))
    prose(t("qkv.scaling_text"))
    dk = links.control(st.select_slider, t("qkv.dk"), D_KS, help=t("qkv.dk_help"), width=520, setting="qkv_dk")
    exp = scaling_experiment(dk, N_KEYS, seed=seed)
    key_labels = [f"k{j + 1}" for j in range(N_KEYS)]
    norms = {}
    for slot, side in zip(st.columns(2, gap="large"), ("raw", "scaled")):
        with slot:
            norms[side] = scaling_side(side, exp, dk, key_labels)
    scores_pair = core.to_numpy(torch.stack([exp.raw_scores, exp.scaled_scores]))  # (2, N_KEYS)
    panel(scores_pair, "qkv_exp_scores", t("qkv.exp_scores_title", d_k=dk), [t("qkv.raw_row"), t("qkv.scaled_row")],
          key_labels, t("qkv.exp_scores_caption", d_k=dk) + " " + t("common.cpu_only"), width=620)
    saturation_curves(dk, *curves(seed), norms)


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "saturation": {"qkv_dk": 512, "qkv_tied": False, "cfg_mask": "none", "cfg_heads": 4},
    "tied": {"qkv_tied": True, "qkv_dk": 64, "cfg_mask": "none", "cfg_heads": 4},
    "causal": {"cfg_mask": "causal", "qkv_tied": False, "qkv_dk": 64, "cfg_heads": 4},
    "one_head": {"cfg_heads": 1, "qkv_tied": False, "qkv_dk": 64, "cfg_mask": "none"},
}


def intro() -> None:
    """Title, scenes and the attention equation."""
    st.title(t("qkv.title"))
    scenes.picker("qkv", SCENES)
    prose(t("qkv.intro"))
    st.latex(r"Q = X W_Q,\quad K = X W_K,\quad V = X W_V \qquad "
             r"\mathrm{Attention}(Q, K, V) = \mathrm{softmax}\!\left(\frac{Q K^{\top}}{\sqrt{d_k}}\right) V")
    prose(t("qkv.equations"))


def inputs(d_k: int) -> list[str]:
    """The sentence (returns its tokens), the tie between W_K and W_Q, the sizes, and what the sidebar's mask does."""
    st.subheader(t("qkv.input_header"))
    words = tokens.sentence_tokens(settings.seq_len, "qkv")
    links.control(st.toggle, t("qkv.tied"), help=t("qkv.tied_help"), setting="qkv_tied")
    st.info(t("qkv.sizes", d_model=settings.d_model, heads=settings.heads, d_k=d_k, n=len(words)),
            icon=":material/straighten:")
    if settings.mask != "none":
        st.info(t(f"qkv.mask_{settings.mask}", mask=t(f"mask.{settings.mask}")), icon=":material/visibility_off:")
    return words


def projections(M: dict[str, np.ndarray], words: list[str], model_dims: list[str], head_dims: list[str]) -> None:
    """X, then each projection's matrix W beside what it makes of X."""
    tied = bool(ss["qkv_tied"])
    prose(t("qkv.x_text", seed=settings.seed))
    panel(M["X"], "qkv_X", t("qkv.X_title"), words, model_dims, t("qkv.X_caption"), width=760)
    st.subheader(t("qkv.projections_header"))
    prose(t("qkv.projections_text", **{f"s{name}": s for name, s in weight_seeds(settings.seed, tied).items()}))
    for name in PROJECTIONS:  # one row per projection: the matrix W, then what it makes of X
        w_col, out_col = st.columns([1, 2], gap="large")
        with w_col:
            panel(M[f"W_{name}"], f"qkv_W_{name}", t(f"qkv.W{name}_title"), model_dims, head_dims,
                  t("qkv.W_tied") if tied and name != "V" else None, width=240)
        with out_col:
            panel(M[name], f"qkv_{name}", t(f"qkv.{name}_title"), words, head_dims, t(f"qkv.{name}_caption"),
                  width=520)


def scores(M: dict[str, np.ndarray], words: list[str], head_dims: list[str], d_k: int, causal: bool) -> None:
    """Q Kᵀ, scaled, masked (when causal), softmax and output, two a row."""
    st.subheader(t("qkv.scores_header"))
    steps = [("S", "qkv_S", None, t("qkv.S_caption")),
             ("S_scaled", "qkv_S_scaled", None, t("qkv.S_scaled_caption", root=f"{math.sqrt(d_k):.4f}", d_k=d_k))]
    if causal:
        steps.append(("S_masked", "qkv_S_masked", None, t("qkv.S_masked_caption")))
    row_error = float(np.abs(M["A"].sum(axis=1) - 1).max())
    steps += [("A", "qkv_A", "weights", t("qkv.A_caption", error=f"{row_error:.1e}")),
              ("O", "qkv_O", None, t("qkv.O_caption"))]
    for start in range(0, len(steps), 2):
        for slot, (name, key, scale, caption) in zip(st.columns(2, gap="large"), steps[start:start + 2]):
            with slot:
                panel(M[name], key, t(f"qkv.{name}_title"), words, head_dims if name == "O" else words, caption,
                      scale=scale, width=340)


def asymmetry(M: dict[str, np.ndarray], words: list[str]) -> None:
    """Q Kᵀ minus its transpose: zero only when W_K = W_Q."""
    st.subheader(t("qkv.asym_header"))
    prose(t("qkv.asym_text"))
    D = M["D"]
    i_max, j_max = np.unravel_index(np.abs(D).argmax(), D.shape)
    if ss["qkv_tied"] or len(words) == 1 or D[i_max, j_max] == 0:
        asym = t("qkv.asym_none", err=f"{np.abs(D).max():.1e}")
    else:
        asym = t("qkv.asym_pair", a=md_escape(words[i_max]), b=md_escape(words[j_max]),
                 ab=f"{M['S'][i_max, j_max]:.4f}", ba=f"{M['S'][j_max, i_max]:.4f}")
    asym_col, note_col = st.columns([3, 2], gap="large")
    with asym_col:
        panel(D, "qkv_D", t("qkv.D_title"), words, words, t("qkv.D_caption"), width=340)
    note_col.markdown(asym)


def code_and_notice(n: int, d_k: int) -> None:
    panels.show_code(qkv_attention, weight_seeds, core.scaled_dot_product_attention, core.softmax,
                     core.sinusoidal_encoding, toy_embeddings, seeded_linear_weights, scaling_experiment, entropy,
                     softmax_jacobian, softmax_jacobian_formula, entropy_by_d_k, saturation_by_d_k, jacobian_size)
    st.subheader(t("qkv.notice_header"))
    st.markdown(t("qkv.notice_roles"))
    st.markdown(t("qkv.notice_cost", n=n, d_k=d_k, products=thousands(n * n * d_k), exps=thousands(n * n)))
    st.markdown(t("qkv.notice_scaling"))


settings = state.settings()
ss = st.session_state
for name, value in (("tied", False), ("query", 0), ("dk", 64)):
    ss.setdefault(f"qkv_{name}", value)
d_k = settings.d_model // settings.heads
causal = settings.mask in ("causal", "both")

intro()
words = inputs(d_k)
M = compute(tuple(words), settings.d_model, d_k, settings.seed, causal, bool(ss["qkv_tied"]), settings.device)
model_dims, head_dims = [f"d{c}" for c in range(settings.d_model)], [f"d{c}" for c in range(d_k)]
projections(M, words, model_dims, head_dims)
scores(M, words, head_dims, d_k, causal)
asymmetry(M, words)
one_query(words, M, d_k, causal)
scaling(settings.seed)
code_and_notice(len(words), d_k)
