"""The shared settings: one session_state key per setting, which is also the key of the widget that sets it.

Widgets keep their values across pages (``persist_state="session"``, given by `ui.links.control`), so a
setting needs no copy of its own. `init` (app.py, then every page) gives each setting its default once per
session and keeps the link's parameters waiting (`PENDING`) until the control that owns them is drawn and
checks them. Every page calls `settings()` first: it works in the full app and when a page runs on its own.
"""
from __future__ import annotations

from collections.abc import Mapping
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
DEFAULTS: Mapping[str, Any] = MappingProxyType({"lang": "en", "seed": 0, "d_model": 64, "heads": 4, "seq_len": 8,
                                                "mask": "none", "device": "auto", "show_numbers": False,
                                                "present": False})
_READY = "cfg_ready"
PROBLEMS = "cfg_problems"  # rejected link values: each warning stays until the user sets that value
PENDING = "cfg_url_pending"  # the link's parameters, until their controls take them (ui/links.py)
LATER = "cfg_later"  # values for widgets this run has already drawn: set when the next run starts (`set_later`)


def key(name: str) -> str:
    """The session_state key (and widget key) of a shared setting: ``d_model`` -> ``cfg_d_model``."""
    return LANG_KEY if name == "lang" else f"cfg_{name}"


SHARED = frozenset(key(name) for name in DEFAULTS)  # the sidebar's settings: their warnings top the page


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


def _browser_locale() -> str | None:
    try:
        return st.context.locale
    except Exception:  # older Streamlit or no browser context
        return None


def init() -> None:
    """Once per session: every setting's default, and the link's parameters waiting for their controls (the
    language at once, as the navigation is translated before any control is drawn). On every run: the values
    `set_later` left for this run. Idempotent: app.py calls it first and every page calls it again."""
    ss = st.session_state
    if _READY not in ss:
        ss.setdefault(LANG_KEY, language_from_locale(_browser_locale()))
        for name, value in DEFAULTS.items():
            ss.setdefault(key(name), value)
        ss[PENDING] = st.query_params.to_dict()
        if ss[PENDING].get("lang") in LANGUAGES:  # anything else waits for the language control, which says why
            ss[LANG_KEY] = ss[PENDING].pop("lang")
        ss[PROBLEMS] = []
        ss[_READY] = True
    ss.update(ss.pop(LATER, {}))


def matching(named: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The first name in `named` whose every value the session holds now, or None (a lesson's scenes)."""
    ss = st.session_state
    return next((name for name, values in named.items()
                 if all(setting in ss and ss[setting] == value for setting, value in values.items())), None)


def set_later(values: Mapping[str, Any]) -> None:
    """Set `values` when the next run starts; for widgets this run has drawn (Streamlit refuses a change of a
    widget's value after the widget is drawn). The caller then reruns."""
    st.session_state.setdefault(LATER, {}).update(values)


def settings() -> Settings:
    """Call at the top of every page: initializes state, shows the link's warnings about the sidebar's
    settings (each until the user changes that setting) and returns the settings."""
    init()
    for problem in st.session_state[PROBLEMS]:
        if problem["setting"] in SHARED:
            warn(problem)
    return current()


def warn(problem: Mapping[str, Any]) -> None:
    """The translated warning about one value of a link that was not allowed."""
    st.warning(t("state.bad_url_value", name=problem["name"], value=md_escape(problem["value"][:40]),
                 allowed=t(problem["allowed"], **problem["allowed_kw"]), fallback=md_escape(str(problem["fallback"]))),
               icon=":material/link_off:")


def settle(setting: str) -> None:
    """The user (or a scene) has set `setting`: a warning about its link value is no longer news."""
    ss = st.session_state
    ss[PROBLEMS] = [p for p in ss.get(PROBLEMS, []) if p["setting"] != setting]


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
    """Keep the head count a divisor of d_model (the sidebar calls it before it draws the heads)."""
    ss = st.session_state
    heads = closest_heads(int(ss[key("d_model")]), int(ss[key("heads")]))
    if heads != ss[key("heads")]:  # set only a change: a value set in code is sent to the browser again
        ss[key("heads")] = heads
