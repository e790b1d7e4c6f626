"""Lesson 15's shared model and its two charts (held-out accuracy per step; sentence vectors in 2-D).

The pretrained MiniLM is loaded once per process (`minilm`) and shared read-only by every session, with a lock:
every use of it (the frozen features, the copies a run makes of its layers, hooks for the attention maps) holds
the lock, so one session's hooks never see another session's sentences.
"""
from __future__ import annotations

import threading
from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd
import streamlit as st

from core import pretrained

from .charts import CATEGORICAL, LABEL_FONT, PALETTE

RUN_COLORS = {"frozen": PALETTE["query"], "finetune": PALETTE["highlight"], "random": PALETTE["masked"]}
TOPIC_COLORS = CATEGORICAL[:4]


@st.cache_resource(show_spinner=False)
def minilm():
    """(model, tokenizer, lock): MiniLM-L6 in eval mode with gradients off, shared by all sessions."""
    return pretrained.load_model(), pretrained.load_tokenizer(), threading.Lock()


def accuracy_chart(curves: dict[str, list[tuple[int, float]]], colors: Sequence[str], *, max_step: int,
                   chance: float, x_title: str, y_title: str, chance_label: str) -> alt.LayerChart:
    """One line per run of (step, held-out accuracy), a dot at every evaluation, and chance as a dashed rule."""
    names = list(curves)
    df = pd.DataFrame([{"run": name, "step": s, "accuracy": a} for name in names for s, a in curves[name]],
                      columns=["run", "step", "accuracy"])
    legend = alt.Legend(title=None, orient="bottom", direction="horizontal", labelFontSize=LABEL_FONT,
                        labelColor=PALETTE["ink"], labelLimit=400)
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
    return alt.layer(rule, line, dots).properties(width=560, height=300)


def embedding_scatter(points: np.ndarray, topics: Sequence[str], texts: Sequence[str], *, title: str,
                      x_title: str, y_title: str, topic_title: str, order: Sequence[str]) -> alt.Chart:
    """Sentence vectors projected to 2-D, one dot per sentence, coloured by its topic (the text in the tooltip)."""
    df = pd.DataFrame({"x": points[:, 0], "y": points[:, 1], "topic": list(topics), "text": list(texts)})
    return alt.Chart(df).mark_point(filled=True, size=70, opacity=0.85).encode(
        x=alt.X("x:Q", title=x_title, axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("y:Q", title=y_title, axis=alt.Axis(labels=False, ticks=False)),
        color=alt.Color("topic:N", sort=list(order), scale=alt.Scale(domain=list(order), range=list(TOPIC_COLORS)),
                        legend=alt.Legend(title=topic_title, orient="bottom", labelFontSize=LABEL_FONT)),
        shape=alt.Shape("topic:N", sort=list(order), legend=None),
        tooltip=[alt.Tooltip("topic:N", title=topic_title), alt.Tooltip("text:N", title=" ")],
    ).properties(width=300, height=300, title=title)
