"""Lesson 8: the whole encoder-decoder model (CURRICULUM.md, lesson 8).

A diagram with live shapes, an exact parameter count read off the real model (weights on torch's meta device, by
core.lab.costs, so nothing is allocated), the weight-only formulas beside it, the multiply-adds and memory of one
layer as the sequence grows, the RNN comparison and the published model sizes.
"""
import math

import numpy as np
import pandas as pd
import streamlit as st

import core
from core.lab import costs
from ui import charts, i18n, links, panels, parts, scenes, state
from ui.i18n import t
from ui.presentation import prose

LAYERS_RANGE, VOCAB_RANGE, D_FF_RANGE = (1, 48), (1, 262_144), (1, 16_384)
COURSE = {"d_model": 512, "heads": 8, "d_ff": 2048, "layers": 6}
PAPER_VOCAB = 37_000  # the 2017 paper: "a shared source-target vocabulary of about 37000 tokens" (WMT en-de)
PAPER_ROWS = ((65, 512, 8, 2048, 6), (213, 1024, 16, 4096, 6))  # Table 3: (M parameters, d_model, h, d_ff, N)
SIZES = (("arch.size_original", "2017", "6 + 6", "65 M"), ("arch.size_bert", "2018", "12", "110 M"),
         ("arch.size_gpt2", "2019", "48", "1.5 B"), ("arch.size_t5", "2020", "12 + 12", "220 M"),
         ("arch.size_gpt3", "2020", "96", "175 B"))
ss = st.session_state


@st.cache_data(max_entries=64, show_spinner=False)
def breakdown(src_vocab: int, tgt_vocab: int, d_model: int, heads: int, layers: int, d_ff: int,
              norm_first: bool) -> dict[str, int]:
    cfg = core.ModelConfig(src_vocab=src_vocab, tgt_vocab=tgt_vocab, d_model=d_model, n_heads=heads,
                           n_layers=layers, d_ff=d_ff, norm_first=norm_first)
    return costs.parameter_breakdown(cfg)


saved_bytes = st.cache_data(max_entries=16, show_spinner=False)(costs.encoder_layer_saved_bytes)


def use_course_size() -> None:
    ss[state.key("d_model")], ss[state.key("heads")] = COURSE["d_model"], COURSE["heads"]
    ss["arch_ff_auto"], ss["arch_layers"] = True, COURSE["layers"]


def num(value: float) -> str:
    """An integer with the language's thousands separator."""
    return i18n.number(int(value), ",")


def dec(value: float, places: int = 1) -> str:
    """A decimal number with the language's decimal mark."""
    return i18n.number(value, f".{places}f")


def column(kind: str, width: int):
    """A dataframe column: text, an integer with thousands separators (in the browser's locale), or a share in %."""
    if kind == "text":
        return st.column_config.TextColumn(width=width)
    return st.column_config.NumberColumn(format="localized" if kind == "int" else "%.2f", width=width)


