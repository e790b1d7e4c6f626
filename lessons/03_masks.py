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
from core.lab import mask_conventions as conv
from core.lab.analysis import toy_embeddings
from core.hooks import trace
from core.masks import global_local_mask, sliding_window_mask, to_block_mask, to_tf_mask
from ui import charts, links, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose

EXAMPLE = ("I", "love", "deep", "learning")  # the course's sentence and its fixed (unscaled) scores
EXAMPLE_SCORES = ((0.9, 0.7, 0.3, 0.2), (0.6, 0.8, 0.9, 0.4), (0.2, 0.5, 0.7, 0.9), (0.4, 0.3, 0.8, 0.6))
DEFAULT_BATCH = "I love deep learning\nattention is all you need\nhello world"
PAD, MIN_SENTENCES, MAX_SENTENCES, MAX_CHARS = "PAD", 2, 4, 2000
PATTERNS = {"window": "masks.pattern_window", "dilated": "masks.pattern_dilated", "global": "masks.pattern_global"}
COST_NS = tuple(2 ** k for k in range(4, 14))  # 16 ... 8192 tokens
STEP_NAMES = ("scores", "mask", "additive", "masked", "weights")
STEP_TITLES = ("masks.step_mask", "masks.step_additive", "masks.step_masked", "masks.step_weights")
CONVENTIONS = (  # (name, heading, panel title, caption)
    ("keep", "masks.conv_keep", "masks.conv_keep_title", "masks.conv_keep_caption"),
    ("tf", "masks.conv_tf", "masks.conv_tf_title", "masks.conv_tf_caption"),
    ("torch", "masks.conv_torch", "masks.conv_torch_title", "masks.conv_torch_caption"),
)
STEP_SCALES = (None, "weights", "weights", None, "weights")
CONVENTION_CODE = ("s = scores.masked_fill(\n        mask == 0, -1e9)\nweights = softmax(s)",
                   "look = 1 - band_part(\n    ones, -1, 0)\nm = max(padding, look)\n"
                   "weights = softmax(\n    scores + m * -1e9)",
                   "mha(x, x, x,\n  attn_mask=triu(\n    ones, 1).bool(),\n  key_padding_mask=\n    tokens == PAD)")
PARTS = {"example": "masks.part_example", "batch": "masks.part_batch",  # the sub-lessons, in teaching order
         "conventions": "masks.part_conventions", "patterns": "masks.part_patterns"}


def as_numpy(*tensors: torch.Tensor) -> list[np.ndarray]:
    return [m.detach().cpu().double().numpy() for m in tensors]


def parse_batch(text: str) -> tuple[list[list[str]], str | None]:
    """One sentence per non-empty line, whitespace tokens; the i18n key of a problem, or None."""
    sentences = [line.split() for line in text.splitlines() if line.split()]
    if len(text) > MAX_CHARS:
        return sentences, "masks.batch_too_long"
    if not MIN_SENTENCES <= len(sentences) <= MAX_SENTENCES:
        return sentences, "masks.batch_count"
    return sentences, None


def batch_ids(sentences: list[list[str]], device: str) -> tuple[torch.Tensor, list[list[str]]]:
    """Token ids padded with core.PAD_ID to the longest sentence (batch, n), and the tokens with a visible PAD."""
    n = max(map(len, sentences))
    words = dict.fromkeys(w for s in sentences for w in s)
    vocab = {w: i for i, w in enumerate(words, start=core.PAD_ID + 1)}  # no word gets the PAD id
    ids = torch.tensor([[vocab[w] for w in s] + [core.PAD_ID] * (n - len(s)) for s in sentences], device=device)
    return ids, [s + [PAD] * (n - len(s)) for s in sentences]


def load_batch(settings: state.Settings) -> tuple[list[list[str]], torch.Tensor, list[list[str]]]:
    """The last valid batch cut to seq_len: its sentences, ids (batch, n) and tokens with a visible PAD."""
    sentences = [s[:settings.seq_len] for s in parse_batch(st.session_state["masks_batch"])[0]]
    return sentences, *batch_ids(sentences, settings.device)


