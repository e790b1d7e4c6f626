"""The sentence the attention lessons act on, shared by pages 02-04 and kept across page switches.

Tokens are the whitespace-separated words of the sentence, at most `seq_len` of them (a shared setting).
An empty input gets a translated message and the last valid sentence stays in use; the box keeps to MAX_CHARS
characters, and a longer value from a link is refused with its own message (ui/links.py).
"""
from __future__ import annotations

import streamlit as st

from .i18n import t
from .links import control

DEFAULT_SENTENCE = "time flies like an arrow"  # lesson 1's words, so the lessons connect
MAX_CHARS = 1000
SENTENCE_KEY = "cfg_sentence"  # the last valid sentence
TEXT_KEY = "cfg_sentence_text"  # what the learner typed, valid or not


def split(sentence: str) -> list[str]:
    """Whitespace tokenization: punctuation stays attached to its word, emoji and accents are kept."""
    return sentence.split()


def _check(text: str) -> str | None:
    """The i18n key of what is wrong with `text`, or None (the box itself keeps it to MAX_CHARS characters)."""
    return None if split(text) else "tokens.empty"


def sentence_tokens(seq_len: int) -> list[str]:
    """Draw the sentence input and return the tokens to use (never empty, at most `seq_len`). One box for
    every lesson: the sentence typed in one lesson is the sentence of the next."""
    ss = st.session_state
    ss.setdefault(SENTENCE_KEY, DEFAULT_SENTENCE)
    ss.setdefault(TEXT_KEY, ss[SENTENCE_KEY])
    text_col, reset_col = st.columns([5, 1], vertical_alignment="bottom")
    with text_col:
        control(st.text_input, t("tokens.label"), help=t("tokens.help", n=seq_len), max_chars=MAX_CHARS,
                setting=TEXT_KEY)
    with reset_col:
        st.button(t("tokens.reset"), on_click=_reset, icon=":material/restart_alt:")
    problem = _check(ss[TEXT_KEY])
    if problem:
        st.warning(t(problem, max=MAX_CHARS, kept=" ".join(split(ss[SENTENCE_KEY]))), icon=":material/edit_off:")
    else:
        ss[SENTENCE_KEY] = ss[TEXT_KEY]
    tokens = split(ss[SENTENCE_KEY])
    if len(tokens) > seq_len:
        st.info(t("tokens.truncated", n=len(tokens), seq_len=seq_len), icon=":material/content_cut:")
    return tokens[:seq_len]


def _reset() -> None:
    st.session_state[TEXT_KEY] = st.session_state[SENTENCE_KEY] = DEFAULT_SENTENCE
