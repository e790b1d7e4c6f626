"""Lesson 7: the feed-forward network, dropout, residual connections and the blocks (CURRICULUM.md, lesson 7).

Every tensor is computed by core's modules (FeedForward, EncoderLayer, DecoderLayer) with weights drawn by
core.init_parameters from the seed, on toy embeddings, in eval mode (dropout off) except in the dropout demo.
The panels, charts, tables and the decoder's sentence box that are not the story live in ui/block_views.py.
"""
import numpy as np
import streamlit as st
import torch

import core
from core.lab import blocks
from core.lab.blocks import GPT2
from core.layers import ACTIVATION
from ui import block_views as views, links, panels, parts, scenes, state, tokens
from ui.i18n import number, t
from ui.presentation import prose

MAX_LAYERS = 12
TARGET_DEFAULT = "el tiempo vuela como una flecha"  # the decoder's side: a translation of the shared sentence


ffn_stages = st.cache_data(max_entries=32, show_spinner=False)(blocks.ffn_stages)
residual_experiment = st.cache_data(max_entries=32, show_spinner=False)(blocks.residual_experiment)
trace_layers = st.cache_data(max_entries=16, show_spinner=False)(blocks.trace_layers)
gpt2_block = st.cache_data(max_entries=4, show_spinner=False)(blocks.gpt2_block)


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    # Each scene names the FFN (which every later part uses), the setting of every other scene's part, and its part.
    "gelu": {"blk_activation": "gelu", "blk_ff_ratio": 4, "blk_dropout": 0.1, "blk_layers": 6,
             "blk_trace_kind": "encoder", "blocks_part": "ffn"},
    "half_dropout": {"blk_activation": "relu", "blk_ff_ratio": 4, "blk_dropout": 0.5, "blk_train": True,
                     "blk_layers": 6, "blk_trace_kind": "encoder", "blocks_part": "dropout"},
    "deep_stack": {"blk_activation": "relu", "blk_ff_ratio": 4, "blk_dropout": 0.1, "blk_layers": 12,
                   "blk_norm_first": True, "blk_trace_kind": "encoder", "blocks_part": "residual"},
    "cross_attention": {"blk_activation": "relu", "blk_ff_ratio": 4, "blk_dropout": 0.1, "blk_layers": 6,
                        "blk_norm_first": True, "blk_trace_kind": "decoder",
                        "blk_tensor_decoder": "cross_attn.hook_weights",
                        "blk_target_text": "el tiempo vuela como una flecha", "blocks_part": "layers"},
}
PARTS = ("ffn", "dropout", "residual", "layers", "gpt2")  # the sub-lessons, one on screen at a time
DEFAULTS = {"ff_ratio": 4, "activation": "relu", "dropout": 0.1, "train": True, "draw": 0, "layers": 6,
            "norm_first": True, "trace_kind": "encoder", "head": 0, "tensor_encoder": "hook_out",
            "tensor_decoder": "cross_attn.hook_weights", "target": TARGET_DEFAULT, "target_text": TARGET_DEFAULT}


def intro() -> None:
    """Title, scenes, what the page builds and the sidebar settings it reads."""
    st.title(t("blocks.title"))
    scenes.picker("blocks", SCENES)
    prose(t("blocks.intro"))
    st.caption(t("blocks.settings_note", d=d, h=h, seq_len=settings.seq_len, seed=seed))


def block_controls() -> tuple[int, str, bool]:
    """The block every part builds on: d_ff, the activation and where the LayerNorm goes (a change reruns the
    lesson's body: every part uses them). Returns (d_ff, activation, norm_first)."""
    st.subheader(t("blocks.block_header"))
    ratio_col, act_col, norm_col = st.columns(3, gap="large")
    with ratio_col:
        ratio = int(ss["blk_ff_ratio"])  # d_ff in the label, so no option's label changes with d (ui.i18n.power_of_ten)
        links.control(st.select_slider, t("blocks.d_ff", ratio=ratio, d_ff=ratio * d), options=list(range(1, 9)),
                      format_func=lambda k: f"{k}×", help=t("blocks.d_ff_help"), setting="blk_ff_ratio")
    with act_col:
        links.control(st.radio, t("blocks.activation"), list(ACTIVATION), format_func=views.ACT_NAME.get,
                      horizontal=True, setting="blk_activation")
    with norm_col:
        links.control(st.radio, t("blocks.norm_first"), [True, False], horizontal=True,
                      help=t("blocks.norm_first_help"), setting="blk_norm_first",
                      format_func=lambda pre: t("blocks.pre_norm" if pre else "blocks.post_norm", lang))
    return int(ss["blk_ff_ratio"]) * d, ss["blk_activation"], bool(ss["blk_norm_first"])


