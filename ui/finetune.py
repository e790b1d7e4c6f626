"""Lesson 15's views: its two charts (held-out accuracy per step; sentence vectors in 2-D), the runs' table, the
heads that changed most, the verdict in words; and the labelled sentences read once per process.

The pretrained MiniLM is loaded once per process (ui/minilm.py) and shared read-only by every session, with a lock
(so are the labelled sentences read through it, `sentences_read`):
every use of it (the frozen features, the copies a run makes of its layers, hooks for the attention maps) holds
the lock, so one session's hooks never see another session's sentences.
"""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core.lab import finetune as ft
from core.lab import finetune_data as fd

from . import tables
from .charts import CATEGORICAL, LABEL_FONT, PALETTE, _finish
from .i18n import md_escape, number, t
from .minilm import minilm

PAD = alt.AutoSizeParams(type="pad", contains="padding")  # the size is the plotting area; axes, legend around it
RUN_COLORS = {"frozen": PALETTE["query"], "finetune": PALETTE["highlight"], "random": PALETTE["masked"]}
TOPIC_COLORS = CATEGORICAL[:4]


@st.cache_resource(max_entries=2, show_spinner=False)
def sentences_read(lang: str) -> dict[str, fd.ReadSet]:
    """The labelled sentences of `lang` through every layer of the shared MiniLM, once per process: read-only
    (the runs index them, which copies, and never write to them)."""
    model, tokenizer, lock = minilm()
    with lock:
        return fd.read_language(model, tokenizer, lang)


def accuracy_chart(curves: dict[str, list[tuple[int, float]]], colors: Sequence[str], *, max_step: int,
                   chance: float, x_title: str, y_title: str, chance_label: str) -> alt.LayerChart:
    """One line per run of (step, held-out accuracy), a dot at every evaluation, and chance as a dashed rule."""
    names = list(curves)
    df = pd.DataFrame([{"run": name, "step": s, "accuracy": a} for name in names for s, a in curves[name]],
                      columns=["run", "step", "accuracy"])
    legend = alt.Legend(title=None, orient="bottom", direction="vertical", labelFontSize=LABEL_FONT,
                        labelColor=PALETTE["ink"], labelLimit=500)
    encoding = {"x": alt.X("step:Q", scale=alt.Scale(domain=[0, max_step]), title=x_title),
                "y": alt.Y("accuracy:Q", scale=alt.Scale(domain=[0, 1]), title=y_title, axis=alt.Axis(format="%")),
                "color": alt.Color("run:N", sort=names, scale=alt.Scale(domain=names, range=list(colors)),
                                   legend=legend),
                "tooltip": [alt.Tooltip("run:N", title=" "), alt.Tooltip("step:Q", title=x_title),
                            alt.Tooltip("accuracy:Q", title=y_title, format=".1%")]}
    line = alt.Chart(df).mark_line(strokeWidth=2.5).encode(**encoding)
    dots = alt.Chart(df).mark_point(filled=True, size=40, opacity=1).encode(**encoding)
    rule = alt.Chart(pd.DataFrame({"chance": [chance], "label": [chance_label]})).mark_rule(
        strokeDash=[4, 4], color=PALETTE["ink"]).encode(y="chance:Q", tooltip=alt.Tooltip("label:N", title=" "))
    last = "; ".join(f"{name}: {t('ft.percent', value=round(100 * curves[name][-1][1]))}" for name in names
                     if curves[name])
    description = t("a11y.lines_kind") + ": " + t("ft.a11y_accuracy", y=y_title, x=x_title, last=last)
    return _finish(alt.layer(rule, line, dots), width=560, height=300, autosize=PAD, description=description)


