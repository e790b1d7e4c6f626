"""Lesson 7: the feed-forward network, dropout, residual connections and the blocks (CURRICULUM.md, lesson 7).

Every tensor is computed by core's modules (FeedForward, EncoderLayer, DecoderLayer) with weights drawn by
core.init_parameters from the seed, on toy embeddings, in eval mode (dropout off) except in the dropout demo.
"""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core.lab import blocks
from core.lab.blocks import GPT2
from core.layers import ACTIVATION
from ui import charts, links, panels, parts, scenes, state, tokens
from ui.i18n import current_language, md_escape, t
from ui.presentation import prose

MAX_CELLS = 4096  # at most this many cells per heatmap; bigger tensors show their first columns
MAX_LAYERS = 12
TARGET_DEFAULT = "el tiempo vuela como una flecha"  # the decoder's side: a translation of the shared sentence
TARGET_MAX_CHARS = 300
ACT_NAME = {"relu": "ReLU", "gelu": "GELU"}
FAMILIES = ("enc", "dec", "encdec")  # blocks.fam_<family>_name, _attn, _use


ffn_stages = st.cache_data(max_entries=32, show_spinner=False)(blocks.ffn_stages)
residual_experiment = st.cache_data(max_entries=32, show_spinner=False)(blocks.residual_experiment)
trace_layers = st.cache_data(max_entries=16, show_spinner=False)(blocks.trace_layers)
gpt2_block = st.cache_data(max_entries=4, show_spinner=False)(blocks.gpt2_block)


def layer_lines(layers: list[int], series: dict, y_title: str, title: str):
    """charts.lines narrowed to fit half the page, whole-number layer ticks, the legend underneath."""
    chart = charts.lines(layers, series, x_title=t("blocks.layer"), y_title=y_title, title=title,
                         colors=[charts.PALETTE["query"], charts.PALETTE["key"]])
    axis = alt.Axis(title=t("blocks.layer"), tickMinStep=1, format="d", labelFontSize=12, titleFontSize=14)
    return chart.encode(x=alt.X("x:Q", axis=axis)).properties(width=320).configure_legend(orient="bottom")


def big(n: int) -> str:
    """A whole number with its digits grouped: 7,084,800 in English, 7 084 800 in Spanish (RAE: a space)."""
    return f"{n:,}".replace(",", "," if current_language() == "en" else "\u00a0")


def hook_text(name: str) -> str:
    """What a traced tensor is, from its name: 'norm_ff.hook_std' -> the description of norm.hook_std."""
    return t("blocks.hook." + blocks.hook_kind(name))