def ffn(stages: list[np.ndarray], ff_params: int, d_ff: int, activation: str, zero: float) -> None:
    """Part 1: the position-wise FFN, its activations and its four stages on the toy input."""
    st.header(t("blocks.ffn_header"))
    prose(t("blocks.ffn_intro"))
    st.latex(r"\mathrm{FFN}(x) = \phi(x W_1 + b_1)\, W_2 + b_2, \quad W_1 \in \mathbb{R}^{d_{model} \times d_{ff}},"
             r"\ W_2 \in \mathbb{R}^{d_{ff} \times d_{model}}")
    st.latex(r"\mathrm{ReLU}(z) = \max(0, z), \qquad \mathrm{GELU}(z) = z\,\Phi(z)")
    curve_col, size_col = st.columns([2, 1], gap="large")
    with curve_col:
        views.activation_curves()
    with size_col:
        st.markdown(t("blocks.ffn_size", d=d, d_ff=d_ff, params=ff_params, weights=2 * d * d_ff, biases=d_ff + d))
        st.metric(t("blocks.zero_fraction", act=views.ACT_NAME[activation]), number(zero, ".1%"))
    st.subheader(t("blocks.stages_header"))
    st.caption(t("blocks.toy_note"))
    views.stage_panels(stages, words, d, d_ff, activation)


@st.fragment
def dropout(Y: np.ndarray) -> None:
    """Part 2: dropout on the FFN's output, in training or eval mode; its controls rerun this part only."""
    st.header(t("blocks.dropout_header"))
    prose(t("blocks.dropout_intro"))
    st.latex(rf"\text{{{t('blocks.train_word')}: }} \mathrm{{Dropout}}(x)_i = \frac{{m_i\, x_i}}{{1 - p}},\ "
             rf"m_i \sim \mathrm{{Bernoulli}}(1 - p) \qquad "
             rf"\text{{{t('blocks.eval_word')}: }} \mathrm{{Dropout}}(x) = x")
    p_col, mode_col = st.columns([3, 2], gap="large", vertical_alignment="bottom")
    with p_col:
        links.control(st.slider, t("blocks.p"), 0.0, 0.9, step=0.05, help=t("blocks.p_help"), setting="blk_dropout")
    with mode_col:
        links.control(st.toggle, t("blocks.train_mode"), help=t("blocks.train_help"), setting="blk_train")
        st.button(t("blocks.redraw"), on_click=lambda: ss.update(blk_draw=ss["blk_draw"] + 1), icon=":material/casino:")
    p, training = float(ss["blk_dropout"]), bool(ss["blk_train"])
    draw = seed + int(ss["blk_draw"])
    st.caption(t("common.cpu_only"))  # the draws come from torch's CPU generator, so the mask is the same anywhere
    dropped, kept = (core.to_numpy(m) for m in blocks.apply_dropout(torch.tensor(Y), p, training, draw))  # (n, d)
    if training:
        survivors = kept.astype(bool)
        st.markdown(t("blocks.dropout_stats", zeroed=int((~survivors).sum()), total=kept.size,
                      frac=1 - float(survivors.mean()), p=p, scale=1 / (1 - p), mean_in=float(Y.mean()),
                      mean_out=float(dropped.mean())))
    else:
        st.info(t("blocks.eval_identity"), icon=":material/visibility:")
    keep_col, drop_col = st.columns(2, gap="large")
    with keep_col:
        views.panel(kept, t("blocks.mask_title"), "blk_mask", words, scale="mask", caption=t("blocks.mask_caption"),
                    width=240)
    with drop_col:
        views.panel(dropped, t("blocks.dropped_title"), "blk_dropped", words, caption=t("blocks.dropped_caption"),
                    width=240)


