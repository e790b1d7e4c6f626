"""Lesson 5: position information (CURRICULUM.md, lesson 5).

Why order matters (attention without positions is permutation-equivariant), the naive index, a learned
table, the paper's sinusoidal encoding (table, curves, frequency factors, PE·PEᵀ, dependence on the offset
only), the √d_model scaling of the embeddings, and rotary embeddings (RoPE). Every number comes from
core.positional and core.scaled_dot_product_attention; token vectors and weights are seeded stand-ins.
"""
import functools
import math

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core import analysis, positional
from ui import charts, links, panels, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose
from ui.tokens import sentence_tokens

MAX_POSITIONS, MAX_LEARNED, MAX_CURVES = 512, 64, 6
SHOWN_DIMS = 8  # dimensions drawn in the panels whose rows are tokens or table positions
ZOOM_POS, ZOOM_DIMS, DOT_ZOOM, ROPE_ZOOM = 24, 16, 10, 16  # exact slices of the big matrices
SAMPLE_P = (0, 1, 2, 5, 10, 50, 100, 200, 300, 500)  # positions p of the "independent of p" tables
PERMUTATIONS = {"reversed": "pe.perm_reversed", "shuffled": "pe.perm_shuffled"}
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


def permutation(n: int, kind: str, seed: int) -> list[int]:
    """New order of the n tokens: reversed, or a seeded shuffle that is never the identity (n >= 2)."""
    if kind == "reversed":
        return list(range(n))[::-1]
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    return order[1:] + order[:1] if order == sorted(order) else order


def attend(x: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
    """Self-attention of the rows of x (n, d) with seeded W_Q, W_K, W_V: (n, d)."""
    w_q, w_k, w_v = weights
    out, _ = core.scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)  # (n, d)
    return out


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def number_table(table: pd.DataFrame, key: str, exact: list[str]) -> None:
    """A table of results with the `exact` columns to 4 decimals."""
    st.dataframe(table, hide_index=True, width="content", key=key,
                 column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in exact})


def full_csv(n: int, d: int, dim_labels: list[str]) -> str:
    return panels.csv_text(panels.numbers_frame(sinusoid(n, d), range(n), dim_labels))


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "dog_bites_man": {"pe_perm": "reversed", "cfg_sentence_text": "dog bites man"},
    "short_table": {"pe_learned_len": 3, "cfg_sentence_text": "time flies like an arrow", "cfg_d_model": 64},
    "paper_waves": {"cfg_d_model": 512, "pe_pairs": [0, 128, 255], "cfg_sentence_text": "time flies like an arrow"},
}

settings = state.settings()
ss = st.session_state
d, seed, device, lang = settings.d_model, settings.seed, settings.device, settings.lang
ss.setdefault("pe_positions", 128)
ss.setdefault("pe_offset", 4)
ss.setdefault("pe_perm", "reversed")
ss.setdefault("pe_learned_len", 16)
ss.setdefault("pe_rope_pair", 0)
if ss.get("pe_for_d") != d:  # choices that depend on d_model start again from its defaults
    ss["pe_for_d"], ss["pe_dims"], ss["pe_pairs"] = d, default_dims(d), default_pairs(d)
dim = functools.partial(t, "pe.dim_short", lang)  # format functions get the language now (see ui.sidebar)
shown = min(d, SHOWN_DIMS)
cols = [dim(j=j) for j in range(shown)]

st.title(t("pe.title"))
scenes.picker("pe", SCENES)
prose(t("pe.intro"))
st.latex(r"PE_{(pos,\,2i)} = \sin\!\left(\frac{pos}{10000^{2i/d_{model}}}\right) \qquad "
         r"PE_{(pos,\,2i+1)} = \cos\!\left(\frac{pos}{10000^{2i/d_{model}}}\right)")
st.latex(r"x_{pos} = \operatorname{dropout}\big(\sqrt{d_{model}}\;E[\text{token}_{pos}] + PE_{pos}\big)")
prose(t("pe.equation_note"))

