"""Lesson 3's presentation machinery (lessons/03_masks.py): the five step panels, the sentence and head pickers,
the padded batch's grid and key mask, the shapes table, the all-blocked row, the three conventions' columns, the
pattern controls and the cost chart."""
import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core.lab import heads, mask_conventions as conv
from ui import charts, links, panels, tables
from ui.i18n import t

PAD = "PAD"
PATTERNS = {"window": "masks.pattern_window", "dilated": "masks.pattern_dilated", "global": "masks.pattern_global"}
COST_NS = tuple(2 ** k for k in range(4, 14))  # 16 ... 8192 tokens
STEPS = (("scores", None, "scores"), ("mask", "masks.step_mask", "mask"),  # (name, title key, colour scale)
         ("additive", "masks.step_additive", "mask_additive"), ("masked", "masks.step_masked", "scores"),
         ("weights", "masks.step_weights", "weights"))
CONVENTIONS = (  # (name, heading, panel title, caption, the source's code)
    ("keep", "masks.conv_keep", "masks.conv_keep_title", "masks.conv_keep_caption",
     "s = scores.masked_fill(\n        mask == 0, -1e9)\nweights = softmax(s)"),
    ("tf", "masks.conv_tf", "masks.conv_tf_title", "masks.conv_tf_caption",
     "look = 1 - band_part(\n    ones, -1, 0)\nm = max(padding, look)\nweights = softmax(\n    scores + m * -1e9)"),
    ("torch", "masks.conv_torch", "masks.conv_torch_title", "masks.conv_torch_caption",
     "mha(x, x, x,\n  attn_mask=triu(\n    ones, 1).bool(),\n  key_padding_mask=\n    tokens == PAD)"))
SHAPE_ROWS = (("padding", "padding_mask(tokens, PAD)"), ("causal", "causal_mask(n)[None, None]"),
              ("both", "decoder_mask(tokens, PAD)"), ("scores", "Q Kᵀ / √d_k"))  # (kind, the code that makes it)


def shape(size) -> str:
    return "(" + ",\u00a0".join(map(str, size)) + ")"  # no-break spaces: a shape never wraps


def shapes_table(ids: torch.Tensor, scores_shape: torch.Size, kind: str) -> str:
    """Markdown: each mask builder's output shape, the scores' shape, and which mask (`kind`) is in use."""
    sizes = {**conv.mask_shapes(ids, core.PAD_ID), "scores": scores_shape}
    now = " ← **" + t("masks.shape_now") + "**"
    return "\n".join([f"| {t('masks.shape_tensor')} | {t('masks.shape_shape')} | {t('masks.shape_meaning')} |",
                      "|---|---|---|", *(f"| `{code}` | {shape(sizes[name])} | {t(f'masks.shape_{name}')}"
                                         f"{now if name == kind else ''} |" for name, code in SHAPE_ROWS)])


def show_steps(mats: list[torch.Tensor], tokens: list[str], key: str, scores_title: str, scores_caption: str) -> None:
    """The five steps, each a matrix panel, two side by side: three would not fit with their legends on a 1366-pixel
    screen (each chart is its plotting area plus about 120 px of labels and legend)."""
    mats = [core.to_numpy(m) for m in mats]
    blocked = mats[1] == 0
    weights_caption = t("masks.weights_caption", error=float(np.abs(mats[4].sum(axis=1) - 1).max()),
                        blocked=int(blocked.sum()), largest=float(mats[4][blocked].max() if blocked.any() else 0.0))
    captions = [scores_caption, t("masks.mask_caption"), t("masks.additive_caption"), t("masks.masked_caption"),
                weights_caption]
    slots = [*st.columns(2, gap="large"), *st.columns(2, gap="large"), st.container()]
    for slot, m, (name, title, scale), caption in zip(slots, mats, STEPS, captions):
        with slot:
            panels.matrix_panel(m, title=t(title) if title else scores_title, key=f"{key}_{name}", row_labels=tokens,
                                col_labels=tokens, scale=scale, caption=caption, max_width=260)


def pick_sentence(sentences: list[list[str]]) -> int:
    ss = st.session_state
    ss["masks_sentence"] = min(ss["masks_sentence"], len(sentences) - 1)
    return links.control(st.selectbox, t("masks.sentence"), range(len(sentences)),
                         format_func=lambda k: f"{k + 1}: {' '.join(sentences[k])[:40]}", setting="masks_sentence")


def pick_head(d_model: int, n_heads: int, lang: str) -> int:
    """The head to show; `lang` now, as Streamlit may call the format function outside the run."""
    ss = st.session_state
    ss["masks_head"] = min(ss["masks_head"], n_heads - 1)
    return links.control(st.selectbox, t("masks.head"), range(n_heads),
                         format_func=lambda k: t("masks.head_n", lang, k=k + 1),
                         help=t("masks.head_help", d_model=d_model, heads=n_heads),
                         setting="masks_head")


