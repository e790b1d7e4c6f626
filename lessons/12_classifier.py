"""Lesson 12: an encoder classifier and the depth experiment (CURRICULUM.md, lesson 12).

Task core.lab.classifier.RangeTask, model EncoderClassifier (core's Embeddings and Encoder, mean pooling, a linear
head). The grid of runs (depth N x pre-norm/post-norm) lives in the session (ui.classifier_runs); while it is
running, the results section is a fragment that trains a chunk (core.lab.classifier.advance) and redraws itself (at
most twice a second; its charts change only when an epoch ends).
"""
import pandas as pd
import streamlit as st
import torch

from core.lab.classifier import (CLASS_RANGES, ClassifierConfig, ClassifierRun, EncoderClassifier, RangeTask, advance,
                                 finite, mean_pool, parameter_formula)
from ui import limits, links, panels, scenes, state, tables
from ui.classifier_runs import (BATCH, DEPTHS, MAX_EPOCHS, MAX_STEPS, MAX_STORED, NORMS, STEP_GRID, label,
                                observed, reset, run_charts, run_key, start, start_session, stop, summary_table,
                                train_chunk)
from ui.i18n import number, power_of_ten, t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

LEARNING_RATES = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2)
LENGTH = RangeTask().length
SCENES = {  # the three comparisons "what to notice" quotes, as links and preset buttons; they never start training
    "course": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
               "clf_lr": 0.001, "clf_minority": 0},
    "majority": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
                 "clf_lr": 0.001, "clf_minority": 9},
    "fast_lr": {"clf_depths": [1, 2, 4], "clf_norms": ["pre", "post"], "clf_epochs": 10, "clf_steps": 50,
                "clf_lr": 0.01, "clf_minority": 8},
}
PRESET_NAMES = {"course": "clf.preset_course", "majority": "clf.preset_majority", "fast_lr": "clf.preset_fast_lr"}


def apply_preset(name: str) -> None:
    for key, value in SCENES[name].items():
        ss[key] = list(value) if isinstance(value, list) else value


def example_sequences(minority: int, seed: int) -> list[tuple[int, str]]:
    """One sequence of each class as text, the tokens from the other class's range in bold."""
    tokens, labels = RangeTask(minority=minority).sample(64, torch.Generator().manual_seed(seed))  # both classes
    shown = []
    for c in range(len(CLASS_RANGES)):
        row = tokens[int((labels == c).nonzero()[0])].tolist()
        lo, hi = CLASS_RANGES[c]
        shown.append((c, " ".join(str(v) if lo <= v <= hi else f"**{v}**" for v in row)))
    return shown


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
    formats = {t("clf.col_final"): ".4f", t("clf.col_best"): ".4f", t("clf.col_loss"): ".4f",
               t("clf.col_ms"): ".1f", t("clf.col_params"): ",d"}
    if len(table):
        tables.dataframe(table, hide_index=True, width="content", key="clf_table", formats=formats)
        st.caption(t("clf.table_caption"))
    if settings.show_numbers:
        for field, title in (("test_accuracy", "clf.test_acc"), ("train_loss", "clf.train_loss")):
            frame = pd.DataFrame({label(k): pd.Series([finite(getattr(e, field)) for e in r.history[:epochs]],
                                                      dtype=float) for k, r in zip(keys, runs)})
            frame.index = range(1, len(frame) + 1)
            st.markdown(f"##### {t(title)}")
            tables.dataframe(frame, width="content", key=f"clf_numbers_{field}")
    text = observed(keys, runs, epochs)
    if text:
        st.markdown(text)


def live(keys: list[tuple], epochs: int, was_running: bool) -> None:
    """The progress and the results so far, then one chunk of training when running (drawn first: see
    ui/training.py's CHUNK_SECONDS)."""
    if ss.get("clf_capped"):
        st.warning(t("train.time_cap", minutes=limits.MAX_RUN_MINUTES), icon=":material/timer_off:")
    results_so_far(keys, epochs)
    if ss["clf_running"]:
        train_chunk(keys, epochs)
    if ss["clf_running"] != was_running:
        st.rerun()  # started or finished: redraw the buttons and start or stop the timer


def results_so_far(keys: list[tuple], epochs: int) -> None:
    runs = [ss["clf_runs"][k] for k in keys if k in ss["clf_runs"]]
    shown = [k for k in keys if k in ss["clf_runs"]]
    target = len(keys) * epochs * int(ss["clf_steps"])
    done = sum(min(r.step, epochs * r.run_cfg.steps_per_epoch) for r in runs)
    st.progress(done / target, text=t("clf.progress", done=int(done), total=int(target), runs=len(keys)))
    if not runs:
        st.info(t("clf.no_runs"), icon=":material/info:")
        return
    if done == target:
        st.success(t("clf.finished", epochs=epochs), icon=":material/check_circle:")
        st.info(t("clf.cap_hit" if epochs == MAX_EPOCHS else "clf.more_epochs", cap=MAX_EPOCHS),
                icon=":material/info:")
    results(shown, runs, epochs)


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
        links.control(st.select_slider, t("clf.lr"), LEARNING_RATES, help=t("clf.lr_help"), setting="clf_lr",
                      format_func=power_of_ten)
    with right:
        links.control(st.slider, t("clf.epochs"), 1, MAX_EPOCHS, help=t("clf.epochs_help"), setting="clf_epochs")
        links.control(st.slider, t("clf.steps"), STEP_GRID, MAX_STEPS, step=STEP_GRID,
                      help=t("clf.steps_help", batch=BATCH), setting="clf_steps")
        st.caption(t("clf.caps", epochs=MAX_EPOCHS, steps=MAX_STEPS, total=MAX_EPOCHS * MAX_STEPS,
                     batch=BATCH, stored=MAX_STORED))
    st.markdown(t("clf.presets"))
    for col, name in zip(st.columns(len(SCENES)), SCENES):
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
        st.warning(t(ss["clf_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    st.caption(t("common.cpu_only"))  # the runs train on the CPU by design: small models, many at once
    if keys:
        st.fragment(live, run_every=CHUNK_SECONDS if running else None)(keys, epochs, running)


def parameters() -> None:
    """P(N), the parameter count as a function of depth, with this model's numbers."""
    st.subheader(t("clf.params_header"))
    parts = parameter_formula(ClassifierConfig())
    tex = {name: number(value, ",", tex=True) for name, value in parts.items()}  # 12{,}704, 12.704 in Spanish
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
start_session()

intro()
task_section()
grid_section()
experiment([run_key(n, p, settings.seed) for p in NORMS if p in ss["clf_norms"] for n in sorted(ss["clf_depths"])],
           int(ss["clf_epochs"]))
parameters()
notice()