def panel(matrix: np.ndarray, title: str, key: str, rows, cols=None, scale=None, caption="", width=560) -> None:
    """A matrix panel of at most MAX_CELLS cells: a wide matrix shows its first columns and says so."""
    total = matrix.shape[1]
    shown = matrix[:, :max(1, min(total, MAX_CELLS // max(1, matrix.shape[0])))]
    cols = list(range(total)) if cols is None else cols
    if shown.shape[1] < total:
        caption = (caption + " " + t("blocks.sliced", shown=shown.shape[1], total=total)).strip()
    panels.matrix_panel(shown, title=title, key=key, row_labels=rows, col_labels=cols[:shown.shape[1]],
                        scale=scale, caption=caption or None, max_width=width)


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
    whole lesson). Returns (d_ff, activation, norm_first)."""
    st.subheader(t("blocks.block_header"))
    ratio_col, act_col, norm_col = st.columns(3, gap="large")
    with ratio_col:
        links.control(st.select_slider, t("blocks.d_ff"), options=list(range(1, 9)),
                      format_func=lambda k: f"{k * d} ({k}×)", help=t("blocks.d_ff_help"), setting="blk_ff_ratio")
    with act_col:
        links.control(st.radio, t("blocks.activation"), list(ACTIVATION), format_func=ACT_NAME.get, horizontal=True,
                      setting="blk_activation")
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
    z = torch.linspace(-4, 4, 161)  # (161,)
    curves = {ACT_NAME[name]: core.to_numpy(module()(z)) for name, module in ACTIVATION.items()}  # each (161,)
    curve_col, size_col = st.columns([2, 1], gap="large")
    with curve_col:
        st.altair_chart(charts.lines(core.to_numpy(z), curves, x_title="z", y_title=t("blocks.activation_value"),
                                     title=t("blocks.curves_title")), width="content")
    with size_col:
        st.markdown(t("blocks.ffn_size", d=d, d_ff=d_ff, params=big(ff_params), weights=big(2 * d * d_ff),
                      biases=big(d_ff + d)))
        st.metric(t("blocks.zero_fraction", act=ACT_NAME[activation]), f"{zero:.1%}")
    st.subheader(t("blocks.stages_header"))
    st.caption(t("blocks.toy_note"))
    cap = max(1, MAX_CELLS // len(words))  # columns drawn per matrix
    narrow = max(200, 900 * min(d, cap) // min(d_ff, cap))  # d_model-wide panels drawn narrower than d_ff-wide ones
    titles = ((t("blocks.X_title"), "blk_X", t("blocks.X_caption")),
              (t("blocks.pre_title"), "blk_pre", t("blocks.pre_caption", d_ff=d_ff)),
              (t("blocks.hidden_title", act=ACT_NAME[activation]), "blk_hidden",
               t(f"blocks.hidden_caption_{activation}")),
              (t("blocks.out_title"), "blk_ffn_out", t("blocks.out_caption")))
    for matrix, (title, key, caption) in zip(stages, titles):
        panel(matrix, title, key, words, caption=caption, width=900 if matrix.shape[1] == d_ff else narrow)


@st.fragment
def dropout(Y: np.ndarray) -> None:
    """Part 2: dropout on the FFN's output, in training or eval mode; its controls rerun this part only."""
    st.header(t("blocks.dropout_header"))
    prose(t("blocks.dropout_intro"))
    st.latex(rf"\text{{{t('blocks.train_word')}: }} \mathrm{{Dropout}}(x)_i = \frac{{m_i\, x_i}}{{1 - p}},\ "
             rf"m_i \sim \mathrm{{Bernoulli}}(1 - p) \qquad \text{{{t('blocks.eval_word')}: }} \mathrm{{Dropout}}(x) = x")
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
                      frac=f"{1 - survivors.mean():.3f}", p=f"{p:.2f}", scale=f"{1 / (1 - p):.4f}",
                      mean_in=f"{Y.mean():.4f}", mean_out=f"{dropped.mean():.4f}"))
    else:
        st.info(t("blocks.eval_identity"), icon=":material/visibility:")
    keep_col, drop_col = st.columns(2, gap="large")
    with keep_col:
        panel(kept, t("blocks.mask_title"), "blk_mask", words, scale="mask", caption=t("blocks.mask_caption"),
              width=420)
    with drop_col:
        panel(dropped, t("blocks.dropped_title"), "blk_dropped", words, caption=t("blocks.dropped_caption"), width=420)


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
    norms = {t(f"blocks.{k}_residual"): [s[0] for s in v] for k, v in stats.items()}
    similar = {t(f"blocks.{k}_residual"): [s[1] for s in v] for k, v in stats.items()}
    layer_axis = list(range(n_layers + 1))
    norm_col, sim_col = st.columns(2, gap="large")
    with norm_col:
        st.altair_chart(layer_lines(layer_axis, norms, t("blocks.norm_axis"), t("blocks.norm_title")), width="content")
    with sim_col:
        if len(words) > 1:
            st.altair_chart(layer_lines(layer_axis, similar, t("blocks.cos_axis"), t("blocks.cos_title")),
                            width="content")
        else:
            st.info(t("blocks.cos_one_token"), icon=":material/info:")
    st.caption(t("blocks.residual_caption"))
    if settings.show_numbers:
        numbers = {t("blocks.layer"): layer_axis} | {f"{k} · {t('blocks.norm_axis')}": v for k, v in norms.items()}
        if len(words) > 1:
            numbers |= {f"{k} · {t('blocks.cos_axis')}": v for k, v in similar.items()}
        st.dataframe(pd.DataFrame(numbers), hide_index=True, key="blk_residual_numbers",
                     column_config={c: st.column_config.NumberColumn(format="%.4f") for c in list(numbers)[1:]})
    last = {k: v[-1] for k, v in stats.items()}
    st.markdown(t("blocks.notice_residual", n=n_layers, w=f"{last['with'][0]:.2f}", wo=f"{last['without'][0]:.2f}",
                  x0=f"{stats['with'][0][0]:.2f}"))
    if len(words) > 1:
        st.markdown(t("blocks.notice_similar", sw=f"{last['with'][1]:.2f}", swo=f"{last['without'][1]:.2f}"))


