"""Lesson 12: an encoder classifier and the depth experiment (CURRICULUM.md, lesson 12).

Task core.lab.classifier.RangeTask, model EncoderClassifier (core's Embeddings and Encoder, mean pooling, a linear
head). Every run of the grid (depth N x pre-norm/post-norm) is a core.lab.classifier.ClassifierRun kept in
session_state under "clf_runs", keyed by everything that shapes its curves. While "clf_running" is set, the
results section is a fragment that advances the runs round-robin, one step each, for CHUNK_SECONDS, then redraws
itself (at most twice a second; its charts change only when an epoch ends); Stop only clears the flag. Nothing lives outside session_state, so a page or language switch loses nothing.
"""
import threading
import time
import uuid

import pandas as pd
import streamlit as st
import torch

from core.lab.classifier import (
    CLASS_RANGES,
    ClassifierConfig,
    ClassifierRun,
    EncoderClassifier,
    RangeTask,
    RunConfig,
    finite,
    first_epoch_at,
    mean_pool,
    parameter_formula,
)
from ui import charts, limits, links, panels, scenes, state
from ui.i18n import t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

DEPTHS = (1, 2, 3, 4, 6)
NORMS = {"pre": "clf.norm_pre", "post": "clf.norm_post"}  # placement -> its name in the catalog
LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2)
MAX_EPOCHS, MAX_STEPS, STEP_GRID, BATCH = 30, 200, 10, 64  # caps: at most 30 x 200 = 6,000 steps per run
MAX_STORED = 20  # trained runs kept per session; the oldest one not on screen goes first
LENGTH = RangeTask().length
DEPTH_COLORS = {n: charts.CATEGORICAL[i] for i, n in enumerate(DEPTHS)}
MEASURED = {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50}
PRESETS = {"course": MEASURED | {"clf_minority": 0, "clf_lr": 1e-3},  # the settings "what to notice" quotes
           "majority": MEASURED | {"clf_minority": 9, "clf_lr": 1e-3},
           "fast_lr": MEASURED | {"clf_minority": 8, "clf_lr": 1e-2}}
PRESET_NAMES = {"course": "clf.preset_course", "majority": "clf.preset_majority", "fast_lr": "clf.preset_fast_lr"}
DEFAULTS = {"clf_depths": [1, 2, 4], "clf_norms": ["pre"], "clf_epochs": 10, "clf_steps": 50, "clf_lr": 1e-3,
            "clf_minority": 0}


def run_key(n: int, norm: str) -> tuple:
    """Everything that shapes a run's curves (the epochs only say how far to go)."""
    return n, norm, int(ss["clf_steps"]), float(ss["clf_lr"]), int(ss["clf_minority"]), settings.seed


def new_run(key: tuple) -> ClassifierRun:
    n, norm, steps, lr, minority, seed = key
    return ClassifierRun(RangeTask(minority=minority), ClassifierConfig(n_layers=n, norm_first=norm == "pre"),
                         RunConfig(epochs=MAX_EPOCHS, steps_per_epoch=steps, batch_size=BATCH, lr=lr, seed=seed))


def ensure_runs(keys: list[tuple]) -> list[ClassifierRun]:
    """The runs of `keys`, created when missing; beyond MAX_STORED the oldest other runs are dropped."""
    runs = ss["clf_runs"]
    for key in keys:
        if key not in runs:
            runs[key] = new_run(key)
    for old in [k for k in runs if k not in keys][:max(0, len(runs) - MAX_STORED)]:
        del runs[old]
    return [runs[key] for key in keys]


def advance(runs: list[ClassifierRun], epochs: int, seconds: float) -> None:
    """Round-robin: one step of every unfinished run in turn until `seconds` have passed or all are done."""
    start = time.perf_counter()
    while True:
        active = [run for run in runs if not run.done(epochs)]
        for run in active:
            run.train_step()
        if not active or time.perf_counter() - start >= seconds:
            return