@st.fragment
def residual(d_ff: int, activation: str, norm_first: bool) -> None:
    """Part 3: a stack of encoder layers with and without the residual additions; its slider reruns this part."""
    st.header(t("blocks.residual_header"))
    prose(t("blocks.residual_intro"))
    st.latex(rf"\text{{{t('blocks.pre_norm')}: }} x + \mathrm{{Dropout}}(\mathrm{{Sublayer}}(\mathrm{{LN}}(x))) \qquad"
             rf"\text{{{t('blocks.post_norm')}: }} \mathrm{{LN}}(x + \mathrm{{Dropout}}(\mathrm{{Sublayer}}(x)))")
    links.control(st.slider, t("blocks.layers"), 1, MAX_LAYERS, help=t("blocks.layers_help"), setting="blk_layers",
                  width=480)
    n_layers = int(ss["blk_layers"])
    stats = residual_experiment(tuple(words), d, h, d_ff, activation, norm_first, n_layers, seed, device)
    views.residual_charts(stats, len(words) > 1, settings.show_numbers)
    first, last = stats["with"][0], {k: v[-1] for k, v in stats.items()}  # (norm, cosine) of the input, the output
    st.markdown(t("blocks.notice_residual", n=n_layers, w=last["with"][0], wo=last["without"][0], x0=first[0]))
    if len(words) > 1:
        st.markdown(t("blocks.notice_similar", sw=last["with"][1], swo=last["without"][1]))


@st.fragment
def layers(d_ff: int, activation: str, norm_first: bool) -> None:
    """Part 4: an encoder layer and a decoder layer traced, any hook tensor drawn; its controls rerun this part."""
    st.header(t("blocks.layers_header"))
    prose(t("blocks.layers_intro"))
    target = views.target_tokens(settings.seq_len)
    traced = trace_layers(tuple(words), tuple(target), d, h, d_ff, activation, norm_first, seed, device)
    views.sublayer_tables(traced)
    links.control(st.radio, t("blocks.trace_kind"), ["encoder", "decoder"], horizontal=True,
                  format_func=lambda k: t(f"blocks.kind_{k}", lang), setting="blk_trace_kind")
    kind = ss["blk_trace_kind"]
    tensors = traced[kind][0]
    views.shapes_table(kind, tensors)
    name, matrix = views.pick_tensor(kind, tensors, h)
    side = {"src": words, "tgt": target, None: None}
    rows, cols = (side[axis] for axis in blocks.tensor_axes(kind, name))
    views.panel(matrix, f"{t(f'blocks.kind_{kind}')}: {name}", "blk_traced", rows, cols,
                scale=views.scale_of(name), caption=views.hook_text(name))


def gpt2() -> None:
    """Part 5: a GPT-2-small-sized block built and counted, and the three families of Transformers."""
    st.header(t("blocks.gpt2_header"))
    prose(t("blocks.gpt2_intro"))
    prose(t("blocks.gpt2_built"))
    gx, gy, counts = gpt2_block(seed, device)
    views.gpt2_tables(counts)
    total = sum(counts.values())
    st.markdown(t("blocks.gpt2_shapes", x=str(gx), y=str(gy), params=total))
    st.caption(t("blocks.gpt2_note", blocks=GPT2["layers"] * total))
    st.subheader(t("blocks.families_header"))
    views.families_table()


def closing(activation: str, zero: float, d_ff: int) -> None:
    """The code, and what to notice (the residual stack's numbers are under its charts, in part 3)."""
    panels.show_code(core.FeedForward, core.layers._Block, core.EncoderLayer, core.DecoderLayer, blocks.apply_dropout,
                     blocks.without_residual)
    st.subheader(t("blocks.notice_header"))
    st.markdown(t("blocks.notice_ffn", act=views.ACT_NAME[activation], zero=zero, d=d, d_ff=d_ff))
    st.markdown(t("blocks.notice_points"))


@st.fragment
def body() -> None:
    """Everything under the intro: the block's controls, the part on screen and the closing. The controls change
    every part, so they rerun this body (not the sidebar and the intro); a part's own controls rerun that part."""
    d_ff, activation, norm_first = block_controls()
    stages, ff_params = ffn_stages(tuple(words), d, d_ff, activation, seed, device)  # X, X W1 + b1, φ(.), FFN(X)
    zero = float((stages[2] == 0).mean())  # the share of exact zeros in the hidden layer
    part = parts.pick("blocks_part", PARTS, label=t("blocks.part"),
                      format_func=lambda p: t(f"blocks.part_of.{p}", lang))
    if part == "ffn":
        ffn(stages, ff_params, d_ff, activation, zero)
    elif part == "dropout":
        dropout(stages[3])
    elif part == "residual":
        residual(d_ff, activation, norm_first)
    elif part == "layers":
        layers(d_ff, activation, norm_first)
    else:
        gpt2()
    closing(activation, zero, d_ff)


settings = state.settings()
ss = st.session_state
for _name, _value in DEFAULTS.items():
    ss.setdefault(f"blk_{_name}", _value)
d, h, seed, device = settings.d_model, settings.heads, settings.seed, settings.device
lang = settings.lang  # format functions get the language now: Streamlit may call them outside the run
words = tokens.sentence_tokens(settings.seq_len)

intro()
body()