def target_tokens() -> list[str]:
    """The decoder's sentence from its text box: an empty box keeps the last sentence; cut to seq_len tokens."""
    links.control(st.text_input, t("blocks.target"), max_chars=TARGET_MAX_CHARS,
                  help=t("blocks.target_help", n=settings.seq_len), setting="blk_target_text")
    if ss["blk_target_text"].split():
        ss["blk_target"] = ss["blk_target_text"]
    else:
        st.warning(t("blocks.target_empty", kept=md_escape(ss["blk_target"])), icon=":material/edit_off:")
    target = ss["blk_target"].split()
    if len(target) > settings.seq_len:
        st.info(t("blocks.target_truncated", n=len(target), seq_len=settings.seq_len), icon=":material/content_cut:")
    return target[:settings.seq_len]


def sublayer_tables(traced: dict) -> None:
    """Each layer's residual sub-layers: the LayerNorm before and the hook after."""
    for kind, (_, rows) in traced.items():
        st.markdown(t(f"blocks.{kind}_sublayers", n=len(rows)))
        table = pd.DataFrame([{t("blocks.col_sublayer"): t(f"blocks.sub_{kind}_{sub}"), t("blocks.col_norm"): norm,
                               t("blocks.col_after"): after} for norm, sub, after in rows])
        st.table(table.set_axis(pd.RangeIndex(1, len(table) + 1, name="#")))


@st.fragment
def layers(d_ff: int, activation: str, norm_first: bool) -> None:
    """Part 4: an encoder layer and a decoder layer traced, any hook tensor drawn; its controls rerun this part."""
    st.header(t("blocks.layers_header"))
    prose(t("blocks.layers_intro"))
    target = target_tokens()
    traced = trace_layers(tuple(words), tuple(target), d, h, d_ff, activation, norm_first, seed, device)
    sublayer_tables(traced)
    links.control(st.radio, t("blocks.trace_kind"), ["encoder", "decoder"], horizontal=True,
                  format_func=lambda k: t(f"blocks.kind_{k}", lang), setting="blk_trace_kind")
    kind = ss["blk_trace_kind"]
    tensors = traced[kind][0]
    st.dataframe(pd.DataFrame({t("blocks.col_name"): list(tensors),
                               t("blocks.col_shape"): [str(tuple(v.shape)) for v in tensors.values()],
                               t("blocks.col_what"): [hook_text(name) for name in tensors]}),
                 hide_index=True, key=f"blk_shapes_{kind}", row_height=35, height=min(35 * (len(tensors) + 1) + 3, 800))
    choice_key = f"blk_tensor_{kind}"
    if ss[choice_key] not in tensors:
        ss[choice_key] = "hook_out"
    pick_col, head_col = st.columns([3, 1], gap="large")
    with pick_col:
        links.control(st.selectbox, t("blocks.pick_tensor"), list(tensors),
                      format_func=lambda n: f"{n}  {tensors[n].shape}", setting=choice_key, identity=tuple(tensors))
    name = ss[choice_key]
    matrix = tensors[name][0]
    if matrix.ndim == 3:  # (heads, rows, cols): one head at a time
        ss["blk_head"] = min(int(ss["blk_head"]), h - 1)
        with head_col:
            links.control(st.selectbox, t("blocks.head"), list(range(h)), setting="blk_head", identity=(h,))
        matrix = matrix[int(ss["blk_head"])]
    side = {"src": words, "tgt": target, None: None}
    rows, cols = (side[axis] for axis in blocks.tensor_axes(kind, name))
    panel(matrix, f"{t(f'blocks.kind_{kind}')}: {name}", "blk_traced", rows, cols,
          scale="weights" if name.endswith("hook_weights") else None, caption=hook_text(name))