# ---- 1. why order matters -----------------------------------------------------------------------------
st.header(t("pe.order_header"))
prose(t("pe.order_intro"))
tokens = sentence_tokens(settings.seq_len, "pe")
n = len(tokens)
links.control(st.radio, t("pe.perm"), tuple(PERMUTATIONS), format_func=lambda k: t(PERMUTATIONS[k], lang),
              horizontal=True, setting="pe_perm")
x = analysis.toy_embeddings(tokens, d, seed).to(device)  # (n, d): stands for √d · embedding
pe_n = torch.from_numpy(sinusoid(n, d)).to(device)  # (n, d)
order = permutation(n, ss["pe_perm"], seed) if n > 1 else [0]
moved = [tokens[j] for j in order]
if n < 2:
    st.info(t("pe.order_one_token"), icon=":material/info:")
else:
    st.markdown(t("pe.order_sentences", original=md_escape(" ".join(tokens)), moved=md_escape(" ".join(moved))))
    weights = [analysis.seeded_linear_weights(d, d, seed + j).to(device) for j in (1, 2, 3)]
    back = torch.argsort(torch.tensor(order, device=device))  # undoes the permutation
    outs, gaps = {}, {}
    for name, add in (("plain", torch.zeros_like(pe_n)), ("pe", pe_n)):  # (n, d) each
        outs[name] = (attend(x + add, weights), attend(x[order] + add, weights))  # (n, d), (n, d)
        gaps[name] = float((outs[name][1][back] - outs[name][0]).abs().max())
    if moved == tokens:
        st.info(t("pe.order_same_sentence"), icon=":material/info:")
    for name, *titles in OUTPUTS:
        left, right = st.columns(2, gap="large")
        for slot, out, labels, title in zip((left, right), outs[name], (tokens, moved), titles):
            with slot:
                panels.matrix_panel(out[:, :shown].cpu().numpy(), title=t(title), key=title.replace(".", "_"),
                                    row_labels=labels, col_labels=cols,
                                    caption=t("pe.out_caption", shown=shown, d=d) if shown < d else None,
                                    max_width=300)
    gap_plain, gap_pe = st.columns(2)
    gap_plain.metric(t("pe.gap_plain"), f"{gaps['plain']:.2e}")
    gap_pe.metric(t("pe.gap_pe"), f"{gaps['pe']:.4f}")
    st.markdown(t("pe.order_result", plain=f"{gaps['plain']:.1e}", pe=f"{gaps['pe']:.4f}"))

# ---- 2. naive ideas: the index, a learned table ---------------------------------------------------------
st.header(t("pe.naive_header"))
index = positional.index_encoding(n, d).to(device)  # (n, d): p in every dimension
panels.matrix_panel((x + index)[:, :shown].cpu().numpy(), title=t("pe.index_title"), key="pe_index",
                    row_labels=tokens, col_labels=cols, max_width=420,
                    caption=t("pe.index_caption"))
spread = float(x.abs().mean())
prose(t("pe.index_text", last=MAX_POSITIONS - 1, spread=f"{spread:.2f}",
        ratio=f"{(MAX_POSITIONS - 1) / spread:.0f}"))

st.subheader(t("pe.learned_header"))
prose(t("pe.learned_intro"))
learned_len = links.control(st.slider, t("pe.learned_len"), 1, MAX_LEARNED, help=t("pe.learned_len_help"), width=420,
                            setting="pe_learned_len")
table = positional.LearnedPositionalEncoding(d, learned_len)
with torch.no_grad():  # untrained: seeded random values stand in for the trained ones
    table.weight.copy_(torch.randn(learned_len, d, generator=torch.Generator().manual_seed(seed + 4)))
try:
    table(x.cpu())  # (n, d): the rows of the first n positions
    st.success(t("pe.learned_fits", n=n, L=learned_len), icon=":material/check_circle:")
except ValueError:  # core refuses positions past the table
    st.warning(t("pe.learned_too_long", n=n, L=learned_len), icon=":material/block:")