def batch_mask(ids: torch.Tensor, kind: str) -> torch.Tensor | None:
    """The boolean mask (True = keep) of one of the four kinds, in the shape batched attention uses."""
    if kind == "causal":
        return core.causal_mask(ids.shape[1], ids.device)[None, None]  # (1, 1, n, n)
    if kind == "padding":
        return core.padding_mask(ids, core.PAD_ID)  # (batch, 1, 1, n)
    if kind == "both":
        return core.decoder_mask(ids, core.PAD_ID)  # (batch, 1, n, n)
    return None


def batch_attention(tokens: list[list[str]], mask: torch.Tensor | None, settings: state.Settings) -> dict:
    """Seeded multi-head self-attention on toy embeddings; every step read from the module's hook points."""
    batch, n = len(tokens), len(tokens[0])
    flat = [w for row in tokens for w in row]
    x = toy_embeddings(flat, settings.d_model, settings.seed).view(batch, n, -1).to(settings.device)  # (b, n, d)
    with torch.random.fork_rng(devices=[]):  # the constructor draws from the global generator; the seed redraws all
        mha = core.MultiHeadAttention(settings.d_model, settings.heads)
    mha = core.init_parameters(mha, settings.seed).to(settings.device)
    with torch.no_grad():
        _, cache = trace(mha, lambda: mha(x, x, x, mask))
    return {name.removeprefix("hook_"): value for name, value in cache.items()}


def conventions(scores: torch.Tensor, ids: torch.Tensor, kind: str) -> tuple[list[torch.Tensor], list, bool]:
    """Each convention's mask, built its own way, as (batch, 1, n, n); their weights; and whether core converts."""
    batch, n = ids.shape
    causal, padding = kind in ("causal", "both"), kind in ("padding", "both")
    scores, ids = scores.cpu(), ids.cpu()
    keep = torch.ones(batch, 1, n, n, dtype=torch.bool)
    if (mask := batch_mask(ids, kind)) is not None:
        keep = keep & mask  # (batch, 1, n, n)
    tf = torch.zeros(1, 1, n, n)
    if causal and padding:
        tf = conv.tf_combined_mask(ids, core.PAD_ID)  # (batch, 1, n, n)
    elif causal:
        tf = conv.tf_look_ahead_mask(n)  # (n, n)
    elif padding:
        tf = conv.tf_padding_mask(ids, core.PAD_ID)  # (batch, 1, 1, n)
    attn_mask = conv.torch_attn_mask(n) if causal else None  # (n, n)
    key_padding = conv.torch_key_padding_mask(ids, core.PAD_ID) if padding else None  # (batch, n)
    blocked = torch.zeros(batch, 1, n, n, dtype=torch.bool)  # what nn.MultiheadAttention ends up blocking
    if causal:
        blocked = blocked | attn_mask
    if padding:
        blocked = blocked | key_padding[:, None, None, :]
    weights = [conv.keep_convention_weights(scores, keep), conv.tf_convention_weights(scores, tf),
               conv.torch_convention_weights(scores, attn_mask, key_padding)]
    tf = tf.expand(batch, 1, n, n)
    agree = torch.equal(tf, to_tf_mask(keep)) and torch.equal(blocked, to_block_mask(keep))
    return [keep.double(), tf.double(), blocked.double()], weights, agree


def big(value: int) -> str:
    """An integer with thin spaces between thousands (SI style: read the same way in English and Spanish)."""
    return f"{value:,}".replace(",", "\u202f")


def shape(size) -> str:
    return "(" + ",\u00a0".join(map(str, size)) + ")"  # no-break spaces: a shape never wraps


def shapes_table(ids: torch.Tensor, scores_shape: torch.Size, kind: str) -> str:
    """Markdown: each mask builder's output shape, the scores' shape, and which mask is in use."""
    in_use = {"none": None, "causal": 1, "padding": 0, "both": 2}[kind]
    rows = [("padding_mask(tokens, PAD)", core.padding_mask(ids, core.PAD_ID).shape, "masks.shape_padding"),
            ("causal_mask(n)[None, None]", core.causal_mask(ids.shape[1])[None, None].shape, "masks.shape_causal"),
            ("decoder_mask(tokens, PAD)", core.decoder_mask(ids, core.PAD_ID).shape, "masks.shape_both"),
            ("Q Kᵀ / √d_k", scores_shape, "masks.shape_scores")]
    now = " ← **" + t("masks.shape_now") + "**"
    return "\n".join([f"| {t('masks.shape_tensor')} | {t('masks.shape_shape')} | {t('masks.shape_meaning')} |",
                      "|---|---|---|", *(f"| `{name}` | {shape(size)} | {t(key)}{now if k == in_use else ''} |"
                                         for k, (name, size, key) in enumerate(rows))])


