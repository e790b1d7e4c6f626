"""Lesson 8: the whole encoder-decoder model (CURRICULUM.md, lesson 8).

A diagram with live shapes, an exact parameter count read off the real model (weights on torch's meta device, by
core.lab.costs, so nothing is allocated), the weight-only formulas beside it, the multiply-adds and memory of one
layer as the sequence grows, the RNN comparison and the published model sizes.
"""
import math

import streamlit as st

import core
from core.lab import costs
from ui import architecture_views as views, charts, panels, parts, scenes, state
from ui.architecture_views import COURSE
from ui.i18n import t
from ui.presentation import prose

PAPER_VOCAB = 37_000  # the 2017 paper: "a shared source-target vocabulary of about 37000 tokens" (WMT en-de)
PAPER_ROWS = ((65, 512, 8, 2048, 6), (213, 1024, 16, 4096, 6))  # Table 3: (M parameters, d_model, h, d_ff, N)
ss = st.session_state


@st.cache_data(max_entries=64, show_spinner=False)
def breakdown(src_vocab: int, tgt_vocab: int, d_model: int, heads: int, layers: int, d_ff: int,
              norm_first: bool) -> dict[str, int]:
    cfg = core.ModelConfig(src_vocab=src_vocab, tgt_vocab=tgt_vocab, d_model=d_model, n_heads=heads,
                           n_layers=layers, d_ff=d_ff, norm_first=norm_first)
    return costs.parameter_breakdown(cfg)


saved_bytes = st.cache_data(max_entries=16, show_spinner=False)(costs.encoder_layer_saved_bytes)

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


def intro() -> None:
    """Title, scenes and the model's equation."""
    st.title(t("arch.title"))
    scenes.picker("arch", SCENES)
    prose(t("arch.intro"))
    st.latex(r"\mathrm{Transformer}(X, Y) = \mathrm{Generator}\big(\mathrm{Decoder}(\mathrm{Encoder}(X),\, Y)\big),"
             r"\qquad P(y_t \mid y_{<t}, X) = \mathrm{softmax}\big(h_t\, E_{\mathrm{tgt}}^{\top} + b\big)")
    prose(t("arch.equation"))


def diagram_part(c: dict[str, int]) -> None:
    """Part 1: the encoder-decoder drawn with its live shapes and parameter counts."""
    st.subheader(t("arch.diagram_header"))
    prose(t("arch.diagram_intro", n=n))
    st.markdown(views.diagram(c, n, d, h, d_ff, layers, v_tgt, pre_norm), unsafe_allow_html=True)  # SVG, ui/diagram.py


