"""Lesson 7's presentation machinery (lessons/07_blocks.py): the capped matrix panels, the activation curves and
the FFN's four stages, the residual stream's charts and numbers, the decoder's sentence box, the sub-layer and
traced-tensor tables with the tensor picker, and the GPT-2 and families tables."""

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core.lab import blocks
from core.lab.blocks import GPT2
from core.layers import ACTIVATION
from ui import charts, links, panels, state, tables
from ui.i18n import md_escape, number, t

MAX_CELLS = 4096  # at most this many cells per heatmap; bigger tensors show their first columns
ROWS_NAMED = 16  # a picture's caption names its first rows (tokens)
PICTURE_FRAME = 110  # px: a picture's width is its image's; its axes and legend come on top (a heatmap's, within)
WIDE = 760  # px of a d_ff-wide panel: with its axes and legend (about 110 px) it fits the main area at 1280 x 720
TARGET_MAX_CHARS = 300
ACT_NAME = {"relu": "ReLU", "gelu": "GELU"}
FAMILIES = ("enc", "dec", "encdec")  # blocks.fam_<family>_name, _attn, _use


def hook_text(name: str) -> str:
    """What a traced tensor is, from its name: 'norm_ff.hook_std' -> the description of norm.hook_std."""
    return t("blocks.hook." + blocks.hook_kind(name))


def scale_of(hook: str) -> str | None:
    """The colour scale of a traced tensor: weights and scores by their kind, anything else by its values."""
    if hook.endswith("hook_weights"):
        return "weights"
    return "scores" if hook.endswith(("hook_scores", "hook_masked_scores")) else None


