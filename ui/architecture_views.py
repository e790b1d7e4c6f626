"""Lesson 8's presentation machinery (lessons/08_architecture.py): the size controls, the encoder-decoder drawn as
SVG on the server (ui/diagram.py), and the tables of parameters, multiply-adds, memory, published sizes and the
RNN comparison."""
import pandas as pd
import streamlit as st

from core.lab import costs
from ui import charts, i18n, links, state, tables
from ui.diagram import MARGIN, Branch, Column, Frame, Link, Node, layout, render
from ui.i18n import t

LAYERS_RANGE, VOCAB_RANGE, D_FF_RANGE = (1, 48), (1, 262_144), (1, 16_384)
COURSE = {"d_model": 512, "heads": 8, "d_ff": 2048, "layers": 6}
SIZES = (("arch.size_original", "2017", "6 + 6", 65), ("arch.size_bert", "2018", "12", 110),
         ("arch.size_gpt2", "2019", "48", 1500), ("arch.size_t5", "2020", "12 + 12", 220),
         ("arch.size_gpt3", "2020", "96", 175_000))  # (name, year, layers, millions of parameters as published)
COMPONENTS = (("embeddings", "arch.c_embeddings", "(V_src + V_tgt)·d", "(V_src + V_tgt)·d"),
              ("attention", "arch.c_attention", "3N·(4d² + 4d)", "3N·4d²"),
              ("feed_forward", "arch.c_feed_forward", "2N·(2·d·d_ff + d_ff + d)", "2N·2·d·d_ff"),
              ("layer_norm", "arch.c_layer_norm", "{norms}·2d", "{norms}·2d"),
              ("generator", "arch.c_generator", "V_tgt", "0"),
              ("total", "arch.c_total", "—", "—"))  # (key, label, formula with biases, weights-only formula)
COST_ROWS = (("projections", "arch.m_projections", "4·n·d²"), ("scores", "arch.m_scores", "n²·d"),
             ("weighted_sum", "arch.m_weighted_sum", "n²·d"),
             ("feed_forward", "arch.m_feed_forward", "2·n·d·d_ff"),
             ("layer_norm", "arch.m_layer_norm", "≈ 2·n·d"), ("total", "arch.c_total", "—"))
MEMORY_ROWS = (("attention_weights", "arch.mem_weights", "h·n²"), ("activation", "arch.mem_activation", "n·d"),
               ("ffn_hidden", "arch.mem_ffn", "n·d_ff"))


def num(value: float) -> str:
    """An integer with the language's thousands separator."""
    return i18n.number(int(value), ",")


KIND_FORMATS = {"int": ",d", "share": ".2f"}  # an integer with thousands separators; a share in % to 2 decimals


def table(columns: dict, kinds: tuple[str, ...], key: str) -> None:
    """A plain table of `columns` ({title: values}), each column's numbers written by its kind (KIND_FORMATS)."""
    frame = pd.DataFrame(columns)
    tables.table(frame, hide_index=True, key=key,
                 formats={col: KIND_FORMATS[kind] for col, kind in zip(frame.columns, kinds) if kind != "text"})


def use_course_size() -> None:
    ss = st.session_state
    ss[state.key("d_model")], ss[state.key("heads")] = COURSE["d_model"], COURSE["heads"]
    ss["arch_ff_auto"], ss["arch_layers"] = True, COURSE["layers"]


