"""Lesson 15: fine-tuning a pretrained encoder, and what pretraining buys (GitHub issue 19).

Three runs of core.lab.finetune on the project's labelled sentences (assets/finetune/): MiniLM frozen with a trained
head, MiniLM with its top layers fine-tuned too, the same architecture from random weights. The session keeps them
and steps them (ui/finetune_runs.py): while training, the results section is a fragment that trains one chunk, then
redraws. After training: the change of each head's attention on a held-out sentence, and the held-out sentence
vectors before and after in 2-D (PCA). The shared MiniLM is only read, under its lock (ui/minilm.py).
"""
import contextlib

import numpy as np
import streamlit as st

from core import to_numpy
from core.lab import finetune as ft
from core.lab import finetune_data as fd
from ui import limits, links, panels, scenes, state, tables
from ui.finetune import (RUN_COLORS, accuracy_chart, accuracy_frame, embedding_scatter, examples_table, pct,
                         points_frame, results_table, top_heads, verdict_text)
from ui.finetune_runs import (MAX_SECONDS, MAX_STEPS, STEP_GRID, reset, run_keys, start, start_session, steps_done,
                              stop, train_chunk, trained_runs)
from ui.i18n import t
from ui.minilm import minilm
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

SCENES = {  # named settings (ui/scenes.py); they set the controls and never start training
    "english": {"ft_steps": 60, "ft_lang": "en", "ft_layers": 2},
    "spanish": {"ft_steps": 60, "ft_lang": "es", "ft_layers": 2},
    "whole_model": {"ft_steps": 60, "ft_lang": "en", "ft_layers": 6},
}


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
    _, tokenizer, _ = minilm()
    links.control(st.radio, t("ft.lang"), list(fd.LANGUAGES), format_func=lambda c: t(f"ft.lang_{c}", lang),
                  horizontal=True, help=t("ft.lang_help"), setting="ft_lang", disabled=ss["ft_running"])
    train, heldout = (fd.load_sentences(ss["ft_lang"], split) for split in ("train", "heldout"))
    pieces = fd.token_counts(tokenizer, ss["ft_lang"])
    prose(t("ft.data_text", train=len(train.texts), heldout=len(heldout.texts), topics=len(fd.TOPICS),
            tokens=float(np.mean(pieces)), longest=max(pieces),
            unseen=pct(fd.unseen_share(tokenizer, train, heldout))))
    sample = {t(f"ft.topic_{name}"): [s for s, y in zip(train.texts, train.labels) if y == c][:3]
              for c, name in enumerate(fd.TOPICS)}
    st.markdown(examples_table(sample))
    prose(t("ft.spanish_text"))


def steps_help() -> str:
    """The steps slider's help: what a step is, and why the Spanish sentences take longer (their tokens)."""
    _, tokenizer, _ = minilm()
    tokens = {lang: float(np.mean(fd.token_counts(tokenizer, lang))) for lang in fd.LANGUAGES}
    return t("ft.steps_help", batch=ft.RunConfig().batch_size, en_tokens=tokens["en"], es_tokens=tokens["es"])


def drawn() -> tuple:
    """What the lesson outside the runs section shows that the section's controls can change: whether it is
    training (the language radio is locked) and which finished runs the analysis below is about."""
    return ss["ft_running"], tuple(run_keys()) if trained_runs() else None


