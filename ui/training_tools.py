"""Lesson 9's tools on a trained model, one on screen at a time: try it (greedy decoding step by step on the
learner's input), its attention maps, snapshots taken during training, error analysis (core.lab.errors) and
the vocabularies; the live section's headline and curves; the exports. Each takes the session's `ui.training.Run`.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from core import to_numpy
from core.lab.analysis import entropy
from core.lab.errors import error_report
from core.tasks import BOS, BOS_ID, EOS, PAD, TaskInputError
from core.evaluation import predict
from . import charts, links, panels, state, tables
from .i18n import current_language, md_escape, number, t
from .presentation import prose
from .training import KINDS, Run, attention_maps

TOP_TOKENS = 8  # next-token bars shown
CHART_WIDTH = 380  # two charts side by side in the wide layout
ROLES = {PAD: "train.special_pad", BOS: "train.special_bos", EOS: "train.special_eos"}


def curve_charts(run: Run, upto: int, lang: str) -> tuple[charts.SvgChart | None, charts.SvgChart]:
    """The loss curve up to step `upto` (the last evaluation: between evaluations neither chart changes, so a
    redraw leaves them as they are) and the three accuracy curves."""
    shown = [r for r in run.trainer.history if r.step <= upto]
    shown = shown[::max(1, len(shown) // 400)]  # at most ~400 points on the chart
    loss = charts.lines([r.step for r in shown], {t("train.loss", lang): [r.loss for r in shown]},
                        x_title=t("train.step", lang), y_title=t("train.loss", lang),
                        width=CHART_WIDTH) if shown else None
    evals = run.evaluations
    series = {t("train.forced_em", lang): [e.teacher_forced_exact_match for e in evals],
              t("train.greedy_em", lang): [e.exact_match for e in evals],
              t("train.greedy_tokens", lang): [e.token_accuracy for e in evals]}
    accuracy = charts.lines([e.step for e in evals], series, x_title=t("train.step", lang),
                            y_title=t("train.accuracy", lang), width=CHART_WIDTH, points=True, y_domain=(0, 1),
                            y_percent=True,
                            colors=(charts.PALETTE["key"], charts.PALETTE["value"], charts.PALETTE["query"]))
    return loss, accuracy


def headline(run: Run) -> None:
    """The progress bar and the headline numbers (they change at every redraw)."""
    trainer, last = run.trainer, run.evaluations[-1]
    steps = trainer.train_cfg.steps
    st.progress(min(1.0, trainer.step / steps), text=t("train.progress", step=trainer.step, steps=steps))
    recent = [r.loss for r in trainer.history[-20:]]
    speed = trainer.step / trainer.elapsed if trainer.elapsed > 0 else 0.0
    cols = st.columns(4)
    cols[0].metric(t("train.loss"), number(sum(recent) / len(recent), ".4f") if recent else "—")
    cols[1].metric(t("train.greedy_em"), number(last.exact_match, ".1%"), help=t("train.greedy_em_help", n=last.n))
    cols[2].metric(t("train.forced_em"), number(last.teacher_forced_exact_match, ".1%"), help=t("train.forced_em_help"))
    cols[3].metric(t("train.speed"), number(speed, ".1f"), help=t("train.speed_help", seconds=trainer.elapsed))
    if run.pretrained:
        st.caption(t("train.pretrained_caption", steps=steps, seconds=trainer.elapsed))


def curves(run: Run) -> None:
    """The live curves, built again only when an evaluation landed (kept in the session until then)."""
    ss = st.session_state
    tag = (run.token, run.evaluations[-1].step, current_language())
    if ss.get("train_curves_for") != tag:
        ss["train_curves"], ss["train_curves_for"] = curve_charts(run, *tag[1:]), tag
    loss, accuracy = ss["train_curves"]
    loss_col, acc_col = st.columns(2, gap="large")
    if loss is not None:
        with loss_col:
            panels.svg_image(loss)
    with acc_col:
        panels.svg_image(accuracy)


def learner_input(run: Run):
    """The learner's input (a held-out example until they type) and the model's greedy answer, or None."""
    task, model = run.trainer.task, run.trainer.model
    example = task.examples(1, seed=state.settings().seed, split="heldout" if task.holdout > 0 else "fresh")[0][0]
    if st.session_state.get("train_input_for") != repr(task):
        st.session_state["train_input"], st.session_state["train_input_for"] = example, repr(task)
    links.control(st.text_input, t("train.input"), max_chars=200, help=t("train.input_help", example=example),
                  setting="train_input")
    try:
        return predict(model, task, st.session_state["train_input"])
    except TaskInputError as error:
        st.warning(t(f"train.input_of.{error.code}", part=md_escape(error.part), limit=error.limit),
                   icon=":material/edit:")
        return None


def try_model(run: Run) -> None:
    prose(t("train.try_text"))
    found = learner_input(run)
    if found is None:
        return
    got, expected = md_escape(found.text or "∅"), md_escape(found.expected)
    if found.text == found.expected:
        st.success(t("train.answer_right", got=got), icon=":material/check_circle:")
    else:  # a wrong answer is a finding about the model, not an error of the page
        st.info(t("train.answer_wrong", got=got, expected=expected), icon=":material/cancel:")
    decoding_steps(run.trainer.task, found)


def decoding_steps(task, found) -> None:
    """The decoder's input at the chosen step and its next-token probabilities."""
    generated = task.tgt_vocab.decode(found.tokens[0].tolist())
    probs = to_numpy(torch.softmax(found.logits[0], dim=-1))  # (k, tgt_vocab)
    k = len(generated)
    step = links.control(st.slider, t("train.decode_step"), 1, k, setting="train_decode_step") if k > 1 else 1
    prefix = [BOS, *generated[:step - 1]]
    st.markdown(t("train.decoder_input", tokens=" ".join(f"`{s.replace('`', '')}`" for s in prefix),
                  chosen=md_escape(generated[step - 1]), p=float(probs[step - 1].max())))
    top = np.argsort(-probs[step - 1])[:TOP_TOKENS]
    labels = [task.tgt_vocab.tokens[i] for i in top]
    panels.svg_image(charts.bars(probs[step - 1][top], labels, value_title=t("train.probability"),
                                 label_title=t("train.next_token"), title=t("train.next_title", step=step)))
    if state.settings().show_numbers:
        inputs = [" ".join([BOS, *generated[:i]]) for i in range(k)]  # the decoder's input at each step
        tables.dataframe(pd.DataFrame({t("train.decoder_input_col"): inputs, t("train.next_token"): generated,
                                       t("train.probability"): probs.max(axis=1)}), hide_index=True,
                         key="train_decode_numbers")