def parameters_part(c: dict[str, int]) -> None:
    """Part 2: the exact count beside the formulas, the course's check by hand, and published sizes."""
    st.subheader(t("arch.params_header"))
    prose(t("arch.params_intro"))
    views.model_table(c, d, d_ff, layers, v_src, v_tgt, pre_norm)
    st.markdown(t("arch.layer_header"))
    views.layer_table(c, d, d_ff, layers)
    st.markdown(t("arch.heads_note", h=h, d_k=d // h))
    course = breakdown(PAPER_VOCAB, PAPER_VOCAB, COURSE["d_model"], COURSE["heads"], COURSE["layers"],
                       COURSE["d_ff"], True)
    cw = costs.weight_only_layer(COURSE["d_model"], COURSE["d_ff"])
    with st.container(border=True):
        st.markdown(t("arch.course_check", attn=cw["attention"], ff=cw["feed_forward"], ln=cw["layer_norm"],
                      layer=cw["total"], six=6 * cw["total"], exact=course["enc_layer"],
                      exact_six=6 * course["enc_layer"], stack=6 * course["enc_layer"] + course["enc_final_norm"],
                      six_rounded=6 * round(cw["total"] / 1e6, 1)))
    st.subheader(t("arch.sizes_header"))
    views.sizes_table()
    paper = breakdown(PAPER_VOCAB, PAPER_VOCAB, COURSE["d_model"], COURSE["heads"], COURSE["layers"], COURSE["d_ff"],
                      False)
    (base_lo, base_hi), (big_lo, big_hi) = (costs.shared_vocab_range(*row) for row in PAPER_ROWS)
    prose(t("arch.sizes_note", total=paper["total"], shared=paper["total"] - paper["src_embed"],
            src=paper["src_embed"], base_lo=math.ceil(base_lo), base_hi=math.floor(base_hi),
            big_lo=math.ceil(big_lo), big_hi=math.floor(big_hi)))


def cost_chart(n: int) -> None:
    """Multiply-adds of the n² part, the FFN and the projections against n, with the crossovers marked."""
    cross = costs.crossovers(d, d_ff)
    xs, macs = costs.cost_curves(d, d_ff)
    curves = {t("arch.curve_scores"): macs["scores"], t("arch.curve_ffn"): macs["ffn"],
              t("arch.curve_projections"): macs["projections"]}
    marks = [(t("arch.mark_order", d=d), cross["order"]),
             (t("arch.mark_projections", x=cross["scores_vs_projections"]), cross["scores_vs_projections"]),
             (t("arch.mark_ffn", d_ff=d_ff), cross["scores_vs_ffn"])]
    colors = [charts.PALETTE["query"], charts.PALETTE["value"], charts.PALETTE["highlight"]]
    st.altair_chart(charts.cost_curves(xs, curves, marks, x_title=t("arch.axis_n"), y_title=t("arch.axis_macs"),
                                       now=(t("arch.mark_now", n=n), n), title=t("arch.chart_title", d=d, d_ff=d_ff),
                                       colors=colors), width="content")
    prose(t("arch.crossover_note", d=d, d_ff=d_ff, two_d=2 * d))


def costs_part() -> None:
    """Part 3: one layer's multiply-adds and memory as the sequence grows (n is the sidebar's sequence length), and
    attention against an RNN."""
    st.subheader(t("arch.costs_header"))
    prose(t("arch.costs_intro"))
    enc, dec_costs = costs.encoder_layer_macs(n, d, d_ff), costs.decoder_layer_macs(n, n, d, d_ff)
    views.cost_table(enc, dec_costs)
    st.caption(t("arch.costs_caption", n=n, flops=2 * enc["total"]))
    cost_chart(n)
    mem = costs.layer_memory(n, d, h, d_ff)
    st.markdown(t("arch.memory_header"))
    views.memory_table(mem)
    kept = saved_bytes(n, d, h, d_ff, device=settings.device)  # everything autograd keeps, measured
    st.caption(t("arch.memory_caption", at=max(1, d // h), kib=kept / 1024,
                 ratio=kept / (4 * sum(mem.values()))))
    st.subheader(t("arch.rnn_header"))
    views.rnn_table(n, d)
    prose(t("arch.rnn_note"))


def closing(c: dict[str, int], n: int) -> None:
    """The code, and what to notice, read off this run's numbers."""
    enc = costs.encoder_layer_macs(n, d, d_ff)
    panels.show_code(costs.ShapesOnly, costs.meta_model, costs.parameter_breakdown, core.count_parameters,
                     costs.encoder_layer_macs, costs.decoder_layer_macs, costs.saved_for_backward)
    st.subheader(t("arch.notice_header"))
    embed_share = 100 * c["embeddings"] / c["total"]  # the sentence follows the number: more or less than the layers
    st.markdown(t("arch.notice_embeddings_most" if embed_share > 50 else "arch.notice_embeddings_less",
                  share=embed_share))
    st.markdown(t("arch.notice_ffn", share=100 * c["enc_ff"] / c["enc_layer"]))
    st.markdown(t("arch.notice_cost", n=n, share=100 * (enc["scores"] + enc["weighted_sum"]) / enc["total"],
                  d_ff=d_ff))


settings = state.settings()
for _name, _value in DEFAULTS.items():
    ss.setdefault(_name, _value)
ss.setdefault("arch_d_ff", 4 * settings.d_model)

intro()
views.controls(settings.lang)
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
    costs_part()
elif part == "parameters":
    parameters_part(c)
else:
    diagram_part(c)
closing(c, n)
