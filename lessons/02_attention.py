"""Lesson 2: queries, keys, values and scaled dot-product attention (CURRICULUM.md, lesson 2).

X = E + PE (n x d_model) -> Q, K, V = X W_Q, X W_K, X W_V (n x d_k) -> softmax(Q Kᵀ / sqrt(d_k)) V, computed by
core.scaled_dot_product_attention. Four parts, one on screen at a time (ui/parts.py, `PARTS`): the projections;
the scores to the output and the asymmetry of Q Kᵀ; one query's dot products dimension by dimension; the scaling
experiment (core.lab.analysis.scaling_experiment, core.lab.saturation). The cached matrices, the capped panels,
bars, metrics and curves that are not the story live in ui/attention_views.py.
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
from ui import attention_views as views, links, panels, parts, scenes, state, tokens
from ui.attention_views import D_KS, DRAWS, N_KEYS, panel
from ui.i18n import md_escape, t
from ui.presentation import prose


PARTS = ("projections", "scores", "query", "scaling")  # the sub-lessons (ui/parts.py), label key qkv.part_<code>
SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "saturation": {"qkv_dk": 512, "qkv_part": "scaling", "qkv_tied": False, "cfg_mask": "none", "cfg_heads": 4},
    "tied": {"qkv_part": "scores", "qkv_tied": True, "qkv_dk": 64, "cfg_mask": "none", "cfg_heads": 4},
    "causal": {"qkv_part": "scores", "cfg_mask": "causal", "qkv_tied": False, "qkv_dk": 64, "cfg_heads": 4},
    "one_head": {"qkv_part": "projections", "cfg_heads": 1, "qkv_tied": False, "qkv_dk": 64, "cfg_mask": "none"},
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
    words = tokens.sentence_tokens(settings.seq_len)
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
        with w_col:  # d_model x d_k cells of a few pixels each: one picture, the numbers a click away
            panel(M[f"W_{name}"], f"qkv_W_{name}", t(f"qkv.W{name}_title"), model_dims, head_dims,
                  t("qkv.W_tied") if tied and name != "V" else None, width=240, picture=True)
        with out_col:
            panel(M[name], f"qkv_{name}", t(f"qkv.{name}_title"), words, head_dims, t(f"qkv.{name}_caption"),
                  width=380)


def scores(M: dict[str, np.ndarray], words: list[str], head_dims: list[str], d_k: int, causal: bool) -> None:
    """Q Kᵀ, scaled, masked (when causal), softmax and output, two a row."""
    st.subheader(t("qkv.scores_header"))
    steps = [("S", "qkv_S", "scores", t("qkv.S_caption")),
             ("S_scaled", "qkv_S_scaled", "scores", t("qkv.S_scaled_caption", root=math.sqrt(d_k), d_k=d_k))]
    if causal:
        steps.append(("S_masked", "qkv_S_masked", "scores", t("qkv.S_masked_caption")))
    row_error = float(np.abs(M["A"].sum(axis=1) - 1).max())
    steps += [("A", "qkv_A", "weights", t("qkv.A_caption", error=row_error)),
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
        asym = t("qkv.asym_none", err=float(np.abs(D).max()))
    else:
        asym = t("qkv.asym_pair", a=md_escape(words[i_max]), b=md_escape(words[j_max]),
                 ab=float(M["S"][i_max, j_max]), ba=float(M["S"][j_max, i_max]))
    asym_col, note_col = st.columns([3, 2], gap="large")
    with asym_col:
        panel(D, "qkv_D", t("qkv.D_title"), words, words, t("qkv.D_caption"), width=340)
    note_col.markdown(asym)


@st.fragment
def one_query(words: list[str], M: dict[str, np.ndarray], d_k: int, causal: bool) -> None:
    """The per-query view: q ⊙ k_j per dimension, the sums, the softmax. A fragment: picking another query
    reruns only this part of the page."""
    n, head_dims = len(words), [f"d{c}" for c in range(d_k)]
    st.subheader(t("qkv.neuron_header"))
    ss["qkv_query"] = ss["qkv_query"] if ss["qkv_query"] < n else 0
    i = links.control(st.selectbox, t("qkv.pick_query"), range(n), format_func=lambda j: f"{j + 1} · {words[j]}",
                      width=320, setting="qkv_query")
    prose(t("qkv.neuron_text", word=md_escape(words[i]), d_k=d_k))
    products = M["Q"][i][None, :] * M["K"]  # (n, d_k): q_i ⊙ k_j, one row per key
    sums = products.sum(axis=1)  # (n,) = row i of Q Kᵀ
    panel(products, "qkv_prod", t("qkv.prod_title", word=md_escape(words[i])), words, head_dims,
          t("qkv.prod_caption"), width=760)
    views.query_row(words, i, sums, M)
    check = t("qkv.neuron_check", err=float(np.abs(sums - M["S"][i]).max()), root=math.sqrt(d_k))
    st.caption(check + (" " + t("qkv.neuron_masked") if causal and i < n - 1 else ""))


def saturation_curves(dk: int, entropies: tuple, C, norms: dict[str, float]) -> None:
    """Entropy and median ‖J‖ as d_k grows, both ways, and the sentence the lesson rests on, at this d_k."""
    views.saturation_charts(entropies, C)
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
            norms[side] = views.scaling_side(side, exp, dk, key_labels)
    scores_pair = core.to_numpy(torch.stack([exp.raw_scores, exp.scaled_scores]))  # (2, N_KEYS)
    panel(scores_pair, "qkv_exp_scores", t("qkv.exp_scores_title", d_k=dk), [t("qkv.raw_row"), t("qkv.scaled_row")],
          key_labels, t("qkv.exp_scores_caption", d_k=dk) + " " + t("common.cpu_only"), width=620)
    saturation_curves(dk, *views.curves(seed), norms)


def code_and_notice(n: int, d_k: int) -> None:
    panels.show_code(qkv_attention, weight_seeds, core.scaled_dot_product_attention, core.softmax,
                     core.sinusoidal_encoding, toy_embeddings, seeded_linear_weights, scaling_experiment, entropy,
                     softmax_jacobian, softmax_jacobian_formula, entropy_by_d_k, saturation_by_d_k, jacobian_size)
    st.subheader(t("qkv.notice_header"))
    st.markdown(t("qkv.notice_roles"))
    st.markdown(t("qkv.notice_cost", n=n, d_k=d_k, products=n * n * d_k, exps=n * n))
    st.markdown(t("qkv.notice_scaling"))


settings = state.settings()
ss = st.session_state
for name, value in (("tied", False), ("query", 0), ("dk", 64)):
    ss.setdefault(f"qkv_{name}", value)
d_k = settings.d_model // settings.heads
causal = settings.mask in ("causal", "both")

intro()
words = inputs(d_k)
M = views.compute(tuple(words), settings.d_model, d_k, settings.seed, causal, bool(ss["qkv_tied"]), settings.device)
model_dims, head_dims = [f"d{c}" for c in range(settings.d_model)], [f"d{c}" for c in range(d_k)]
lang = settings.lang  # the format function gets it now: Streamlit may call it outside the run
part = parts.pick("qkv_part", PARTS, label=t("qkv.part"), format_func=lambda p: t(f"qkv.part_{p}", lang))
if part == "projections":
    projections(M, words, model_dims, head_dims)
elif part == "scores":
    scores(M, words, head_dims, d_k, causal)
    asymmetry(M, words)
elif part == "query":
    one_query(words, M, d_k, causal)
else:
    scaling(settings.seed)
code_and_notice(len(words), d_k)