def batch_grid(B: heads.BatchAttention) -> None:
    """The padded batch as a grid of tokens (PAD greyed) beside its key mask (1 = a real token)."""
    batch, n = B.ids.shape
    sentence_labels, positions = [t("masks.sentence_n", k=k + 1) for k in range(batch)], [str(j + 1) for j in range(n)]
    grid_slot, pad_slot = st.columns(2, gap="large") if n <= 12 else (st.container(), st.container())
    grid_slot.markdown(f"##### {t('masks.grid_title')}")
    grid = pd.DataFrame(B.tokens, index=sentence_labels, columns=positions)
    style = grid.style.set_uuid("masks_grid")  # not pandas' random id: an unchanged grid is not redrawn
    grey_pad = style.map(lambda w: "color: #767676; background-color: #EEEEEE" if w == PAD else "")
    grid_slot.container(key="masks_grid").dataframe(grey_pad, width="content")  # its container names it (tests)
    with pad_slot:
        panels.matrix_panel(core.to_numpy(B.ids != core.PAD_ID).astype(float), title=t("masks.key_mask_title"),
                            key="masks_key_mask", row_labels=sentence_labels, col_labels=positions, scale="mask",
                            caption=t("masks.key_mask_caption"), max_width=320 if n <= 12 else 560)


def blocked_row_panel(B: heads.BatchAttention, e: int, h: int) -> None:
    """Sentence e's first PAD query (its own row all blocked) through torch.softmax (NaN) and core.softmax (0)."""
    edge = conv.blocked_query_row(B.steps["scores"][e, h], B.ids[e], core.PAD_ID)  # (2, n): NaN vs 0
    panels.matrix_panel(core.to_numpy(edge), key="masks_edge", row_labels=["torch.softmax", "core.softmax"],
                        title=t("masks.edge_title", sentence=e + 1, position=len(B.sentences[e]) + 1),
                        col_labels=B.tokens[e], scale="weights", max_width=420)


def convention_columns(masks: tuple[torch.Tensor, ...], tokens: list[str], b: int) -> None:
    """One column per convention: its name, the code that writes it, and sentence b's mask in it."""
    for col, (name, heading, title, caption, snippet), matrix, scale in zip(
            st.columns(3, gap="small"), CONVENTIONS, masks, ("mask", "mask_blocked", "mask_blocked")):
        col.markdown(f"**{t(heading)}**")
        col.code(snippet, language="python", wrap_lines=True)
        with col:
            panels.matrix_panel(matrix[b, 0].numpy(), title=t(title), key=f"masks_conv_{name}", caption=t(caption),
                                row_labels=tokens, col_labels=tokens, scale=scale, max_width=96)


def pattern_controls(lang: str) -> None:
    """The pattern, its width, and its dilation or number of global tokens."""
    ss = st.session_state
    c1, c2, c3 = st.columns(3, gap="medium")
    links.control(c1.selectbox, t("masks.pattern"), list(PATTERNS), format_func=lambda p: t(PATTERNS[p], lang),
                  setting="masks_pattern")
    links.control(c2.slider, t("masks.width"), 1, 8, help=t("masks.width_help"), setting="masks_width")
    if ss["masks_pattern"] == "dilated":
        links.control(c3.slider, t("masks.dilation"), 2, 4, help=t("masks.dilation_help"), setting="masks_dilation")
    elif ss["masks_pattern"] == "global":
        links.control(c3.slider, t("masks.globals"), 1, 4, help=t("masks.globals_help"), setting="masks_globals")


def cost_chart(kind: str, totals: list[int], show_numbers: bool) -> None:
    """Kept entries as n grows, full attention against the pattern (log-log), and the code behind both."""
    series = {t("masks.cost_full"): [k * k for k in COST_NS], t(PATTERNS[kind]): totals}
    st.altair_chart(charts.growth_lines(COST_NS, series, x_title=t("masks.cost_x"), y_title=t("masks.cost_y"),
                                        title=t("masks.cost_title"),
                                        colors=[charts.PALETTE["key"], charts.PALETTE["query"]], width=280),
                    width="content")
    n = COST_NS[-1]
    st.caption(t("masks.cost_caption", n=n, full=n * n, kept=int(totals[-1]), ratio=n * n / totals[-1]))
    if show_numbers:
        tables.dataframe(pd.DataFrame({"n": COST_NS, **series}), key="masks_cost", hide_index=True, width="content",
                         formats={c: ",d" for c in ["n", *series]})
    counts = (conv.window_kept_per_row, conv.global_local_kept_per_row)[:2 if kind == "global" else 1]
    panels.show_code(conv.pattern_mask, conv.pattern_kept, *counts, key="show_code_patterns")  # the fragment reruns it with the pattern
