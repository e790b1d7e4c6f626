"""Lesson 3: masks (CURRICULUM.md, lesson 3).

The course's causal example in five steps (scores, 0/1 mask, additive 0/-inf mask, masked scores, weights); the same
steps live on a ragged batch the learner types (padding, batched shapes, broadcasting, PAD rows, an all-blocked row);
the three mask conventions side by side; efficient-attention patterns as masks, with their cost as n grows. Four
sub-lessons (`PARTS`), one on screen at a time (ui/parts.py); the mask kind and n are the sidebar's settings. The
panels, pickers, tables and charts that are not the story live in ui/mask_views.py.
"""
import streamlit as st
import torch

import core
from core.lab import heads, mask_conventions as conv
from ui import links, mask_views as views, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose

EXAMPLE = ("I", "love", "deep", "learning")  # the course's sentence and its fixed (unscaled) scores
EXAMPLE_SCORES = ((0.9, 0.7, 0.3, 0.2), (0.6, 0.8, 0.9, 0.4), (0.2, 0.5, 0.7, 0.9), (0.4, 0.3, 0.8, 0.6))
DEFAULT_BATCH = "I love deep learning\nattention is all you need\nhello world"
MIN_SENTENCES, MAX_SENTENCES, MAX_CHARS = 2, 4, 2000
PARTS = {"example": "masks.part_example", "batch": "masks.part_batch",  # the sub-lessons, in teaching order
         "conventions": "masks.part_conventions", "patterns": "masks.part_patterns"}
SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings (a literal)
    "padding": {"masks_part": "batch", "masks_sentence": 2, "cfg_mask": "padding", "cfg_seq_len": 8,
                "masks_batch_text": "I love deep learning\nattention is all you need\nhello world"},
    "decoder": {"masks_part": "batch", "masks_sentence": 2, "cfg_mask": "both", "cfg_seq_len": 8,
                "masks_batch_text": "I love deep learning\nattention is all you need\nhello world"},
    "window": {"masks_part": "patterns", "masks_pattern": "window", "masks_width": 2, "cfg_seq_len": 64},
    "global": {"masks_part": "patterns", "masks_pattern": "global", "masks_width": 1, "masks_globals": 2,
               "cfg_seq_len": 16},
}


def parse(text: str) -> tuple[list[list[str]], str | None]:
    """One sentence per non-empty line, whitespace tokens; what is wrong with them ("count", "too_long") or None."""
    return conv.parse_batch(text, MIN_SENTENCES, MAX_SENTENCES, MAX_CHARS)


def load_batch() -> heads.BatchAttention:
    """The last valid batch cut to seq_len, padded, masked with the sidebar's mask and attended."""
    sentences = [s[:settings.seq_len] for s in parse(ss["masks_batch"])[0]]
    return heads.batch_attention(sentences, views.PAD, settings.d_model, settings.heads, settings.seed, settings.mask,
                                 settings.device)


def intro() -> str:
    """Title, scenes, the masked softmax; returns the sub-lesson the learner picked (only that one is drawn)."""
    st.title(t("masks.title"))
    scenes.picker("masks", SCENES)
    prose(t("masks.intro"))
    st.latex(rf"A = \operatorname{{softmax}}\!\left(S + M\right),\qquad M_{{ij}} = \begin{{cases}} 0 & "
             rf"\text{{{t('masks.tex_keep')}}} \\ -\infty & \text{{{t('masks.tex_block')}}} \end{{cases}}\qquad "
             rf"\text{{{t('masks.tex_causal')}}}\ j \le i")
    prose(t("masks.equations"))
    return parts.pick("masks_part", list(PARTS), label=t("masks.part"), format_func=lambda p: t(PARTS[p], lang))