def embedding_scatter(points: np.ndarray, topics: Sequence[str], texts: Sequence[str], *, title: str,
                      x_title: str, y_title: str, topic_title: str, order: Sequence[str]) -> alt.Chart:
    """Sentence vectors projected to 2-D, one dot per sentence, coloured by its topic (the text in the tooltip)."""
    df = pd.DataFrame({"x": points[:, 0], "y": points[:, 1], "topic": list(topics), "text": list(texts)})
    chart = alt.Chart(df).mark_point(filled=True, size=70, opacity=0.85).encode(
        x=alt.X("x:Q", title=x_title, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("y:Q", title=y_title, axis=alt.Axis(labels=False, ticks=False)),
        color=alt.Color("topic:N", sort=list(order), scale=alt.Scale(domain=list(order), range=list(TOPIC_COLORS)),
                        legend=alt.Legend(title=topic_title, orient="bottom", labelFontSize=LABEL_FONT)),
        shape=alt.Shape("topic:N", sort=list(order), legend=None),
        tooltip=[alt.Tooltip("topic:N", title=topic_title), alt.Tooltip("text:N", title=" ")],
    )
    return _finish(chart, width=300, height=300, autosize=PAD, title=title,
                   description=t("ft.a11y_scatter", title=title, n=len(df), topics=", ".join(order)))


def accuracy_frame(curves: dict[str, list[tuple[int, float]]], step_title: str) -> pd.DataFrame:
    """The chart's numbers: one row per evaluated step, one column per run (empty where a run has not got there)."""
    frames = [pd.Series(dict(points), name=name, dtype=float) for name, points in curves.items()]
    table = pd.concat(frames, axis=1).sort_index()
    table.index.name = step_title
    return table.reset_index()


def points_frame(texts: Sequence[str], topics: Sequence[str], panels: dict[str, np.ndarray]) -> pd.DataFrame:
    """The scatter plots' numbers: each sentence, its topic and its two coordinates in every panel."""
    columns = {"text": list(texts), "topic": list(topics)}
    for title, points in panels.items():
        columns |= {f"{title} · 1": points[:, 0], f"{title} · 2": points[:, 1]}
    return pd.DataFrame(columns)


def examples_table(examples: dict[str, list[str]]) -> str:
    """A few sentences per topic (columns) as a Markdown table: plain text that wraps, drawn at once (a data grid
    would cost the page's cold open about 0.3 s of the browser's time for three rows of text)."""
    rows = [list(examples)] + [list(row) for row in zip(*examples.values())]
    lines = ["| " + " | ".join(md_escape(cell) for cell in row) + " |" for row in rows]
    return "\n".join([lines[0], "|" + " --- |" * len(examples), *lines[1:]])


def results_table(runs: dict[str, ft.FineTuneRun], names: dict[str, str]) -> None:
    """The runs' table: steps taken, final held-out accuracy, parameters trained, training seconds."""
    table = pd.DataFrame({t("ft.col_run"): [names[k] for k in runs],
                          t("ft.col_steps"): [r.step for r in runs.values()],
                          t("ft.col_final"): [r.history[-1][1] for r in runs.values()],
                          t("ft.col_trained"): [sum(p.numel() for p in r.classifier.parameters())
                                                for r in runs.values()],
                          t("ft.col_seconds"): [r.seconds for r in runs.values()]})
    tables.dataframe(table, hide_index=True, key="ft_table",
                     formats={t("ft.col_final"): ".2%", t("ft.col_trained"): ",d", t("ft.col_seconds"): ".1f"})


def top_heads(change: np.ndarray, layers: Sequence[str], heads: Sequence[str], n: int = 3) -> str:
    """The `n` heads whose attention changed most, largest first: "layer 5 H3 (0.412), ..." in the reader's marks.
    change: (L, h)."""
    top = np.argsort(change, axis=None)[::-1][:n]
    return ", ".join(f"{layers[i // change.shape[1]]} {heads[i % change.shape[1]]} "
                     f"({number(float(change.flat[i]), '.3f')})" for i in top)


def pct(x: float) -> int:
    """A share as whole percent (the catalog places the % sign as each language writes it)."""
    return int(round(100 * x))


def verdict_text(final: dict[str, float], steps: int, layers: int) -> str:
    """What the difference between the three runs means ({kind: final held-out accuracy}), in words the numbers
    choose: the gap that pretraining bought, and whether fine-tuning the top layers added to it."""
    best = max(final["frozen"], final["finetune"])
    text = t("ft.verdict", steps=steps, k=layers, frozen=pct(final["frozen"]), finetune=pct(final["finetune"]),
             random=pct(final["random"]), chance=pct(1 / len(fd.TOPICS)))
    gap = best - final["random"]
    text += " " + (t("ft.meaning_pretraining", gap=pct(gap)) if gap >= 0.15 else t("ft.meaning_small"))
    change = final["finetune"] - final["frozen"]
    key = "better" if change >= 0.05 else "worse" if change <= -0.05 else "same"
    return text + " " + t(f"ft.meaning_finetune_{key}", k=layers)