def weights_caption(weights: np.ndarray, keep: np.ndarray) -> str:
    blocked = keep == 0
    return t("masks.weights_caption", error=f"{np.abs(weights.sum(axis=1) - 1).max():.1e}",
             blocked=int(blocked.sum()), largest=f"{weights[blocked].max() if blocked.any() else 0.0:g}")


def show_steps(mats: list[np.ndarray], tokens: list[str], key: str, scores_title: str, scores_caption: str) -> None:
    """The five steps, each a matrix panel, two side by side: three would not fit with their legends on a 1366-pixel
    screen (each chart is its plotting area plus about 120 px of labels and legend)."""
    slots = [*st.columns(2, gap="large"), *st.columns(2, gap="large"), st.container()]
    titles = [scores_title, *map(t, STEP_TITLES)]
    captions = [scores_caption, t("masks.mask_caption"), t("masks.additive_caption"), t("masks.masked_caption"),
                weights_caption(mats[4], mats[1])]
    for slot, m, title, caption, scale, name in zip(slots, mats, titles, captions, STEP_SCALES, STEP_NAMES):
        with slot:
            panels.matrix_panel(m, title=title, key=f"{key}_{name}", row_labels=tokens, col_labels=tokens,
                                scale=scale, caption=caption, max_width=260)


def pattern(kind: str, n: int, width: int, dilation: int, n_global: int) -> tuple[torch.Tensor, list[int]]:
    """The pattern's mask (n, n) and its total kept entries for each n in COST_NS (counted in closed form)."""
    if kind == "global":
        mask = global_local_mask(n, width, list(range(min(n_global, n))))
        totals = [int(conv.global_local_kept_per_row(m, width, list(range(n_global))).sum()) for m in COST_NS]
    else:
        step = dilation if kind == "dilated" else 1
        mask = sliding_window_mask(n, width, step)
        totals = [int(conv.window_kept_per_row(m, width, step).sum()) for m in COST_NS]
    return mask, totals


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "padding": {"masks_part": "batch", "masks_sentence": 2, "cfg_mask": "padding", "cfg_seq_len": 8,
                "masks_batch_text": "I love deep learning\nattention is all you need\nhello world"},
    "decoder": {"masks_part": "batch", "masks_sentence": 2, "cfg_mask": "both", "cfg_seq_len": 8,
                "masks_batch_text": "I love deep learning\nattention is all you need\nhello world"},
    "window": {"masks_part": "patterns", "masks_pattern": "window", "masks_width": 2, "cfg_seq_len": 64},
    "global": {"masks_part": "patterns", "masks_pattern": "global", "masks_width": 1, "masks_globals": 2,
               "cfg_seq_len": 16},
}


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


def example_part(settings: state.Settings) -> None:
    """The course's fixed scores through the five steps of a causal mask."""
    st.subheader(t("masks.example_header"))
    prose(t("masks.example_intro"))
    dtype = torch.float32 if settings.device == "mps" else torch.float64
    scores = torch.tensor(EXAMPLE_SCORES, dtype=dtype, device=settings.device)  # (4, 4), fixed, not scaled
    keep = core.causal_mask(len(EXAMPLE), settings.device)  # (4, 4)
    masked = core.apply_mask(scores, keep)  # (4, 4), -inf above the diagonal
    show_steps(as_numpy(scores, keep, core.additive_mask(keep), masked, core.softmax(masked, dim=-1)),
               list(EXAMPLE), "masks_ex", t("masks.step_scores_example"), t("masks.scores_example_caption"))
    st.info(t("masks.example_no_padding"), icon=":material/school:")


