"""Lesson 9's run management: the settings a run is built from, and the callbacks of its buttons.

The run itself is a `ui.training.Run` in ``st.session_state[ui.models.RUN_KEY]``; the controls' values are the
canonical settings ``train_*``. Start, Stop, Reset, "Use the trained model" and the upload are button callbacks
(they run before the script, so the page that follows already shows their result); `train_chunk` is called by the
lesson's live fragment. A refusal (ui/limits.py) is stored under "train_refused" and said by the page, never raised.
"""
from __future__ import annotations

import streamlit as st

from core.checkpoints import load_checkpoint
from core.model import build_model, count_parameters
from core.tasks import make_task
from core.train import PRESETS, model_config
from . import limits, models, state
from .i18n import md_escape, t
from .training import CHUNK_SECONDS, Run

DEFAULTS = (("train_task", "copy"), ("train_preset", "fast"), ("train_digits", 3), ("train_full_range", False),
            ("train_spaces", False), ("train_length", 20), ("train_vocab", 19), ("train_kind", "cross"),
            ("train_snap_kind", "cross"), ("train_layer", 0), ("train_snap_layer", 0), ("train_snap_head", 0),
            ("train_decode_step", 1))


def start_session() -> None:
    """The controls' values on the first visit: the default task and its preset."""
    ss = st.session_state
    for name, value in DEFAULTS:
        ss.setdefault(name, value)
    if "train_d_model" not in ss:
        load_preset()


def load_preset() -> None:
    """Copy the chosen task's preset (model sizes, training) into the page's controls: on the first visit and
    when the learner picks a task or a preset (not when a link or a scene sets them: they carry their values)."""
    ss = st.session_state
    preset = PRESETS[ss["train_task"]][ss["train_preset"]]
    m, tr = preset.model, preset.train
    ss.update(train_d_model=m["d_model"], train_heads=m["n_heads"], train_layers=m["n_layers"],
              train_d_ff=m["d_ff"], train_dropout=m["dropout"], train_norm="pre" if m["norm_first"] else "post",
              train_positional=m["positional"], train_lr=tr.lr, train_batch=tr.batch_size, train_steps=tr.steps)


def wanted() -> dict:
    """What a new run would be built from, read from the controls (and the sidebar's seed)."""
    ss = st.session_state
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
            "seed": state.settings().seed}


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


def start() -> None:
    """Start (or go on with) the run, within the server's budget (ui/limits.py)."""
    ss = st.session_state
    ss.pop("train_refused", None)
    run = ss.get(models.RUN_KEY)
    if run is None:
        if step_work(wanted()) > limits.MAX_STEP_WORK:
            ss["train_refused"] = "train.refused_heavy"
            return
        if not limits.may_start():
            ss["train_refused"] = "train.refused_starts"
            return
        run = ss[models.RUN_KEY] = Run.new(device=state.settings().device, **wanted())
        ss["train_built_from"] = wanted()
    if run.trainer.done:
        return
    if not limits.claim(run.token):
        ss["train_refused"] = "train.refused_busy"
        return
    run.running = True


def halt(run_key: str) -> None:
    """Stop the session's run under `run_key` (if any) and give its training place back."""
    run = st.session_state.get(run_key)
    if run is not None:
        run.running = False
        limits.release(run.token)


def stop() -> None:
    halt(models.RUN_KEY)


def reset() -> None:
    stop()
    st.session_state.pop(models.RUN_KEY, None)
    st.session_state.pop("train_built_from", None)


def use_pretrained() -> None:
    ss = st.session_state
    stop()
    name = ss["train_task"]
    ss[models.RUN_KEY] = Run.from_checkpoint(name, models.shipped(name), state.settings().device)
    ss.pop("train_built_from", None)


def upload_checkpoint() -> None:
    ss = st.session_state
    upload = ss.get("train_upload")
    if upload is None:
        return
    if upload.size > limits.MAX_UPLOAD_MB * 2**20:
        ss["train_upload_problem"] = t("train.upload_too_big", mb=limits.MAX_UPLOAD_MB)
        return
    try:  # sizes and records are bounded before anything is inflated or built (core.checkpoints)
        loaded = load_checkpoint(upload, device="cpu", limits=limits.MODEL_LIMITS,
                                 max_bytes=limits.MAX_CHECKPOINT_BYTES)
        uploaded = Run.from_checkpoint(loaded.task.name, loaded, state.settings().device)
    except Exception:  # a file from a stranger: whatever is wrong with it, the same polite message
        ss["train_upload_problem"] = t("train.upload_not_ours", name=md_escape(upload.name))
        return
    stop()
    ss[models.RUN_KEY] = uploaded
    ss.pop("train_built_from", None)
    ss.pop("train_upload_problem", None)


def drawn(run_key: str) -> tuple:
    """Which run the session has and whether it trains: what a lesson outside its set-up fragment shows that the
    fragment's buttons change (the fragment reruns the whole lesson when this is no longer what was drawn)."""
    run = st.session_state.get(run_key)
    return (None, False) if run is None else (run.token, run.running)


def train_chunk(run, refused: str = "train_refused", capped: str = "train_capped") -> None:
    """CHUNK_SECONDS of training if this run still holds its place (its `advance` never lets two threads step it);
    at the end of the schedule, past the time cap or without a place, stop and rerun the whole page, which says
    why from the session's `refused` and `capped` keys. Lesson 9's `Run` and lesson 14's `GPTRun` alike."""
    ss = st.session_state
    if not limits.claim(run.token):  # its place went to another run while it was away
        run.running = False
        ss[refused] = "train.refused_busy"
    else:
        run.advance(CHUNK_SECONDS)
    if run.trainer.elapsed > 60 * limits.MAX_RUN_MINUTES:
        run.running = False
        ss[capped] = run.token
    if not run.running:
        limits.release(run.token)
        st.rerun()  # finished: stop the timer and refresh the sections below with the trained model
