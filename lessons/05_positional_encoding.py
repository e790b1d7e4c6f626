"""Lesson 5: position information (CURRICULUM.md, lesson 5), one part at a time (ui/parts.py).

Why order matters (attention without positions is permutation-equivariant), the naive index and a learned
table, the paper's sinusoidal encoding (table, curves, frequency factors), PE·PEᵀ and its dependence on the
offset only, the √d_model scaling of the embeddings, rotary embeddings (RoPE), and the three side by side.
Every number comes from core.positional and core.scaled_dot_product_attention; token vectors and weights are
seeded stand-ins. The tables, sliders and charts that are not the story live in ui/position_views.py.
"""
import functools
import math

import streamlit as st
import torch

import core
from core import positional
from core.lab import analysis, positions
from ui import charts, links, panels, parts, position_views as views, scenes, state
from ui.i18n import md_escape, number, t
from ui.presentation import prose
from ui.tokens import sentence_tokens

PERMUTATIONS = {"reversed": "pe.perm_reversed", "shuffled": "pe.perm_shuffled"}
PARTS = ("order", "naive", "sinusoidal", "offset", "scale", "rope", "compare")  # label key: pe.part_<code>


def embeddings(tokens: list[str]) -> torch.Tensor:
    """The seeded stand-in token vectors (n, d): they stand for √d_model · embedding."""
    return analysis.toy_embeddings(tokens, settings.d_model, settings.seed).to(settings.device)


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "dog_bites_man": {"pe_perm": "reversed", "cfg_sentence_text": "dog bites man", "pe_part": "order"},
    "short_table": {"pe_learned_len": 3, "cfg_sentence_text": "time flies like an arrow", "cfg_d_model": 64,
                    "pe_part": "naive"},
    "paper_waves": {"cfg_d_model": 512, "pe_pairs": [0, 128, 255], "cfg_sentence_text": "time flies like an arrow",
                    "pe_part": "sinusoidal"},
}


def intro() -> None:
    st.title(t("pe.title"))
    scenes.picker("pe", SCENES)
    prose(t("pe.intro"))
    st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
             r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
    st.latex(r"x_{pos} = \operatorname{dropout}\big(\sqrt{d_{model}}\;E[\text{token}_{pos}] + PE_{pos}\big)")
    prose(t("pe.equation_note"))


@st.fragment
def order_part(tokens: list[str]) -> None:
    """The same attention on the sentence and on a reordered copy: without PE the outputs only move."""
    st.header(t("pe.order_header"))
    prose(t("pe.order_intro"))
    links.control(st.radio, t("pe.perm"), tuple(PERMUTATIONS), format_func=lambda k: t(PERMUTATIONS[k], lang),
                  horizontal=True, setting="pe_perm")
    n, d = len(tokens), settings.d_model
    if n < 2:
        st.info(t("pe.order_one_token"), icon=":material/info:")
        return
    order = positions.permutation(n, ss["pe_perm"], settings.seed)
    moved = [tokens[j] for j in order]
    st.markdown(t("pe.order_sentences", original=md_escape(" ".join(tokens)), moved=md_escape(" ".join(moved))))
    outs, gaps = positions.both_orders(embeddings(tokens), order, settings.seed)
    if moved == tokens:
        st.info(t("pe.order_same_sentence"), icon=":material/info:")
    views.order_outputs(outs, (tokens, moved), cols, d)
    gap_plain, gap_pe = st.columns(2)
    gap_plain.metric(t("pe.gap_plain"), number(gaps["plain"], ".2e"))
    gap_pe.metric(t("pe.gap_pe"), number(gaps["pe"], ".4f"))
    st.markdown(t("pe.order_result", plain=float(gaps["plain"]), pe=float(gaps["pe"])))


