"""Lesson 12's grid of classifier runs, kept in the learner's session, and how it is trained and shown.

Every run of the grid (depth N x pre-norm/post-norm) is a core.lab.classifier.ClassifierRun kept in
``st.session_state["clf_runs"]``, keyed by everything that shapes its curves (`run_key`). While "clf_running" is
set, the lesson's results fragment calls `train_chunk` (the runs advance round-robin for CHUNK_SECONDS) and
redraws; Stop only clears the flag. Nothing lives outside session_state, so a page or language switch loses
nothing.
"""
from __future__ import annotations

import threading
import time
import uuid

import pandas as pd
import streamlit as st

from core.lab.classifier import ClassifierConfig, ClassifierRun, RangeTask, RunConfig, advance, finite, first_epoch_at
from . import charts, limits
from .i18n import t
from .training import CHUNK_SECONDS

DEPTHS = (1, 2, 3, 4, 6)
NORMS = {"pre": "clf.norm_pre", "post": "clf.norm_post"}  # placement -> its name in the catalog
MAX_EPOCHS, MAX_STEPS, STEP_GRID, BATCH = 30, 200, 10, 64  # caps: at most 30 x 200 = 6,000 steps per run
MAX_STORED = 20  # trained runs kept per session; the oldest one not on screen goes first
DEPTH_COLORS = {n: charts.CATEGORICAL[i] for i, n in enumerate(DEPTHS)}
DEFAULTS = {"clf_depths": [1, 2, 4], "clf_norms": ["pre"], "clf_epochs": 10, "clf_steps": 50, "clf_lr": 1e-3,
            "clf_minority": 0}


def start_session() -> None:
    """The page's settings and an empty grid on the session's first visit."""
    ss = st.session_state
    for name, value in DEFAULTS.items():
        ss.setdefault(name, list(value) if isinstance(value, list) else value)
    ss.setdefault("clf_runs", {})
    ss.setdefault("clf_running", False)
    ss.setdefault("clf_token", uuid.uuid4().hex)  # this session's place among the server's training runs
    ss.setdefault("clf_stepping", threading.Lock())  # held while a chunk trains (see train_chunk)


def run_key(n: int, norm: str, seed: int) -> tuple:
    """Everything that shapes a run's curves (the epochs only say how far to go)."""
    ss = st.session_state
    return n, norm, int(ss["clf_steps"]), float(ss["clf_lr"]), int(ss["clf_minority"]), seed


def new_run(key: tuple) -> ClassifierRun:
    n, norm, steps, lr, minority, seed = key
    return ClassifierRun(RangeTask(minority=minority), ClassifierConfig(n_layers=n, norm_first=norm == "pre"),
                         RunConfig(epochs=MAX_EPOCHS, steps_per_epoch=steps, batch_size=BATCH, lr=lr, seed=seed))


def ensure_runs(keys: list[tuple]) -> list[ClassifierRun]:
    """The runs of `keys`, created when missing; beyond MAX_STORED the oldest other runs are dropped."""
    runs = st.session_state["clf_runs"]
    for key in keys:
        if key not in runs:
            runs[key] = new_run(key)
    for old in [k for k in runs if k not in keys][:max(0, len(runs) - MAX_STORED)]:
        del runs[old]
    return [runs[key] for key in keys]


def start() -> None:
    """Start the experiment within the server's budget (ui/limits.py); a refusal is said, not raised."""
    ss = st.session_state
    ss.pop("clf_refused", None)
    if not limits.may_start():
        ss["clf_refused"] = "train.refused_starts"
    elif not limits.claim(ss["clf_token"]):
        ss["clf_refused"] = "train.refused_busy"
    else:
        ss["clf_running"], ss["clf_trained_seconds"], ss["clf_capped"] = True, 0.0, False


def stop() -> None:
    st.session_state["clf_running"] = False
    limits.release(st.session_state["clf_token"])


def reset() -> None:
    stop()
    st.session_state["clf_runs"] = {}