def start() -> None:
    """Start the experiment within the server's budget (ui/limits.py); a refusal is said, not raised."""
    ss.pop("clf_refused", None)
    if not limits.may_start():
        ss["clf_refused"] = "train.refused_starts"
    elif not limits.claim(ss["clf_token"]):
        ss["clf_refused"] = "train.refused_busy"
    else:
        ss["clf_running"], ss["clf_trained_seconds"], ss["clf_capped"] = True, 0.0, False


def stop() -> None:
    ss["clf_running"] = False
    limits.release(ss["clf_token"])


def reset() -> None:
    stop()
    ss["clf_runs"] = {}


def apply_preset(name: str) -> None:
    for key, value in PRESETS[name].items():
        ss[key] = list(value) if isinstance(value, list) else value


def grouped(n: int) -> str:
    """6,000 in English, 6 000 in Spanish (a non-breaking space groups the digits)."""
    return f"{n:,}" if settings.lang == "en" else f"{n:,}".replace(",", "\u00a0")


def label(key: tuple) -> str:
    return t("clf.run_label", n=key[0], norm=t(NORMS[key[1]]))


def example_sequences(minority: int, seed: int) -> list[tuple[int, str]]:
    """One sequence of each class as text, the tokens from the other class's range in bold."""
    tokens, labels = RangeTask(minority=minority).sample(64, torch.Generator().manual_seed(seed))  # both classes
    shown = []
    for c in range(len(CLASS_RANGES)):
        row = tokens[int((labels == c).nonzero()[0])].tolist()
        lo, hi = CLASS_RANGES[c]
        shown.append((c, " ".join(str(v) if lo <= v <= hi else f"**{v}**" for v in row)))
    return shown


def summary_table(keys: list[tuple], runs: list[ClassifierRun], epochs: int) -> pd.DataFrame:
    rows = []
    for key, run in zip(keys, runs):
        history = run.history[:epochs]
        if not history:
            continue  # still in its first epoch: nothing to report yet
        best = max(e.test_accuracy for e in history)
        reached = first_epoch_at(history)
        rows.append({t("clf.col_run"): label(key), t("clf.col_params"): run.n_parameters,
                     t("clf.col_epochs"): len(history),
                     t("clf.col_final"): history[-1].test_accuracy,
                     t("clf.col_best"): best, t("clf.col_to_100"): str(reached) if reached else "—",
                     t("clf.col_loss"): finite(history[-1].train_loss),
                     t("clf.col_ms"): 1000 * run.elapsed / run.step})
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


def results(keys: list[tuple], runs: list[ClassifierRun], epochs: int) -> None:
    """The two charts, the table, the numbers and what these runs show. The charts are built again only when an
    epoch ended (kept in the session until then), so a redraw between epochs leaves them as they are."""
    tag = (tuple(keys), tuple(len(r.history) for r in runs), epochs, settings.lang)
    if ss.get("clf_charts_for") != tag:
        ss["clf_charts"], ss["clf_charts_for"] = run_charts(keys, runs, epochs), tag
    for chart in ss["clf_charts"]:
        st.altair_chart(chart, width="content")
    st.caption(t("clf.charts_caption", test=RangeTask().test_size))
    table = summary_table(keys, runs, epochs)
    formats = {t("clf.col_final"): "%.4f", t("clf.col_best"): "%.4f", t("clf.col_loss"): "%.4f",
               t("clf.col_ms"): "%.1f", t("clf.col_params"): "localized"}
    if len(table):
        st.dataframe(table, hide_index=True, width="content", key="clf_table",
                     column_config={c: st.column_config.NumberColumn(c, format=f) for c, f in formats.items()})
        st.caption(t("clf.table_caption"))
    if settings.show_numbers:
        for field, title in (("test_accuracy", "clf.test_acc"), ("train_loss", "clf.train_loss")):
            frame = pd.DataFrame({label(k): pd.Series([finite(getattr(e, field)) for e in r.history[:epochs]],
                                                      dtype=float) for k, r in zip(keys, runs)})
            frame.index = range(1, len(frame) + 1)
            st.markdown(f"##### {t(title)}")
            st.dataframe(frame, width="content", key=f"clf_numbers_{field}",
                         column_config={c: st.column_config.NumberColumn(c, format="%.4f") for c in frame.columns})
    trained = [(k, r.history[:epochs]) for k, r in zip(keys, runs) if r.history]
    if trained:
        reached = {k: first_epoch_at(h) for k, h in trained if first_epoch_at(h)}
        first = min(reached.values(), default=None)
        text = t("clf.observed_fastest", epoch=first, runs=", ".join(label(k) for k, e in reached.items()
                                                                     if e == first)) if first else t("clf.observed_none")
        chance = [label(k) for k, h in trained if h[-1].test_accuracy <= 0.55]
        if chance:
            text += " " + t("clf.observed_chance", runs=", ".join(chance))
        st.markdown(t("clf.observed_header") + " " + text)