@st.fragment
def naive_part(tokens: list[str]) -> None:
    """Adding the index drowns the tokens; a learned table has no row past its length."""
    st.header(t("pe.naive_header"))
    x, d = embeddings(tokens), settings.d_model
    index = positional.index_encoding(len(tokens), d).to(settings.device)  # (n, d): p in every dimension
    panels.matrix_panel(core.to_numpy((x + index)[:, :shown]), title=t("pe.index_title"), key="pe_index",
                        row_labels=tokens, col_labels=cols, max_width=420, caption=t("pe.index_caption"))
    spread = float(x.abs().mean())
    prose(t("pe.index_text", last=views.MAX_POSITIONS - 1, spread=spread,
            ratio=(views.MAX_POSITIONS - 1) / spread))
    st.subheader(t("pe.learned_header"))
    prose(t("pe.learned_intro"))
    length = links.control(st.slider, t("pe.learned_len"), 1, views.MAX_LEARNED, help=t("pe.learned_len_help"),
                           width=420, setting="pe_learned_len")
    table = positions.learned_table(length, d, settings.seed)
    try:
        table(x.cpu())  # (n, d): the rows of the first n positions
        st.success(t("pe.learned_fits", n=len(tokens), L=length), icon=":material/check_circle:")
    except ValueError:  # core refuses positions past the table
        st.warning(t("pe.learned_too_long", n=len(tokens), L=length), icon=":material/block:")
    panels.matrix_panel(core.to_numpy(table.weight[:, :shown]), title=t("pe.learned_title"), key="pe_learned",
                        row_labels=views.position_labels(length), col_labels=cols, max_width=520,
                        caption=t("pe.learned_caption", shown=shown, d=d, params=length * d))


@st.fragment
def sinusoidal_part() -> None:
    """The table as a picture, its exact top-left corner, chosen dimensions as curves and the frequencies."""
    st.header(t("pe.sin_header"))
    prose(t("pe.sin_intro"))
    d = settings.d_model
    P, _ = views.position_sliders(offset=False)
    pe = views.sinusoid(P, d)  # (P, d)
    st.markdown(f"##### {t('pe.heatmap_title', P=P, d=d)}")
    panels.svg_image(charts.picture(pe, x_title=t("pe.dimension"), y_title=t("pe.position"), value_title="PE",
                                    domain=(-1.0, 1.0)))
    st.caption(t("pe.heatmap_caption", P=P, d=d) + " " + t("common.cpu_only"))
    zp, zd = min(P, views.ZOOM_POS), min(d, views.ZOOM_DIMS)
    panels.matrix_panel(pe[:zp, :zd], title=t("pe.zoom_title"), key="pe_zoom", scale="diverging",
                        row_labels=views.position_labels(zp), col_labels=[dim(j=j) for j in range(zd)],
                        caption=t("pe.zoom_caption", rows=zp, cols=zd))
    views.sinusoid_download(P, d, dim)
    views.curves(pe, dim)
    views.frequencies(d)


