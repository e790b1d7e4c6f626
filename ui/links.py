"""Every control of a lesson in the link, so a shared link opens the same view.

Pages draw their widgets through `control`: ``links.control(st.slider, label, 1, 1024, setting="qkv_dk")`` draws
the widget under the key `setting` (its value is ``st.session_state[setting]``, kept across pages) and writes it
to the URL under the setting's name (``cfg_`` dropped). The link's parameters wait in session_state
(`state.PENDING`) until the control that owns them is drawn: the control's own arguments (options, min/max,
max_chars) say what is allowed, so a value from a link is checked exactly as the widget would check it. A value
it does not allow keeps the page's value and gets a translated warning. `finish` (app.py, after the page) drops
other pages' parameters and says which of the link's parameters no control used (`ui.sidebar.share_box` shows
the link).

Streamlit's own ``bind="query-params"`` does not do this job: it drops a value it rejects without a word, leaves
out a value equal to the widget's default (ours come from session_state, so a link would lose it), and keeps a
translated choice's label, not its code, in the link.
"""
from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import streamlit as st

from . import state
from .i18n import in_every_language, t

SEEN = "cfg_url_seen"  # the parameters the controls of this run wrote
APPLIED = "cfg_url_applied"  # a link value was applied in this run: run once more so every part agrees
SHOWN = "cfg_shown"  # {setting: Shown}: what its selection widget showed at its last draw (`_unstale`, `_relabel`)
LIT = "cfg_scene_lit"  # (the page's scenes, the scene whose pill is lit): set by ui.scenes.picker
MOVED = "cfg_moved"  # the lesson setting the user has just changed, until the pill or its control is drawn
FLAG_WIDGETS = ("toggle", "checkbox")
TEXT_WIDGETS = ("text_input", "text_area")
SHOWN_CHOICES = 12  # a warning lists at most this many allowed values


def url_name(setting: str) -> str:
    """The query parameter of a canonical setting: ``qkv_dk`` -> ``qkv_dk``, ``cfg_sentence_text`` ->
    ``sentence_text``."""
    return setting.removeprefix("cfg_")


def to_url(value: Any) -> str | None:
    """A control's value as a link writes it (None: not in the link). Lists are comma-separated."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return ",".join(state.url_text(v) for v in value)
    return state.url_text(value)


class Rejected(ValueError):
    """A link value the control does not allow; `allowed` is an i18n key, `allowed_kw` its arguments."""

    def __init__(self, allowed: str, **allowed_kw: Any) -> None:
        super().__init__(allowed)
        self.allowed, self.allowed_kw = allowed, allowed_kw


def _listing(texts: list[str]) -> str:
    shown = ", ".join(texts[:SHOWN_CHOICES])
    return shown + (", …" if len(texts) > SHOWN_CHOICES else "")


def _number(text: str, spec: Mapping[str, Any]) -> int | float:
    lo, hi, step = spec.get("min_value"), spec.get("max_value"), spec.get("step")
    given = [v for v in (lo, hi, step) if v is not None]
    integer = bool(given) and all(isinstance(v, int) for v in given)  # as Streamlit decides a number's type
    bounds = {"lo": "−∞" if lo is None else lo, "hi": "∞" if hi is None else hi}
    allowed = ("state.allowed_int" if integer else "state.allowed_number", bounds)
    try:
        value = int(text.strip()) if integer else float(text.strip())
    except ValueError:
        raise Rejected(allowed[0], **allowed[1]) from None
    outside = (lo is not None and value < lo) or (hi is not None and value > hi)
    if not math.isfinite(value) or outside:  # off the step grid is allowed, as Streamlit allows it
        raise Rejected(allowed[0], **allowed[1])
    return value


def from_url(text: str, kind: str, spec: Mapping[str, Any]) -> Any:
    """The value a link's `text` gives a widget of `kind` (``slider``, ``selectbox``...) drawn with the
    arguments `spec`; raises `Rejected` when the widget would not allow it."""
    if "options" in spec:
        options = list(spec["options"])
        by_text = {alias: option for option, label in zip(options, labels(options, spec.get("format_func")))
                   for alias in in_every_language(label)}  # labels: links written before codes were kept
        codes = {state.url_text(option): option for option in options}
        allowed = ("state.allowed_choice", {"choices": _listing(list(codes))})
        by_text.update(codes)
        if kind == "multiselect" or spec.get("selection_mode") == "multi":
            items = [item for item in text.split(",") if item]
            limit = spec.get("max_selections") or len(by_text)
            if any(item not in by_text for item in items) or len(set(items)) < len(items) or len(items) > limit:
                raise Rejected("state.allowed_subset", choices=allowed[1]["choices"], limit=limit)
            return [by_text[item] for item in items]
        if text not in by_text:
            raise Rejected(*allowed[:1], **allowed[1])
        return by_text[text]
    if kind in FLAG_WIDGETS:
        flag = state.FLAGS.get(text.strip().lower())
        if flag is None:
            raise Rejected("state.allowed_choice", choices=", ".join(state.FLAGS))
        return flag
    if kind in TEXT_WIDGETS:
        limit = spec.get("max_chars")
        if limit is not None and len(text) > limit:
            raise Rejected("state.allowed_text", max=limit)
        return text
    return _number(text, spec)


def labels(options, format_func: Callable[[Any], Any] | None) -> tuple[str, ...]:
    """What a selection widget shows for its options."""
    return tuple(str(format_func(option) if format_func else option) for option in options)


def take(setting: str) -> str | None:
    """The link's value for `setting` if it is still waiting (it is then taken), else None."""
    return st.session_state.get(state.PENDING, {}).pop(url_name(setting), None)


