"""Lesson 4: multi-head attention (CURRICULUM.md, lesson 4).

X (1, n, d_model) -> Q, K, V split into h heads (1, h, n, d_k) -> attention per head -> concat (1, n, d_model)
-> W_O, all by one core.MultiHeadAttention read through its hook points.
"""
import numpy as np
import pandas as pd
import streamlit as st

import core
import core.lab.analysis
import core.lab.heads
from ui import charts, links, panels, parts, scenes, state, tables
from ui.i18n import md_escape, number, t
from ui.panels import matrix_panel as panel
from ui.presentation import prose
from ui.tokens import sentence_tokens

PAD = "[PAD]"  # the padding token's label; its id is core.PAD_ID
FACET_CELLS = 4096  # cells drawn in the small multiples of the heads (a 64 x 64 head: a ~530 kB SVG image)
MAX_LINES, THRESHOLD = 4000, 0.05  # head view: lines drawn, and the smallest weight that gets a line
PARTS = ("heads", "inside")  # the sub-lessons (ui/parts.py), label key mha.part_<code>: one is drawn at a time


@st.cache_data(max_entries=64, show_spinner=False)
def compute(tokens: tuple[str, ...], n_pad: int, d_model: int, heads: int, seed: int, mask_kind: str,
            device: str) -> dict:
    """Every tensor the page shows, as numpy (core.lab.heads.multi_head), cached per setting."""
    return core.lab.heads.multi_head(tokens, n_pad, d_model, heads, seed, mask_kind, device)


