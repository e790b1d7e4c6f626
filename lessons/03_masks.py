"""Lesson 3: masks (CURRICULUM.md, lesson 3).

The course's causal example in five steps (scores, 0/1 mask, additive 0/-inf mask, masked scores, weights); the same
steps live on a ragged batch the learner types (padding, batched shapes, broadcasting, PAD rows, an all-blocked row);
the three mask conventions side by side; efficient-attention patterns as masks, with their cost as n grows. Four
sub-lessons (`PARTS`), one on screen at a time (ui/parts.py); the mask kind and n are the sidebar's settings.
"""
import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core.lab import heads, mask_conventions as conv
from ui import charts, links, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose

EXAMPLE = ("I", "love", "deep", "learning")  # the course's sentence and its fixed (unscaled) scores
EXAMPLE_SCORES = ((0.9, 0.7, 0.3, 0.2), (0.6, 0.8, 0.9, 0.4), (0.2, 0.5, 0.7, 0.9), (0.4, 0.3, 0.8, 0.6))
DEFAULT_BATCH = "I love deep learning\nattention is all you need\nhello world"
PAD, MIN_SENTENCES, MAX_SENTENCES, MAX_CHARS = "PAD", 2, 4, 2000
PATTERNS = {"window": "masks.pattern_window", "dilated": "masks.pattern_dilated", "global": "masks.pattern_global"}
COST_NS = tuple(2 ** k for k in range(4, 14))  # 16 ... 8192 tokens
STEPS = (("scores", None, None), ("mask", "masks.step_mask", "mask"),  # (name, title key, colour scale)
         ("additive", "masks.step_additive", "mask_additive"), ("masked", "masks.step_masked", None),
         ("weights", "masks.step_weights", "weights"))
CONVENTIONS = (  # (name, heading, panel title, caption, the source's code)
    ("keep", "masks.conv_keep", "masks.conv_keep_title", "masks.conv_keep_caption",
     "s = scores.masked_fill(\n        mask == 0, -1e9)\nweights = softmax(s)"),
    ("tf", "masks.conv_tf", "masks.conv_tf_title", "masks.conv_tf_caption",
     "look = 1 - band_part(\n    ones, -1, 0)\nm = max(padding, look)\nweights = softmax(\n    scores + m * -1e9)"),
    ("torch", "masks.conv_torch", "masks.conv_torch_title", "masks.conv_torch_caption",
     "mha(x, x, x,\n  attn_mask=triu(\n    ones, 1).bool(),\n  key_padding_mask=\n    tokens == PAD)"))
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
    return heads.batch_attention(sentences, PAD, settings.d_model, settings.heads, settings.seed, settings.mask,
                                 settings.device)


def big(value: int) -> str:
    """An integer with thin spaces between thousands (SI style: read the same way in English and Spanish)."""
    return f"{value:,}".replace(",", "\u202f")


def shape(size) -> str:
    return "(" + ",\u00a0".join(map(str, size)) + ")"  # no-break spaces: a shape never wraps


SHAPE_ROWS = (("padding", "padding_mask(tokens, PAD)"), ("causal", "causal_mask(n)[None, None]"),
              ("both", "decoder_mask(tokens, PAD)"), ("scores", "Q Kᵀ / √d_k"))  # (kind, the code that makes it)


def shapes_table(ids: torch.Tensor, scores_shape: torch.Size) -> str:
    """Markdown: each mask builder's output shape, the scores' shape, and which mask is in use."""
    sizes = {**conv.mask_shapes(ids, core.PAD_ID), "scores": scores_shape}
    now = " ← **" + t("masks.shape_now") + "**"
    return "\n".join([f"| {t('masks.shape_tensor')} | {t('masks.shape_shape')} | {t('masks.shape_meaning')} |",
                      "|---|---|---|", *(f"| `{code}` | {shape(sizes[kind])} | {t(f'masks.shape_{kind}')}"
                                         f"{now if kind == settings.mask else ''} |" for kind, code in SHAPE_ROWS)])