def report(setting: str, text: str, rejected: Rejected, fallback: str) -> None:
    """Keep a rejected link value's warning until the user sets that value (shown by `warnings`)."""
    st.session_state[state.PROBLEMS].append({"name": url_name(setting), "setting": setting, "value": text,
                                             "allowed": rejected.allowed, "allowed_kw": rejected.allowed_kw,
                                             "fallback": fallback})


def warnings(setting: str) -> None:
    """Show the warnings about rejected link values of `setting`."""
    for problem in st.session_state.get(state.PROBLEMS, []):
        if problem["setting"] == setting:
            state.warn(problem)


def _apply(kind: str, spec: Mapping[str, Any], setting: str, text: str) -> None:
    ss = st.session_state
    try:
        ss[setting] = from_url(text, kind, spec)
        ss[APPLIED] = ss.get(APPLIED, False) or setting not in state.SHARED  # the sidebar is drawn before the page
    except Rejected as rejected:
        report(setting, text, rejected, to_url(ss.get(setting)))


def publish(name: str, value: Any) -> None:
    """Write one parameter of this view to the URL (or remove it when `value` is None)."""
    ss = st.session_state
    ss.setdefault(SEEN, set()).add(name)
    text = to_url(value)
    if text is None:
        if name in st.query_params:
            del st.query_params[name]
    elif st.query_params.get(name) != text:
        st.query_params[name] = text


def _changed(setting: str, after: Callable[[], None] | None) -> None:
    shown = st.session_state.get(SHOWN, {}).get(setting)
    if shown is not None and _unstale(setting, shown.codes) and st.session_state[setting] == shown.value:
        return  # not the user's change: the browser's label from before a language switch, its option again
    state.settle(setting)
    if setting not in state.SHARED:  # the sidebar's settings rerun the whole page anyway
        st.session_state[MOVED] = setting
    if after is not None:
        after()


@dataclass(frozen=True)
class Shown:
    """What a selection widget showed at its last draw: its options, their labels, its value, and the option of
    every label it has shown in this session (in any language)."""
    codes: tuple
    labels: tuple[str, ...]
    value: Any
    options: dict[str, Any]


