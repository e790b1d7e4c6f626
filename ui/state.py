"""Shared settings: one canonical value per setting in ``st.session_state``, mirrored to the URL.

Streamlit forgets a widget's state when the user leaves the page that drew it, so the canonical values
live under plain (non-widget) keys ``cfg_<name>``; widgets get their own key and are synced both ways by
`bind`. The sidebar's settings (`URL_NAMES`) are written to ``st.query_params`` on every run and read
from it once, when a session starts; the lessons' own controls go through `ui.links.control`, which reads
the rest of the link (`PENDING`). A bad value in a link falls back to a valid one and is reported with a
translated warning (never a traceback).

Every page calls `settings()` first: it works in the full app and when a page runs on its own.
"""
from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import streamlit as st

import core

from .i18n import LANG_KEY, LANGUAGES, md_escape, t

D_MODEL_RANGE = (8, 512)
SEQ_LEN_RANGE = (2, 64)
SEED_RANGE = (0, 2**31 - 1)
MAX_HEADS = 16
MASKS = ("none", "causal", "padding", "both")
FLAGS = MappingProxyType({"1": True, "true": True, "0": False, "false": False})  # on/off in a link
URL_NAMES = ("lang", "seed", "d_model", "heads", "seq_len", "mask", "show_numbers", "present")
FLAG_NAMES = ("show_numbers", "present")
DEFAULTS: Mapping[str, Any] = MappingProxyType({"lang": "en", "seed": 0, "d_model": 64, "heads": 4, "seq_len": 8,
                                                "mask": "none", "device": "auto", "show_numbers": False,
                                                "present": False})
_READY = "cfg_ready"
PROBLEMS = "cfg_problems"  # what was wrong in the link: shown until the user sets that value
PENDING = "cfg_url_pending"  # the link's lesson parameters, until their controls take them (ui/links.py)


def key(name: str) -> str:
    """The canonical session_state key of a shared setting (``lang`` -> ``cfg_lang``)."""
    return LANG_KEY if name == "lang" else f"cfg_{name}"


SHARED = frozenset(key(name) for name in DEFAULTS)  # the sidebar's settings, read from a link by `init`


@dataclass(frozen=True)
class Settings:
    lang: str
    seed: int
    device: str  # resolved: "cpu", "cuda" or "mps" (never "auto")
    show_numbers: bool
    d_model: int
    heads: int
    seq_len: int
    mask: str
    present: bool = False  # presentation mode (ui/presentation.py)


# ---- validation (pure functions: no Streamlit) ----------------------------------------------------------

def heads_options(d_model: int) -> list[int]:
    """Head counts allowed with this d_model: the divisors of d_model from 1 to 16."""
    return [h for h in range(1, MAX_HEADS + 1) if d_model % h == 0]


def closest_heads(d_model: int, heads: int) -> int:
    """The largest allowed head count that is not above `heads` (1 divides everything)."""
    return max([h for h in heads_options(d_model) if h <= heads] or [1])


def language_from_locale(locale: str | None) -> str:
    """``es``, ``es-ES``, ``es_419``... give Spanish; anything else (or nothing) gives English."""
    return "es" if locale and locale.lower().startswith("es") else "en"


def url_text(value: Any) -> str:
    """A setting as it is written in a link: on/off as 1/0, anything else as its text."""
    return ("1" if value else "0") if isinstance(value, bool) else str(value)


def _as_int(raw: str, lo: int, hi: int) -> int | None:
    try:
        value = int(str(raw).strip())
    except ValueError:
        return None
    return value if lo <= value <= hi else None