def attention_section(run: Run) -> None:
    st.markdown(t("train.attention_text"))
    found = learner_input(run)
    if found is None:
        return
    task, model = run.trainer.task, run.trainer.model
    src = found.src  # (1, n_src)
    tgt_in = torch.cat([torch.tensor([[BOS_ID]], device=src.device), found.tokens[:, :-1]], dim=1)  # (1, k)
    maps = attention_maps(model, src, tgt_in)
    src_labels = task.src_vocab.decode(src[0].tolist())
    tgt_labels = task.tgt_vocab.decode(tgt_in[0].tolist())
    lang = current_language()
    kind_col, layer_col = st.columns(2)
    kind = links.control(kind_col.radio, t("train.kind"), KINDS, format_func=lambda k: t(f"train.kind_of.{k}", lang),
                         horizontal=True, setting="train_kind")
    layers = maps[kind].shape[0]
    layer = links.control(layer_col.selectbox, t("train.layer"), range(layers),
                          format_func=lambda i: t("train.layer_n", i=i + 1, lang=lang),
                          setting="train_layer") if layers > 1 else 0
    rows = src_labels if kind == "encoder" else tgt_labels
    cols = tgt_labels if kind == "decoder" else src_labels
    heads = maps[kind][layer]
    panels.svg_image(charts.facet_svg(list(heads), [t("train.head_n", h=h + 1) for h in range(len(heads))], rows, cols,
                                      columns=min(4, len(heads))))
    st.caption(t(f"train.kind_caption.{kind}"))