def _unstale(setting: str, codes: Sequence[Any]) -> bool:
    """Turn labels in a selection setting's value back into their options (`codes` are the options now); True if
    there were any. Streamlit returns the label itself when the browser sends one the widget's last run did not
    show: with fast reruns a language switch can race a rerun, and the other language's label comes back. A label
    never shown before leaves the value as it was drawn last (one of a list is dropped). A select_slider cannot be
    mended here (it turns such a label into its first option), so its labels never change (`i18n.power_of_ten`)."""
    ss = st.session_state
    shown = ss.get(SHOWN, {}).get(setting)
    if shown is None or setting not in ss:
        return False
    value = ss[setting]
    items = value if isinstance(value, list) else [] if value is None else [value]  # None: nothing chosen
    if all(item in codes for item in items):
        return False
    if isinstance(value, list):
        ss[setting] = [item if item in codes else shown.options[item] for item in value
                       if item in codes or item in shown.options]
    else:
        ss[setting] = shown.options.get(value, shown.value)
    return True


def _relabel(setting: str, spec: Mapping[str, Any]) -> None:
    """Streamlit keeps a selection widget's value in the browser as the label it showed. When the labels change
    (a language switch, a new sentence) the old label would come back as the value: setting the value again
    before the widget is drawn sends the new label. Records what the widget shows now (`Shown`)."""
    ss = st.session_state
    options = list(spec["options"])
    _unstale(setting, options)
    labels_now = labels(options, spec.get("format_func"))
    before = ss.setdefault(SHOWN, {}).get(setting)
    if before is not None and before.labels != labels_now and setting in ss:
        ss[setting] = ss[setting]
    known = {} if before is None or len(before.options) > 4 * len(options) + 32 else before.options
    ss[SHOWN][setting] = Shown(tuple(options), labels_now, ss.get(setting), {**known, **dict(zip(labels_now, options))})


def control(widget: Callable, /, *args: Any, setting: str, after: Callable[[], None] | None = None,
            link: bool = True, drawn: bool = True, **kwargs: Any) -> Any:
    """Draw ``widget(*args, **kwargs)`` under the key `setting`, its value kept across pages and (unless `link`
    is False) mirrored to the URL. `after` runs when the user changes it (not when a link or a scene sets it),
    e.g. to load the presets of a newly chosen task. A value waiting from the link is checked against the
    widget's arguments and applied first; a rejected one is reported above it (the sidebar's at the top of the
    page). With `drawn` False (its section is closed) the widget is not drawn, and the rest is done all the
    same: the link's value is checked and applied, and the value goes into the link."""
    ss = st.session_state
    spec = inspect.signature(widget).bind_partial(*args, **kwargs).arguments
    text = take(setting) if link else None
    if text is not None:
        _apply(widget.__name__, spec, setting, text)
    if not drawn:
        if link:
            publish(url_name(setting), ss[setting])
        return ss[setting]
    if setting not in state.SHARED:
        warnings(setting)
    if "options" in spec:
        _relabel(setting, spec)
    value = widget(*args, **kwargs, key=setting, persist_state="session", on_change=_changed, args=(setting, after))
    if ss.get(MOVED) == setting:  # not taken by the scene pill: this run is one section's (st.fragment)
        del ss[MOVED]
        scenes, lit = ss.get(LIT, ({}, None))
        if any(setting in values for values in scenes.values()) and state.matching(scenes) != lit:
            st.rerun(scope="app")  # the pill, its note and the link's scene follow the change
    if link:
        publish(url_name(setting), ss[setting])
    return value


def view_url() -> str:
    """The address of this view: the page's URL (when the browser sent it) and every parameter."""
    query = urlencode(st.query_params.to_dict())
    base = st.context.url  # None in AppTest
    return f"{base}?{query}" if base else f"?{query}"


def finish(seek: Callable[[dict], bool] | None = None) -> None:
    """After the page (app.py): drop the parameters no control of this page wrote, report the link's
    parameters that no control used, and run once more if a link value was applied mid-page or if `seek`
    (ui.parts.seek) opened another part of the lesson for the parameters still waiting."""
    ss = st.session_state
    keep = ss.pop(SEEN, set())
    for name in [name for name in st.query_params if name not in keep]:
        del st.query_params[name]
    if ss.pop(APPLIED, False):
        st.rerun()  # the rest of the link waits: a control drawn only now (e.g. in an opened mode) takes it
    if seek is not None and seek(ss.get(state.PENDING, {})):
        st.rerun()
    unused = ss.pop(state.PENDING, {})
    if unused:
        st.toast(t("links.unused", names=", ".join(sorted(unused))), icon=":material/link_off:")
