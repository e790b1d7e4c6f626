"""Lesson 15's three runs in the session: the settings they are built from, and the callbacks of their buttons.

The runs live in ``st.session_state["ft_runs"]``, keyed by everything that shapes them (`run_keys`); the controls'
values are the canonical settings ``ft_*``. While "ft_running" is set, the lesson's results fragment calls
`train_chunk`, which steps the three runs in turn for CHUNK_SECONDS (Stop clears the flag). Start, Stop and Reset
are button callbacks; a refusal (ui/limits.py) is stored under "ft_refused" and said by the page, never raised.
The shared MiniLM is only read, under its lock (ui/minilm.py).
"""
from __future__ import annotations

import threading
import time
import uuid

import streamlit as st

from core.lab import finetune as ft

from . import limits, state
from .finetune import sentences_read
from .minilm import minilm
from .training import CHUNK_SECONDS

MAX_STEPS, STEP_GRID, MAX_SECONDS = 120, 10, 90.0  # caps per run: steps and training seconds
DEFAULTS = {"ft_lang": "en", "ft_layers": 2, "ft_steps": 60, "ft_sentence": 0}


def start_session() -> None:
    """The controls' values on the first visit, no runs, and this session's place among the training runs."""
    ss = st.session_state
    for name, value in DEFAULTS.items():
        ss.setdefault(name, value)
    ss.setdefault("ft_runs", {})
    ss.setdefault("ft_running", False)
    ss.setdefault("ft_token", uuid.uuid4().hex)  # this session's place among the server's training runs
    ss.setdefault("ft_stepping", threading.Lock())  # held while a chunk trains (see train_chunk)


def run_keys() -> list[tuple]:
    """(kind, language, top layers, steps, seed) of the three runs the settings ask for."""
    ss = st.session_state
    seed = state.settings().seed
    return [(kind, ss["ft_lang"], int(ss["ft_layers"]), int(ss["ft_steps"]), seed) for kind in ft.KINDS]


def new_run(key: tuple) -> ft.FineTuneRun:
    kind, lang, layers, steps, seed = key
    model, tokenizer, lock = minilm()
    read = sentences_read(lang)
    with lock:  # the run copies layers of the shared model
        return ft.FineTuneRun(model, tokenizer, ft.RunConfig(kind=kind, lang=lang, top_layers=layers, steps=steps,
                                                             seed=seed, max_seconds=MAX_SECONDS), read)


def advance(keys: list[tuple], seconds: float) -> None:
    """Create the missing runs (others are dropped), then one step of each unfinished run in turn for `seconds`."""
    runs = st.session_state["ft_runs"]
    for old in [k for k in runs if k not in keys]:
        del runs[old]
    start = time.perf_counter()
    for key in keys:
        if key not in runs:
            runs[key] = new_run(key)
            if time.perf_counter() - start >= seconds:
                return  # building a run computes features: redraw before stepping
    while time.perf_counter() - start < seconds:
        active = [runs[k] for k in keys if not runs[k].done()]
        for run in active:
            run.train_step()
        if not active:
            return


def start() -> None:
    ss = st.session_state
    ss.pop("ft_refused", None)
    if not limits.may_start():
        ss["ft_refused"] = "train.refused_starts"
    elif not limits.claim(ss["ft_token"]):
        ss["ft_refused"] = "train.refused_busy"
    else:
        ss["ft_running"] = True


def stop() -> None:
    st.session_state["ft_running"] = False
    limits.release(st.session_state["ft_token"])


def reset() -> None:
    stop()
    st.session_state["ft_runs"] = {}


def train_chunk(keys: list[tuple]) -> None:
    """One chunk, if this session holds a training place and no other script thread of it is stepping."""
    ss = st.session_state
    if not limits.claim(ss["ft_token"]):
        ss["ft_refused"] = "train.refused_busy"
        stop()
        return
    stepping = ss["ft_stepping"]  # read once: a stopped script may raise on any session_state read
    if not stepping.acquire(blocking=False):  # a second script thread of this session (fast reruns)
        return
    try:
        advance(keys, CHUNK_SECONDS)
    finally:
        stepping.release()
    if all(k in ss["ft_runs"] and ss["ft_runs"][k].done() for k in keys):
        stop()


def steps_done(runs: dict[str, ft.FineTuneRun]) -> int:
    """Steps the runs have taken, a run stopped by the time cap counted as finished (for the progress bar)."""
    return sum(r.cfg.steps if r.timed_out() else min(r.step, r.cfg.steps) for r in runs.values())


def trained_runs() -> dict[str, ft.FineTuneRun] | None:
    """The three runs of the current settings once they have finished, else None."""
    ss = st.session_state
    runs = {k[0]: ss["ft_runs"].get(k) for k in run_keys()}
    return runs if all(r is not None and r.done() for r in runs.values()) and not ss["ft_running"] else None