def train_chunk(keys: list[tuple], epochs: int) -> None:
    """One chunk of every run, if this session holds a training place and no other thread of it is stepping."""
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


def live(keys: list[tuple], epochs: int, was_running: bool) -> None:
    """One chunk of training when running, then the progress and the results."""
    if ss["clf_running"]:
        train_chunk(keys, epochs)
    if ss.get("clf_capped"):
        st.warning(t("train.time_cap", minutes=limits.MAX_RUN_MINUTES), icon=":material/timer_off:")
    if ss["clf_running"] != was_running:
        st.rerun()  # started or finished: redraw the buttons and start or stop the timer
    runs = [ss["clf_runs"][k] for k in keys if k in ss["clf_runs"]]
    shown = [k for k in keys if k in ss["clf_runs"]]
    target = len(keys) * epochs * int(ss["clf_steps"])
    done = sum(min(r.step, epochs * r.run_cfg.steps_per_epoch) for r in runs)
    st.progress(done / target, text=t("clf.progress", done=grouped(done), total=grouped(target), runs=len(keys)))
    if not runs:
        st.info(t("clf.no_runs"), icon=":material/info:")
        return
    if done == target:
        st.success(t("clf.finished", epochs=epochs), icon=":material/check_circle:")
        st.info(t("clf.cap_hit" if epochs == MAX_EPOCHS else "clf.more_epochs", cap=MAX_EPOCHS),
                icon=":material/info:")
    results(shown, runs, epochs)


SCENES = {  # the three comparisons of PRESETS, as links; they set the controls and never start training
    "course": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
               "clf_lr": 0.001, "clf_minority": 0},
    "majority": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
                 "clf_lr": 0.001, "clf_minority": 9},
    "fast_lr": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
                "clf_lr": 0.01, "clf_minority": 8},
}

def intro() -> None:
    st.title(t("clf.title"))
    scenes.picker("clf", SCENES)
    prose(t("clf.intro"))
    st.latex(r"h = \mathrm{Encoder}_N\big(\sqrt{d}\,E[x] + PE\big) \qquad \bar{h} = \frac{1}{|R|}\sum_{i \in R} h_i"
             r"\qquad p(c \mid x) = \mathrm{softmax}(W \bar{h} + b)")
    prose(t("clf.equation_text"))


def task_section() -> None:
    """The task, and one sequence of each class at the chosen minority count."""
    st.subheader(t("clf.task_header"))
    prose(t("clf.task_text", length=LENGTH))
    links.control(st.slider, t("clf.minority"), 0, (LENGTH - 1) // 2, help=t("clf.minority_help"),
                  setting="clf_minority")
    minority = int(ss["clf_minority"])
    for c, text in example_sequences(minority, settings.seed):
        st.markdown(t("clf.example", c=c, tokens=text))
    st.caption(t("clf.task_easy") if minority == 0 else
               t("clf.task_hard", m=minority, majority=LENGTH - minority, length=LENGTH))