panels.matrix_panel(table.weight.detach()[:, :shown].numpy(), title=t("pe.learned_title"), key="pe_learned",
                    row_labels=[t("pe.pos_short", p=p) for p in range(learned_len)],
                    col_labels=cols, max_width=520,
                    caption=t("pe.learned_caption", shown=shown, d=d, params=learned_len * d))

# ---- 3. the sinusoidal encoding ---------------------------------------------------------------------------
st.header(t("pe.sin_header"))
prose(t("pe.sin_intro"))
c1, c2 = st.columns(2, gap="large")
with c1:
    P = links.control(st.slider, t("pe.positions"), 2, MAX_POSITIONS, help=t("pe.positions_help"),
                      setting="pe_positions")
ss["pe_offset"] = min(int(ss["pe_offset"]), P - 1)
with c2:
    k = links.control(st.slider, t("pe.offset"), 0, P - 1, help=t("pe.offset_help"), setting="pe_offset", identity=(P,))
pe = sinusoid(P, d)  # (P, d)
st.markdown(f"##### {t('pe.heatmap_title', P=P, d=d)}")
st.altair_chart(charts.image_heatmap(pe, x_title=t("pe.dimension"), y_title=t("pe.position"), value_title="PE",
                                     domain=(-1.0, 1.0)), width="content")
st.caption(t("pe.heatmap_caption", P=P, d=d))
zp, zd = min(P, ZOOM_POS), min(d, ZOOM_DIMS)
panels.matrix_panel(pe[:zp, :zd], title=t("pe.zoom_title"), key="pe_zoom", scale="diverging",
                    row_labels=[t("pe.pos_short", p=p) for p in range(zp)],
                    col_labels=[dim(j=j) for j in range(zd)], caption=t("pe.zoom_caption", rows=zp, cols=zd))
full = functools.partial(full_csv, P, d, [dim(j=j) for j in range(d)])  # the CSV is made only when clicked
st.download_button(t("pe.download_full", P=P, d=d), full, file_name=f"pe_{P}x{d}.csv", mime="text/csv",
                   on_click="ignore", icon=":material/download:", key="pe_full_csv")

st.subheader(t("pe.curves_header"))
chosen = links.control(st.multiselect, t("pe.dims"), list(range(d)), max_selections=MAX_CURVES,
                       format_func=lambda j: dim(j=j), help=t("pe.dims_help", max=MAX_CURVES), setting="pe_dims",
                       identity=(d,))