def batch_text(seq_len: int) -> None:
    """Keep the typed batch when it is valid, else warn and keep the last valid one; say when sentences are cut."""
    typed, problem = parse_batch(ss["masks_batch_text"])
    if problem:
        kept = " / ".join(" ".join(s) for s in parse_batch(ss["masks_batch"])[0])
        st.warning(t(problem, n=len(typed), lo=MIN_SENTENCES, hi=MAX_SENTENCES, max=MAX_CHARS, kept=md_escape(kept)),
                   icon=":material/edit_off:")
    else:
        ss["masks_batch"] = ss["masks_batch_text"]
    if any(len(s) > seq_len for s in parse_batch(ss["masks_batch"])[0]):
        st.info(t("masks.truncated", seq_len=seq_len), icon=":material/content_cut:")


def pick_sentence(sentences: list[list[str]]) -> int:
    ss["masks_sentence"] = min(ss["masks_sentence"], len(sentences) - 1)
    return links.control(st.selectbox, t("masks.sentence"), range(len(sentences)),
                         format_func=lambda k: f"{k + 1}: {' '.join(sentences[k])[:40]}", setting="masks_sentence",
                         identity=tuple(map(tuple, sentences)))


def pick_head(settings: state.Settings) -> int:
    ss["masks_head"] = min(ss["masks_head"], settings.heads - 1)
    return links.control(st.selectbox, t("masks.head"), range(settings.heads),
                         format_func=lambda k: t("masks.head_n", lang, k=k + 1),
                         help=t("masks.head_help", d_model=settings.d_model, heads=settings.heads),
                         setting="masks_head", identity=(settings.heads,))


def batch_shapes(ids: torch.Tensor, tokens: list[list[str]], mask: torch.Tensor | None, scores: torch.Tensor,
                 kind: str) -> None:
    """The padded batch, its key mask, and the shape of each mask against the scores it is added to."""
    batch, n = ids.shape
    sentence_labels, positions = [t("masks.sentence_n", k=k + 1) for k in range(batch)], [str(j + 1) for j in range(n)]
    grid_slot, pad_slot = st.columns(2, gap="large") if n <= 12 else (st.container(), st.container())
    with grid_slot:
        st.markdown(f"##### {t('masks.grid_title')}")
        grid = pd.DataFrame(tokens, index=sentence_labels, columns=positions)
        st.dataframe(grid.style.map(lambda w: "color: #767676; background-color: #EEEEEE" if w == PAD else ""),
                     width="content")
    with pad_slot:
        panels.matrix_panel((ids != core.PAD_ID).double().cpu().numpy(), title=t("masks.key_mask_title"),
                            key="masks_key_mask", row_labels=sentence_labels, col_labels=positions, scale="weights",
                            caption=t("masks.key_mask_caption"), max_width=320 if n <= 12 else 560)
    st.markdown(shapes_table(ids, scores.shape, kind))
    if mask is None:
        st.markdown(t("masks.broadcast_none", scores=shape(scores.shape)))
    else:
        st.markdown(t("masks.broadcast", mask=shape(mask.shape), scores=shape(scores.shape),
                      result=shape(torch.broadcast_shapes(mask.shape, scores.shape))))


def pad_rows(steps: dict, ids: torch.Tensor, sentences: list[list[str]], tokens: list[list[str]], b: int,
             h: int) -> None:
    """A PAD query whose own row is blocked too: torch.softmax gives NaN, core.softmax zeros."""
    prose(t("masks.pad_rows"))
    with_pad = [k for k in [b, *range(len(sentences))] if len(sentences[k]) < ids.shape[1]]
    if not with_pad:
        st.info(t("masks.no_pad"), icon=":material/info:")
        return
    e = with_pad[0]
    i = len(sentences[e])  # the first PAD query of that sentence
    real = ids[e] != core.PAD_ID  # (n,)
    both_sides = real[:, None] & real[None, :]  # (n, n) blocks PAD queries as well as PAD keys
    row = core.apply_mask(steps["scores"][e, h, i], both_sides[i])  # (n,) every entry -inf
    edge = torch.stack([torch.softmax(row, dim=-1), core.softmax(row, dim=-1)])  # (2, n): NaN vs 0
    edge_col, edge_text = st.columns([3, 2], gap="large")
    with edge_col:
        panels.matrix_panel(as_numpy(edge)[0], title=t("masks.edge_title", sentence=e + 1, position=i + 1),
                            key="masks_edge", row_labels=["torch.softmax", "core.softmax"], col_labels=tokens[e],
                            scale="weights", max_width=420)
    with edge_text:
        st.markdown(t("masks.edge_text", nan=int(torch.isnan(steps["weights"]).sum()), ignore=core.IGNORE_INDEX))


