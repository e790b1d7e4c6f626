"""Lesson 9: train a small Transformer here, then open that very model (CURRICULUM.md, lesson 9).

Setup (task, preset, sizes) -> Start: `ui.training.Run` advances core.train.Trainer CHUNK_SECONDS at a time
inside a fragment that reruns itself while training, so the page redraws at most twice a second and only the
live section -> live curves (their data changes only when an evaluation lands). Then the trained (or shipped)
model, one inspection tool at a time (ui/parts.py): greedy decoding step by step on the learner's input, its
attention maps, snapshots taken during training, error analysis (core.lab.errors), the vocabularies; the exports.
"""
import altair as alt
import numpy as np
import pandas as pd
import streamlit as st
import torch

from core.lab.analysis import entropy
from core.checkpoints import load_checkpoint
from core.decoding import greedy_decode
from core.lab.errors import error_report
from core.model import build_model, count_parameters
from core.tasks import BOS, BOS_ID, EOS, PAD, TaskInputError, make_task
from core.train import (
    PRESETS,
    Trainer,
    evaluate,
    learning_rate,
    model_config,
    predict,
    sequence_loss,
)
from ui import charts, limits, links, models, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS, KINDS, Run, attention_maps

TASK_NAMES = ("copy", "addition", "parser", "reverse", "sort")
D_MODELS, HEADS = (16, 32, 64, 128, 256), (1, 2, 4, 8)  # every d_model here is a multiple of every head count
D_FFS, BATCHES = (32, 64, 128, 256, 512, 1024), (16, 32, 64, 128, 256)
LRS = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2)
MAX_LAYERS, MAX_STEPS, TOP_TOKENS = 4, 5000, 8
CHART_WIDTH = 380  # two charts side by side in the wide layout
POSITIONALS = ("sinusoidal", "learned", "rotary")
ROLES = {PAD: "train.special_pad", BOS: "train.special_bos", EOS: "train.special_eos"}
PARTS = ("try", "attention", "snapshots", "errors", "vocab")  # the inspection tools, one on screen at a time
ss = st.session_state


def load_preset() -> None:
    """Copy the chosen task's preset (model sizes, training) into the page's controls: on the first visit and
    when the learner picks a task or a preset (not when a link or a scene sets them: they carry their values)."""
    preset = PRESETS[ss["train_task"]][ss["train_preset"]]
    m, tr = preset.model, preset.train
    ss.update(train_d_model=m["d_model"], train_heads=m["n_heads"], train_layers=m["n_layers"],
              train_d_ff=m["d_ff"], train_dropout=m["dropout"], train_norm="pre" if m["norm_first"] else "post",
              train_positional=m["positional"], train_lr=tr.lr, train_batch=tr.batch_size, train_steps=tr.steps)