def snapshots_section(run: Run) -> None:
    snaps = run.snapshots
    lang = current_language()
    kind_col, layer_col, head_col = st.columns(3)
    kind = links.control(kind_col.radio, t("train.kind"), KINDS, format_func=lambda k: t(f"train.kind_of.{k}", lang),
                         horizontal=True, setting="train_snap_kind")
    layers, heads = snaps[0][1][kind].shape[:2]
    layer = links.control(layer_col.selectbox, t("train.layer"), range(layers),
                          format_func=lambda i: t("train.layer_n", i=i + 1, lang=lang), setting="train_snap_layer")
    head = links.control(head_col.selectbox, t("train.head"), range(heads),
                         format_func=lambda h: t("train.head_n", h=h + 1, lang=lang), setting="train_snap_head")
    steps = [s for s, _ in snaps]
    if st.session_state.get("train_snap_step") not in steps:
        st.session_state["train_snap_step"] = steps[-1]
    if len(steps) > 1:
        links.control(st.select_slider, t("train.snapshot"), steps, help=t("train.snapshot_help"),
                      setting="train_snap_step")
    chosen = snaps[steps.index(st.session_state["train_snap_step"])][1][kind][layer, head]  # (n_q, n_k)
    src, tgt_in = run.probe
    src_labels = run.trainer.task.src_vocab.decode(src[0].tolist())
    tgt_labels = run.trainer.task.tgt_vocab.decode(tgt_in[0].tolist())
    rows = src_labels if kind == "encoder" else tgt_labels
    cols = tgt_labels if kind == "decoder" else src_labels
    weights_col, entropy_col = st.columns(2, gap="large")
    with weights_col:
        panels.matrix_panel(chosen, title=t("train.snapshot_title", step=st.session_state["train_snap_step"]),
                            key="train_snap", row_labels=rows, col_labels=cols, scale="weights", max_width=380)
    spread = [entropy(torch.from_numpy(maps[kind][layer, head])).mean().item() for _, maps in snaps]
    with entropy_col:
        panels.svg_image(charts.lines(steps, {t("train.entropy"): spread}, x_title=t("train.step"),
                                      y_title=t("train.entropy"), width=CHART_WIDTH))
        st.caption(t("train.entropy_caption", uniform=float(np.log(chosen.shape[1]))))


def errors_section(run: Run) -> None:
    task = run.trainer.task
    tag = (run.token, run.trainer.step)
    if st.session_state.get("train_errors_for") != tag:
        report = error_report(run.trainer.model, task, n=1000)
        st.session_state["train_errors"], st.session_state["train_errors_for"] = report, tag
    report = st.session_state["train_errors"]
    st.markdown(t("train.errors_summary", n=report.n, em=float(report.exact_match),
                  split=t(f"train.split_of.{report.split}")))
    labels = [str(i + 1) for i in range(len(report.position_accuracy) - 1)] + [EOS]
    pos_col, group_col = st.columns(2, gap="large")
    with pos_col:
        panels.svg_image(charts.bars(report.position_accuracy, labels, value_title=t("train.token_accuracy"),
                                     label_title=t("train.position"), title=t("train.by_position")))
    if report.groups:
        with group_col:
            names = list(report.groups)
            panels.svg_image(charts.bars([report.groups[g][0] for g in names],
                                         [t(f"train.group_of.{task.name}", g=g, n=report.groups[g][1]) for g in names],
                                         value_title=t("train.exact_match"), title=t(f"train.by_of.{task.name}")))
    if report.mistakes:
        st.container(key="train_mistakes").dataframe(  # its container names the table (tests)
            pd.DataFrame(report.mistakes, columns=[t("train.col_source"), t("train.col_expected"),
                                                   t("train.col_predicted")]), hide_index=True)
    else:
        st.caption(t("train.no_mistakes"))


def vocabulary_section(run: Run) -> None:
    task = run.trainer.task
    for side, title, vocab in (("src", t("train.src_vocab"), task.src_vocab),
                               ("tgt", t("train.tgt_vocab"), task.tgt_vocab)):
        kinds = [t(ROLES.get(s, "train.symbol")) for s in vocab.tokens]
        st.markdown(f"##### {title}")
        shown = [repr(s) if s == " " else s for s in vocab.tokens]
        st.container(key=f"train_vocab_{side}").dataframe(  # its container names the table (tests)
            pd.DataFrame({"id": range(len(vocab)), t("train.token"): shown, t("train.role"): kinds}), hide_index=True,
            height=min(400, 36 * (len(vocab) + 1)))


def export_section(run: Run) -> None:
    """The run's exports: its checkpoint and its history as CSV."""
    st.subheader(t("train.export_header"))
    export_cols = st.columns(2)
    export_cols[0].download_button(t("train.export_checkpoint"), run.checkpoint_bytes, on_click="ignore",
                                   file_name=f"{run.task_name}_step{run.trainer.step}.pt",
                                   mime="application/octet-stream", icon=":material/save:", disabled=run.running,
                                   help=t("train.export_wait") if run.running else None)
    export_cols[1].download_button(t("train.export_history"), lambda: panels.csv_text(run.history_frame()),
                                   file_name=f"{run.task_name}_history.csv", mime="text/csv", on_click="ignore",
                                   icon=":material/table:")