@st.fragment
def batch_part(settings: state.Settings) -> None:
    """The learner's batch through every step, live. A fragment: its own controls rerun only this part."""
    st.subheader(t("masks.batch_header"))
    prose(t("masks.batch_intro"))
    text_col, controls_col = st.columns([3, 2], gap="large")
    with text_col:
        links.control(st.text_area, t("masks.batch_label"), help=t("masks.batch_help", n=settings.seq_len),
                      height=130, max_chars=MAX_CHARS, setting="masks_batch_text")
        st.button(t("masks.batch_reset"), icon=":material/restart_alt:",
                  on_click=lambda: ss.update(masks_batch_text=DEFAULT_BATCH, masks_batch=DEFAULT_BATCH))
    batch_text(settings.seq_len)
    sentences, ids, tokens = load_batch(settings)
    with controls_col:
        st.caption(t("masks.mask_in_sidebar", mask=t(f"mask.{settings.mask}")))
        b, h = pick_sentence(sentences), pick_head(settings)
    mask = batch_mask(ids, settings.mask)
    steps = batch_attention(tokens, mask, settings)
    batch_shapes(ids, tokens, mask, steps["scores"], settings.mask)
    st.markdown(t("masks.steps_intro", sentence=b + 1, head=h + 1, mask=t(f"mask.{settings.mask}")))
    n = ids.shape[1]
    keep = torch.ones(n, n, dtype=torch.bool, device=ids.device) if mask is None else \
        mask.expand(len(tokens), 1, n, n)[b, 0]  # (n, n): sentence b's mask
    show_steps(as_numpy(steps["scores"][b, h], keep, core.additive_mask(keep), steps["masked_scores"][b, h],
                        steps["weights"][b, h]),
               tokens[b], "masks_live", t("masks.step_scores_live", head=h + 1),
               t("masks.scores_live_caption", d_k=settings.d_model // settings.heads, seed=settings.seed))
    pad_rows(steps, ids, sentences, tokens, b, h)


@st.fragment
def conventions_part(settings: state.Settings) -> None:
    """The batch's mask written the three ways libraries write it, and the check that they give one attention."""
    st.subheader(t("masks.conv_header"))
    sentences, ids, tokens = load_batch(settings)
    b = pick_sentence(sentences)
    prose(t("masks.conv_intro", mask=t(f"mask.{settings.mask}"), sentence=b + 1))
    st.caption(t("masks.mask_in_sidebar", mask=t(f"mask.{settings.mask}")))
    steps = batch_attention(tokens, batch_mask(ids, settings.mask), settings)
    conv_masks, conv_weights, agree = conventions(steps["scores"], ids, settings.mask)
    for col, (name, heading, title, caption), matrix, snippet in zip(st.columns(3, gap="medium"), CONVENTIONS,
                                                                      conv_masks, CONVENTION_CODE):
        with col:
            st.markdown(f"**{t(heading)}**")
            st.code(snippet, language="python", wrap_lines=True)
            panels.matrix_panel(matrix[b, 0].numpy(), title=t(title), key=f"masks_conv_{name}", row_labels=tokens[b],
                                col_labels=tokens[b], scale="weights", caption=t(caption), max_width=130)
    same = all(torch.equal(w, conv_weights[0]) for w in conv_weights)  # the three, exactly
    diff = float((conv_weights[0] - steps["weights"].cpu()).abs().max())  # against the live attention (any device)
    if agree and same and diff <= 1e-6:
        st.success(t("masks.conv_agree", diff=f"{diff:.1e}" if diff else "0"), icon=":material/check_circle:")
    else:
        st.error(t("masks.conv_disagree", diff=f"{diff:.3g}"), icon=":material/error:")


def pattern_controls() -> None:
    c1, c2, c3 = st.columns(3, gap="medium")
    with c1:
        links.control(st.selectbox, t("masks.pattern"), list(PATTERNS), format_func=lambda p: t(PATTERNS[p], lang),
                      setting="masks_pattern")
    with c2:
        links.control(st.slider, t("masks.width"), 1, 8, help=t("masks.width_help"), setting="masks_width")
    with c3:
        if ss["masks_pattern"] == "dilated":
            links.control(st.slider, t("masks.dilation"), 2, 4, help=t("masks.dilation_help"), setting="masks_dilation")
        elif ss["masks_pattern"] == "global":
            links.control(st.slider, t("masks.globals"), 1, 4, help=t("masks.globals_help"), setting="masks_globals")


def cost_chart(kind: str, totals: list[int]) -> None:
    """Kept entries as n grows, full attention against the pattern (log-log), and the code behind both."""
    series = {t("masks.cost_full"): [k * k for k in COST_NS], t(PATTERNS[kind]): totals}
    st.altair_chart(charts.growth_lines(COST_NS, series, x_title=t("masks.cost_x"), y_title=t("masks.cost_y"),
                                        title=t("masks.cost_title"),
                                        colors=[charts.PALETTE["key"], charts.PALETTE["query"]], width=280),
                    width="content")
    st.caption(t("masks.cost_caption", n=big(COST_NS[-1]), full=big(COST_NS[-1] ** 2), kept=big(totals[-1]),
                 ratio=f"{COST_NS[-1] ** 2 / totals[-1]:.0f}"))
    if state.current().show_numbers:
        st.dataframe(pd.DataFrame({"n": COST_NS, **series}), hide_index=True, width="content")
    if kind == "global":  # the code of this section, next to it: the fragment reruns it with the pattern
        panels.show_code(sliding_window_mask, global_local_mask, conv.window_kept_per_row,
                         conv.global_local_kept_per_row)
    else:
        panels.show_code(sliding_window_mask, conv.window_kept_per_row)


@st.fragment
def patterns_part(m: int) -> None:
    """Efficient-attention patterns at the sidebar's sequence length m, and their cost as n grows. A fragment:
    its own controls rerun only this part."""
    st.subheader(t("masks.eff_header"))
    prose(t("masks.eff_intro"))
    st.caption(t("masks.seq_len_in_sidebar", n=m))
    pattern_controls()
    words = [w for s in parse_batch(ss["masks_batch"])[0] for w in s]
    labels = [words[j] if j < len(words) else str(j + 1) for j in range(m)]
    kind, width = ss["masks_pattern"], int(ss["masks_width"])
    pattern_mask, totals = pattern(kind, m, width, int(ss["masks_dilation"]), int(ss["masks_globals"]))
    per_row = pattern_mask.sum(-1)  # (m,)
    pat_col, cost_col = st.columns([1, 1], gap="large")
    with pat_col:
        panels.matrix_panel(pattern_mask.double().numpy(), title=t(PATTERNS[kind]), key="masks_pattern_mask",
                            row_labels=labels, col_labels=labels, scale="weights",
                            caption=t("masks.pattern_caption", words=len(words)), max_width=270)
        st.markdown(t("masks.kept", kept=big(int(per_row.sum())), total=big(m * m),
                      share=f"{per_row.sum() / (m * m):.1%}", lo=int(per_row.min()), hi=int(per_row.max())))
    with cost_col:
        cost_chart(kind, totals)


def code_and_notice() -> None:
    panels.show_code(core.causal_mask, core.padding_mask, core.decoder_mask, core.additive_mask, core.apply_mask,
                     core.softmax, core.scaled_dot_product_attention, conv.keep_convention_weights,
                     conv.tf_combined_mask, conv.tf_convention_weights, conv.torch_convention_weights)
    st.subheader(t("masks.notice_header"))
    st.markdown(t("masks.notice"))


settings = state.settings()
lang = settings.lang  # format functions get it now: Streamlit may call them outside the run
ss = st.session_state
for name, value in (("batch_text", DEFAULT_BATCH), ("batch", DEFAULT_BATCH), ("sentence", 0), ("head", 0),
                    ("pattern", "window"), ("width", 2), ("dilation", 2), ("globals", 1)):
    ss.setdefault(f"masks_{name}", value)

part = intro()
if part == "patterns":
    patterns_part(settings.seq_len)
else:
    {"example": example_part, "batch": batch_part, "conventions": conventions_part}[part](settings)
code_and_notice()