def show_steps(mats: list[torch.Tensor], tokens: list[str], key: str, scores_title: str, scores_caption: str) -> None:
    """The five steps, each a matrix panel, two side by side: three would not fit with their legends on a 1366-pixel
    screen (each chart is its plotting area plus about 120 px of labels and legend)."""
    mats = [core.to_numpy(m) for m in mats]
    blocked = mats[1] == 0
    weights_caption = t("masks.weights_caption", error=f"{np.abs(mats[4].sum(axis=1) - 1).max():.1e}",
                        blocked=int(blocked.sum()), largest=f"{mats[4][blocked].max() if blocked.any() else 0.0:g}")
    captions = [scores_caption, t("masks.mask_caption"), t("masks.additive_caption"), t("masks.masked_caption"),
                weights_caption]
    slots = [*st.columns(2, gap="large"), *st.columns(2, gap="large"), st.container()]
    for slot, m, (name, title, scale), caption in zip(slots, mats, STEPS, captions):
        with slot:
            panels.matrix_panel(m, title=t(title) if title else scores_title, key=f"{key}_{name}", row_labels=tokens,
                                col_labels=tokens, scale=scale, caption=caption, max_width=260)


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
    show_steps([scores, keep, core.additive_mask(keep), masked, core.softmax(masked, dim=-1)], list(EXAMPLE),
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


def pick_sentence(sentences: list[list[str]]) -> int:
    ss["masks_sentence"] = min(ss["masks_sentence"], len(sentences) - 1)
    return links.control(st.selectbox, t("masks.sentence"), range(len(sentences)),
                         format_func=lambda k: f"{k + 1}: {' '.join(sentences[k])[:40]}", setting="masks_sentence",
                         identity=tuple(map(tuple, sentences)))


def pick_head() -> int:
    ss["masks_head"] = min(ss["masks_head"], settings.heads - 1)
    return links.control(st.selectbox, t("masks.head"), range(settings.heads),
                         format_func=lambda k: t("masks.head_n", lang, k=k + 1),
                         help=t("masks.head_help", d_model=settings.d_model, heads=settings.heads),
                         setting="masks_head", identity=(settings.heads,))


def batch_shapes(B: heads.BatchAttention) -> None:
    """The padded batch, its key mask, and the shape of each mask against the scores it is added to."""
    (batch, n), scores = B.ids.shape, B.steps["scores"].shape
    sentence_labels, positions = [t("masks.sentence_n", k=k + 1) for k in range(batch)], [str(j + 1) for j in range(n)]
    grid_slot, pad_slot = st.columns(2, gap="large") if n <= 12 else (st.container(), st.container())
    grid_slot.markdown(f"##### {t('masks.grid_title')}")
    grid = pd.DataFrame(B.tokens, index=sentence_labels, columns=positions)
    grid_slot.dataframe(grid.style.map(lambda w: "color: #767676; background-color: #EEEEEE" if w == PAD else ""),
                        width="content")
    with pad_slot:
        panels.matrix_panel(core.to_numpy(B.ids != core.PAD_ID).astype(float), title=t("masks.key_mask_title"),
                            key="masks_key_mask", row_labels=sentence_labels, col_labels=positions, scale="mask",
                            caption=t("masks.key_mask_caption"), max_width=320 if n <= 12 else 560)
    st.markdown(shapes_table(B.ids, scores))
    if B.mask is None:
        st.markdown(t("masks.broadcast_none", scores=shape(scores)))
    else:
        st.markdown(t("masks.broadcast", mask=shape(B.mask.shape), scores=shape(scores),
                      result=shape(torch.broadcast_shapes(B.mask.shape, scores))))


def pad_rows(B: heads.BatchAttention, b: int, h: int) -> None:
    """A PAD query whose own row is blocked too: torch.softmax gives NaN, core.softmax zeros."""
    prose(t("masks.pad_rows"))
    with_pad = [k for k in [b, *range(len(B.sentences))] if len(B.sentences[k]) < B.ids.shape[1]]
    if not with_pad:
        st.info(t("masks.no_pad"), icon=":material/info:")
        return
    e = with_pad[0]
    edge = conv.blocked_query_row(B.steps["scores"][e, h], B.ids[e], core.PAD_ID)  # (2, n): NaN vs 0
    edge_col, edge_text = st.columns([3, 2], gap="large")
    with edge_col:
        panels.matrix_panel(core.to_numpy(edge), key="masks_edge", row_labels=["torch.softmax", "core.softmax"],
                            title=t("masks.edge_title", sentence=e + 1, position=len(B.sentences[e]) + 1),
                            col_labels=B.tokens[e], scale="weights", max_width=420)
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
        b, h = pick_sentence(B.sentences), pick_head()
    batch_shapes(B)
    st.markdown(t("masks.steps_intro", sentence=b + 1, head=h + 1, mask=t(f"mask.{settings.mask}")))
    keep = B.keep[b]  # (n, n): sentence b's mask
    show_steps([B.steps["scores"][b, h], keep, core.additive_mask(keep), B.steps["masked_scores"][b, h],
                B.steps["weights"][b, h]], B.tokens[b], "masks_live", t("masks.step_scores_live", head=h + 1),
               t("masks.scores_live_caption", d_k=settings.d_model // settings.heads, seed=settings.seed))
    pad_rows(B, b, h)


@st.fragment
def conventions_part() -> None:
    """The batch's mask written the three ways libraries write it, and the check that they give one attention."""
    st.subheader(t("masks.conv_header"))
    B = load_batch()
    b = pick_sentence(B.sentences)
    prose(t("masks.conv_intro", mask=t(f"mask.{settings.mask}"), sentence=b + 1))
    st.caption(t("masks.mask_in_sidebar", mask=t(f"mask.{settings.mask}")) + " " + t("common.cpu_only"))
    found = conv.three_conventions(B.steps["scores"], B.ids, settings.mask, core.PAD_ID)
    for col, (name, heading, title, caption, snippet), matrix, scale in zip(
            st.columns(3, gap="medium"), CONVENTIONS, found.masks, ("mask", "mask_blocked", "mask_blocked")):
        col.markdown(f"**{t(heading)}**")
        col.code(snippet, language="python", wrap_lines=True)
        with col:
            panels.matrix_panel(matrix[b, 0].numpy(), title=t(title), key=f"masks_conv_{name}", caption=t(caption),
                                row_labels=B.tokens[b], col_labels=B.tokens[b], scale=scale, max_width=130)
    same = all(torch.equal(w, found.weights[0]) for w in found.weights)  # the three, exactly
    diff = float((found.weights[0] - B.steps["weights"].cpu()).abs().max())  # against the live attention (any device)
    if found.converters_agree and same and diff <= 1e-6:
        st.success(t("masks.conv_agree", diff=f"{diff:.1e}" if diff else "0"), icon=":material/check_circle:")
    else:
        st.error(t("masks.conv_disagree", diff=f"{diff:.3g}"), icon=":material/error:")


def pattern_controls() -> None:
    c1, c2, c3 = st.columns(3, gap="medium")
    links.control(c1.selectbox, t("masks.pattern"), list(PATTERNS), format_func=lambda p: t(PATTERNS[p], lang),
                  setting="masks_pattern")
    links.control(c2.slider, t("masks.width"), 1, 8, help=t("masks.width_help"), setting="masks_width")
    if ss["masks_pattern"] == "dilated":
        links.control(c3.slider, t("masks.dilation"), 2, 4, help=t("masks.dilation_help"), setting="masks_dilation")
    elif ss["masks_pattern"] == "global":
        links.control(c3.slider, t("masks.globals"), 1, 4, help=t("masks.globals_help"), setting="masks_globals")


def cost_chart(kind: str, totals: list[int]) -> None:
    """Kept entries as n grows, full attention against the pattern (log-log), and the code behind both."""
    series = {t("masks.cost_full"): [k * k for k in COST_NS], t(PATTERNS[kind]): totals}
    st.altair_chart(charts.growth_lines(COST_NS, series, x_title=t("masks.cost_x"), y_title=t("masks.cost_y"),
                                        title=t("masks.cost_title"),
                                        colors=[charts.PALETTE["key"], charts.PALETTE["query"]], width=280),
                    width="content")
    st.caption(t("masks.cost_caption", n=big(COST_NS[-1]), full=big(COST_NS[-1] ** 2), kept=big(totals[-1]),
                 ratio=f"{COST_NS[-1] ** 2 / totals[-1]:.0f}"))
    if settings.show_numbers:
        st.dataframe(pd.DataFrame({"n": COST_NS, **series}), hide_index=True, width="content")
    counts = (conv.window_kept_per_row, conv.global_local_kept_per_row)[:2 if kind == "global" else 1]
    panels.show_code(conv.pattern_mask, conv.pattern_kept, *counts)  # the fragment reruns it with the pattern


@st.fragment
def patterns_part() -> None:
    """Efficient-attention patterns at the sidebar's sequence length m, and their cost as n grows (CPU: counting).
    A fragment: its own controls rerun only this part."""
    m = settings.seq_len
    st.subheader(t("masks.eff_header"))
    prose(t("masks.eff_intro"))
    st.caption(t("masks.seq_len_in_sidebar", n=m) + " " + t("common.cpu_only"))  # masks and counts: CPU
    pattern_controls()
    words = [w for s in parse(ss["masks_batch"])[0] for w in s]
    labels = [words[j] if j < len(words) else str(j + 1) for j in range(m)]
    kind = ss["masks_pattern"]
    shape_args = (int(ss["masks_width"]), int(ss["masks_dilation"]), int(ss["masks_globals"]))
    pattern_mask = conv.pattern_mask(kind, m, *shape_args)  # (m, m)
    per_row = pattern_mask.sum(-1)  # (m,)
    pat_col, cost_col = st.columns([1, 1], gap="large")
    with pat_col:
        panels.matrix_panel(core.to_numpy(pattern_mask).astype(float), title=t(PATTERNS[kind]),
                            key="masks_pattern_mask", row_labels=labels, col_labels=labels, scale="mask",
                            caption=t("masks.pattern_caption", words=len(words)), max_width=270)
        st.markdown(t("masks.kept", kept=big(int(per_row.sum())), total=big(m * m),
                      share=f"{per_row.sum() / (m * m):.1%}", lo=int(per_row.min()), hi=int(per_row.max())))
    with cost_col:
        cost_chart(kind, conv.pattern_kept(kind, COST_NS, *shape_args))


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