if chosen:
    factors = {j: float(positional.frequency_factor(j // 2, d)) for j in chosen}
    series = {t("pe.curve_name", dim=dim(j=j), fn="sin" if j % 2 == 0 else "cos",
                wavelength=f"{2 * math.pi * factors[j]:.1f}"): pe[:, j] for j in sorted(chosen)}
    st.altair_chart(charts.lines(range(P), series, x_title=t("pe.position"), y_title="PE"), width="content")
else:
    st.info(t("pe.no_dims"), icon=":material/info:")

st.subheader(t("pe.factor_header"))
prose(t("pe.factor_intro"))
pairs = links.control(st.multiselect, t("pe.pairs"), list(range(d // 2)), help=t("pe.pairs_help"), setting="pe_pairs",
                      identity=(d,))
pairs = sorted(pairs)
factor = positional.frequency_factor(torch.tensor(pairs, dtype=torch.int64), d).numpy()  # (pairs,) float64
exact = [t("pe.col_exponent"), t("pe.col_factor"), t("pe.col_wavelength")]
number_table(pd.DataFrame({t("pe.col_i"): pairs, t("pe.col_dims"): [f"{2 * i}, {2 * i + 1}" for i in pairs],
                           exact[0]: [2 * i / d for i in pairs], exact[1]: factor, exact[2]: 2 * math.pi * factor}),
             "pe_factor_table", exact)

st.subheader(t("pe.dot_header"))
st.markdown(t("pe.dot_intro"))
st.latex(r"PE_{p}\cdot PE_{p+k} = \sum_{i} \cos\!\left(\frac{k}{10000^{2i/d_{model}}}\right)")
dots = pe.astype(np.float64) @ pe.T.astype(np.float64)  # (P, P)
left, right = st.columns(2, gap="large")
with left:
    st.markdown(f"##### {t('pe.dots_title', P=P)}")
    st.altair_chart(charts.image_heatmap(dots, x_title=t("pe.position"), y_title=t("pe.position"), width=320,
                                         height=320, value_title="PE·PE"), width="content")
with right:
    dz = min(P, DOT_ZOOM)
    labels = [t("pe.pos_short", p=p) for p in range(dz)]
    panels.matrix_panel(dots[:dz, :dz], title=t("pe.dots_zoom_title"), key="pe_dots", row_labels=labels,
                        col_labels=labels, scale="diverging", max_width=420, caption=t("pe.dots_zoom_caption"))
series = {t("pe.from_p", p=p): [dots[p, p + j] for j in range(P - p)] for p in sorted({0, P // 4, P // 2})}
st.altair_chart(charts.lines(range(P), series, x_title=t("pe.offset_axis"), y_title="PE(p)·PE(p+k)"),
                width="content")
omega = 1.0 / positional.frequency_factor(torch.arange(d // 2), d).numpy()  # (d // 2,) float64
formula = float(np.cos(k * omega).sum())  # over the complete (sin, cos) pairs
starts = [p for p in SAMPLE_P if p + k < P]
exact = ["PE(p)·PE(p+k)", t("pe.col_formula")]
number_table(pd.DataFrame({"p": starts, "p + k": [p + k for p in starts], exact[0]: [dots[p, p + k] for p in starts],
                           exact[1]: formula}), "pe_offset_table", exact)
spread_p = max(dots[p, p + k] for p in range(P - k)) - min(dots[p, p + k] for p in range(P - k))
st.caption(t("pe.offset_caption", k=k, last=P - 1 - k, spread=f"{spread_p:.1e}"))
if d % 2:
    st.info(t("pe.odd_d", d=d), icon=":material/info:")

# ---- 4. why √d_model ------------------------------------------------------------------------------------
st.header(t("pe.scale_header"))
prose(t("pe.scale_intro", d=d, root=f"{math.sqrt(d):.4f}"))
small = x.cpu().numpy() / math.sqrt(d)  # (n, d): an embedding row at the usual initial scale, std 1/√d
pe_rows = sinusoid(n, d).astype(np.float64)  # (n, d)
scaled = math.sqrt(d) * small
norm = functools.partial(np.linalg.norm, axis=1)
scale_table = pd.DataFrame({t("pe.col_token"): tokens, "p": range(n), "‖E‖": norm(small),
                            "‖√d·E‖": norm(scaled), "‖PE‖": norm(pe_rows),
                            t("pe.col_cos_plain"): cosines(small + pe_rows, small),
                            t("pe.col_cos_scaled"): cosines(scaled + pe_rows, small)})
m1, m2 = st.columns(2)
m1.metric(t("pe.col_cos_plain"), f"{scale_table[t('pe.col_cos_plain')].mean():.4f}")
m2.metric(t("pe.col_cos_scaled"), f"{scale_table[t('pe.col_cos_scaled')].mean():.4f}")
number_table(scale_table, "pe_scale_table", list(scale_table.columns[2:]))
st.caption(t("pe.scale_caption"))

# ---- 5. rotary embeddings ---------------------------------------------------------------------------------
st.header(t("pe.rope_header"))
prose(t("pe.rope_intro"))
st.latex(r"\begin{pmatrix} q'_{2i} \\ q'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos p\theta_i & -\sin p\theta_i \\"
         r" \sin p\theta_i & \cos p\theta_i \end{pmatrix} \begin{pmatrix} q_{2i} \\ q_{2i+1} \end{pmatrix},"
         r"\qquad \theta_i = 10000^{-2i/d_k} \qquad q'_p \cdot k'_r = f(q, k, p - r)")
d_k = d // settings.heads
d_rope = d_k if d_k >= 2 else d
st.caption(t("pe.rope_dims", d=d_rope, heads=settings.heads) if d_rope == d_k else t("pe.rope_dims_small", d=d))
g = torch.Generator().manual_seed(seed + 5)
q, kv = torch.randn(d_rope, generator=g), torch.randn(d_rope, generator=g)  # (d_k,) each
q_rot = positional.apply_rotary(q.expand(P, d_rope).to(device)).cpu()  # (P, d_k): row p is q at position p
k_rot = positional.apply_rotary(kv.expand(P, d_rope).to(device)).cpu()  # (P, d_k)
scores = (q_rot.double() @ k_rot.double().T).numpy()  # (P, P): q at row position, k at column position
pe_k = torch.from_numpy(sinusoid(P, d_rope)).double()  # (P, d_k)
added = ((q.double() + pe_k) @ (kv.double() + pe_k).T).numpy()  # (P, P): the additive alternative
exact = [t("pe.col_rope"), t("pe.col_added")]
number_table(pd.DataFrame({"p": starts, "p + k": [p + k for p in starts], exact[0]: [scores[p, p + k] for p in starts],
                           exact[1]: [added[p, p + k] for p in starts]}), "pe_rope_table", exact)
st.caption(t("pe.rope_table_caption", k=k, plain=f"{float(q @ kv):.4f}"))
left, right = st.columns(2, gap="large")
with left:
    rz = min(P, ROPE_ZOOM)
    labels = [t("pe.pos_short", p=p) for p in range(rz)]
    panels.matrix_panel(scores[:rz, :rz], title=t("pe.rope_scores_title"), key="pe_rope_scores", row_labels=labels,
                        col_labels=labels, scale="diverging", max_width=320, caption=t("pe.rope_scores_caption"))
with right:
    ss["pe_rope_pair"] = min(int(ss["pe_rope_pair"]), d_rope // 2 - 1)
    i = links.control(st.number_input, t("pe.rope_pair"), 0, d_rope // 2 - 1, step=1, width=240, setting="pe_rope_pair",
                      identity=(d_rope,))
    theta = 1.0 / float(positional.frequency_factor(i, d_rope))
    steps = [p for p in range(4) if p + k < P]
    points = [tuple(q_rot[p, 2 * i: 2 * i + 2].tolist()) for p in steps] + \
             [tuple(k_rot[p + k, 2 * i: 2 * i + 2].tolist()) for p in steps]
    names = [f"q@{p}" for p in steps] + [f"k@{p + k}" for p in steps]
    colours = [charts.PALETTE["query"]] * len(steps) + [charts.PALETTE["key"]] * len(steps)
    st.altair_chart(charts.plane_arrows(points, names, colours, x_title=dim(j=2 * i), y_title=dim(j=2 * i + 1),
                                        circles=[float(v[2 * i: 2 * i + 2].norm()) for v in (q, kv)],
                                        title=t("pe.rope_plane_title", i=i)), width="content")
    st.caption(t("pe.rope_plane_caption", theta=f"{theta:.4f}", degrees=f"{math.degrees(theta):.2f}", k=k))

# ---- 6. side by side ----------------------------------------------------------------------------------------
st.header(t("pe.compare_header"))
kinds = (t("pe.compare_aspect"), t("pe.kind_sinusoidal"), t("pe.kind_learned"), t("pe.kind_rope"))
compare = pd.DataFrame([[t(key, params=learned_len * d, L=learned_len, d=d) for key in row] for row in COMPARISON],
                       columns=kinds)
st.table(compare.set_index(t("pe.compare_aspect")))
prose(t("pe.beyond"))

panels.show_code(positional.sinusoidal_encoding, positional.frequency_factor, positional.index_encoding,
                 positional.LearnedPositionalEncoding, positional.rotary_angles, positional.apply_rotary,
                 core.scaled_dot_product_attention)

st.subheader(t("pe.notice_header"))
st.markdown(t("pe.notice_points"))
