"""A lesson's sub-lessons, one on screen at a time: the others are neither computed nor drawn.

``part = parts.pick("masks_part", ("causal", "padding"), label=t("masks.part"), format_func=...)`` draws the
selector (a horizontal radio tied to the canonical setting `setting`, so the part is in the link and a scene
can open it) and returns the chosen part's code. In presentation mode, Next and Previous walk the parts before
they leave the lesson (`presentation.lesson_buttons` reads `CURRENT`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from . import links

CURRENT = "cfg_parts_current"  # this run's picker: (setting, codes, labels); app.py clears it before the lesson


def pick(setting: str, parts: Sequence[str], *, label: str, format_func: Callable[[str], str]) -> str:
    """Draw the sub-lesson selector and return the chosen part (the first one until the learner picks)."""
    ss = st.session_state
    if ss.get(setting) not in parts:
        ss[setting] = parts[0]
    ss[CURRENT] = (setting, tuple(parts), tuple(format_func(p) for p in parts))
    return links.control(st.radio, label, list(parts), format_func=format_func, horizontal=True, setting=setting)


def step(offset: int) -> tuple[str, str] | None:
    """(setting, part) of the sub-lesson `offset` away from the current one in this run's picker, or None."""
    current = st.session_state.get(CURRENT)
    if not current:
        return None
    setting, codes, _ = current
    i = codes.index(st.session_state[setting]) + offset
    return (setting, codes[i]) if 0 <= i < len(codes) else None


def label_of(setting: str, part: str) -> str:
    """The translated label of `part` in this run's picker."""
    _, codes, labels = st.session_state[CURRENT]
    return labels[codes.index(part)]
