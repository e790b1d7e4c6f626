"""Lesson 5: position information (CURRICULUM.md, lesson 5), one part at a time (ui/parts.py).

Why order matters (attention without positions is permutation-equivariant), the naive index and a learned
table, the paper's sinusoidal encoding (table, curves, frequency factors), PE·PEᵀ and its dependence on the
offset only, the √d_model scaling of the embeddings, rotary embeddings (RoPE), and the three side by side.
Every number comes from core.positional and core.scaled_dot_product_attention; token vectors and weights are
seeded stand-ins.
"""
import functools
import math

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core import positional
from core.lab import analysis, positions
from ui import charts, links, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose
from ui.tokens import sentence_tokens

MAX_POSITIONS, MAX_LEARNED, MAX_CURVES = 512, 64, 6
SHOWN_DIMS = 8  # dimensions drawn in the panels whose rows are tokens or table positions
ZOOM_POS, ZOOM_DIMS, DOT_ZOOM, ROPE_ZOOM = 24, 16, 10, 16  # exact slices of the big matrices
SAMPLE_P = (0, 1, 2, 5, 10, 50, 100, 200, 300, 500)  # positions p of the "independent of p" tables
PERMUTATIONS = {"reversed": "pe.perm_reversed", "shuffled": "pe.perm_shuffled"}
PARTS = ("order", "naive", "sinusoidal", "offset", "scale", "rope", "compare")  # label key: pe.part_<code>
OUTPUTS = (("plain", "pe.out_plain_original", "pe.out_plain_moved"), ("pe", "pe.out_pe_original", "pe.out_pe_moved"))
COMPARISON = (  # (aspect, sinusoidal, learned, RoPE)
    ("pe.aspect_params", "pe.sin_params", "pe.learned_params", "pe.rope_params"),
    ("pe.aspect_extrapolation", "pe.sin_extrapolation", "pe.learned_extrapolation", "pe.rope_extrapolation"),
    ("pe.aspect_where", "pe.sin_where", "pe.learned_where", "pe.rope_where"),
    ("pe.aspect_relative", "pe.sin_relative", "pe.learned_relative", "pe.rope_relative"),
    ("pe.aspect_used_by", "pe.sin_used_by", "pe.learned_used_by", "pe.rope_used_by"),
)


@st.cache_data(max_entries=32)
def sinusoid(n: int, d: int) -> np.ndarray:
    return positional.sinusoidal_encoding(n, d).numpy()  # (n, d) float32, as the model uses it


