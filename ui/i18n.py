"""One lookup for every user-visible string: ``t("section.key", **kwargs)``.

Short interface strings live in ``assets/i18n/{en,es}.json`` (nested objects, the same keys in both; a test
checks). A lesson's prose lives in Markdown beside it, one file per language (``lessons/text/04_multi_head.en.md``),
split into named sections by marker lines ``<!-- name -->``; section ``notice_heads`` of lesson 4 is the key
``mha.notice_heads`` (the lesson's namespace is the first part of its title key in ui/lessons.py). In those files
braces are plain text (LaTeX needs no escaping) and ``{{name}}`` or ``{{name:.2f}}`` is a value the app fills in.
Both are read once per process into one catalog per language and frozen, so no session can change what another
one reads.
The current language is the session's ``LANG_KEY`` in ``st.session_state``.

A key missing from the catalogs is a bug. It raises ``KeyError`` (the key itself is never shown to the
user as if it were text). Under pytest a key missing from the current language raises too; in a real
session it falls back to English first, so one forgotten translation does not take the page down.
"""
from __future__ import annotations

import functools
import json
import numbers
import re
import string
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping

import streamlit as st

ROOT = Path(__file__).resolve().parents[1]
CATALOG_DIR = ROOT / "assets" / "i18n"
PROSE_DIR = ROOT / "lessons" / "text"
SECTION = re.compile(r"^<!-- ([A-Za-z0-9_.]+) -->$", re.M)  # a marker line; other comments are plain text
FIELD = re.compile(r"\{\{(\w+(?:![rsa])?(?::[^{}]*)?)\}\}")  # {{name}} or {{name:spec}} in a prose file
LANGUAGES = ("en", "es")
FALLBACK = "en"
MARKS = MappingProxyType({"en": ".,", "es": ",."})  # per language: the decimal mark, then the thousands separator
LANG_KEY = "cfg_lang"  # canonical session_state key of the language (ui.state owns its validation)


def _freeze(node: Any) -> Any:
    if isinstance(node, dict):
        return MappingProxyType({k: _freeze(v) for k, v in node.items()})
    return node


def template(prose: str) -> str:
    """A prose file's text as a ``str.format`` template: its braces literal, its ``{{name}}`` fields fields."""
    pieces, end = [], 0
    for field in FIELD.finditer(prose):
        pieces += [prose[end:field.start()].replace("{", "{{").replace("}", "}}"), "{" + field.group(1) + "}"]
        end = field.end()
    return "".join(pieces) + prose[end:].replace("{", "{{").replace("}", "}}")


def sections(text: str) -> dict[str, str]:
    """{section name: template} of one prose file; the text before the first marker is a note to editors."""
    parts = SECTION.split(text)[1:]  # [name, body, name, body, ...]
    names = parts[::2]
    if len(set(names)) != len(names):
        raise ValueError(f"a section appears twice: {sorted(n for n in names if names.count(n) > 1)}")
    return {name: template(body.strip("\n")) for name, body in zip(names, parts[1::2])}


def prose_files(lang: str) -> dict[str, Path]:
    """{lesson namespace: its prose file in `lang`}, for the lessons that have one."""
    from ui.lessons import PAGES  # the map from a lesson file to its namespace
    found = {}
    for _, path, title_key, _, _ in PAGES:
        prose = PROSE_DIR / f"{Path(path).stem}.{lang}.md"
        if prose.exists():
            found[title_key.split(".")[0]] = prose
    return found


@functools.cache
def catalog(lang: str) -> Mapping[str, Any]:
    """The nested, read-only catalog of one language: the JSON strings and the lessons' prose sections."""
    if lang not in LANGUAGES:
        raise KeyError(f"unknown language {lang!r}")
    with open(CATALOG_DIR / f"{lang}.json", encoding="utf-8") as f:
        strings = json.load(f)
    for namespace, path in prose_files(lang).items():
        for name, text in sections(path.read_text("utf-8")).items():
            node = strings.setdefault(namespace, {})
            *parents, leaf = name.split(".")
            for part in parents:
                node = node.setdefault(part, {})
            if leaf in node:
                raise ValueError(f"{namespace}.{name} is both in {path.name} and in {lang}.json")
            node[leaf] = text
    return _freeze(strings)


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


_FOUR_DIGITS = re.compile(r"^([-+]?)(\d),(\d{3})(?![\d,])")  # "2,048" and "2,048.5": one group of thousands only


def number(value: float, spec: str = "", lang: str | None = None, *, tex: bool = False) -> str:
    """``format(value, spec)`` with the language's marks: 1,234,567.5 is "1.234.567,5" in Spanish. Spanish also
    writes a four-digit number without a separator ("2048", as the RAE does) and a space before "%" ("25,6 %").
    With ``tex``, for LaTeX, a comma is written ``{,}``, which TeX sets without a space."""
    lang = lang or current_language()
    decimal, thousands = MARKS[lang]
    text = format(value, spec)
    if lang == "es":
        text = _FOUR_DIGITS.sub(r"\1\2\3", text)
        if text.endswith("%") and not tex:
            text = text[:-1] + "\u00a0%"
    text = text.translate(str.maketrans({".": decimal, ",": thousands}))
    return text.replace(",", "{,}") if tex else text


def power_of_ten(value: float) -> str:
    """`value` written as a power of ten, 10⁻³ or 3×10⁻⁴: with a whole mantissa (every learning rate the lessons
    offer), the same in every language. A select_slider's labels must not change with the language: one that
    meets a label it does not show (the browser's, from before a switch, under fast reruns) silently takes its
    first option."""
    mantissa, exponent = f"{value:e}".split("e")  # "3.000000e-04"
    power = "10" + str(int(exponent)).translate(_SUPERSCRIPTS)
    return power if float(mantissa) == 1 else f"{float(mantissa):g}×{power}"


_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


class _Formatter(string.Formatter):
    """``str.format`` that writes a float (and an int formatted with grouping) in the language's marks. Inside
    LaTeX (after an odd number of ``$``) a decimal comma is written ``{,}``, which TeX sets without a space."""

    def __init__(self, lang: str):
        self.lang, self.dollars = lang, 0

    def parse(self, format_string: str):
        for literal, field, spec, conversion in super().parse(format_string):
            self.dollars += literal.count("$") - literal.count(r"\$")
            yield literal, field, spec, conversion

    def format_field(self, value: Any, spec: str) -> str:
        is_float = isinstance(value, numbers.Real) and not isinstance(value, (bool, numbers.Integral))
        if is_float or (isinstance(value, numbers.Integral) and "," in spec and not isinstance(value, bool)):
            return number(value, spec, self.lang, tex=self.dollars % 2 == 1)
        return super().format_field(value, spec)


def t(key: str, /, lang: str | None = None, **kwargs: Any) -> str:
    """Translate `key` into `lang` (default: the session's language) and fill its ``{placeholders}``; numbers
    in the language's marks (a decimal comma in Spanish)."""
    lang = lang or current_language()
    try:
        text = lookup(key, lang)
    except KeyError:
        if _strict() or lang == FALLBACK:
            raise
        lang, text = FALLBACK, lookup(key, FALLBACK)
    return _Formatter(lang).format(text, **kwargs)


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