def facet_columns(n: int) -> int:
    """Panels per row so the small multiples fit the page (each panel is 2/3 of a heatmap's cells, see ui.charts)."""
    panel_width = max(2, min(52, 440 // n)) * 2 // 3 * n + 40
    return max(1, min(4, 800 // panel_width))  # 800 px: four panels of n = 5 drew 878 px, past 1280 x 720


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "eight_heads": {"mha_part": "heads", "mha_view_heads": [0, 1, 2, 3, 4, 5, 6, 7], "cfg_d_model": 64,
                    "cfg_heads": 8},
    "one_head": {"mha_part": "heads", "mha_view_heads": [0], "mha_head": 0, "cfg_d_model": 64, "cfg_heads": 1},
    "causal": {"mha_part": "heads", "cfg_mask": "causal", "cfg_d_model": 64, "cfg_heads": 4,
               "mha_view_heads": [0, 1, 2, 3]},
    "paper": {"mha_part": "heads", "cfg_d_model": 512, "cfg_heads": 8, "mha_view_heads": [0, 1, 2, 3, 4, 5, 6, 7]},
}


def intro() -> None:
    """Title, scenes and the two equations of multi-head attention."""
    st.title(t("mha.title"))
    scenes.picker("mha", SCENES)
    prose(t("mha.intro"))
    st.latex(r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W^O,"
             r"\qquad d_k = \frac{d_{\mathrm{model}}}{h}")
    st.latex(r"\mathrm{head}_i = \mathrm{softmax}\!\Big(\frac{Q_i K_i^{\top}}{\sqrt{d_k}} + M\Big) V_i,"
             r"\qquad Q_i = X W_i^Q,\quad K_i = X W_i^K,\quad V_i = X W_i^V")
    prose(t("mha.equations"))


def controls(d_model: int, h: int, d_k: int) -> list[str]:
    """The sentence, then the split d_model = h × d_k (d_model, h and n are the sidebar's settings: a change there
    reruns the whole lesson). Returns the sentence's tokens."""
    st.subheader(t("mha.controls_header"))
    tokens = sentence_tokens(settings.seq_len)
    st.markdown(t("mha.split_caption", d_model=d_model, h=h, d_k=d_k, mask=t(f"mask.{settings.mask}")))
    st.caption(t("common.sizes_in_sidebar", section=t("sidebar.lesson_settings")))
    return tokens


def steps(R: dict, labels: list[str], dims: list[str]) -> None:
    """The input X, then every step from X to the output with its code and its live shape."""
    prose(t("mha.input_text"))
    panel(R["x"], title=t("mha.X_title"), key="mha_X", row_labels=labels, col_labels=dims, caption=t("mha.X_caption"))
    st.subheader(t("mha.steps_header"))
    prose(t("mha.steps_intro"))
    header = f"| {t('mha.col_step')} | {t('mha.col_code')} | {t('mha.col_symbolic')} | {t('mha.col_shape')} |"
    st.markdown("\n".join([header, "|---|---|---|---|", *(
        f"| {t(f'mha.step_{s}')} | `{code}` | `{symbolic}` | **{R['shapes'][s]}** |"
        for s, code, symbolic in core.lab.heads.STEPS)]))


@st.fragment
def all_heads(R: dict, labels: list[str], head_names: list[str]) -> None:
    """Every chosen head's weights side by side, and the head view; picking heads reruns this section only."""
    st.subheader(t("mha.heads_header"))
    h, n = len(head_names), len(labels)
    ss.setdefault("mha_view_heads", list(range(min(h, 4))))
    kept = [k for k in ss["mha_view_heads"] if k < h]
    ss["mha_view_heads"] = kept if kept or not ss["mha_view_heads"] else list(range(min(h, 4)))
    lang = settings.lang
    chosen = sorted(links.control(st.multiselect, t("mha.pick_heads"), list(range(h)),
                                  format_func=lambda k: t("mha.head", lang, k=k + 1), help=t("mha.pick_heads_help"),
                                  setting="mha_view_heads"))
    if not chosen:
        st.info(t("mha.no_heads"), icon=":material/visibility_off:")
        return
    facet_heads = chosen[:max(1, FACET_CELLS // (n * n))]
    if len(facet_heads) < len(chosen):
        st.caption(t("mha.facet_capped", shown=len(facet_heads), chosen=len(chosen)))
    panels.svg_image(charts.facet_svg([R["weights"][k] for k in facet_heads], [head_names[k] for k in facet_heads],
                                      labels, labels, scale="weights", columns=facet_columns(n)))
    st.markdown(f"##### {t('mha.head_view_title')}")
    top_k = max(1, min(5, MAX_LINES // (len(chosen) * n)))
    st.caption(t("mha.head_view_caption", threshold=THRESHOLD, top_k=top_k))
    st.altair_chart(charts.head_view(R["weights"], labels, chosen, head_names, threshold=THRESHOLD, top_k=top_k,
                                     text=charts.ChartText(t("mha.query"), t("mha.key"), t("mha.weight")),
                                     head_title=t("mha.head_legend")), width="content")


def summary(S: dict[str, np.ndarray], head_names: list[str], n_real: int) -> None:
    """Entropy, distance and self-weight per head over the real tokens' queries (core.lab.heads.head_summary)."""
    st.subheader(t("mha.summary_header"))
    prose(t("mha.summary_intro", n=n_real, log_n=float(np.log(n_real))))  # PAD keys are never seen
    frame = pd.DataFrame({t("mha.head_legend"): head_names, t("mha.entropy"): S["entropy"],
                          t("mha.distance"): S["distance"], t("mha.self_weight"): S["self_weight"]})
    tables.table(frame, hide_index=True, width="content", key="mha_summary")
    bars = (("entropy", "mha.nats", float(np.log(n_real)), 0.01, "query"),
            ("distance", "mha.positions", float(n_real - 1), 1.0, "key"))  # (measure, unit, top, least top, colour)
    for column, (name, unit, top, least, colour) in zip(st.columns(2, gap="large"), bars):
        with column:
            panels.svg_image(charts.bars(S[name], head_names, title=t(f"mha.{name}"), value_title=t(unit),
                                         domain=(0.0, max(top, least)), color=charts.PALETTE[colour]))


@st.fragment
def one_head(R: dict, labels: list[str], d_k: int) -> None:
    """One head's Q, K, V, scores, mask, weights and output; picking the head reruns this section only."""
    st.subheader(t("mha.one_head_header"))
    h, n, lang = R["weights"].shape[0], len(labels), settings.lang
    ss.setdefault("mha_head", 0)
    if ss["mha_head"] >= h:
        ss["mha_head"] = 0
    i = links.control(st.selectbox, t("mha.pick_head"), list(range(h)),
                      format_func=lambda k: t("mha.head", lang, k=k + 1), width=240, setting="mha_head")
    st.markdown(t("mha.one_head_intro", k=i + 1, lo=i * d_k, hi=(i + 1) * d_k - 1, d_k=d_k))
    head_dims = [f"d{i * d_k + j}" for j in range(d_k)]
    wide = d_k > 8 or n > 8
    slots = [st.container() for _ in range(3)] if wide else st.columns(3, gap="medium")
    for slot, (name, colour) in zip(slots, (("q", "Q"), ("k", "K"), ("v", "V"))):
        with slot:
            panel(R[name][i], title=t("mha.qkv_title", m=colour, k=i + 1), key=f"mha_{name}", row_labels=labels,
                  col_labels=head_dims, max_width=560 if wide else 300)
    panel(R["scores"][i], title=t("mha.scores_title", k=i + 1), key="mha_scores", row_labels=labels,
          col_labels=labels, scale="scores", caption=t("mha.scores_caption", d_k=d_k, root=float(np.sqrt(d_k))))
    if settings.mask != "none":
        panel(R["keep"], title=t("mha.mask_title"), key="mha_mask", row_labels=labels, col_labels=labels,
              scale="mask", caption=t("mha.mask_caption"))
        panel(R["masked_scores"][i], title=t("mha.masked_title", k=i + 1), key="mha_masked", row_labels=labels,
              col_labels=labels, scale="scores")
    row_error = float(np.abs(R["weights"][i].sum(axis=1) - 1).max())
    panel(R["weights"][i], title=t("mha.weights_title", k=i + 1), key="mha_weights", row_labels=labels,
          col_labels=labels, scale="weights", caption=t("mha.weights_caption", error=row_error))
    panel(R["heads"][i], title=t("mha.head_out_title", k=i + 1), key="mha_head_out", row_labels=labels,
          col_labels=head_dims, caption=t("mha.head_out_caption"))


def concat_and_output(R: dict, labels: list[str], dims: list[str], d_k: int) -> None:
    """The heads joined back to (n, d_model), then W_O."""
    st.subheader(t("mha.concat_header"))
    panel(R["concat"], title=t("mha.concat_title"), key="mha_concat", row_labels=labels, col_labels=dims,
          caption=t("mha.concat_caption", h=R["weights"].shape[0], d_k=d_k))
    panel(R["out"], title=t("mha.out_title"), key="mha_out", row_labels=labels, col_labels=dims,
          caption=t("mha.out_caption", error=float(R["rebuild_error"])))


def parameters(R: dict, d_model: int, h: int) -> None:
    """The module's parameters, counted and checked against 4 d_model² + 4 d_model."""
    st.subheader(t("mha.params_header"))
    total = sum(count for _, _, count in R["params"])
    formula = 4 * d_model**2 + 4 * d_model
    p1, p2 = st.columns([1, 2], gap="large")
    p1.metric(t("mha.params_metric"), number(total, ","))
    with p2:
        tables.table(pd.DataFrame({t("mha.param_name"): [name for name, _, _ in R["params"]],
                                   t("mha.param_shape"): [" × ".join(map(str, shape)) for _, shape, _ in R["params"]],
                                   t("mha.param_count"): [count for _, _, count in R["params"]]}),
                     formats={t("mha.param_count"): ",d"}, hide_index=True, width="content", key="mha_params")
    tex = rf"4\,d_{{\mathrm{{model}}}}^2 + 4\,d_{{\mathrm{{model}}}} = 4 \cdot {d_model}^2 + 4 \cdot {d_model} = "
    check = r"\ \checkmark" if formula == total else rf"\ \neq {number(total, ',', tex=True)}"
    st.latex(tex + number(formula, ",", tex=True) + check)
    prose(t("mha.params_text", h=h))
    panels.show_code(core.lab.heads.multi_head, core.lab.heads.seeded_attention, core.MultiHeadAttention,
                     core.scaled_dot_product_attention, core.softmax, core.lab.heads.head_summary,
                     core.lab.analysis.entropy, core.lab.analysis.mean_attention_distance)


def notice(S: dict, labels: list[str], head_names: list[str]) -> None:
    """What to notice, read off this run's numbers."""
    st.subheader(t("mha.notice_header"))
    entropy, distance, h = S["entropy"], S["distance"], len(head_names)
    focused, spread = int(entropy.argmin()), int(distance.argmax())
    if h == 1:
        st.markdown(t("mha.notice_one_head", entropy=float(entropy[0]), distance=float(distance[0])))
    else:
        st.markdown(t("mha.notice_heads", focused=head_names[focused], entropy=float(entropy[focused]),
                      far=head_names[spread], distance=float(distance[spread])))
        pairs = ", ".join(f"**{head_names[k]}** → {md_escape(labels[S['favourite'][k]])}" for k in range(min(h, 8)))
        st.markdown(t("mha.notice_favourite", pairs=pairs + (", …" if h > 8 else "")))
    st.markdown(t("mha.notice_points"))


settings = state.settings()
ss = st.session_state
d_model, h = settings.d_model, settings.heads
if h < 1 or d_model % h:  # the controls never allow it; a hand-made session state could
    fixed = state.closest_heads(d_model, max(h, 1))
    st.error(t("mha.invalid_pair", d_model=d_model, heads=h, fixed=fixed,
               choices=", ".join(map(str, state.heads_options(d_model)))), icon=":material/block:")
    ss[state.key("heads")] = h = fixed
d_k = d_model // h

intro()
tokens = controls(d_model, h, d_k)
n_pad = settings.seq_len - len(tokens) if settings.mask in ("padding", "both") else 0
if settings.mask in ("padding", "both"):
    st.info(t("mha.padding_note", n=n_pad, seq_len=settings.seq_len) if n_pad else
            t("mha.padding_none", seq_len=settings.seq_len), icon=":material/space_bar:")
R = compute(tuple(tokens), n_pad, d_model, h, settings.seed, settings.mask, settings.device)
labels = [*tokens, *[PAD] * n_pad]
head_names = [t("mha.head", k=k + 1) for k in range(h)]
dims = [f"d{j}" for j in range(d_model)]
steps(R, labels, dims)
S = core.lab.heads.head_summary(R["weights"], len(tokens))  # each (h,): the summary's and the notice's numbers
lang = settings.lang  # the format function gets it now: Streamlit may call it outside the run
if parts.pick("mha_part", PARTS, label=t("mha.part"), format_func=lambda p: t(f"mha.part_{p}", lang)) == "heads":
    all_heads(R, labels, head_names)
    summary(S, head_names, len(tokens))
else:
    one_head(R, labels, d_k)
    concat_and_output(R, labels, dims, d_k)
parameters(R, d_model, h)
notice(S, labels, head_names)