def controls(lang: str) -> None:
    """The model's size: d_ff, N, the two vocabularies and where the LayerNorm goes (d_model, h and n are the
    sidebar's settings; a button sets the course's size). Every part reads them: a change reruns the whole lesson."""
    ss = st.session_state
    st.subheader(t("arch.controls_header"))
    col1, col2, col3 = st.columns(3, gap="large")
    with col1:
        st.caption(t("common.sizes_in_sidebar", section=t("sidebar.lesson_settings")))
        st.caption(t("arch.heads_help"))
        st.button(t("arch.course_button"), on_click=use_course_size, icon=":material/school:")
    with col2:
        links.control(st.toggle, t("arch.ff_auto"), setting="arch_ff_auto")
        if ss["arch_ff_auto"]:
            ss["arch_d_ff"] = 4 * int(ss[state.key("d_model")])
        links.control(st.number_input, t("arch.d_ff"), min_value=D_FF_RANGE[0], max_value=D_FF_RANGE[1], step=64,
                      disabled=bool(ss["arch_ff_auto"]), setting="arch_d_ff")
        links.control(st.number_input, t("arch.layers"), min_value=LAYERS_RANGE[0], max_value=LAYERS_RANGE[1],
                      step=1, help=t("arch.layers_help"), setting="arch_layers")
    with col3:
        for setting in ("arch_src_vocab", "arch_tgt_vocab"):
            links.control(st.number_input, t(setting.replace("arch_", "arch.")), min_value=VOCAB_RANGE[0],
                          max_value=VOCAB_RANGE[1], step=1000, setting=setting)
        links.control(st.radio, t("arch.norm"), (True, False), horizontal=True,
                      format_func=lambda pre: t("arch.pre_norm" if pre else "arch.post_norm", lang),
                      setting="arch_pre_norm")


NORM_FILL = charts.PALETTE["masked"]  # the LayerNorms in grey, as a step between the coloured sub-layers


def box(text_key: str, shape_text: str, params: int | None = None, color: str | None = None) -> Node:
    """One box: its translated name, its live shape and (if given) its parameter count."""
    lines = [*t(text_key).split("\n"), *shape_text.split("\n")]
    return Node(tuple(lines + ([t("arch.dot_params", count=int(params))] if params is not None else [])), color)


def sublayer(core_box: Node, pre_norm: bool) -> list:
    """One residual sub-layer: LayerNorm, the sub-layer, ⊕ (pre-norm) or the sub-layer, ⊕, LayerNorm (post-norm),
    with the residual path from before the sub-layer (before its LayerNorm, pre-norm) to the ⊕."""
    add, norm = Node(kind="add"), Node((t("arch.svg_norm"),), NORM_FILL)
    return [Branch(add), norm, core_box, add] if pre_norm else [Branch(add), core_box, add, norm]


def stack_title(title_key: str, norms_key: str, norms: int, layers: int) -> tuple[str, str]:
    """A frame's title: the layer × N, and its LayerNorms and residual connections with their parameters."""
    return t(title_key, n=layers), t(norms_key, count=int(norms))