def train_chunk(keys: list[tuple], epochs: int) -> None:
    """One chunk of every run, if this session holds a training place and no other thread of it is stepping."""
    ss = st.session_state
    if not limits.claim(ss["clf_token"]):  # its place went to another run while it was away
        ss["clf_refused"] = "train.refused_busy"
        stop()
        return
    stepping = ss["clf_stepping"]  # read once: under fast reruns any st.session_state access can raise the
    if not stepping.acquire(blocking=False):  # runner's stop, so the finally below must not touch it
        return  # a second script thread of this session (fast reruns) is stepping the runs
    try:
        begun = time.perf_counter()
        advance(ensure_runs(keys), epochs, CHUNK_SECONDS)
        ss["clf_trained_seconds"] = ss.get("clf_trained_seconds", 0.0) + time.perf_counter() - begun
    finally:
        stepping.release()
    if all(ss["clf_runs"][k].done(epochs) for k in keys):
        stop()
    elif ss["clf_trained_seconds"] > 60 * limits.MAX_RUN_MINUTES:
        stop()
        ss["clf_capped"] = True


def label(key: tuple) -> str:
    return t("clf.run_label", n=key[0], norm=t(NORMS[key[1]]))


def summary_table(keys: list[tuple], runs: list[ClassifierRun], epochs: int) -> pd.DataFrame:
    """One row per run that finished an epoch: size, final and best test accuracy, epochs to 100 %, loss, speed."""
    rows = []
    for key, run in zip(keys, runs):
        history = run.history[:epochs]
        if not history:
            continue  # still in its first epoch: nothing to report yet
        reached = first_epoch_at(history)
        rows.append({t("clf.col_run"): label(key), t("clf.col_params"): run.n_parameters,
                     t("clf.col_epochs"): len(history), t("clf.col_final"): history[-1].test_accuracy,
                     t("clf.col_best"): max(e.test_accuracy for e in history),
                     t("clf.col_to_100"): str(reached) if reached else "—",
                     t("clf.col_loss"): finite(history[-1].train_loss), t("clf.col_ms"): 1000 * run.elapsed / run.step})
    return pd.DataFrame(rows)


def curves(keys: list[tuple], runs: list[ClassifierRun], epochs: int, field: str) -> list[tuple]:
    return [(f"N = {key[0]}", t(NORMS[key[1]]), [getattr(e, field) for e in run.history[:epochs]])
            for key, run in zip(keys, runs)]


def run_charts(keys: list[tuple], runs: list[ClassifierRun], epochs: int) -> tuple:
    """Test accuracy and training loss per epoch, one line per run."""
    colors = {f"N = {n}": DEPTH_COLORS[n] for n in DEPTHS}
    common = {"x_title": t("clf.epoch"), "color_title": t("clf.depth"), "dash_title": t("clf.placement"),
              "colors": colors, "x_max": epochs, "width": 560}
    return (charts.run_lines(curves(keys, runs, epochs, "test_accuracy"), y_title=t("clf.test_acc"),
                             y_domain=(0.0, 1.0), **common),
            charts.run_lines(curves(keys, runs, epochs, "train_loss"), y_title=t("clf.train_loss"), log_y=True,
                             height=200, **common))


def observed(keys: list[tuple], runs: list[ClassifierRun], epochs: int) -> str | None:
    """What these runs show: the fastest to 100 % test accuracy, and any left at chance (None before an epoch)."""
    trained = [(k, r.history[:epochs]) for k, r in zip(keys, runs) if r.history]
    if not trained:
        return None
    reached = {k: first_epoch_at(h) for k, h in trained if first_epoch_at(h)}
    first = min(reached.values(), default=None)
    text = t("clf.observed_fastest", epoch=first, runs=", ".join(label(k) for k, e in reached.items()
                                                                 if e == first)) if first else t("clf.observed_none")
    chance = [label(k) for k, h in trained if h[-1].test_accuracy <= 0.55]
    if chance:
        text += " " + t("clf.observed_chance", runs=", ".join(chance))
    return t("clf.observed_header") + " " + text