def wanted() -> dict:
    """What a new run would be built from, read from the controls."""
    name = ss["train_task"]
    if name == "addition":
        options = {"digits": ss["train_digits"], "full_range": ss["train_full_range"]}
    elif name == "parser":
        options = {"spaces": ss["train_spaces"]}
    else:
        options = {"length": ss["train_length"], "vocab_size": ss["train_vocab"]}
    model = {"d_model": ss["train_d_model"], "n_heads": ss["train_heads"], "n_layers": ss["train_layers"],
             "d_ff": ss["train_d_ff"], "dropout": ss["train_dropout"], "norm_first": ss["train_norm"] == "pre",
             "positional": ss["train_positional"]}
    steps = int(ss["train_steps"])
    warmup = min(PRESETS[name][ss["train_preset"]].train.warmup, steps // 4)
    return {"task_name": name, "preset": ss["train_preset"], "task_options": options, "model_changes": model,
            "lr": ss["train_lr"], "batch_size": ss["train_batch"], "steps": steps, "warmup": warmup,
            "seed": settings.seed}


def start() -> None:
    """Start (or go on with) the run, within the server's budget (ui/limits.py); a refusal is said, not raised."""
    ss.pop("train_refused", None)
    run = ss.get(models.RUN_KEY)
    if run is None:
        if step_work(wanted()) > limits.MAX_STEP_WORK:
            ss["train_refused"] = "train.refused_heavy"
            return
        if not limits.may_start():
            ss["train_refused"] = "train.refused_starts"
            return
        run = ss[models.RUN_KEY] = Run.new(device=settings.device, **wanted())
        ss["train_built_from"] = wanted()
    if run.trainer.done:
        return
    if not limits.claim(run.token):
        ss["train_refused"] = "train.refused_busy"
        return
    run.running = True


def stop() -> None:
    if models.RUN_KEY in ss:
        ss[models.RUN_KEY].running = False
        limits.release(ss[models.RUN_KEY].token)


def reset() -> None:
    stop()
    ss.pop(models.RUN_KEY, None)
    ss.pop("train_built_from", None)


def use_pretrained() -> None:
    stop()
    name = ss["train_task"]
    ss[models.RUN_KEY] = Run.from_checkpoint(name, models.shipped(name), settings.device)
    ss.pop("train_built_from", None)


def upload_checkpoint() -> None:
    upload = ss.get("train_upload")
    if upload is None:
        return
    if upload.size > limits.MAX_UPLOAD_MB * 2**20:
        ss["train_upload_problem"] = t("train.upload_too_big", mb=limits.MAX_UPLOAD_MB)
        return
    try:  # sizes and records are bounded before anything is inflated or built (core.checkpoints)
        loaded = load_checkpoint(upload, device="cpu", limits=limits.MODEL_LIMITS,
                                 max_bytes=limits.MAX_CHECKPOINT_BYTES)
        uploaded = Run.from_checkpoint(loaded.task.name, loaded, settings.device)
    except Exception:  # a file from a stranger: whatever is wrong with it, the same polite message
        ss["train_upload_problem"] = t("train.upload_not_ours", name=md_escape(upload.name))
        return
    stop()
    ss[models.RUN_KEY] = uploaded
    ss.pop("train_built_from", None)
    ss.pop("train_upload_problem", None)


@st.cache_data(max_entries=64, show_spinner=False)
def positions(task_name: str, task_options: dict) -> int:
    """Source and target positions of one example of the task (the decoder reads BOS + the target)."""
    task = make_task(task_name, **task_options)
    return task.max_src_len + task.max_tgt_len + 1


def step_work(spec: dict) -> float:
    """The cost of one training step of these settings, in the units of limits.MAX_STEP_WORK."""
    model = spec["model_changes"]
    return limits.step_work(spec["batch_size"], positions(spec["task_name"], spec["task_options"]),
                            model["n_layers"], model["d_model"], model["d_ff"])


@st.cache_data(max_entries=64, show_spinner=False)
def parameter_count(task_name: str, task_options: dict, model_changes: dict) -> int:
    """Trainable parameters of the model these settings build (cached: building the largest takes ~50 ms)."""
    task = make_task(task_name, **task_options)
    return count_parameters(build_model(model_config(task, **model_changes)))["total"]


def task_controls(lang: str) -> None:
    links.control(st.selectbox, t("train.task"), TASK_NAMES, format_func=lambda n: t(f"task.{n}", lang),
                  setting="train_task", identity=(lang,), after=load_preset)
    links.control(st.radio, t("train.preset"), ("fast", "course"), format_func=lambda p: t(f"train.preset_of.{p}", lang),
                  horizontal=True, help=t("train.preset_help"), setting="train_preset", identity=(lang,),
                  after=load_preset)
    if ss["train_task"] == "addition":
        links.control(st.slider, t("train.digits"), 1, 6, setting="train_digits")
        links.control(st.toggle, t("train.full_range"), help=t("train.full_range_help"), setting="train_full_range")
    elif ss["train_task"] == "parser":
        links.control(st.toggle, t("train.spaces"), setting="train_spaces")
    else:
        links.control(st.slider, t("train.length"), 2, 32, setting="train_length")
        links.control(st.slider, t("train.vocab"), 2, 64, setting="train_vocab")


def model_controls(lang: str) -> None:
    links.control(st.select_slider, "d_model", D_MODELS, setting="train_d_model")
    links.control(st.select_slider, t("train.heads"), HEADS, help=t("train.heads_help"), setting="train_heads")
    links.control(st.slider, t("train.layers"), 1, MAX_LAYERS, setting="train_layers")
    links.control(st.select_slider, "d_ff", D_FFS, setting="train_d_ff")
    links.control(st.slider, t("train.dropout"), 0.0, 0.5, step=0.05, setting="train_dropout")
    links.control(st.radio, t("train.norm"), ("pre", "post"), format_func=lambda v: t(f"train.norm_of.{v}", lang),
                  horizontal=True, setting="train_norm", identity=(lang,))
    links.control(st.radio, t("train.positional"), POSITIONALS, format_func=lambda v: t(f"train.pos_of.{v}", lang),
                  horizontal=True, setting="train_positional", identity=(lang,))


def schedule_controls() -> None:
    links.control(st.select_slider, t("train.lr"), LRS, format_func=lambda v: f"{v:g}", setting="train_lr")
    links.control(st.select_slider, t("train.batch"), BATCHES, setting="train_batch")
    links.control(st.slider, t("train.steps"), 20, MAX_STEPS, step=10, help=t("train.steps_help", cap=MAX_STEPS),
                  setting="train_steps")
    spec = wanted()
    size = parameter_count(spec["task_name"], spec["task_options"], spec["model_changes"])
    st.metric(t("train.parameters"), f"{size:,}")
    st.caption(t("train.schedule", warmup=spec["warmup"], steps=spec["steps"], lr=f"{spec['lr']:g}"))
    if step_work(spec) > limits.MAX_STEP_WORK:
        st.warning(t("train.too_heavy", times=f"{step_work(spec) / limits.MAX_STEP_WORK:.1f}"), icon=":material/speed:")


def setup() -> None:
    """Task, model and schedule in three columns; the buttons that start, stop, reset or load a run."""
    st.subheader(t("train.setup_header"))
    task_col, model_col, train_col = st.columns(3, gap="large")
    with task_col:
        task_controls(settings.lang)
    with model_col:
        model_controls(settings.lang)
    with train_col:
        schedule_controls()
    run_buttons(ss.get(models.RUN_KEY))


def run_buttons(run: Run | None) -> None:
    running = run is not None and run.running
    finished = run is not None and (run.trainer.done or ss.get("train_capped") == run.token)
    buttons = st.columns([1, 1, 1, 2])
    buttons[0].button(t("train.continue" if run is not None and run.trainer.step else "train.start"), on_click=start,
                      type="primary", icon=":material/play_arrow:", disabled=running or finished)
    buttons[1].button(t("train.stop"), on_click=stop, icon=":material/pause:", disabled=not running)
    buttons[2].button(t("train.reset"), on_click=reset, icon=":material/restart_alt:", disabled=run is None)
    buttons[3].button(t("train.pretrained", task=t(f"task.{ss['train_task']}")), on_click=use_pretrained,
                      icon=":material/download_done:", disabled=ss["train_task"] not in models.SHIPPED or running,
                      help=t("train.pretrained_help"))
    if ss.get("train_refused"):
        st.warning(t(ss["train_refused"], running=limits.running_now(), starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    st.caption(t("train.reload_note"))
    if run is not None and not run.pretrained and ss.get("train_built_from") not in (None, wanted()):
        st.info(t("train.settings_changed"), icon=":material/info:")
    with st.expander(t("train.upload"), icon=":material/upload_file:"):
        st.file_uploader(t("train.upload_label", mb=limits.MAX_UPLOAD_MB), type=["pt"], key="train_upload",
                         on_change=upload_checkpoint)
        if ss.get("train_upload_problem"):
            st.error(ss["train_upload_problem"], icon=":material/error:")


def headline(run: Run) -> None:
    """The progress bar and the headline numbers (they change at every redraw)."""
    trainer, last = run.trainer, run.evaluations[-1]
    steps = trainer.train_cfg.steps
    st.progress(min(1.0, trainer.step / steps), text=t("train.progress", step=trainer.step, steps=steps))
    recent = [r.loss for r in trainer.history[-20:]]
    speed = trainer.step / trainer.elapsed if trainer.elapsed > 0 else 0.0
    cols = st.columns(4)
    cols[0].metric(t("train.loss"), f"{np.mean(recent):.4f}" if recent else "—")
    cols[1].metric(t("train.greedy_em"), f"{last.exact_match:.1%}", help=t("train.greedy_em_help", n=last.n))
    cols[2].metric(t("train.forced_em"), f"{last.teacher_forced_exact_match:.1%}", help=t("train.forced_em_help"))
    cols[3].metric(t("train.speed"), f"{speed:.1f}", help=t("train.speed_help", seconds=f"{trainer.elapsed:.1f}"))
    if run.pretrained:
        st.caption(t("train.pretrained_caption", steps=steps, seconds=f"{trainer.elapsed:.1f}"))


def curve_charts(run: Run, upto: int, lang: str) -> tuple[alt.Chart | None, alt.Chart]:
    """The loss curve up to step `upto` (the last evaluation: between evaluations neither chart changes, so a
    redraw leaves them as they are) and the three accuracy curves."""
    shown = [r for r in run.trainer.history if r.step <= upto]
    shown = shown[::max(1, len(shown) // 400)]  # at most ~400 points on the chart
    loss = charts.lines([r.step for r in shown], {t("train.loss", lang): [r.loss for r in shown]},
                        x_title=t("train.step", lang), y_title=t("train.loss", lang)) if shown else None
    evals = run.evaluations
    series = {t("train.forced_em", lang): [e.teacher_forced_exact_match for e in evals],
              t("train.greedy_em", lang): [e.exact_match for e in evals],
              t("train.greedy_tokens", lang): [e.token_accuracy for e in evals]}
    chart = charts.lines([e.step for e in evals], series, x_title=t("train.step", lang), y_title=t("train.accuracy", lang),
                         colors=(charts.PALETTE["key"], charts.PALETTE["value"], charts.PALETTE["query"]))
    accuracy = chart.mark_line(point=True, strokeWidth=2.5).encode(
        x=alt.X("x:Q", axis=alt.Axis(title=t("train.step", lang), format="d", labelFontSize=12, titleFontSize=14)),
        y=alt.Y("y:Q", scale=alt.Scale(domain=[0, 1]),
                axis=alt.Axis(title=t("train.accuracy", lang), format="%", labelFontSize=12, titleFontSize=14)))
    return loss, accuracy


def curves(run: Run) -> None:
    """The live curves, built again only when an evaluation landed (kept in the session until then)."""
    tag = (run.token, run.evaluations[-1].step, settings.lang)
    if ss.get("train_curves_for") != tag:
        ss["train_curves"], ss["train_curves_for"] = curve_charts(run, tag[1], settings.lang), tag
    loss, accuracy = ss["train_curves"]
    loss_col, acc_col = st.columns(2, gap="large")
    if loss is not None:
        loss_col.altair_chart(loss.properties(width=CHART_WIDTH), width="content")
    acc_col.altair_chart(accuracy.properties(width=CHART_WIDTH), width="content")


def train_chunk(run: Run) -> None:
    """CHUNK_SECONDS of training if this run still holds its place (Run.advance never lets two threads step it)."""
    if not limits.claim(run.token):  # its place went to another run while it was away: wait for one
        run.running = False
        ss["train_refused"] = "train.refused_busy"
    else:
        run.advance(CHUNK_SECONDS)
    if run.trainer.elapsed > 60 * limits.MAX_RUN_MINUTES:
        run.running = False
        ss["train_capped"] = run.token
    if not run.running:
        limits.release(run.token)
        st.rerun()  # finished: stop the timer and refresh the sections below with the trained model


def live() -> None:
    """A chunk of training (when running), then the progress. Reruns itself every CHUNK_SECONDS while running."""
    run = ss.get(models.RUN_KEY)
    if run is None:
        st.info(t("train.no_run"), icon=":material/info:")
        return
    if run.running:
        train_chunk(run)
    if ss.get("train_capped") == run.token:
        st.warning(t("train.time_cap", minutes=limits.MAX_RUN_MINUTES), icon=":material/timer_off:")
    headline(run)
    if not run.pretrained:
        curves(run)


def learner_input(run: Run):
    """The learner's input (a held-out example until they type) and the model's greedy answer, or None."""
    task, model = run.trainer.task, run.trainer.model
    example = task.examples(1, seed=settings.seed, split="heldout" if task.holdout > 0 else "fresh")[0][0]
    if ss.get("train_input_for") != repr(task):
        ss["train_input"], ss["train_input_for"] = example, repr(task)
    links.control(st.text_input, t("train.input"), max_chars=200, help=t("train.input_help", example=example),
                  setting="train_input")
    try:
        return predict(model, task, ss["train_input"])
    except TaskInputError as error:
        st.warning(t(f"train.input_of.{error.code}", part=md_escape(error.part), limit=error.limit), icon=":material/edit:")
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
    probs = torch.softmax(found.logits[0], dim=-1).cpu().numpy()  # (k, tgt_vocab)
    k = len(generated)
    step = links.control(st.slider, t("train.decode_step"), 1, k, setting="train_decode_step") if k > 1 else 1
    prefix = [BOS, *generated[:step - 1]]
    st.markdown(t("train.decoder_input", tokens=" ".join(f"`{s.replace('`', '')}`" for s in prefix),
                  chosen=md_escape(generated[step - 1]), p=f"{probs[step - 1].max():.4f}"))
    top = np.argsort(-probs[step - 1])[:TOP_TOKENS]
    labels = [task.tgt_vocab.tokens[i] for i in top]
    st.altair_chart(charts.bars(probs[step - 1][top], labels, value_title=t("train.probability"),
                                label_title=t("train.next_token"), title=t("train.next_title", step=step)),
                    width="content")
    if settings.show_numbers:
        st.dataframe(pd.DataFrame({t("train.decoder_input_col"): [" ".join([BOS, *generated[:i]]) for i in range(k)],
                                   t("train.next_token"): generated,
                                   t("train.probability"): probs.max(axis=1)}), hide_index=True)


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
    lang = settings.lang
    kind_col, layer_col = st.columns(2)
    kind = links.control(kind_col.radio, t("train.kind"), KINDS, format_func=lambda k: t(f"train.kind_of.{k}", lang),
                         horizontal=True, setting="train_kind", identity=(lang,))
    layers = maps[kind].shape[0]
    layer = links.control(layer_col.selectbox, t("train.layer"), range(layers),
                          format_func=lambda i: t("train.layer_n", i=i + 1, lang=lang), setting="train_layer",
                          identity=(lang, layers)) if layers > 1 else 0
    rows = src_labels if kind == "encoder" else tgt_labels
    cols = tgt_labels if kind == "decoder" else src_labels
    heads = maps[kind][layer]
    st.altair_chart(charts.facet_heatmaps(list(heads), [t("train.head_n", h=h + 1) for h in range(len(heads))], rows,
                                          cols, columns=min(4, len(heads)), text=panels.chart_text()), width="content")
    st.caption(t(f"train.kind_caption.{kind}"))


def snapshots_section(run: Run) -> None:
    snaps = run.snapshots
    lang = settings.lang
    kind_col, layer_col, head_col = st.columns(3)
    kind = links.control(kind_col.radio, t("train.kind"), KINDS, format_func=lambda k: t(f"train.kind_of.{k}", lang),
                         horizontal=True, setting="train_snap_kind", identity=(lang,))
    layers, heads = snaps[0][1][kind].shape[:2]
    layer = links.control(layer_col.selectbox, t("train.layer"), range(layers),
                          format_func=lambda i: t("train.layer_n", i=i + 1, lang=lang), setting="train_snap_layer",
                          identity=(lang, layers))
    head = links.control(head_col.selectbox, t("train.head"), range(heads),
                         format_func=lambda h: t("train.head_n", h=h + 1, lang=lang), setting="train_snap_head",
                         identity=(lang, heads))
    steps = [s for s, _ in snaps]
    if ss.get("train_snap_step") not in steps:
        ss["train_snap_step"] = steps[-1]
    if len(steps) > 1:
        links.control(st.select_slider, t("train.snapshot"), steps, help=t("train.snapshot_help"),
                      setting="train_snap_step", identity=tuple(steps))
    chosen = snaps[steps.index(ss["train_snap_step"])][1][kind][layer, head]  # (n_q, n_k)
    src, tgt_in = run.probe
    src_labels = run.trainer.task.src_vocab.decode(src[0].tolist())
    tgt_labels = run.trainer.task.tgt_vocab.decode(tgt_in[0].tolist())
    rows = src_labels if kind == "encoder" else tgt_labels
    cols = tgt_labels if kind == "decoder" else src_labels
    weights_col, entropy_col = st.columns(2, gap="large")
    with weights_col:
        panels.matrix_panel(chosen, title=t("train.snapshot_title", step=ss["train_snap_step"]), key="train_snap",
                            row_labels=rows, col_labels=cols, scale="weights", max_width=380)
    spread = [entropy(torch.from_numpy(maps[kind][layer, head])).mean().item() for _, maps in snaps]
    with entropy_col:
        chart = charts.lines(steps, {t("train.entropy"): spread}, x_title=t("train.step"), y_title=t("train.entropy"))
        st.altair_chart(chart.properties(width=CHART_WIDTH), width="content")
        st.caption(t("train.entropy_caption", uniform=f"{np.log(chosen.shape[1]):.4f}"))


def errors_section(run: Run) -> None:
    task = run.trainer.task
    tag = (run.token, run.trainer.step)
    if ss.get("train_errors_for") != tag:
        ss["train_errors"], ss["train_errors_for"] = error_report(run.trainer.model, task, n=1000), tag
    report = ss["train_errors"]
    st.markdown(t("train.errors_summary", n=report.n, em=f"{report.exact_match:.1%}",
                  split=t(f"train.split_of.{report.split}")))
    labels = [str(i + 1) for i in range(len(report.position_accuracy) - 1)] + [EOS]
    pos_col, group_col = st.columns(2, gap="large")
    with pos_col:
        st.altair_chart(charts.bars(report.position_accuracy, labels, value_title=t("train.token_accuracy"),
                                    label_title=t("train.position"), title=t("train.by_position")), width="content")
    if report.groups:
        with group_col:
            names = list(report.groups)
            st.altair_chart(charts.bars([report.groups[g][0] for g in names],
                                        [t(f"train.group_of.{task.name}", g=g, n=report.groups[g][1]) for g in names],
                                        value_title=t("train.exact_match"), title=t(f"train.by_of.{task.name}")),
                            width="content")
    if report.mistakes:
        st.dataframe(pd.DataFrame(report.mistakes, columns=[t("train.col_source"), t("train.col_expected"),
                                                            t("train.col_predicted")]), hide_index=True)
    else:
        st.caption(t("train.no_mistakes"))


def vocabulary_section(run: Run) -> None:
    task = run.trainer.task
    for title, vocab in ((t("train.src_vocab"), task.src_vocab), (t("train.tgt_vocab"), task.tgt_vocab)):
        kinds = [t(ROLES.get(s, "train.symbol")) for s in vocab.tokens]
        st.markdown(f"##### {title}")
        st.dataframe(pd.DataFrame({"id": range(len(vocab)), t("train.token"): [repr(s) if s == " " else s
                                                                                 for s in vocab.tokens],
                                   t("train.role"): kinds}), hide_index=True, height=min(400, 36 * (len(vocab) + 1)))


# Scenes set the controls only, never start training.

SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "addition_course": {"train_task": "addition", "train_preset": "course", "train_digits": 3,
                        "train_full_range": False, "train_d_model": 256, "train_heads": 4, "train_layers": 3,
                        "train_d_ff": 512, "train_dropout": 0.1, "train_norm": "pre", "train_positional": "sinusoidal",
                        "train_lr": 0.0005, "train_batch": 128, "train_steps": 1500, "train_part": "try"},
    "parser_course": {"train_task": "parser", "train_preset": "course", "train_spaces": False, "train_d_model": 128,
                      "train_heads": 4, "train_layers": 3, "train_d_ff": 512, "train_dropout": 0.1, "train_norm": "pre",
                      "train_positional": "sinusoidal", "train_lr": 0.0005, "train_batch": 64, "train_steps": 500,
                      "train_part": "try"},
    "deep_pre_norm": {"train_task": "copy", "train_preset": "fast",
                      "train_length": 20, "train_vocab": 19, "train_d_model": 32, "train_heads": 2, "train_layers": 4,
                      "train_d_ff": 64, "train_dropout": 0.0, "train_norm": "pre", "train_positional": "sinusoidal",
                      "train_lr": 0.02, "train_batch": 64, "train_steps": 400, "cfg_seed": 0,
                      "train_part": "snapshots"},
    "deep_post_norm": {"train_task": "copy", "train_preset": "fast",
                       "train_length": 20, "train_vocab": 19, "train_d_model": 32, "train_heads": 2, "train_layers": 4,
                       "train_d_ff": 64, "train_dropout": 0.0, "train_norm": "post", "train_positional": "sinusoidal",
                       "train_lr": 0.02, "train_batch": 64, "train_steps": 400, "cfg_seed": 0,
                       "train_part": "snapshots"},
}



PART_HEADERS = {"try": "train.try_header", "attention": "train.attention_header",
                "snapshots": "train.snapshots_header", "errors": "train.errors_header", "vocab": "train.vocab_header"}


@st.fragment
def inspect(run: Run) -> None:
    """The trained model, one tool at a time; the tools' own controls rerun this section only."""
    lang = settings.lang
    st.subheader(t("train.inspect_header"))
    if run.running:
        st.caption(t("train.stale_caption", step=run.trainer.step))
    part = parts.pick("train_part", PARTS, label=t("train.part"), format_func=lambda p: t(f"train.part_of.{p}", lang))
    st.markdown(f"#### {t(PART_HEADERS[part])}")
    if part == "try":
        try_model(run)
    elif part == "attention":
        attention_section(run)
    elif part == "snapshots" and run.pretrained:
        st.info(t("train.snapshots_pretrained"), icon=":material/info:")
    elif part == "snapshots":
        st.markdown(t("train.snapshots_text", every=run.eval_every))
        snapshots_section(run)
    elif part == "errors" and run.running:
        st.info(t("train.errors_wait"), icon=":material/hourglass_top:")
    elif part == "errors":
        st.markdown(t(f"train.errors_text_of.{run.trainer.task.name}"))
        errors_section(run)
    else:
        prose(t("train.vocab_text"))
        vocabulary_section(run)


def export(run: Run) -> None:
    st.subheader(t("train.export_header"))
    export_cols = st.columns(2)
    export_cols[0].download_button(t("train.export_checkpoint"), run.checkpoint_bytes, on_click="ignore",
                                   file_name=f"{run.task_name}_step{run.trainer.step}.pt",
                                   mime="application/octet-stream", icon=":material/save:")
    export_cols[1].download_button(t("train.export_history"), lambda: panels.csv_text(run.history_frame()),
                                   file_name=f"{run.task_name}_history.csv", mime="text/csv", on_click="ignore",
                                   icon=":material/table:")


def intro() -> None:
    st.title(t("train.title"))
    scenes.picker("train", SCENES)
    prose(t("train.intro"))
    st.latex(r"\mathcal{L} = -\frac{1}{|T|}\sum_{t \in T} \sum_{v} q_t(v) \log p_\theta(v \mid y_{<t}, x), \qquad "
             r"q_t = (1 - \varepsilon)\, \mathbb{1}[v = y_t] + \tfrac{\varepsilon}{V}")
    prose(t("train.loss_text"))


def training() -> None:
    """The live section: a fragment that trains CHUNK_SECONDS, redraws itself, and goes on while the run runs."""
    st.subheader(t("train.live_header"))
    run = ss.get(models.RUN_KEY)
    st.fragment(live, run_every=CHUNK_SECONDS if run is not None and run.running else None)()


def notice() -> None:
    panels.show_code(Trainer.train_step, learning_rate, sequence_loss, evaluate, greedy_decode, Run.advance)
    st.subheader(t("train.notice_header"))
    st.markdown(t("train.notice_points"))


settings = state.settings()
ss.setdefault("train_task", "copy")
ss.setdefault("train_preset", "fast")
for name, value in (("train_digits", 3), ("train_full_range", False), ("train_spaces", False), ("train_length", 20),
                    ("train_vocab", 19), ("train_kind", "cross"), ("train_snap_kind", "cross"), ("train_layer", 0),
                    ("train_snap_layer", 0), ("train_snap_head", 0), ("train_decode_step", 1)):
    ss.setdefault(name, value)
if "train_d_model" not in ss:  # the first visit: the default task's preset
    load_preset()

intro()
setup()
training()
if (run := ss.get(models.RUN_KEY)) is not None:
    inspect(run)
    export(run)
notice()