def example_part() -> None:
    """The course's fixed scores through the five steps of a causal mask."""
    st.subheader(t("masks.example_header"))
    prose(t("masks.example_intro"))
    dtype = torch.float32 if settings.device == "mps" else torch.float64
    scores = torch.tensor(EXAMPLE_SCORES, dtype=dtype, device=settings.device)  # (4, 4), fixed, not scaled
    keep = core.causal_mask(len(EXAMPLE), settings.device)  # (4, 4)
    masked = core.apply_mask(scores, keep)  # (4, 4), -inf above the diagonal
    views.show_steps([scores, keep, core.additive_mask(keep), masked, core.softmax(masked, dim=-1)], list(EXAMPLE),
                     "masks_ex", t("masks.step_scores_example"), t("masks.scores_example_caption"))
    st.info(t("masks.example_no_padding"), icon=":material/school:")


def batch_text() -> None:
    """Keep the typed batch when it is valid, else warn and keep the last valid one; say when sentences are cut."""
    typed, problem = parse(ss["masks_batch_text"])
    if problem:
        kept = " / ".join(" ".join(s) for s in parse(ss["masks_batch"])[0])
        st.warning(t(f"masks.batch_{problem}", n=len(typed), lo=MIN_SENTENCES, hi=MAX_SENTENCES, max=MAX_CHARS,
                     kept=md_escape(kept)), icon=":material/edit_off:")
    else:
        ss["masks_batch"] = ss["masks_batch_text"]
    if any(len(s) > settings.seq_len for s in parse(ss["masks_batch"])[0]):
        st.info(t("masks.truncated", seq_len=settings.seq_len), icon=":material/content_cut:")


def batch_shapes(B: heads.BatchAttention) -> None:
    """The padded batch, its key mask, and the shape of each mask against the scores it is added to."""
    scores = B.steps["scores"].shape  # (batch, h, n, n)
    views.batch_grid(B)
    st.markdown(views.shapes_table(B.ids, scores, settings.mask))
    if B.mask is None:
        st.markdown(t("masks.broadcast_none", scores=views.shape(scores)))
    else:
        st.markdown(t("masks.broadcast", mask=views.shape(B.mask.shape), scores=views.shape(scores),
                      result=views.shape(torch.broadcast_shapes(B.mask.shape, scores))))


def pad_rows(B: heads.BatchAttention, b: int, h: int) -> None:
    """A PAD query whose own row is blocked too: torch.softmax gives NaN, core.softmax zeros."""
    prose(t("masks.pad_rows"))
    with_pad = [k for k in [b, *range(len(B.sentences))] if len(B.sentences[k]) < B.ids.shape[1]]
    if not with_pad:
        st.info(t("masks.no_pad"), icon=":material/info:")
        return
    edge_col, edge_text = st.columns([3, 2], gap="large")
    with edge_col:
        views.blocked_row_panel(B, with_pad[0], h)
    edge_text.markdown(t("masks.edge_text", nan=int(torch.isnan(B.steps["weights"]).sum()), ignore=core.IGNORE_INDEX))