def diagram(c: dict[str, int], n: int, d: int, h: int, d_ff: int, layers: int, v_tgt: int, pre_norm: bool) -> str:
    """The encoder-decoder drawn as SVG; every box shows its live shape and parameter count, every sub-layer its
    LayerNorm and residual connection where `pre_norm` puts them, and the memory feeds each cross-attention."""
    seq = lambda last: f"(batch, {n}, {last})"  # noqa: E731
    q, k, v, out, inp = (charts.PALETTE[x] for x in ("query", "key", "value", "output", "input"))
    heads, ff_shape = t("arch.dot_heads", h=h, d_k=d // h, n=n, d=d), t("arch.dot_ff_shape", n=n, d=d, d_ff=d_ff)
    memory = box("arch.dot_memory_pre" if pre_norm else "arch.dot_memory", seq(d),
                 c["enc_final_norm"] if pre_norm else None, k)
    cross = box("arch.dot_cross_attn", t("arch.dot_cross_shape", h=h, n=n, d=d), c["dec_cross_attn"], q)
    enc_layer = [*sublayer(box("arch.dot_self_attn", heads, c["enc_attn"], q), pre_norm),
                 *sublayer(box("arch.dot_ff", ff_shape, c["enc_ff"], v), pre_norm)]
    dec_layer = [*sublayer(box("arch.dot_masked_attn", heads, c["dec_self_attn"], q), pre_norm),
                 *sublayer(cross, pre_norm), *sublayer(box("arch.dot_ff", ff_shape, c["dec_ff"], v), pre_norm)]
    enc = Column([box("arch.dot_src", f"(batch, {n})", color=inp),
                  box("arch.dot_src_embed", seq(d), c["src_embed"]),
                  Frame(stack_title("arch.dot_encoder", "arch.dot_norms2", c["enc_norms"], layers), enc_layer),
                  memory], lane="left")
    dec = Column([box("arch.dot_tgt", f"(batch, {n})", color=inp),
                  box("arch.dot_tgt_embed", seq(d), c["tgt_embed"]),
                  Frame(stack_title("arch.dot_decoder", "arch.dot_norms3", c["dec_norms"], layers), dec_layer),
                  box("arch.dot_final_norm" if pre_norm else "arch.dot_dec_out", seq(d),
                      c["dec_final_norm"] if pre_norm else None),
                  box("arch.dot_generator", seq(v_tgt), c["generator_new"], out),
                  box("arch.dot_softmax", seq(v_tgt), color=out)], lane="right")
    size = diagram_layout(enc, dec, memory, cross)
    norm = t("arch.diagram_norm_pre" if pre_norm else "arch.diagram_norm_post")
    return render([enc, dec], [Link(memory, cross, "K, V", charts.PALETTE["key"])], size,
                  title=t("arch.diagram_title"), name="arch-diagram",
                  description=t("arch.diagram_description", n=n, d=d, layers=layers, v=v_tgt, norm=norm))


def diagram_layout(enc: Column, dec: Column, memory: Node, cross: Node) -> tuple[float, float]:
    """Columns side by side, then the lower of the memory and the cross-attention's box moved down to the other's
    height, so the arrow K, V runs straight across. Returns the drawing's (width, height)."""
    width, _ = layout([enc, dec])
    if memory.cy < cross.cy:
        enc.shift(cross.cy - memory.cy, start=memory)
    else:
        dec.shift(memory.cy - cross.cy)
    return width, max(enc.bottom(), dec.bottom()) + MARGIN


def model_table(c: dict[str, int], d: int, d_ff: int, layers: int, v_src: int, v_tgt: int, pre_norm: bool) -> None:
    """The parameters per component: from the model, its share, and the formulas with and without biases."""
    f = costs.formula_counts(d, d_ff, layers, v_src, v_tgt, pre_norm)
    weights_only = costs.weight_only_counts(d, d_ff, layers, v_src, v_tgt, pre_norm)
    norms = "(5N + 2)" if pre_norm else "5N"
    table({t("arch.col_component"): [t(label) for _, label, _, _ in COMPONENTS],
           t("arch.col_exact"): [c[key] for key, *_ in COMPONENTS],
           t("arch.col_share"): [100 * c[key] / c["total"] for key, *_ in COMPONENTS],
           t("arch.col_formula"): [formula.format(norms=norms) for *_, formula, _ in COMPONENTS],
           t("arch.col_weights_formula"): [formula.format(norms=norms) for *_, formula in COMPONENTS],
           t("arch.col_weights_value"): [weights_only[key] for key, *_ in COMPONENTS]},
          ("text", "int", "share", "text", "text", "int"), "arch_model_table")
    st.caption(t("arch.params_caption", total=int(c["total"]), mb=4 * c["total"] / 2**20))
    if any(f[key] != c[key] for key in f):  # the formulas describe core's model; if core changes, say so
        st.warning(t("arch.formula_mismatch"))


def layer_table(c: dict[str, int], d: int, d_ff: int, layers: int) -> None:
    """One encoder layer and one decoder layer, part by part, with N times the layer at the bottom."""
    w = costs.weight_only_layer(d, d_ff)
    rows = (("arch.c_self_attn", c["enc_attn"], c["dec_self_attn"], "4d² + 4d", "4d²", w["attention"]),
            ("arch.c_cross_attn", 0, c["dec_cross_attn"], "4d² + 4d", "4d²", 0),
            ("arch.m_feed_forward", c["enc_ff"], c["dec_ff"], "2·d·d_ff + d_ff + d", "2·d·d_ff", w["feed_forward"]),
            ("arch.c_layer_norm", c["enc_norms"], c["dec_norms"], "2 × 2d | 3 × 2d", "4d", w["layer_norm"]),
            ("arch.c_layer_total", c["enc_layer"], c["dec_layer"], "—", "4d² + 2·d·d_ff + 4d", w["total"]),
            ("arch.c_times_n", layers * c["enc_layer"], layers * c["dec_layer"], "—", "—", layers * w["total"]))
    titles = ("arch.col_encoder_layer", "arch.col_decoder_layer", "arch.col_formula", "arch.col_weights_formula",
              "arch.col_weights_encoder")
    table({t("arch.col_part"): [t(row[0], n=layers) for row in rows]}
          | {t(title): [row[i] for row in rows] for i, title in enumerate(titles, start=1)},
          ("text", "int", "int", "text", "text", "int"), "arch_layer_table")


def size_text(millions: int) -> str:
    """A published size: "65 M" below a thousand millions, "1.5 B" (in Spanish "1,5 mil millones") from there."""
    return t("arch.size_millions", m=millions) if millions < 1000 else t("arch.size_billions", b=millions / 1000)


def sizes_table() -> None:
    """Published model sizes, 2017 to 2020."""
    st.table(pd.DataFrame({t("arch.sizes_model"): [t(key) for key, *_ in SIZES],
                           t("arch.sizes_year"): [year for _, year, _, _ in SIZES],
                           t("arch.sizes_layers"): [lay for *_, lay, _ in SIZES],
                           t("arch.sizes_params"): [size_text(m) for *_, m in SIZES]}).set_index(t("arch.sizes_model")))


def cost_table(enc: dict[str, int], dec_costs: dict[str, int]) -> None:
    """One encoder layer's and one decoder layer's multiply-adds, part by part."""
    table({t("arch.col_part"): [t(label) for _, label, _ in COST_ROWS],
           t("arch.col_cost_formula"): [formula for *_, formula in COST_ROWS],
           t("arch.col_enc_macs"): [enc[key] for key, *_ in COST_ROWS],
           t("arch.col_share"): [100 * enc[key] / enc["total"] for key, *_ in COST_ROWS],
           t("arch.col_dec_macs"): [dec_costs[key] for key, *_ in COST_ROWS]},
          ("text", "text", "int", "share", "int"), "arch_cost_table")


def memory_table(mem: dict[str, int]) -> None:
    """The floats one layer's forward pass keeps, part by part, and their size in KiB."""
    table({t("arch.col_part"): [t(label) for _, label, _ in MEMORY_ROWS],
           t("arch.col_cost_formula"): [formula for *_, formula in MEMORY_ROWS],
           t("arch.col_floats"): [mem[key] for key, *_ in MEMORY_ROWS],
           t("arch.col_kib"): [4 * mem[key] / 1024 for key, *_ in MEMORY_ROWS]},
          ("text", "text", "int", "share"), "arch_memory_table")


def rnn_table(n: int, d: int) -> None:
    """Self-attention against a recurrent layer: cost, sequential steps and path length, in O() and at (n, d)."""
    st.table(pd.DataFrame({
        t("arch.rnn_col_property"): [t("arch.rnn_cost"), t("arch.rnn_sequential"), t("arch.rnn_path")],
        t("arch.rnn_col_attention"): ["O(n²·d)", "O(1)", "O(1)"],
        t("arch.rnn_col_attention_now", n=n, d=d): [num(n * n * d), "1", "1"],
        t("arch.rnn_col_rnn"): ["O(n·d²)", "O(n)", "O(n)"],
        t("arch.rnn_col_rnn_now", n=n, d=d): [num(n * d * d), num(n), num(n)]}).set_index(t("arch.rnn_col_property")))
