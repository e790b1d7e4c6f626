"""One lookup for every user-visible string: ``t("section.key", **kwargs)``.

The catalogs live in ``assets/i18n/{en,es}.json`` (nested objects, the same keys in both; a test checks).
They are read once per process and frozen, so no session can change what another one reads.
The current language is the session's ``LANG_KEY`` in ``st.session_state``.

A key missing from the catalogs is a bug. It raises ``KeyError`` (the key itself is never shown to the
user as if it were text). Under pytest a key missing from the current language raises too; in a real
session it falls back to English first, so one forgotten translation does not take the page down.
"""
from __future__ import annotations

import functools
import json
import re
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import streamlit as st

CATALOG_DIR = Path(__file__).resolve().parents[1] / "assets" / "i18n"
LANGUAGES = ("en", "es")
FALLBACK = "en"
LANG_KEY = "cfg_lang"  # canonical session_state key of the language (ui.state owns its validation)


def _freeze(node: Any) -> Any:
    if isinstance(node, dict):
        return MappingProxyType({k: _freeze(v) for k, v in node.items()})
    return node


@functools.cache
def catalog(lang: str) -> Mapping[str, Any]:
    """The nested, read-only catalog of one language."""
    if lang not in LANGUAGES:
        raise KeyError(f"unknown language {lang!r}")
    with open(CATALOG_DIR / f"{lang}.json", encoding="utf-8") as f:
        return _freeze(json.load(f))


def lookup(key: str, lang: str) -> str:
    """The raw (unformatted) string for a dotted key; KeyError if it is missing or not a string."""
    node: Any = catalog(lang)
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            raise KeyError(f"i18n key {key!r} missing from the {lang!r} catalog")
        node = node[part]
    if not isinstance(node, str):
        raise KeyError(f"i18n key {key!r} is a section, not a string")
    return node


def current_language() -> str:
    try:
        lang = st.session_state.get(LANG_KEY, FALLBACK)
    except Exception:  # no script run context (plain unit tests)
        lang = FALLBACK
    return lang if lang in LANGUAGES else FALLBACK


def _strict() -> bool:
    return "pytest" in sys.modules


def t(key: str, /, lang: str | None = None, **kwargs: Any) -> str:
    """Translate `key` into `lang` (default: the session's language) and fill its ``{placeholders}``."""
    lang = lang or current_language()
    try:
        text = lookup(key, lang)
    except KeyError:
        if _strict() or lang == FALLBACK:
            raise
        text = lookup(key, FALLBACK)
    return text.format(**kwargs)


def _strings(node: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """{dotted key: string} of a catalog section."""
    found: dict[str, str] = {}
    for name, value in node.items():
        if isinstance(value, Mapping):
            found.update(_strings(value, f"{prefix}{name}."))
        else:
            found[f"{prefix}{name}"] = value
    return found


@functools.cache
def _keys_by_text() -> Mapping[str, frozenset[str]]:
    """{string without placeholders: the keys that hold it, in any language}."""
    index: dict[str, set[str]] = {}
    for lang in LANGUAGES:
        for key, text in _strings(catalog(lang)).items():
            if "{" not in text:
                index.setdefault(text, set()).add(key)
    return MappingProxyType({text: frozenset(keys) for text, keys in index.items()})


def in_every_language(text: str) -> frozenset[str]:
    """`text` and, when it is a catalog string, the same string in every language ("No mask" gives
    "No mask" and "Sin máscara"). Reads labels that old links carry instead of codes."""
    keys = _keys_by_text().get(text, frozenset())
    return frozenset({text, *(lookup(key, lang) for key in keys for lang in LANGUAGES)})


def md_escape(text: str) -> str:
    """User text (a typed word, a link value) made safe to put inside a translated Markdown string."""
    return re.sub(r"([\\`*_{}\[\]()#+\-.!|<>$~:])", r"\\\1", str(text))
