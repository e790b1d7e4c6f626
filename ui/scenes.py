"""Scenes: named settings of a lesson that a lecturer opens with one click and shares as ``?scene=<name>``.

A lesson writes its scenes as a literal ``SCENES = {name: {canonical setting: value}}`` (shared settings under
their canonical keys, e.g. ``"cfg_d_model"``) and calls `picker` above its controls. The pills name the
scenes; a click sets every value of that scene. The pill of the scene that the settings match now is lit,
whatever set them, and while they match the link carries ``scene=<name>`` next to every value (so the link
opens the same view even if a later version changes the scene); a control inside a section that reruns alone
(st.fragment) reruns the whole page when it lights or unlights a pill (ui/links.py). A link's scene is applied
when the picker is drawn, and the run starts again at once, so the sidebar and the lesson's settings show it too.

Titles and notes come from the lesson's catalog section: ``<section>.scene_of.<name>`` names a scene and
``<section>.scene_note.<name>`` says what to look at in it.
"""
from __future__ import annotations

from typing import Any, Mapping

import streamlit as st

from . import links, state
from .i18n import current_language, t

SCENE = "scene"  # the query parameter


def settle(values: Mapping[str, Any]) -> None:
    """A scene has set `values`: link warnings about them (and about the link's scene) are settled."""
    for setting in (*values, SCENE):
        state.settle(setting)


def _chosen(widget_key: str, scenes: Mapping[str, Mapping[str, Any]]) -> None:
    name = st.session_state[widget_key]
    if name is not None:  # a click on the lit pill unlights it: the settings stay as they are
        st.session_state.update(scenes[name])
        settle(scenes[name])


def _from_link(scenes: Mapping[str, Mapping[str, Any]]) -> None:
    name = links.take(SCENE)
    if name is None:
        return
    if name in scenes:
        state.set_later(scenes[name])  # the sidebar has drawn its controls: they take the scene in the next run
        settle(scenes[name])
        st.rerun()
    links.report(SCENE, name, links.Rejected("state.allowed_choice", choices=", ".join(scenes)), "—")


def picker(section: str, scenes: Mapping[str, Mapping[str, Any]]) -> str | None:
    """Draw the lesson's scenes as pills (above its controls) and return the scene shown now, or None."""
    ss = st.session_state
    lang = current_language()  # format functions get the language now: Streamlit may call them outside the run
    _from_link(scenes)
    links.warnings(SCENE)
    current = state.matching(scenes)
    ss.pop(links.MOVED, None)  # the pill is drawn with the settings as they are now
    ss[links.LIT] = (scenes, current)
    widget_key = f"{section}_scene_{lang}"
    ss[widget_key] = current  # the lit pill follows the settings, whatever changed them
    st.pills(t("scene.label"), list(scenes), format_func=lambda name: t(f"{section}.scene_of.{name}", lang),
             key=widget_key, on_change=_chosen, args=(widget_key, scenes), help=t("scene.help"))
    note = st.empty()  # one slot whether a scene is lit or not: what follows keeps its place (and is not redrawn)
    if current is not None:
        note.caption(t(f"{section}.scene_note.{current}"))
    links.publish(SCENE, current)
    return current