@st.fragment
def batch_part() -> None:
    """The learner's batch through every step, live. A fragment: its own controls rerun only this part."""
    st.subheader(t("masks.batch_header"))
    prose(t("masks.batch_intro"))
    text_col, controls_col = st.columns([3, 2], gap="large")
    links.control(text_col.text_area, t("masks.batch_label"), help=t("masks.batch_help", n=settings.seq_len),
                  height=130, max_chars=MAX_CHARS, setting="masks_batch_text")
    text_col.button(t("masks.batch_reset"), icon=":material/restart_alt:",
                    on_click=lambda: ss.update(masks_batch_text=DEFAULT_BATCH, masks_batch=DEFAULT_BATCH))
    batch_text()
    B = load_batch()
    with controls_col:
        st.caption(t("masks.mask_in_sidebar", mask=t(f"mask.{settings.mask}")))
        b, h = views.pick_sentence(B.sentences), views.pick_head(settings.d_model, settings.heads, lang)
    batch_shapes(B)
    st.markdown(t("masks.steps_intro", sentence=b + 1, head=h + 1, mask=t(f"mask.{settings.mask}")))
    keep = B.keep[b]  # (n, n): sentence b's mask
    views.show_steps([B.steps["scores"][b, h], keep, core.additive_mask(keep), B.steps["masked_scores"][b, h],
                      B.steps["weights"][b, h]], B.tokens[b], "masks_live", t("masks.step_scores_live", head=h + 1),
                     t("masks.scores_live_caption", d_k=settings.d_model // settings.heads, seed=settings.seed))
    pad_rows(B, b, h)


@st.fragment
def conventions_part() -> None:
    """The batch's mask written the three ways libraries write it, and the check that they give one attention."""
    st.subheader(t("masks.conv_header"))
    B = load_batch()
    b = views.pick_sentence(B.sentences)
    prose(t("masks.conv_intro", mask=t(f"mask.{settings.mask}"), sentence=b + 1))
    st.caption(t("masks.mask_in_sidebar", mask=t(f"mask.{settings.mask}")) + " " + t("common.cpu_only"))
    found = conv.three_conventions(B.steps["scores"], B.ids, settings.mask, core.PAD_ID)
    views.convention_columns(found.masks, B.tokens[b], b)
    same = all(torch.equal(w, found.weights[0]) for w in found.weights)  # the three, exactly
    diff = float((found.weights[0] - B.steps["weights"].cpu()).abs().max())  # against the live attention (any device)
    if found.converters_agree and same and diff <= 1e-6:
        st.success(t("masks.conv_agree", diff=diff), icon=":material/check_circle:")
    else:
        st.error(t("masks.conv_disagree", diff=diff), icon=":material/error:")


@st.fragment
def patterns_part() -> None:
    """Efficient-attention patterns at the sidebar's sequence length m, and their cost as n grows (CPU: counting).
    A fragment: its own controls rerun only this part."""
    m = settings.seq_len
    st.subheader(t("masks.eff_header"))
    prose(t("masks.eff_intro"))
    st.caption(t("masks.seq_len_in_sidebar", n=m) + " " + t("common.cpu_only"))  # masks and counts: CPU
    views.pattern_controls(lang)
    words = [w for s in parse(ss["masks_batch"])[0] for w in s]
    labels = [words[j] if j < len(words) else str(j + 1) for j in range(m)]
    kind = ss["masks_pattern"]
    shape_args = (int(ss["masks_width"]), int(ss["masks_dilation"]), int(ss["masks_globals"]))
    pattern_mask = conv.pattern_mask(kind, m, *shape_args)  # (m, m)
    per_row = pattern_mask.sum(-1)  # (m,)
    pat_col, cost_col = st.columns([1, 1], gap="large")
    with pat_col:
        panels.matrix_panel(core.to_numpy(pattern_mask).astype(float), title=t(views.PATTERNS[kind]),
                            key="masks_pattern_mask", row_labels=labels, col_labels=labels, scale="mask",
                            caption=t("masks.pattern_caption", words=len(words)), max_width=270)
        kept = int(per_row.sum())
        st.markdown(t("masks.kept", kept=kept, total=m * m, share=kept / (m * m), lo=int(per_row.min()),
                      hi=int(per_row.max())))
    with cost_col:
        views.cost_chart(kind, conv.pattern_kept(kind, views.COST_NS, *shape_args), settings.show_numbers)


def code_and_notice() -> None:
    panels.show_code(core.causal_mask, core.padding_mask, core.decoder_mask, core.mask_of_kind, core.additive_mask,
                     core.apply_mask, core.softmax, core.scaled_dot_product_attention, heads.batch_attention,
                     heads.attention_steps, conv.three_conventions, conv.keep_convention_weights, conv.tf_combined_mask,
                     conv.tf_convention_weights, conv.torch_convention_weights)
    st.subheader(t("masks.notice_header"))
    st.markdown(t("masks.notice"))


settings = state.settings()
lang = settings.lang  # format functions get it now: Streamlit may call them outside the run
ss = st.session_state
for name, value in (("batch_text", DEFAULT_BATCH), ("batch", DEFAULT_BATCH), ("sentence", 0), ("head", 0),
                    ("pattern", "window"), ("width", 2), ("dilation", 2), ("globals", 1)):
    ss.setdefault(f"masks_{name}", value)

part = intro()
{"example": example_part, "batch": batch_part, "conventions": conventions_part, "patterns": patterns_part}[part]()
code_and_notice()