def diagram(c: dict[str, int], n: int, d: int, h: int, d_ff: int, layers: int, v_tgt: int, pre_norm: bool) -> str:
    """The encoder-decoder as a Graphviz DOT string; every box shows its live shape and parameter count."""
    def box(name, text_key, shape_text, params=None, color="#FFFFFF"):
        lines = [*t(text_key).split("\n"), *shape_text.split("\n")]
        lines += [t("arch.dot_params", count=num(params))] if params is not None else []
        label = "\\n".join(line.replace('"', "'") for line in lines)
        return f'{name} [label="{label}", fillcolor="{color}"];'

    def cluster(name, title_key, norms_key, norms, members):
        title = (t(title_key, n=layers) + "\\n" + t(norms_key, count=num(norms))).replace('"', "'")
        return f'subgraph cluster_{name} {{ label="{title}"; style="rounded,dashed"; color="#777777"; {members} }}'
    seq = lambda last: f"(batch, {n}, {last})"  # noqa: E731
    q, k, v, out, inp = (charts.PALETTE[x] + "40" for x in ("query", "key", "value", "output", "input"))
    nodes = [
        box("src", "arch.dot_src", f"(batch, {n})", color=inp), box("tgt", "arch.dot_tgt", f"(batch, {n})", color=inp),
        box("src_emb", "arch.dot_src_embed", seq(d), c["src_embed"]),
        box("tgt_emb", "arch.dot_tgt_embed", seq(d), c["tgt_embed"]),
        box("enc_attn", "arch.dot_self_attn", t("arch.dot_heads", h=h, d_k=d // h, n=n, d=d), c["enc_attn"], q),
        box("enc_ff", "arch.dot_ff", t("arch.dot_ff_shape", n=n, d=d, d_ff=d_ff), c["enc_ff"], v),
        box("memory", "arch.dot_memory_pre" if pre_norm else "arch.dot_memory", seq(d),
            c["enc_final_norm"] if pre_norm else None, k),
        box("dec_attn", "arch.dot_masked_attn", t("arch.dot_heads", h=h, d_k=d // h, n=n, d=d), c["dec_self_attn"], q),
        box("dec_cross", "arch.dot_cross_attn", t("arch.dot_cross_shape", h=h, n=n, d=d), c["dec_cross_attn"], q),
        box("dec_ff", "arch.dot_ff", t("arch.dot_ff_shape", n=n, d=d, d_ff=d_ff), c["dec_ff"], v),
        box("dec_out", "arch.dot_final_norm" if pre_norm else "arch.dot_dec_out", seq(d),
            c["dec_final_norm"] if pre_norm else None),
        box("gen", "arch.dot_generator", seq(v_tgt), c["generator_new"], out),
        box("probs", "arch.dot_softmax", seq(v_tgt), color=out),
    ]
    clusters = [cluster("enc", "arch.dot_encoder", "arch.dot_norms2", c["enc_norms"], "enc_attn; enc_ff;"),
                cluster("dec", "arch.dot_decoder", "arch.dot_norms3", c["dec_norms"], "dec_attn; dec_cross; dec_ff;")]
    edges = ("src -> src_emb -> enc_attn -> enc_ff -> memory; "
             "tgt -> tgt_emb -> dec_attn -> dec_cross -> dec_ff -> dec_out -> gen -> probs; "
             f'memory -> dec_cross [label=" K, V", fontsize=14, penwidth=2.5, color="{charts.PALETTE["key"]}"];')
    return ('digraph { rankdir=TB; nodesep=0.5; ranksep=0.32; newrank=true; '
            'graph [fontname="Helvetica", fontsize=14]; '
            'node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=14, margin="0.14,0.05"]; '
            'edge [color="#555555"];\n' + "\n".join(nodes + clusters) + "\n" + edges
            + "\n{ rank=same; src; tgt; }\n}")


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "paper_base": {"arch_layers": 6, "arch_pre_norm": False, "arch_ff_auto": True, "arch_src_vocab": 37_000,
                   "arch_tgt_vocab": 37_000, "cfg_d_model": 512, "cfg_heads": 8, "arch_part": "parameters"},
    "long_sequence": {"arch_ff_auto": True, "cfg_d_model": 16, "cfg_heads": 4, "cfg_seq_len": 64, "arch_part": "costs"},
    "big_vocabulary": {"arch_src_vocab": 50_000, "arch_tgt_vocab": 50_000, "arch_layers": 2, "arch_ff_auto": True,
                       "cfg_d_model": 64, "cfg_heads": 4, "arch_part": "parameters"},
}
PARTS = ("diagram", "parameters", "costs")  # the sub-lessons, one on screen at a time

DEFAULTS = {"arch_ff_auto": True, "arch_layers": COURSE["layers"], "arch_src_vocab": PAPER_VOCAB,
            "arch_tgt_vocab": PAPER_VOCAB, "arch_pre_norm": True}
COMPONENTS = (("embeddings", "arch.c_embeddings", "(V_src + V_tgt)·d", "(V_src + V_tgt)·d"),
              ("attention", "arch.c_attention", "3N·(4d² + 4d)", "3N·4d²"),
              ("feed_forward", "arch.c_feed_forward", "2N·(2·d·d_ff + d_ff + d)", "2N·2·d·d_ff"),
              ("layer_norm", "arch.c_layer_norm", "{norms}·2d", "{norms}·2d"),
              ("generator", "arch.c_generator", "V_tgt", "0"),
              ("total", "arch.c_total", "—", "—"))  # (key, label, formula with biases, weights-only formula)
COST_ROWS = (("projections", "arch.m_projections", "4·n·d²"), ("scores", "arch.m_scores", "n²·d"),
             ("weighted_sum", "arch.m_weighted_sum", "n²·d"), ("feed_forward", "arch.m_feed_forward", "2·n·d·d_ff"),
             ("layer_norm", "arch.m_layer_norm", "≈ 2·n·d"), ("total", "arch.c_total", "—"))
MEMORY_ROWS = (("attention_weights", "arch.mem_weights", "h·n²"), ("activation", "arch.mem_activation", "n·d"),
               ("ffn_hidden", "arch.mem_ffn", "n·d_ff"))


def table(columns: dict, kinds: tuple[str, ...], widths: tuple, key: str) -> None:
    """A dataframe of `columns` ({title: values}) with each column's kind and width in pixels."""
    frame = pd.DataFrame(columns)
    st.dataframe(frame, hide_index=True, key=key,
                 column_config={col: column(kind, width) for col, kind, width in zip(frame.columns, kinds, widths)})


def intro() -> None:
    """Title, scenes and the model's equation."""
    st.title(t("arch.title"))
    scenes.picker("arch", SCENES)
    prose(t("arch.intro"))
    st.latex(r"\mathrm{Transformer}(X, Y) = \mathrm{Generator}\big(\mathrm{Decoder}(\mathrm{Encoder}(X),\, Y)\big),"
             r"\qquad P(y_t \mid y_{<t}, X) = \mathrm{softmax}\big(h_t\, E_{\mathrm{tgt}}^{\top} + b\big)")
    prose(t("arch.equation"))


def controls() -> None:
    """The model's size: d_model and heads (the sidebar's settings, drawn here beside the rest), d_ff, N, the two
    vocabularies and where the LayerNorm goes. Every part reads them, so a change reruns the whole lesson."""
    st.subheader(t("arch.controls_header"))
    col1, col2, col3 = st.columns(3, gap="large")
    with col1:
        links.control(st.number_input, t("sidebar.d_model"), min_value=state.D_MODEL_RANGE[0],
                      max_value=state.D_MODEL_RANGE[1], step=8, setting=state.key("d_model"), key="arch_w_d_model")
        heads_options = state.heads_options(int(ss[state.key("d_model")]))
        links.control(st.selectbox, t("sidebar.heads"), heads_options, help=t("arch.heads_help"),
                      setting=state.key("heads"), key="arch_w_heads", identity=tuple(heads_options))
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
                      format_func=lambda pre: t("arch.pre_norm" if pre else "arch.post_norm", settings.lang),
                      setting="arch_pre_norm")


def diagram_part(c: dict[str, int]) -> None:
    """Part 1: the encoder-decoder drawn with its live shapes and parameter counts."""
    st.subheader(t("arch.diagram_header"))
    prose(t("arch.diagram_intro", n=n))
    st.graphviz_chart(diagram(c, n, d, h, d_ff, layers, v_tgt, pre_norm), width="content")


def model_table(c: dict[str, int]) -> None:
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
          ("text", "int", "share", "text", "text", "int"), (190, 130, 110, 180, 130, 150), "arch_model_table")
    st.caption(t("arch.params_caption", total=num(c["total"]), mb=dec(4 * c["total"] / 2**20)))
    if any(f[key] != c[key] for key in f):  # the formulas describe core's model; if core changes, say so
        st.warning(t("arch.formula_mismatch"))


def layer_table(c: dict[str, int]) -> None:
    """One encoder layer and one decoder layer, part by part."""
    st.markdown(t("arch.layer_header"))
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
          ("text", "int", "int", "text", "text", "int"), (150, 135, 160, 160, 150, 140), "arch_layer_table")
    st.markdown(t("arch.heads_note", h=h, d_k=d // h))


def parameters_part(c: dict[str, int]) -> None:
    """Part 2: the exact count beside the formulas, the course's check by hand, and published sizes."""
    st.subheader(t("arch.params_header"))
    prose(t("arch.params_intro"))
    model_table(c)
    layer_table(c)
    course = breakdown(PAPER_VOCAB, PAPER_VOCAB, COURSE["d_model"], COURSE["heads"], COURSE["layers"],
                       COURSE["d_ff"], True)
    cw = costs.weight_only_layer(COURSE["d_model"], COURSE["d_ff"])
    with st.container(border=True):
        st.markdown(t("arch.course_check", attn=num(cw["attention"]), ff=num(cw["feed_forward"]),
                      ln=num(cw["layer_norm"]), layer=num(cw["total"]), six=num(6 * cw["total"]),
                      exact=num(course["enc_layer"]), exact_six=num(6 * course["enc_layer"]),
                      stack=num(6 * course["enc_layer"] + course["enc_final_norm"]),
                      six_rounded=dec(6 * round(cw["total"] / 1e6, 1))))
    st.subheader(t("arch.sizes_header"))
    st.table(pd.DataFrame({t("arch.sizes_model"): [t(key) for key, *_ in SIZES],
                           t("arch.sizes_year"): [year for _, year, _, _ in SIZES],
                           t("arch.sizes_layers"): [lay for *_, lay, _ in SIZES],
                           t("arch.sizes_params"): [p for *_, p in SIZES]}).set_index(t("arch.sizes_model")))
    paper = breakdown(PAPER_VOCAB, PAPER_VOCAB, COURSE["d_model"], COURSE["heads"], COURSE["layers"], COURSE["d_ff"],
                      False)
    (base_lo, base_hi), (big_lo, big_hi) = (costs.shared_vocab_range(*row) for row in PAPER_ROWS)
    prose(t("arch.sizes_note", total=num(paper["total"]), shared=num(paper["total"] - paper["src_embed"]),
            src=num(paper["src_embed"]), base_lo=num(math.ceil(base_lo)), base_hi=num(base_hi),
            big_lo=num(math.ceil(big_lo)), big_hi=num(big_hi)))


def cost_chart(n: int) -> None:
    """Multiply-adds of the n² part, the FFN and the projections against n, with the crossovers marked."""
    cross = costs.crossovers(d, d_ff)
    xs = np.unique(np.geomspace(1, max(8 * max(d_ff, 2 * d), 128), 64).round())
    curves = {t("arch.curve_scores"): 2 * xs * xs * d, t("arch.curve_ffn"): 2 * xs * d * d_ff,
              t("arch.curve_projections"): 4 * xs * d * d}
    marks = [(t("arch.mark_order", d=d), cross["order"]),
             (t("arch.mark_projections", x=cross["scores_vs_projections"]), cross["scores_vs_projections"]),
             (t("arch.mark_ffn", d_ff=d_ff), cross["scores_vs_ffn"])]
    colors = [charts.PALETTE["query"], charts.PALETTE["value"], charts.PALETTE["highlight"]]
    st.altair_chart(charts.cost_curves(xs, curves, marks, x_title=t("arch.axis_n"), y_title=t("arch.axis_macs"),
                                       now=(t("arch.mark_now", n=n), n), title=t("arch.chart_title", d=d, d_ff=d_ff),
                                       colors=colors), width="content")
    prose(t("arch.crossover_note", d=d, d_ff=d_ff, two_d=2 * d))


def costs_part() -> int:
    """Part 3: one layer's multiply-adds and memory as the sequence grows (the sequence length is the sidebar's
    setting, drawn here too), and attention against an RNN. Returns the sequence length."""
    st.subheader(t("arch.costs_header"))
    prose(t("arch.costs_intro"))
    links.control(st.slider, t("sidebar.seq_len"), state.SEQ_LEN_RANGE[0], state.SEQ_LEN_RANGE[1],
                  setting=state.key("seq_len"), key="arch_w_seq_len")
    n = int(ss[state.key("seq_len")])
    enc, dec_costs = costs.encoder_layer_macs(n, d, d_ff), costs.decoder_layer_macs(n, n, d, d_ff)
    table({t("arch.col_part"): [t(label) for _, label, _ in COST_ROWS],
           t("arch.col_cost_formula"): [formula for *_, formula in COST_ROWS],
           t("arch.col_enc_macs"): [enc[key] for key, *_ in COST_ROWS],
           t("arch.col_share"): [100 * enc[key] / enc["total"] for key, *_ in COST_ROWS],
           t("arch.col_dec_macs"): [dec_costs[key] for key, *_ in COST_ROWS]},
          ("text", "text", "int", "share", "int"), (230, 90, 175, 120, 175), "arch_cost_table")
    st.caption(t("arch.costs_caption", n=n, flops=num(2 * enc["total"])))
    cost_chart(n)
    mem = costs.layer_memory(n, d, h, d_ff)
    st.markdown(t("arch.memory_header"))
    table({t("arch.col_part"): [t(label) for _, label, _ in MEMORY_ROWS],
           t("arch.col_cost_formula"): [formula for *_, formula in MEMORY_ROWS],
           t("arch.col_floats"): [mem[key] for key, *_ in MEMORY_ROWS],
           t("arch.col_kib"): [4 * mem[key] / 1024 for key, *_ in MEMORY_ROWS]},
          ("text", "text", "int", "share"), (None,) * 4, "arch_memory_table")
    kept = saved_bytes(n, d, h, d_ff, device=settings.device)  # everything autograd keeps, measured
    st.caption(t("arch.memory_caption", at=max(1, d // h), kib=dec(kept / 1024),
                 ratio=dec(kept / (4 * sum(mem.values())))))
    st.subheader(t("arch.rnn_header"))
    st.table(pd.DataFrame({
        t("arch.rnn_col_property"): [t("arch.rnn_cost"), t("arch.rnn_sequential"), t("arch.rnn_path")],
        t("arch.rnn_col_attention"): ["O(n²·d)", "O(1)", "O(1)"],
        t("arch.rnn_col_attention_now", n=n, d=d): [num(n * n * d), "1", "1"],
        t("arch.rnn_col_rnn"): ["O(n·d²)", "O(n)", "O(n)"],
        t("arch.rnn_col_rnn_now", n=n, d=d): [num(n * d * d), num(n), num(n)]}).set_index(t("arch.rnn_col_property")))
    prose(t("arch.rnn_note"))
    return n


def closing(c: dict[str, int], n: int) -> None:
    """The code, and what to notice, read off this run's numbers."""
    enc = costs.encoder_layer_macs(n, d, d_ff)
    panels.show_code(costs.ShapesOnly, costs.meta_model, costs.parameter_breakdown, core.count_parameters,
                     costs.encoder_layer_macs, costs.decoder_layer_macs, costs.saved_for_backward)
    st.subheader(t("arch.notice_header"))
    embed_share = 100 * c["embeddings"] / c["total"]  # the sentence follows the number: more or less than the layers
    st.markdown(t("arch.notice_embeddings_most" if embed_share > 50 else "arch.notice_embeddings_less",
                  share=dec(embed_share)))
    st.markdown(t("arch.notice_ffn", share=dec(100 * c["enc_ff"] / c["enc_layer"])))
    st.markdown(t("arch.notice_cost", n=n, share=dec(100 * (enc["scores"] + enc["weighted_sum"]) / enc["total"]),
                  d_ff=d_ff))


settings = state.settings()
for _name, _value in DEFAULTS.items():
    ss.setdefault(_name, _value)
ss.setdefault("arch_d_ff", 4 * settings.d_model)

intro()
controls()
settings = state.current()  # the controls above may have changed d_model or heads
d, h, n = settings.d_model, settings.heads, settings.seq_len
d_ff, layers = int(ss["arch_d_ff"]), int(ss["arch_layers"])
v_src, v_tgt, pre_norm = int(ss["arch_src_vocab"]), int(ss["arch_tgt_vocab"]), bool(ss["arch_pre_norm"])
try:
    c = breakdown(v_src, v_tgt, d, h, layers, d_ff, pre_norm)
except ValueError:
    panels.problems_box([t("arch.invalid", d=d, h=h, d_ff=d_ff, layers=layers)])
    st.stop()
part = parts.pick("arch_part", PARTS, label=t("arch.part"),
                  format_func=lambda p: t(f"arch.part_of.{p}", settings.lang))
if part == "costs":
    n = costs_part()
elif part == "parameters":
    parameters_part(c)
else:
    diagram_part(c)
closing(c, n)
