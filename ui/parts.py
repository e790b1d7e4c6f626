"""A lesson's sub-lessons, one on screen at a time: the others are neither computed nor drawn.

``part = parts.pick("masks_part", ("causal", "padding"), label=t("masks.part"), format_func=...)`` draws the
selector (a horizontal radio tied to the canonical setting `setting`, so the part is in the link and a scene
can open it) and returns the chosen part's code. In presentation mode, Next and Previous walk the parts before
they leave the lesson (`presentation.lesson_buttons` reads `CURRENT`).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import streamlit as st

from . import links, state

CURRENT = "cfg_parts_current"  # this run's picker: (setting, codes, labels, part); app.py clears it before the lesson
TRIED = "cfg_parts_tried"  # {part: link parameters still unused with it open}, while a link's owner is sought


def pick(setting: str, parts: Sequence[str], *, label: str, format_func: Callable[[str], str]) -> str:
    """Draw the sub-lesson selector and return the chosen part (the first one until the learner picks)."""
    ss = st.session_state
    if ss.get(setting) not in parts:
        ss[setting] = parts[0]
    earlier = ss.get(CURRENT)  # left by the last run only when this one reruns a fragment (app.py clears it)
    if links.url_name(setting) in ss.get(state.PENDING, {}):  # the link names its part: nothing to seek
        ss[TRIED] = dict.fromkeys(parts, 0)
    part = links.control(st.radio, label, list(parts), format_func=format_func, horizontal=True, setting=setting)
    ss[CURRENT] = (setting, tuple(parts), tuple(format_func(p) for p in parts), part)
    if earlier is not None and earlier[0] == setting and earlier[3] != part:
        st.rerun()  # another part picked inside a fragment: the whole page runs, so the link drops the old part's
    return part  # values (links.finish) as it does when a part is picked outside a fragment


def step(offset: int) -> tuple[str, str] | None:
    """(setting, part) of the sub-lesson `offset` away from the current one in this run's picker, or None."""
    current = st.session_state.get(CURRENT)
    if not current:
        return None
    setting, codes, *_ = current
    i = codes.index(st.session_state[setting]) + offset
    return (setting, codes[i]) if 0 <= i < len(codes) else None


def label_of(setting: str, part: str) -> str:
    """The translated label of `part` in this run's picker."""
    _, codes, labels, _ = st.session_state[CURRENT]
    return labels[codes.index(part)]


def seek(pending: dict) -> bool:
    """Parameters of a link that no control of the open part took (`pending`) may belong to another part: a link
    made before the lesson had parts, or by hand. Open each part in turn (True: run again), then the last part that
    took any of them (the fewest left waiting); False when there is nothing more to try (what is left is reported
    as unused)."""
    ss = st.session_state
    current = ss.get(CURRENT)
    if not pending or not current:
        ss.pop(TRIED, None)
        return False
    setting, codes, *_ = current
    tried = ss.setdefault(TRIED, {})
    if ss[setting] in tried and len(tried) == len(codes):
        return False  # every part tried, and the best one is open
    tried[ss[setting]] = len(pending)
    untried = [code for code in codes if code not in tried]
    best = untried[0] if untried else min(codes, key=lambda code: tried[code])  # the first with the fewest left
    if best == ss[setting]:
        return False
    state.set_later({setting: best})  # the picker is drawn: it opens `best` in the next run
    return True