def panel(matrix: np.ndarray, title: str, key: str, rows, cols=None, scale=None, caption="", width=560) -> None:
    """A matrix panel of at most MAX_CELLS cells: a wide matrix shows its first columns and says so; past
    panels.PICTURE_CELLS it is one picture."""
    total = matrix.shape[1]
    shown = matrix[:, :max(1, min(total, MAX_CELLS // max(1, matrix.shape[0])))]
    cols = list(range(total)) if cols is None else cols
    if shown.shape[1] < total:
        caption = (caption + " " + t("blocks.sliced", shown=shown.shape[1], total=total)).strip()
    if shown.size > panels.PICTURE_CELLS:
        picture_panel(shown, title, key, rows, cols[:shown.shape[1]], scale, caption, width)
        return
    panels.matrix_panel(shown, title=title, key=key, row_labels=rows, col_labels=cols[:shown.shape[1]],
                        scale=scale, caption=caption or None, max_width=width)


def picture_panel(matrix: np.ndarray, title: str, key: str, rows, cols, scale, caption: str, width: int) -> None:
    """What panels.matrix_panel draws for a matrix past its own picture size: the title with the shape, the
    captions, the matrix as one picture (rows numbered from 0, so a caption names them), the numbers when asked
    for, and the downloads."""
    shape = t("panel.shape", rows=matrix.shape[0], cols=matrix.shape[1]).replace(" ", "\u00a0")
    st.markdown(f"##### {title} &nbsp; {shape}")
    named = [md_escape(str(w)) for w in rows[:ROWS_NAMED]] + (["…"] if len(rows) > ROWS_NAMED else [])
    st.caption(" ".join(filter(None, (caption, t("blocks.picture_rows", rows=", ".join(named)),
                                      t("panel.as_picture")))))
    drawn = panels.picture(matrix, scale, width - PICTURE_FRAME, title=title)
    panels.svg_image(drawn)
    if state.current().show_numbers:
        panels.numbers_table(matrix, rows, cols, key=f"{key}_numbers")
    panels.download_menu(lambda: drawn.svg, panels.numbers_frame(matrix, rows, cols), key)


def activation_curves() -> None:
    """ReLU and GELU over z in [-4, 4], computed by core's activation modules."""
    z = torch.linspace(-4, 4, 161)  # (161,)
    curves = {ACT_NAME[name]: core.to_numpy(module()(z)) for name, module in ACTIVATION.items()}  # each (161,)
    panels.svg_image(charts.lines(core.to_numpy(z), curves, x_title="z", y_title=t("blocks.activation_value"),
                                  title=t("blocks.curves_title")))


def stage_panels(stages: list[np.ndarray], words: list[str], d: int, d_ff: int, activation: str) -> None:
    """X, X W1 + b1, φ(.) and FFN(X), one panel each; d_model-wide panels drawn narrower than d_ff-wide ones."""
    cap = max(1, MAX_CELLS // len(words))  # columns drawn per matrix
    narrow = max(200, WIDE * min(d, cap) // min(d_ff, cap))
    titles = ((t("blocks.X_title"), "blk_X", t("blocks.X_caption")),
              (t("blocks.pre_title"), "blk_pre", t("blocks.pre_caption", d_ff=d_ff)),
              (t("blocks.hidden_title", act=ACT_NAME[activation]), "blk_hidden",
               t(f"blocks.hidden_caption_{activation}")),
              (t("blocks.out_title"), "blk_ffn_out", t("blocks.out_caption")))
    for matrix, (title, key, caption) in zip(stages, titles):
        panel(matrix, title, key, words, caption=caption, width=WIDE if matrix.shape[1] == d_ff else narrow)


def layer_lines(layers: list[int], series: dict, y_title: str, title: str) -> charts.SvgChart:
    """charts.lines narrowed to fit half the page, whole-number layer ticks."""
    return charts.lines(layers, series, x_title=t("blocks.layer"), y_title=y_title, title=title,
                        colors=[charts.PALETTE["query"], charts.PALETTE["key"]], width=320, whole_x=True)


def residual_charts(stats: dict, several: bool, show_numbers: bool) -> None:
    """The mean token norm and (with `several` tokens) the mean cosine per layer, with and without the residual
    additions; their numbers in a table when asked for."""
    norms = {t(f"blocks.{k}_residual"): [s[0] for s in v] for k, v in stats.items()}
    similar = {t(f"blocks.{k}_residual"): [s[1] for s in v] for k, v in stats.items()}
    layer_axis = list(range(len(stats["with"])))
    norm_col, sim_col = st.columns(2, gap="large")
    with norm_col:
        panels.svg_image(layer_lines(layer_axis, norms, t("blocks.norm_axis"), t("blocks.norm_title")))
    with sim_col:
        if several:
            panels.svg_image(layer_lines(layer_axis, similar, t("blocks.cos_axis"), t("blocks.cos_title")))
        else:
            st.info(t("blocks.cos_one_token"), icon=":material/info:")
    st.caption(t("blocks.residual_caption"))
    if show_numbers:
        numbers = {t("blocks.layer"): layer_axis} | {f"{k} · {t('blocks.norm_axis')}": v for k, v in norms.items()}
        if several:
            numbers |= {f"{k} · {t('blocks.cos_axis')}": v for k, v in similar.items()}
        tables.dataframe(pd.DataFrame(numbers), hide_index=True, key="blk_residual_numbers")


def target_tokens(seq_len: int) -> list[str]:
    """The decoder's sentence from its text box: an empty box keeps the last sentence; cut to seq_len tokens."""
    ss = st.session_state
    links.control(st.text_input, t("blocks.target"), max_chars=TARGET_MAX_CHARS,
                  help=t("blocks.target_help", n=seq_len), setting="blk_target_text")
    if ss["blk_target_text"].split():
        ss["blk_target"] = ss["blk_target_text"]
    else:
        st.warning(t("blocks.target_empty", kept=md_escape(ss["blk_target"])), icon=":material/edit_off:")
    target = ss["blk_target"].split()
    if len(target) > seq_len:
        st.info(t("blocks.target_truncated", n=len(target), seq_len=seq_len), icon=":material/content_cut:")
    return target[:seq_len]


def sublayer_tables(traced: dict) -> None:
    """Each layer's residual sub-layers: the LayerNorm before and the hook after."""
    for kind, (_, rows) in traced.items():
        st.markdown(t(f"blocks.{kind}_sublayers", n=len(rows)))
        table = pd.DataFrame([{t("blocks.col_sublayer"): t(f"blocks.sub_{kind}_{sub}"), t("blocks.col_norm"): norm,
                               t("blocks.col_after"): after} for norm, sub, after in rows])
        st.table(table.set_axis(pd.RangeIndex(1, len(table) + 1, name="#")))


def shapes_table(kind: str, tensors: dict) -> None:
    """Every tensor one layer recorded: its hook name, its shape and what it is."""
    st.container(key=f"blk_shapes_{kind}").dataframe(  # its container names the table (tests)
        pd.DataFrame({t("blocks.col_name"): list(tensors),
                      t("blocks.col_shape"): [str(tuple(v.shape)) for v in tensors.values()],
                      t("blocks.col_what"): [hook_text(name) for name in tensors]}),
        hide_index=True, row_height=35, height=min(35 * (len(tensors) + 1) + 3, 800))


def pick_tensor(kind: str, tensors: dict, heads: int) -> tuple[str, np.ndarray]:
    """The traced tensor to draw and, for a per-head tensor, the head. Returns (name, its matrix for sentence 0)."""
    ss = st.session_state
    choice_key = f"blk_tensor_{kind}"
    if ss[choice_key] not in tensors:
        ss[choice_key] = "hook_out"
    pick_col, head_col = st.columns([3, 1], gap="large")
    with pick_col:
        links.control(st.selectbox, t("blocks.pick_tensor"), list(tensors),
                      format_func=lambda n: f"{n}  {tensors[n].shape}", setting=choice_key)
    name = ss[choice_key]
    matrix = tensors[name][0]
    if matrix.ndim == 3:  # (heads, rows, cols): one head at a time
        ss["blk_head"] = min(int(ss["blk_head"]), heads - 1)
        with head_col:
            links.control(st.selectbox, t("blocks.head"), list(range(heads)), setting="blk_head")
        matrix = matrix[int(ss["blk_head"])]
    return name, matrix


def gpt2_tables(counts: dict[str, int]) -> None:
    """GPT-2 small's settings, and the block's parameters per module with the formula that gives each count."""
    config_col, build_col = st.columns(2, gap="large")
    with config_col:
        st.table(pd.DataFrame({t("blocks.col_value"): [number(v, ",") for v in GPT2.values()]},
                              index=pd.Index([t(f"blocks.gpt2_{key}") for key in GPT2], name=t("blocks.col_setting"))))
    with build_col:
        params = [number(n, ",") for n in [*counts.values(), sum(counts.values())]]
        st.table(pd.DataFrame({t("blocks.col_params"): params,
                               t("blocks.col_formula"): [*blocks.gpt2_formulas(list(counts)), ""]},
                              index=pd.Index([*counts, t("blocks.total")], name=t("blocks.col_module"))))


def families_table() -> None:
    """Encoder-only, decoder-only and encoder-decoder: the attention each uses and what it is used for."""
    st.table(pd.DataFrame({t(f"blocks.fam_col_{col}"): [t(f"blocks.fam_{f}_{col}") for f in FAMILIES]
                           for col in ("attn", "use")},
                          index=pd.Index([t(f"blocks.fam_{f}_name") for f in FAMILIES], name=t("blocks.fam_col_name"))))