def gpt2() -> None:
    """Part 5: a GPT-2-small-sized block built and counted, and the three families of Transformers."""
    st.header(t("blocks.gpt2_header"))
    prose(t("blocks.gpt2_intro"))
    prose(t("blocks.gpt2_built"))
    gx, gy, counts = gpt2_block(seed, device)
    config_col, build_col = st.columns(2, gap="large")
    with config_col:
        st.table(pd.DataFrame({t("blocks.col_value"): [big(v) if isinstance(v, int) else str(v) for v in GPT2.values()]},
                              index=pd.Index([t(f"blocks.gpt2_{key}") for key in GPT2], name=t("blocks.col_setting"))))
    with build_col:
        st.table(pd.DataFrame({t("blocks.col_params"): [big(n) for n in [*counts.values(), sum(counts.values())]],
                               t("blocks.col_formula"): [*blocks.gpt2_formulas(list(counts)), ""]},
                              index=pd.Index([*counts, t("blocks.total")], name=t("blocks.col_module"))))
    st.markdown(t("blocks.gpt2_shapes", x=str(gx), y=str(gy), params=big(sum(counts.values()))))
    st.caption(t("blocks.gpt2_note", blocks=big(GPT2["layers"] * sum(counts.values()))))
    st.subheader(t("blocks.families_header"))
    st.table(pd.DataFrame({t(f"blocks.fam_col_{col}"): [t(f"blocks.fam_{f}_{col}") for f in FAMILIES]
                           for col in ("attn", "use")},
                          index=pd.Index([t(f"blocks.fam_{f}_name") for f in FAMILIES], name=t("blocks.fam_col_name"))))


def closing(activation: str, zero: float, d_ff: int) -> None:
    """The code, and what to notice (the residual stack's numbers are under its charts, in part 3)."""
    panels.show_code(core.FeedForward, core.layers._Block, core.EncoderLayer, core.DecoderLayer, blocks.apply_dropout,
                     blocks.without_residual)
    st.subheader(t("blocks.notice_header"))
    st.markdown(t("blocks.notice_ffn", act=ACT_NAME[activation], zero=f"{zero:.1%}", d=d, d_ff=d_ff))
    st.markdown(t("blocks.notice_points"))


settings = state.settings()
ss = st.session_state
for _name, _value in DEFAULTS.items():
    ss.setdefault(f"blk_{_name}", _value)
d, h, seed, device = settings.d_model, settings.heads, settings.seed, settings.device
lang = settings.lang  # format functions get the language now: Streamlit may call them outside the run
words = tokens.sentence_tokens(settings.seq_len, "blocks")

intro()
d_ff, activation, norm_first = block_controls()
stages, ff_params = ffn_stages(tuple(words), d, d_ff, activation, seed, device)  # X, X W1 + b1, φ(.), FFN(X)
zero = float((stages[2] == 0).mean())  # the share of exact zeros in the hidden layer
part = parts.pick("blocks_part", PARTS, label=t("blocks.part"), format_func=lambda p: t(f"blocks.part_of.{p}", lang))
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