def grid_section() -> None:
    """The grid of runs (depths x placements), the schedule, and the three presets."""
    st.subheader(t("clf.grid_header"))
    prose(t("clf.grid_text"))
    left, right = st.columns(2, gap="large")
    with left:
        links.control(st.multiselect, t("clf.depths"), DEPTHS, help=t("clf.depths_help"), setting="clf_depths")
        links.control(st.multiselect, t("clf.norms"), list(NORMS), format_func=lambda p: t(NORMS[p], settings.lang),
                      setting="clf_norms")  # Streamlit may call format functions outside the script run
        links.control(st.select_slider, t("clf.lr"), LEARNING_RATES, format_func=lambda v: f"{v:g}",
                      help=t("clf.lr_help"), setting="clf_lr")
    with right:
        links.control(st.slider, t("clf.epochs"), 1, MAX_EPOCHS, help=t("clf.epochs_help"), setting="clf_epochs")
        links.control(st.slider, t("clf.steps"), STEP_GRID, MAX_STEPS, step=STEP_GRID,
                      help=t("clf.steps_help", batch=BATCH), setting="clf_steps")
        st.caption(t("clf.caps", epochs=MAX_EPOCHS, steps=MAX_STEPS, total=grouped(MAX_EPOCHS * MAX_STEPS),
                     batch=BATCH, stored=MAX_STORED))
    st.markdown(t("clf.presets"))
    for col, name in zip(st.columns(len(PRESETS)), PRESETS):
        col.button(t(PRESET_NAMES[name]), on_click=apply_preset, args=(name,), disabled=ss["clf_running"],
                   key=f"clf_preset_{name}", width="stretch")


def experiment(keys: list[tuple], epochs: int) -> None:
    """Start, Stop and Reset, then the results: a fragment that trains a chunk and redraws while running."""
    if not keys:
        stop()
        st.warning(t("clf.pick_one"), icon=":material/warning:")
    running = ss["clf_running"]
    stored = [ss["clf_runs"][k] for k in keys if k in ss["clf_runs"]]
    all_done = len(stored) == len(keys) and all(r.done(epochs) for r in stored)
    buttons = st.columns([1, 1, 1, 3])
    buttons[0].button(t("clf.continue" if any(r.step for r in stored) else "clf.start"), on_click=start,
                      type="primary", icon=":material/play_arrow:", disabled=running or not keys or all_done,
                      key="clf_start")
    buttons[1].button(t("clf.stop"), on_click=stop, icon=":material/pause:", disabled=not running, key="clf_stop")
    buttons[2].button(t("clf.reset"), on_click=reset, icon=":material/restart_alt:",
                      disabled=running or not ss["clf_runs"], help=t("clf.reset_help"), key="clf_reset")
    if ss.get("clf_refused"):
        st.warning(t(ss["clf_refused"], running=limits.running_now(), starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    if keys:
        st.fragment(live, run_every=CHUNK_SECONDS if running else None)(keys, epochs, running)


def parameters() -> None:
    """P(N), the parameter count as a function of depth, with this model's numbers."""
    st.subheader(t("clf.params_header"))
    parts = parameter_formula(ClassifierConfig())
    tex = {name: f"{value:,}".replace(",", "{,}") for name, value in parts.items()}  # 12{,}704: a TeX thousands comma
    st.latex(rf"P(N) = \underbrace{{V d}}_{{{tex['embeddings']}}} + N\,\underbrace{{\big[4(d^2 + d) + 2 d\,d_{{ff}}"
             rf" + d_{{ff}} + d + 4d\big]}}_{{{tex['layers']}}} + \underbrace{{2d}}_{{{tex['final_norm']}}}"
             rf" + \underbrace{{2d + 2}}_{{{tex['head']}}}")
    prose(t("clf.params_text"))


def notice() -> None:
    panels.show_code(RangeTask.sample, EncoderClassifier.forward, mean_pool, ClassifierRun.train_step, advance)
    st.subheader(t("clf.notice_header"))
    st.markdown(t("clf.notice_points"))


settings = state.settings()
ss = st.session_state
for name, value in DEFAULTS.items():
    ss.setdefault(name, value)
ss.setdefault("clf_runs", {})
ss.setdefault("clf_running", False)
ss.setdefault("clf_token", uuid.uuid4().hex)  # this session's place among the server's training runs
ss.setdefault("clf_stepping", threading.Lock())  # held while a chunk trains (see train_chunk)

intro()
task_section()
grid_section()
experiment([run_key(n, p) for p in NORMS if p in ss["clf_norms"] for n in sorted(ss["clf_depths"])],
           int(ss["clf_epochs"]))
parameters()
notice()
