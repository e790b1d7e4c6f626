"""Lesson 15: fine-tuning a pretrained encoder, and what pretraining buys (GitHub issue 19).

Three runs of core.lab.finetune on the project's labelled sentences (assets/finetune/): MiniLM frozen with a trained
head, MiniLM with its top layers fine-tuned too, the same architecture from random weights. They live in
session_state under "ft_runs", keyed by everything that shapes them; while "ft_running" is set, the results
section is a fragment that steps the three runs in turn for CHUNK_SECONDS, then redraws (Stop clears the flag).
After training: the change of each head's attention on a held-out sentence, and the held-out sentence vectors
before and after in 2-D (PCA). The shared MiniLM is only read, under its lock (ui/finetune.py).
"""
import contextlib
import threading
import time
import uuid

import numpy as np
import pandas as pd
import streamlit as st

from core import to_numpy
from core.lab import finetune as ft
from ui import charts, limits, links, panels, scenes, state
from ui.finetune import (RUN_COLORS, accuracy_chart, accuracy_frame, embedding_scatter, minilm, pct, points_frame,
                         sentences_read, verdict_text)
from ui.i18n import t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

MAX_STEPS, STEP_GRID, MAX_SECONDS = 120, 10, 90.0  # caps per run: steps and training seconds
DEFAULTS = {"ft_lang": "en", "ft_layers": 2, "ft_steps": 60, "ft_sentence": 0}
SCENES = {  # named settings (ui/scenes.py); they set the controls and never start training
    "english": {"ft_steps": 60, "ft_lang": "en", "ft_layers": 2},
    "spanish": {"ft_steps": 60, "ft_lang": "es", "ft_layers": 2},
    "whole_model": {"ft_steps": 60, "ft_lang": "en", "ft_layers": 6},
}


def run_keys() -> list[tuple]:
    """(kind, language, top layers, steps, seed) of the three runs the settings ask for."""
    return [(kind, ss["ft_lang"], int(ss["ft_layers"]), int(ss["ft_steps"]), settings.seed) for kind in ft.KINDS]


def new_run(key: tuple) -> ft.FineTuneRun:
    kind, lang, layers, steps, seed = key
    model, tokenizer, lock = minilm()
    read = sentences_read(lang)
    with lock:  # the run copies layers of the shared model
        return ft.FineTuneRun(model, tokenizer, ft.RunConfig(kind=kind, lang=lang, top_layers=layers, steps=steps,
                                                             seed=seed, max_seconds=MAX_SECONDS), read)


def advance(keys: list[tuple], seconds: float) -> None:
    """Create the missing runs (others are dropped), then one step of each unfinished run in turn for `seconds`."""
    runs = ss["ft_runs"]
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
    ss.pop("ft_refused", None)
    if not limits.may_start():
        ss["ft_refused"] = "train.refused_starts"
    elif not limits.claim(ss["ft_token"]):
        ss["ft_refused"] = "train.refused_busy"
    else:
        ss["ft_running"] = True


def stop() -> None:
    ss["ft_running"] = False
    limits.release(ss["ft_token"])


def reset() -> None:
    stop()
    ss["ft_runs"] = {}


def train_chunk(keys: list[tuple]) -> None:
    """One chunk, if this session holds a training place and no other script thread of it is stepping."""
    if not limits.claim(ss["ft_token"]):
        ss["ft_refused"] = "train.refused_busy"
        stop()
        return
    if not ss["ft_stepping"].acquire(blocking=False):  # a second script thread of this session (fast reruns)
        return
    try:
        advance(keys, CHUNK_SECONDS)
    finally:
        ss["ft_stepping"].release()
    if all(k in ss["ft_runs"] and ss["ft_runs"][k].done() for k in keys):
        stop()


def intro() -> None:
    st.title(t("ft.title"))
    scenes.picker("ft", SCENES)
    prose(t("ft.intro"))
    st.latex(r"e = \frac{1}{n}\sum_{i=1}^{n} h_i^{(6)} \qquad p(\text{topic} \mid \text{sentence}) = "
             r"\mathrm{softmax}(W e + b)")
    prose(t("ft.equation_text"))


def data_section() -> None:
    """The labelled set in the chosen language: counts, tokens per sentence, a few examples."""
    st.subheader(t("ft.data_header"))
    model, tokenizer, _ = minilm()
    links.control(st.radio, t("ft.lang"), list(ft.LANGUAGES), format_func=lambda c: t(f"ft.lang_{c}", lang),
                  horizontal=True, help=t("ft.lang_help"), setting="ft_lang", disabled=ss["ft_running"])
    train, heldout = (ft.load_sentences(ss["ft_lang"], split) for split in ("train", "heldout"))
    pieces = ft.token_counts(tokenizer, ss["ft_lang"])
    prose(t("ft.data_text", train=len(train.texts), heldout=len(heldout.texts), topics=len(ft.TOPICS),
            tokens=charts.number(float(np.mean(pieces)), ".1f"), longest=max(pieces),
            unseen=pct(ft.unseen_share(tokenizer, train, heldout))))
    sample = {t(f"ft.topic_{name}"): [s for s, y in zip(train.texts, train.labels) if y == c][:3]
              for c, name in enumerate(ft.TOPICS)}
    st.dataframe(pd.DataFrame(sample), hide_index=True, key="ft_examples")
    prose(t("ft.spanish_text"))