@st.fragment
def runs_section(outside: tuple) -> None:
    """The settings of the three runs, Start / Stop / Reset, and the live results. A fragment: its sliders
    rerun this section alone, unless the rest of the lesson (`outside`, see `drawn`) must follow."""
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
    if drawn() != outside:
        st.rerun()  # started, stopped, or the finished runs changed: the whole lesson follows
    if ss.get("ft_refused"):
        st.warning(t(ss["ft_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    st.fragment(live, run_every=CHUNK_SECONDS if running else None)(keys, running)


def live(keys: list[tuple], was_running: bool) -> None:
    """The progress, the chart, the table and the verdict so far, then one chunk of training when running (drawn
    first: see ui/training.py's CHUNK_SECONDS)."""
    results_so_far(keys)
    if ss["ft_running"]:
        missing = any(k not in ss["ft_runs"] for k in keys)  # building the runs takes a moment: say so
        with st.spinner(t("ft.preparing")) if missing else contextlib.nullcontext():
            train_chunk(keys)
    if ss["ft_running"] != was_running:
        st.rerun()  # started or finished: redraw the buttons, the analysis, and start or stop the timer


def results_so_far(keys: list[tuple]) -> None:
    runs = {k[0]: ss["ft_runs"][k] for k in keys if k in ss["ft_runs"]}
    _, _, layers, steps, _ = keys[0]
    total = len(keys) * steps
    st.progress(steps_done(runs) / total, text=t("ft.progress", done=steps_done(runs), total=total))
    if not runs:
        st.info(t("ft.no_runs"), icon=":material/info:")
        return
    names = {kind: t(f"ft.run_{kind}", k=layers) for kind in runs}
    curves = {names[k]: r.history for k, r in runs.items()}
    st.altair_chart(accuracy_chart(curves, [RUN_COLORS[k] for k in runs], max_step=steps, chance=1 / len(fd.TOPICS),
                                   x_title=t("ft.step"), y_title=t("ft.heldout_acc"), chance_label=t("ft.chance")),
                    width="content")
    st.caption(t("ft.chart_caption", heldout=len(next(iter(runs.values())).heldout.labels)))
    results_table(runs, names)
    if settings.show_numbers:
        st.markdown(f"##### {t('ft.numbers_accuracy')}")
        tables.dataframe(accuracy_frame(curves, t("ft.step")), hide_index=True, key="ft_numbers_accuracy")
    if any(r.timed_out() for r in runs.values()):
        st.warning(t("ft.timed_out", seconds=int(MAX_SECONDS)), icon=":material/timer_off:")
    if len(runs) == len(keys) and all(r.done() for r in runs.values()):
        st.markdown(f"**{t('ft.verdict_header')}** "
                    + verdict_text({k: r.history[-1][1] for k, r in runs.items()}, steps, layers))


@st.fragment
def heads_section(run: ft.FineTuneRun) -> None:
    """The change of every head's attention on one held-out sentence, before vs after fine-tuning."""
    st.subheader(t("ft.heads_header"))
    prose(t("ft.heads_text", k=run.trained, below=6 - run.trained))
    texts = fd.load_sentences(run.cfg.lang, "heldout").texts
    index = links.control(st.selectbox, t("ft.sentence"), list(range(len(texts))), format_func=lambda i: texts[i],
                          setting="ft_sentence")
    model, tokenizer, lock = minilm()
    with lock:  # hooks go on the shared model's layers for a moment
        before, after = ft.attention_before_after(model, tokenizer, run, texts[index])  # (L, h, n, n) twice
    change = to_numpy(ft.head_change(before, after))  # (L, h)
    layers = [t("ft.layer_n", n=i + 1) for i in range(change.shape[0])]
    heads = [f"H{j + 1}" for j in range(change.shape[1])]
    panels.matrix_panel(change, title=t("ft.heads_title"), key="ft_heads", row_labels=layers, col_labels=heads,
                        scale="sequential", max_width=700)
    st.markdown(t("ft.heads_top", heads=top_heads(change, layers, heads)))


def pca_section(runs: dict[str, ft.FineTuneRun]) -> None:
    """The held-out sentence vectors before (MiniLM as shipped) and after fine-tuning, in 2-D."""
    st.subheader(t("ft.pca_header"))
    prose(t("ft.pca_text"))
    heldout = fd.load_sentences(runs["finetune"].cfg.lang, "heldout")
    topics = [t(f"ft.topic_{fd.TOPICS[y]}") for y in heldout.labels]
    order = [t(f"ft.topic_{name}") for name in fd.TOPICS]
    found = {}
    for col, (kind, title) in zip(st.columns(2), (("frozen", "ft.pca_before"), ("finetune", "ft.pca_after"))):
        points, share = (to_numpy(v) for v in ft.pca_2d(runs[kind].pooled()))  # (m, 2), (2,)
        found[t(title)] = points
        col.altair_chart(embedding_scatter(points, topics, heldout.texts, title=t(title), topic_title=t("ft.topic"),
                                           x_title=t("ft.pc", n=1, share=pct(share[0])),
                                           y_title=t("ft.pc", n=2, share=pct(share[1])), order=order),
                         width="content")
    st.caption(t("ft.pca_caption"))
    with st.container():  # the numbers in their own block: the sections below keep their place (no redraw)
        if settings.show_numbers:
            st.markdown(f"##### {t('ft.numbers_pca')}")
            tables.dataframe(points_frame(heldout.texts, topics, found), hide_index=True, key="ft_numbers_pca")


def notice() -> None:
    panels.show_code(ft.SentenceClassifier.forward, ft.FineTuneRun.train_step, ft.head_change, ft.pca_2d)
    st.subheader(t("ft.notice_header"))
    st.markdown(t("ft.notice_points"))


settings = state.settings()
lang = settings.lang
ss = st.session_state
start_session()

intro()
data_section()
runs_section(drawn())
finished = trained_runs()
if finished:
    heads_section(finished["finetune"])
    pca_section(finished)
else:
    st.info(t("ft.after_training"), icon=":material/info:")
notice()