@st.fragment
def offset_part() -> None:
    """PE·PEᵀ: the dot product of two positions depends on their offset k only."""
    st.header(t("pe.dot_header"))
    st.markdown(t("pe.dot_intro"))
    st.latex(r"PE_{p}\cdot PE_{p+k} = \sum_{i} \cos\!\left(\frac{k}{10000^{2i/d_{model}}}\right)")
    d = settings.d_model
    P, k = views.position_sliders()
    O = positions.offset_dots(P, d, k, views.SAMPLE_P)
    dots = O["dots"]  # (P, P)
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown(f"##### {t('pe.dots_title', P=P)}")
        panels.svg_image(charts.picture(dots, x_title=t("pe.position"), y_title=t("pe.position"), width=220,
                                        height=220, value_title="PE·PE"))
    with right:
        dz = min(P, views.DOT_ZOOM)
        panels.matrix_panel(dots[:dz, :dz], title=t("pe.dots_zoom_title"), key="pe_dots", scale="diverging",
                            row_labels=views.position_labels(dz), col_labels=views.position_labels(dz), max_width=260,
                            caption=t("pe.dots_zoom_caption"))
    series = {t("pe.from_p", p=p): [dots[p, p + j] for j in range(P - p)] for p in sorted({0, P // 4, P // 2})}
    panels.svg_image(charts.lines(range(P), series, x_title=t("pe.offset_axis"), y_title="PE(p)·PE(p+k)"))
    views.offset_table(O, k)
    st.caption(t("pe.offset_caption", k=k, last=P - 1 - k, spread=float(O["spread"])) + " " + t("common.cpu_only"))
    if d % 2:
        st.info(t("pe.odd_d", d=d), icon=":material/info:")


def scale_part(tokens: list[str]) -> None:
    """Why √d_model: at the usual initial scale the embedding would be lost under PE."""
    d = settings.d_model
    st.header(t("pe.scale_header"))
    prose(t("pe.scale_intro", d=d, root=math.sqrt(d)))
    rows = positions.scale_rows(core.to_numpy(embeddings(tokens)))  # per token: norms and cosines
    views.scale_table(rows, tokens)
    st.caption(t("pe.scale_caption") + " " + t("common.cpu_only"))


@st.fragment
def rope_part() -> None:
    """RoPE turns q and k by their positions: their score depends on the offset only."""
    st.header(t("pe.rope_header"))
    prose(t("pe.rope_intro"))
    st.latex(r"\begin{pmatrix} q'_{2i} \\ q'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i"
             r" \\ \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} q_{2i} \\ q_{2i+1} \end{pmatrix},"
             r"\qquad \theta_i = 10000^{-2i/d_k} \qquad q'_p \cdot k'_r = f(q, k, p - r)")
    d, heads = settings.d_model, settings.heads
    d_rope = d // heads if d // heads >= 2 else d
    st.caption(t("pe.rope_dims", d=d_rope, heads=heads) if d_rope == d // heads else t("pe.rope_dims_small", d=d))
    P, k = views.position_sliders()
    R = positions.rotary(P, d_rope, settings.seed, settings.device)
    views.rope_table(R, P, k)
    st.caption(t("pe.rope_table_caption", k=k, plain=float(R.q @ R.k)))
    left, right = st.columns(2, gap="large")
    with left:
        rz = min(P, views.ROPE_ZOOM)
        panels.matrix_panel(R.scores[:rz, :rz], title=t("pe.rope_scores_title"), key="pe_rope_scores",
                            row_labels=views.position_labels(rz), col_labels=views.position_labels(rz),
                            scale="scores", max_width=320, caption=t("pe.rope_scores_caption"))
    with right:
        views.rope_plane(R, P, k, d_rope, dim)


def compare_part() -> None:
    """The three encodings side by side (the learned table with the length chosen in its part)."""
    st.header(t("pe.compare_header"))
    st.table(views.comparison(int(ss["pe_learned_len"]), settings.d_model))
    prose(t("pe.beyond"))


def closing() -> None:
    panels.show_code(positional.sinusoidal_encoding, positional.frequency_factor, positional.index_encoding,
                     positional.LearnedPositionalEncoding, positional.rotary_angles, positional.apply_rotary,
                     core.scaled_dot_product_attention)
    st.subheader(t("pe.notice_header"))
    st.markdown(t("pe.notice_points"))


settings = state.settings()
ss = st.session_state
lang = settings.lang
for name, value in (("pe_positions", 128), ("pe_offset", 4), ("pe_perm", "reversed"), ("pe_learned_len", 16),
                    ("pe_rope_pair", 0)):
    ss.setdefault(name, value)
if ss.get("pe_for_d") != settings.d_model:  # choices that depend on d_model start again from its defaults
    ss["pe_for_d"], ss["pe_dims"], ss["pe_pairs"] = settings.d_model, views.default_dims(settings.d_model), \
        views.default_pairs(settings.d_model)
dim = functools.partial(t, "pe.dim_short", lang)  # format functions get the language now (see ui.sidebar)
shown = min(settings.d_model, views.SHOWN_DIMS)
cols = [dim(j=j) for j in range(shown)]

intro()
tokens = sentence_tokens(settings.seq_len)
part = parts.pick("pe_part", PARTS, label=t("pe.part"), format_func=lambda p: t(f"pe.part_{p}", lang))
{"order": lambda: order_part(tokens), "naive": lambda: naive_part(tokens), "sinusoidal": sinusoidal_part,
 "offset": offset_part, "scale": lambda: scale_part(tokens), "rope": rope_part, "compare": compare_part}[part]()
closing()