def default_dims(d: int) -> list[int]:
    return sorted({0, 1, 2 * (d // 8), 2 * (d // 4)})


def default_pairs(d: int) -> list[int]:
    return sorted({0, d // 4, d // 2 - 1})


def number_table(table: pd.DataFrame, key: str, exact: list[str]) -> None:
    """A table of results with the `exact` columns to 4 decimals."""
    st.dataframe(table, hide_index=True, width="content", key=key,
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in exact})


def full_csv(n: int, d: int, dim_labels: list[str]) -> str:
    return panels.csv_text(panels.numbers_frame(sinusoid(n, d), range(n), dim_labels))


def embeddings(tokens: list[str]) -> torch.Tensor:
    """The seeded stand-in token vectors (n, d): they stand for √d_model · embedding."""
    return analysis.toy_embeddings(tokens, settings.d_model, settings.seed).to(settings.device)


def position_labels(count: int) -> list[str]:
    return [t("pe.pos_short", p=p) for p in range(count)]


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


def position_sliders(offset: bool = True) -> tuple[int, int]:
    """The number of positions P and the offset k (the sinusoidal, PE·PEᵀ and RoPE parts share them)."""
    c1, c2 = st.columns(2, gap="large")
    P = links.control(c1.slider, t("pe.positions"), 2, MAX_POSITIONS, help=t("pe.positions_help"),
                      setting="pe_positions")
    ss["pe_offset"] = min(int(ss["pe_offset"]), P - 1)
    if offset:
        links.control(c2.slider, t("pe.offset"), 0, P - 1, help=t("pe.offset_help"), setting="pe_offset",
                      identity=(P,))
    return P, int(ss["pe_offset"])


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
    for name, *titles in OUTPUTS:
        left, right = st.columns(2, gap="large")
        for slot, out, labels, title in zip((left, right), outs[name], (tokens, moved), titles):
            with slot:
                panels.matrix_panel(core.to_numpy(out[:, :shown]), title=t(title), key=title.replace(".", "_"),
                                    row_labels=labels, col_labels=cols,
                                    caption=t("pe.out_caption", shown=shown, d=d) if shown < d else None,
                                    max_width=300)
    gap_plain, gap_pe = st.columns(2)
    gap_plain.metric(t("pe.gap_plain"), f"{gaps['plain']:.2e}")
    gap_pe.metric(t("pe.gap_pe"), f"{gaps['pe']:.4f}")
    st.markdown(t("pe.order_result", plain=f"{gaps['plain']:.1e}", pe=f"{gaps['pe']:.4f}"))


@st.fragment
def naive_part(tokens: list[str]) -> None:
    """Adding the index drowns the tokens; a learned table has no row past its length."""
    st.header(t("pe.naive_header"))
    x, d = embeddings(tokens), settings.d_model
    index = positional.index_encoding(len(tokens), d).to(settings.device)  # (n, d): p in every dimension
    panels.matrix_panel(core.to_numpy((x + index)[:, :shown]), title=t("pe.index_title"), key="pe_index",
                        row_labels=tokens, col_labels=cols, max_width=420, caption=t("pe.index_caption"))
    spread = float(x.abs().mean())
    prose(t("pe.index_text", last=MAX_POSITIONS - 1, spread=f"{spread:.2f}",
            ratio=f"{(MAX_POSITIONS - 1) / spread:.0f}"))
    st.subheader(t("pe.learned_header"))
    prose(t("pe.learned_intro"))
    length = links.control(st.slider, t("pe.learned_len"), 1, MAX_LEARNED, help=t("pe.learned_len_help"),
                           width=420, setting="pe_learned_len")
    table = positions.learned_table(length, d, settings.seed)
    try:
        table(x.cpu())  # (n, d): the rows of the first n positions
        st.success(t("pe.learned_fits", n=len(tokens), L=length), icon=":material/check_circle:")
    except ValueError:  # core refuses positions past the table
        st.warning(t("pe.learned_too_long", n=len(tokens), L=length), icon=":material/block:")
    panels.matrix_panel(core.to_numpy(table.weight[:, :shown]), title=t("pe.learned_title"), key="pe_learned",
                        row_labels=position_labels(length), col_labels=cols, max_width=520,
                        caption=t("pe.learned_caption", shown=shown, d=d, params=length * d))


@st.fragment
def sinusoidal_part() -> None:
    """The table as a picture, its exact top-left corner, chosen dimensions as curves and the frequencies."""
    st.header(t("pe.sin_header"))
    prose(t("pe.sin_intro"))
    d = settings.d_model
    P, _ = position_sliders(offset=False)
    pe = sinusoid(P, d)  # (P, d)
    st.markdown(f"##### {t('pe.heatmap_title', P=P, d=d)}")
    st.altair_chart(charts.image_heatmap(pe, x_title=t("pe.dimension"), y_title=t("pe.position"), value_title="PE",
                                         domain=(-1.0, 1.0)), width="content")
    st.caption(t("pe.heatmap_caption", P=P, d=d) + " " + t("common.cpu_only"))
    zp, zd = min(P, ZOOM_POS), min(d, ZOOM_DIMS)
    panels.matrix_panel(pe[:zp, :zd], title=t("pe.zoom_title"), key="pe_zoom", scale="diverging",
                        row_labels=position_labels(zp), col_labels=[dim(j=j) for j in range(zd)],
                        caption=t("pe.zoom_caption", rows=zp, cols=zd))
    full = functools.partial(full_csv, P, d, [dim(j=j) for j in range(d)])  # the CSV is made only when clicked
    st.download_button(t("pe.download_full", P=P, d=d), full, file_name=f"pe_{P}x{d}.csv", mime="text/csv",
                       on_click="ignore", icon=":material/download:", key="pe_full_csv")
    curves(pe)
    frequencies(d)


def curves(pe: np.ndarray) -> None:
    """The chosen dimensions of PE (P, d) as curves over the positions."""
    st.subheader(t("pe.curves_header"))
    P, d = pe.shape
    chosen = links.control(st.multiselect, t("pe.dims"), list(range(d)), max_selections=MAX_CURVES,
                           format_func=lambda j: dim(j=j), help=t("pe.dims_help", max=MAX_CURVES), setting="pe_dims",
                           identity=(d,))
    if not chosen:
        st.info(t("pe.no_dims"), icon=":material/info:")
        return
    factors = {j: float(positional.frequency_factor(j // 2, d)) for j in chosen}
    series = {t("pe.curve_name", dim=dim(j=j), fn="sin" if j % 2 == 0 else "cos",
                wavelength=f"{2 * math.pi * factors[j]:.1f}"): pe[:, j] for j in sorted(chosen)}
    st.altair_chart(charts.lines(range(P), series, x_title=t("pe.position"), y_title="PE"), width="content")


def frequencies(d: int) -> None:
    """The frequency factor and wavelength of the chosen pairs of dimensions."""
    st.subheader(t("pe.factor_header"))
    prose(t("pe.factor_intro"))
    pairs = sorted(links.control(st.multiselect, t("pe.pairs"), list(range(d // 2)), help=t("pe.pairs_help"),
                                 setting="pe_pairs", identity=(d,)))
    factor = positional.frequency_factor(torch.tensor(pairs, dtype=torch.int64), d).numpy()  # (pairs,) float64
    exact = [t("pe.col_exponent"), t("pe.col_factor"), t("pe.col_wavelength")]
    number_table(pd.DataFrame({t("pe.col_i"): pairs, t("pe.col_dims"): [f"{2 * i}, {2 * i + 1}" for i in pairs],
                               exact[0]: [2 * i / d for i in pairs], exact[1]: factor,
                               exact[2]: 2 * math.pi * factor}), "pe_factor_table", exact)


@st.fragment
def offset_part() -> None:
    """PE·PEᵀ: the dot product of two positions depends on their offset k only."""
    st.header(t("pe.dot_header"))
    st.markdown(t("pe.dot_intro"))
    st.latex(r"PE_{p}\cdot PE_{p+k} = \sum_{i} \cos\!\left(\frac{k}{10000^{2i/d_{model}}}\right)")
    d = settings.d_model
    P, k = position_sliders()
    O = positions.offset_dots(P, d, k, SAMPLE_P)
    dots = O["dots"]  # (P, P)
    left, right = st.columns(2, gap="large")
    left.markdown(f"##### {t('pe.dots_title', P=P)}")
    left.altair_chart(charts.image_heatmap(dots, x_title=t("pe.position"), y_title=t("pe.position"), width=320,
                                           height=320, value_title="PE·PE"), width="content")
    with right:
        dz = min(P, DOT_ZOOM)
        panels.matrix_panel(dots[:dz, :dz], title=t("pe.dots_zoom_title"), key="pe_dots", scale="diverging",
                            row_labels=position_labels(dz), col_labels=position_labels(dz), max_width=420,
                            caption=t("pe.dots_zoom_caption"))
    series = {t("pe.from_p", p=p): [dots[p, p + j] for j in range(P - p)] for p in sorted({0, P // 4, P // 2})}
    st.altair_chart(charts.lines(range(P), series, x_title=t("pe.offset_axis"), y_title="PE(p)·PE(p+k)"),
                    width="content")
    exact = ["PE(p)·PE(p+k)", t("pe.col_formula")]
    number_table(pd.DataFrame({"p": O["p"], "p + k": [p + k for p in O["p"]], exact[0]: O["at_p"],
                               exact[1]: O["formula"]}), "pe_offset_table", exact)  # over the complete pairs
    st.caption(t("pe.offset_caption", k=k, last=P - 1 - k, spread=f"{O['spread']:.1e}") + " " + t("common.cpu_only"))
    if d % 2:
        st.info(t("pe.odd_d", d=d), icon=":material/info:")


def scale_part(tokens: list[str]) -> None:
    """Why √d_model: at the usual initial scale the embedding would be lost under PE."""
    d = settings.d_model
    st.header(t("pe.scale_header"))
    prose(t("pe.scale_intro", d=d, root=f"{math.sqrt(d):.4f}"))
    rows = positions.scale_rows(core.to_numpy(embeddings(tokens)))  # per token: norms and cosines
    table = pd.DataFrame({t("pe.col_token"): tokens, "p": range(len(tokens)), "‖E‖": rows["E"],
                          "‖√d·E‖": rows["scaled_E"], "‖PE‖": rows["PE"], t("pe.col_cos_plain"): rows["cos_plain"],
                          t("pe.col_cos_scaled"): rows["cos_scaled"]})
    m1, m2 = st.columns(2)
    m1.metric(t("pe.col_cos_plain"), f"{table[t('pe.col_cos_plain')].mean():.4f}")
    m2.metric(t("pe.col_cos_scaled"), f"{table[t('pe.col_cos_scaled')].mean():.4f}")
    number_table(table, "pe_scale_table", list(table.columns[2:]))
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
    P, k = position_sliders()
    R = positions.rotary(P, d_rope, settings.seed, settings.device)
    exact = [t("pe.col_rope"), t("pe.col_added")]
    fits = [p for p in SAMPLE_P if p + k < P]
    number_table(pd.DataFrame({"p": fits, "p + k": [p + k for p in fits],
                               exact[0]: [R.scores[p, p + k] for p in fits],
                               exact[1]: [R.added[p, p + k] for p in fits]}), "pe_rope_table", exact)
    st.caption(t("pe.rope_table_caption", k=k, plain=f"{float(R.q @ R.k):.4f}"))
    left, right = st.columns(2, gap="large")
    with left:
        rz = min(P, ROPE_ZOOM)
        panels.matrix_panel(R.scores[:rz, :rz], title=t("pe.rope_scores_title"), key="pe_rope_scores",
                            row_labels=position_labels(rz), col_labels=position_labels(rz), scale="diverging",
                            max_width=320, caption=t("pe.rope_scores_caption"))
    with right:
        rope_plane(R, P, k, d_rope)


def rope_plane(R: positions.Rotary, P: int, k: int, d_rope: int) -> None:
    """One pair of dimensions of q and k as arrows, turned a step further at every position."""
    ss["pe_rope_pair"] = min(int(ss["pe_rope_pair"]), d_rope // 2 - 1)
    i = links.control(st.number_input, t("pe.rope_pair"), 0, d_rope // 2 - 1, step=1, width=240,
                      setting="pe_rope_pair", identity=(d_rope,))
    theta = 1.0 / float(positional.frequency_factor(i, d_rope))
    steps = [p for p in range(4) if p + k < P]
    points = R.pair(i, steps, k)
    names = [f"q@{p}" for p in steps] + [f"k@{p + k}" for p in steps]
    colours = [charts.PALETTE["query"]] * len(steps) + [charts.PALETTE["key"]] * len(steps)
    st.altair_chart(charts.plane_arrows(points, names, colours, x_title=dim(j=2 * i), y_title=dim(j=2 * i + 1),
                                        circles=[float(v[2 * i: 2 * i + 2].norm()) for v in (R.q, R.k)],
                                        title=t("pe.rope_plane_title", i=i)), width="content")
    st.caption(t("pe.rope_plane_caption", theta=f"{theta:.4f}", degrees=f"{math.degrees(theta):.2f}", k=k))


def compare_part() -> None:
    """The three encodings side by side (the learned table with the length chosen in its part)."""
    st.header(t("pe.compare_header"))
    kinds = (t("pe.compare_aspect"), t("pe.kind_sinusoidal"), t("pe.kind_learned"), t("pe.kind_rope"))
    length, d = int(ss["pe_learned_len"]), settings.d_model
    compare = pd.DataFrame([[t(key, params=length * d, L=length, d=d) for key in row] for row in COMPARISON],
                           columns=kinds)
    st.table(compare.set_index(t("pe.compare_aspect")))
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
    ss["pe_for_d"], ss["pe_dims"], ss["pe_pairs"] = settings.d_model, default_dims(settings.d_model), \
        default_pairs(settings.d_model)
dim = functools.partial(t, "pe.dim_short", lang)  # format functions get the language now (see ui.sidebar)
shown = min(settings.d_model, SHOWN_DIMS)
cols = [dim(j=j) for j in range(shown)]

intro()
tokens = sentence_tokens(settings.seq_len, "pe")
part = parts.pick("pe_part", PARTS, label=t("pe.part"), format_func=lambda p: t(f"pe.part_{p}", lang))
{"order": lambda: order_part(tokens), "naive": lambda: naive_part(tokens), "sinusoidal": sinusoidal_part,
 "offset": offset_part, "scale": lambda: scale_part(tokens), "rope": rope_part, "compare": compare_part}[part]()
closing()