def read_url(params: Mapping[str, str], locale: str | None = None) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Settings from query parameters; returns (values, problems). Each problem names the parameter, the
    value given, what is allowed (an i18n key and its arguments) and the value used instead."""
    values = dict(DEFAULTS, lang=language_from_locale(locale))
    problems: list[dict[str, Any]] = []

    def reject(name: str, allowed: str, **allowed_kw: Any) -> None:
        problems.append({"name": name, "value": str(params[name]), "allowed": allowed, "allowed_kw": allowed_kw,
                         "fallback": values[name]})

    for name, (lo, hi) in (("seed", SEED_RANGE), ("d_model", D_MODEL_RANGE), ("seq_len", SEQ_LEN_RANGE)):
        if name in params:
            value = _as_int(params[name], lo, hi)
            if value is None:
                reject(name, "state.allowed_int", lo=lo, hi=hi)
            else:
                values[name] = value
    for name, choices in (("lang", LANGUAGES), ("mask", MASKS)):
        if name in params:
            # the code, or (links written before codes were kept) its label in either language
            by_text = {t(f"{name}.{code}", lang): code for code in choices for lang in LANGUAGES}
            by_text.update((code, code) for code in choices)
            if params[name] in by_text:
                values[name] = by_text[params[name]]
            else:
                reject(name, "state.allowed_choice", choices=", ".join(choices))
    for name in FLAG_NAMES:
        if name in params:
            flag = FLAGS.get(str(params[name]).strip().lower())
            if flag is None:
                reject(name, "state.allowed_choice", choices=", ".join(FLAGS))
                problems[-1]["fallback"] = url_text(values[name])  # as a link writes it
            else:
                values[name] = flag
    d_model = values["d_model"]
    requested = _as_int(params["heads"], 1, MAX_HEADS) if "heads" in params else None
    if requested in heads_options(d_model):
        values["heads"] = requested
    else:
        values["heads"] = closest_heads(d_model, requested or DEFAULTS["heads"])
        if "heads" in params:
            reject("heads", "state.allowed_heads", d_model=d_model,
                   choices=", ".join(map(str, heads_options(d_model))))
    return values, problems


# ---- session state -------------------------------------------------------------------------------------

def _browser_locale() -> str | None:
    try:
        return st.context.locale
    except Exception:  # older Streamlit or no browser context
        return None


def init() -> None:
    """Set every shared setting once per session (from the URL, else defaults), then mirror it to the URL.

    Idempotent: app.py calls it before building the navigation and every page calls it again."""
    ss = st.session_state
    if _READY not in ss:
        params = {name: st.query_params[name] for name in URL_NAMES if name in st.query_params}
        values, problems = read_url(params, _browser_locale())
        for name, value in values.items():
            if name in params:
                ss[key(name)] = value
            else:
                ss.setdefault(key(name), value)
        ss[PROBLEMS] = [dict(problem, canonical=key(problem["name"])) for problem in problems]
        ss[PENDING] = {name: st.query_params[name] for name in st.query_params if name not in URL_NAMES}
        ss[_READY] = True
    for name in URL_NAMES:
        text = url_text(ss[key(name)])
        if st.query_params.get(name) != text:
            st.query_params[name] = text


def settings() -> Settings:
    """Call at the top of every page: initializes state, shows the link's warnings, returns the settings.

    A warning about a bad link value stays until the user changes that setting."""
    init()
    for problem in st.session_state.get(PROBLEMS, []):
        if problem["canonical"] in SHARED:
            warn(problem)
    return current()


def warn(problem: Mapping[str, Any]) -> None:
    """The translated warning about one value of a link that was not allowed."""
    st.warning(t("state.bad_url_value", name=problem["name"], value=md_escape(problem["value"][:40]),
                 allowed=t(problem["allowed"], **problem["allowed_kw"]), fallback=md_escape(str(problem["fallback"]))),
               icon=":material/link_off:")


def current() -> Settings:
    """The shared settings as they are now; call after `init` (or `settings`) has run in this script run."""
    ss = st.session_state
    device = ss[key("device")]
    if device not in core.available_devices():
        device = core.default_device()
    return Settings(lang=ss[key("lang")], seed=int(ss[key("seed")]), device=device,
                    show_numbers=bool(ss[key("show_numbers")]), d_model=int(ss[key("d_model")]),
                    heads=int(ss[key("heads")]), seq_len=int(ss[key("seq_len")]), mask=ss[key("mask")],
                    present=bool(ss[key("present")]))


def fix_heads() -> None:
    """Keep the head count a divisor of d_model (after d_model changed)."""
    ss = st.session_state
    ss[key("heads")] = closest_heads(int(ss[key("d_model")]), int(ss[key("heads")]))


_AFTER_CHANGE: Mapping[str, Callable[[], None]] = MappingProxyType({key("d_model"): fix_heads})


def _among(value: Any, options: Sequence[Any]) -> bool:
    """Whether a selection widget's value is one of its options (every item, for a multiple choice)."""
    if isinstance(value, list):
        return all(item in options for item in value)
    return value is None or value in options  # None: nothing chosen (a radio drawn with index=None)


def _copy_from_widget(widget_key: str, canonical: str, after: Callable[[], None] | None = None,
                      options: Sequence[Any] | None = None) -> None:
    ss = st.session_state
    if options is not None and not _among(ss[widget_key], options):
        # Streamlit hands back a label it cannot match to an option (a label of the widget before its labels
        # changed, e.g. before a language switch) as the value itself: keep the code the setting holds.
        ss[widget_key] = ss[canonical]
        return
    ss[canonical] = ss[widget_key]
    if PROBLEMS in ss:  # the user has now chosen this value: its link warning is settled
        ss[PROBLEMS] = [p for p in ss[PROBLEMS] if p["canonical"] != canonical]
    if canonical in _AFTER_CHANGE:
        _AFTER_CHANGE[canonical]()
    if after is not None:
        after()


def labels(options: Sequence[Any], format_func: Callable[[Any], Any] | None) -> tuple[str, ...]:
    """What a selection widget shows for its options (and what Streamlit keeps as its value)."""
    return tuple(str(format_func(option) if format_func else option) for option in options)


def bind(canonical: str, *, widget: str | None = None, identity: tuple = (),
         after: Callable[[], None] | None = None, options: Sequence[Any] | None = None,
         format_func: Callable[[Any], Any] | None = None) -> dict[str, Any]:
    """Widget kwargs that tie a widget to the canonical session_state value `canonical`.

    Use as ``st.toggle(label, **bind("sim_scale"))``: the widget starts from the canonical value (also
    after a page switch, when Streamlit has dropped the widget's own state) and writes every change back.
    `widget` names the widget's own key; a page that offers a second control of a shared setting (the sidebar
    already draws one under the default key) passes a key of its own. `identity` lists what defines the
    widget's range (e.g. a slider's maximum): Streamlit identifies a keyed widget by its key alone, so when
    the range changes the key changes with it, and the new widget starts from the canonical value.
    `after` runs when the user changes the widget (not when a link or a scene sets the value), e.g. to load
    the presets of a newly chosen task.

    A selection widget passes its `options` and `format_func`. Streamlit keeps such a widget's value as the
    label it shows, so the labels (which follow the language) are part of its identity: after a language
    switch the widget is a new one that starts from the setting's code, never from a label of the other
    language; and a value that is not one of the options never reaches the setting."""
    ss = st.session_state
    widget_key = widget or f"w_{canonical}"
    if options is not None:
        options = list(options)
        identity = (*identity, labels(options, format_func))
    if identity:
        widget_key += f"_{zlib.crc32(repr(identity).encode('utf-8')):08x}"
    if ss.get(widget_key, object()) != ss[canonical]:
        ss[widget_key] = ss[canonical]
    return {"key": widget_key, "on_change": _copy_from_widget, "args": (widget_key, canonical, after, options)}
