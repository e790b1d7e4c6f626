"""Lesson 14's views: the corpus and the shipped models once per process, the loss curve, the live samples' table,
the next character's probabilities before and after the filters, and the KV cache's timings.

Every function draws on the page (or returns what the page caches); none changes a model or the session's run.
"""
from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
import torch

from core.lab.charlm import Corpus, Vocab
from core.lab.gpt import load_char_model
from core.lab.kvcache import CacheComparison
from core.sampling import filter_logits

from . import charts, gpt_run, panels, tables
from .i18n import number, t

TOP_CHARS = 10  # bars of the next-character chart


@st.cache_data(max_entries=4, show_spinner=False)
def corpus_of(lang: str) -> Corpus:
    return gpt_run.corpus(lang)


@st.cache_resource(show_spinner=False)
def shipped(lang: str):
    """The shipped checkpoint of `lang` (shared by every session: read-only, used under no_grad in eval mode)."""
    return load_char_model(gpt_run.checkpoint_path(lang))


def char_label(char: str) -> str:
    """A character as a label: escapes written out (\\n), the space as ␣."""
    return repr(char)[1:-1] or "␣"


def loss_chart(run: gpt_run.GPTRun, lang: str) -> None:
    """The training loss (mean of the last 20 steps), the held-out loss and the two baselines, against the step."""
    measures, history = run.measures, run.trainer.history
    steps = [m.step for m in measures]
    recent = [np.mean([r.loss for r in history[max(0, m.step - 20):m.step]]) if m.step else m.heldout
              for m in measures]
    series = {t("gpt.train_loss", lang): recent, t("gpt.heldout", lang): [m.heldout for m in measures],
              t("gpt.bigram", lang): [run.baselines.bigram] * len(steps),
              t("gpt.unigram", lang): [run.baselines.unigram] * len(steps)}
    colors = (charts.PALETTE["query"], charts.PALETTE["key"], charts.PALETTE["value"], charts.PALETTE["masked"])
    panels.svg_image(charts.lines(steps, series, x_title=t("train.step", lang), y_title=t("gpt.nats", lang),
                                  colors=colors))


def samples_table(run: gpt_run.GPTRun, expanded: bool) -> None:
    """Every live sample so far, with its step and held-out loss, in an expander."""
    with st.expander(t("gpt.samples_all"), expanded=expanded):
        tables.dataframe(pd.DataFrame({t("train.step"): [m.step for m in run.measures],
                                       t("gpt.heldout"): [m.heldout for m in run.measures],
                                       t("gpt.sample"): [m.sample for m in run.measures]}),
                         hide_index=True, key="gpt_samples_table")


def step_probabilities(logits: torch.Tensor, knobs: dict) -> tuple[torch.Tensor, torch.Tensor]:
    """The next character's probabilities as the model gives them and after temperature / top-k / top-p.
    logits (V,) -> before (V,), after (V,)."""
    before = torch.softmax(logits, dim=-1)  # (V,)
    after = torch.softmax(filter_logits(logits, knobs["temperature"], knobs["top_k"], knobs["top_p"]), dim=-1)  # (V,)
    return before, after


def next_char_bars(before: torch.Tensor, after: torch.Tensor, chosen: int, vocab: Vocab, show_numbers: bool) -> None:
    """The TOP_CHARS likeliest characters (the chosen one always among them): after the filters, the model's own
    probability as a ghost bar; and their numbers when asked."""
    top = torch.argsort(before, descending=True, stable=True)[:TOP_CHARS].tolist()
    shown = top if chosen in top else top[:-1] + [chosen]
    labels = [char_label(vocab.chars[i]) for i in shown]
    panels.svg_image(charts.distribution_bars(after[shown].tolist(), labels, kept=[bool(after[i] > 0) for i in shown],
                                              ghost=before[shown].tolist(), marked=shown.index(chosen),
                                              value_title=t("gpt.probability"), ghost_title=t("gpt.model_p"),
                                              label_title=t("gpt.next_char")))
    st.caption(t("gpt.bars_caption"))
    if show_numbers:
        tables.table(pd.DataFrame({t("gpt.next_char"): labels, t("gpt.model_p"): before[shown].tolist(),
                                   t("gpt.probability"): after[shown].tolist()}), hide_index=True, width="content",
                     key="gpt_distribution_numbers")


def kv_timings(found: CacheComparison, positions: list[int], repeats: int, lang: str, show_numbers: bool) -> None:
    """Milliseconds per generated position without and with the cache, the speed-up, and the numbers when asked."""
    series = {t("gpt.without_cache", lang): [1000 * s for s in found.plain_seconds],
              t("gpt.with_cache", lang): [1000 * s for s in found.cached_seconds]}
    panels.svg_image(charts.lines(positions, series, x_title=t("gpt.position", lang), y_title=t("gpt.ms", lang),
                                  colors=(charts.PALETTE["key"], charts.PALETTE["query"])))
    st.metric(t("gpt.speedup"), number(found.speedup, ".2f") + "×", help=t("gpt.speedup_help", repeats=repeats))
    if show_numbers:
        tables.table(pd.DataFrame({t("gpt.position"): positions, **series}), hide_index=True, width="content",
                     key="gpt_kv_numbers")