def steps_help() -> str:
    """The steps slider's help: what a step is, and why the Spanish sentences take longer (their tokens)."""
    _, tokenizer, _ = minilm()
    tokens = {lang: float(np.mean(ft.token_counts(tokenizer, lang))) for lang in ft.LANGUAGES}
    return t("ft.steps_help", batch=ft.RunConfig().batch_size, en_tokens=tokens["en"], es_tokens=tokens["es"])


def runs_section() -> None:
    """The settings of the three runs, Start / Stop / Reset, and the live results."""
    st.subheader(t("ft.runs_header"))
    prose(t("ft.runs_text"))
    running = ss["ft_running"]
    left, right = st.columns(2, gap="large")
    with left:
        links.control(st.slider, t("ft.layers"), 1, 6, help=t("ft.layers_help"), setting="ft_layers",
                      disabled=running)
    with right:
        links.control(st.slider, t("ft.steps"), STEP_GRID, MAX_STEPS, step=STEP_GRID, setting="ft_steps",
                      help=steps_help(), disabled=running)
    st.caption(t("ft.caps", steps=MAX_STEPS, seconds=int(MAX_SECONDS)) + " " + t("common.cpu_only"))
    keys = run_keys()
    stored = [ss["ft_runs"].get(k) for k in keys]
    finished = all(r is not None and r.done() for r in stored)
    buttons = st.columns([1, 1, 1, 3])
    buttons[0].button(t("ft.start"), on_click=start, type="primary", icon=":material/play_arrow:",
                      disabled=running or finished, key="ft_start")
    buttons[1].button(t("ft.stop"), on_click=stop, icon=":material/pause:", disabled=not running, key="ft_stop")
    buttons[2].button(t("ft.reset"), on_click=reset, icon=":material/restart_alt:",
                      disabled=running or not ss["ft_runs"], key="ft_reset")
    if ss.get("ft_refused"):
        st.warning(t(ss["ft_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    st.fragment(live, run_every=CHUNK_SECONDS if running else None)(keys, running)


def live(keys: list[tuple], was_running: bool) -> None:
    """One chunk of training when running, then the progress, the chart, the table and the verdict."""
    if ss["ft_running"]:
        missing = any(k not in ss["ft_runs"] for k in keys)  # building the runs takes a moment: say so
        with st.spinner(t("ft.preparing")) if missing else contextlib.nullcontext():
            train_chunk(keys)
    if ss["ft_running"] != was_running:
        st.rerun()  # started or finished: redraw the buttons, the analysis, and start or stop the timer
    runs = {k[0]: ss["ft_runs"][k] for k in keys if k in ss["ft_runs"]}
    total = len(keys) * keys[0][3]
    done = sum(min(r.step, r.cfg.steps) if not r.timed_out() else r.cfg.steps for r in runs.values())
    st.progress(done / total, text=t("ft.progress", done=done, total=total))
    if not runs:
        st.info(t("ft.no_runs"), icon=":material/info:")
        return
    names = {kind: t(f"ft.run_{kind}", k=keys[0][2]) for kind in runs}
    st.altair_chart(accuracy_chart({names[k]: r.history for k, r in runs.items()},
                                   [RUN_COLORS[k] for k in runs], max_step=keys[0][3], chance=1 / len(ft.TOPICS),
                                   x_title=t("ft.step"), y_title=t("ft.heldout_acc"), chance_label=t("ft.chance")),
                    width="content")
    st.caption(t("ft.chart_caption", heldout=len(next(iter(runs.values())).heldout.labels)))
    table = pd.DataFrame({t("ft.col_run"): [names[k] for k in runs],
                          t("ft.col_steps"): [r.step for r in runs.values()],
                          t("ft.col_final"): [r.history[-1][1] for r in runs.values()],
                          t("ft.col_trained"): [sum(p.numel() for p in r.classifier.parameters())
                                                for r in runs.values()],
                          t("ft.col_seconds"): [r.seconds for r in runs.values()]})
    st.dataframe(table, hide_index=True, key="ft_table", column_config={
        t("ft.col_final"): st.column_config.NumberColumn(format="percent"),
        t("ft.col_trained"): st.column_config.NumberColumn(format="localized"),
        t("ft.col_seconds"): st.column_config.NumberColumn(format="%.1f")})
    if settings.show_numbers:
        st.markdown(f"##### {t('ft.numbers_accuracy')}")
        st.dataframe(accuracy_frame({names[k]: r.history for k, r in runs.items()}, t("ft.step")), hide_index=True,
                     key="ft_numbers_accuracy")
    if any(r.timed_out() for r in runs.values()):
        st.warning(t("ft.timed_out", seconds=int(MAX_SECONDS)), icon=":material/timer_off:")
    if len(runs) == len(keys) and all(r.done() for r in runs.values()):
        st.markdown(f"**{t('ft.verdict_header')}** "
                    + verdict_text({k: r.history[-1][1] for k, r in runs.items()}, keys[0][3], keys[0][2]))


def trained_runs() -> dict[str, ft.FineTuneRun] | None:
    """The three runs of the current settings once they have finished, else None."""
    runs = {k[0]: ss["ft_runs"].get(k) for k in run_keys()}
    return runs if all(r is not None and r.done() for r in runs.values()) and not ss["ft_running"] else None


@st.fragment
def heads_section(run: ft.FineTuneRun) -> None:
    """The change of every head's attention on one held-out sentence, before vs after fine-tuning."""
    st.subheader(t("ft.heads_header"))
    prose(t("ft.heads_text", k=run.trained, below=6 - run.trained))
    texts = ft.load_sentences(run.cfg.lang, "heldout").texts
    index = links.control(st.selectbox, t("ft.sentence"), list(range(len(texts))), format_func=lambda i: texts[i],
                          setting="ft_sentence")
    model, tokenizer, lock = minilm()
    with lock:  # hooks go on the shared model's layers for a moment
        before, after = ft.attention_before_after(model, tokenizer, run, texts[index])  # (L, h, n, n) twice
    change = to_numpy(ft.head_change(before, after))  # (L, h)
    layers, heads = [t("ft.layer_n", n=i + 1) for i in range(change.shape[0])], [f"H{j + 1}" for j in
                                                                                 range(change.shape[1])]
    panels.matrix_panel(change, title=t("ft.heads_title"), key="ft_heads", row_labels=layers, col_labels=heads,
                        scale="sequential", max_width=700)
    top = np.argsort(change, axis=None)[::-1][:3]
    listed = ", ".join(f"{layers[i // change.shape[1]]} {heads[i % change.shape[1]]} "
                       f"({charts.number(change.flat[i], '.3f')})" for i in top)
    st.markdown(t("ft.heads_top", heads=listed))


def pca_section(runs: dict[str, ft.FineTuneRun]) -> None:
    """The held-out sentence vectors before (MiniLM as shipped) and after fine-tuning, in 2-D."""
    st.subheader(t("ft.pca_header"))
    prose(t("ft.pca_text"))
    heldout = ft.load_sentences(runs["finetune"].cfg.lang, "heldout")
    topics = [t(f"ft.topic_{ft.TOPICS[y]}") for y in heldout.labels]
    order = [t(f"ft.topic_{name}") for name in ft.TOPICS]
    found = {}
    for col, (kind, title) in zip(st.columns(2), (("frozen", "ft.pca_before"), ("finetune", "ft.pca_after"))):
        points, share = (to_numpy(v) for v in ft.pca_2d(runs[kind].pooled()))  # (m, 2), (2,)
        found[t(title)] = points
        col.altair_chart(embedding_scatter(points, topics, heldout.texts, title=t(title), topic_title=t("ft.topic"),
                                           x_title=t("ft.pc", n=1, share=pct(share[0])),
                                           y_title=t("ft.pc", n=2, share=pct(share[1])), order=order),
                         width="content")
    st.caption(t("ft.pca_caption"))
    if settings.show_numbers:
        st.markdown(f"##### {t('ft.numbers_pca')}")
        st.dataframe(points_frame(heldout.texts, topics, found), hide_index=True, key="ft_numbers_pca")


def notice() -> None:
    panels.show_code(ft.SentenceClassifier.forward, ft.FineTuneRun.train_step, ft.head_change, ft.pca_2d)
    st.subheader(t("ft.notice_header"))
    st.markdown(t("ft.notice_points"))


settings = state.settings()
lang = settings.lang
ss = st.session_state
for name, value in DEFAULTS.items():
    ss.setdefault(name, value)
ss.setdefault("ft_runs", {})
ss.setdefault("ft_running", False)
ss.setdefault("ft_token", uuid.uuid4().hex)  # this session's place among the server's training runs
ss.setdefault("ft_stepping", threading.Lock())  # held while a chunk trains (see train_chunk)

intro()
data_section()
runs_section()
finished = trained_runs()
if finished:
    heads_section(finished["finetune"])
    pca_section(finished)
else:
    st.info(t("ft.after_training"), icon=":material/info:")
notice()
