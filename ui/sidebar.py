"""The shared sidebar: language, "show the numbers", presentation mode, the lesson settings and the link.

Drawn by app.py on every page, through `links.control` like every other control (the settings themselves,
their ranges and their link parameters are `ui.state`'s)."""
from __future__ import annotations

import html

import streamlit as st

import core

from . import links, panels, state
from .i18n import LANG_KEY, LANGUAGES, t

SETTINGS_BOX = "settings_box"  # the sidebar's "Lesson settings" expander; Streamlit forgets its state on a page switch
SETTINGS_OPEN = "settings_open"  # so whether the learner left it open is kept here, and it opens so on the next page


def _keep_open() -> None:
    st.session_state[SETTINGS_OPEN] = st.session_state[SETTINGS_BOX]


def sidebar() -> None:
    """Language, "show the numbers", presentation mode, d_model, heads, sequence length, mask, seed, device."""
    ss, key = st.session_state, state.key
    lang = ss[LANG_KEY]  # format functions get the language now: Streamlit may call them outside the run
    with st.sidebar:
        links.control(st.radio, t("sidebar.language"), LANGUAGES, format_func=lambda code: t(f"lang.{code}", lang),
                      horizontal=True, setting=LANG_KEY)
        links.control(st.toggle, t("sidebar.show_numbers"), setting=key("show_numbers"),
                      help=t("sidebar.show_numbers_help", **panels.numbers_limits()))
        links.control(st.toggle, t("present.toggle"), help=t("present.toggle_help"), setting=key("present"))
        # Its controls are drawn only while it is open: drawn and folded away, they cost a cold open 0.1-0.4 s
        # (README, "Design decisions"). Closed, their values still come from and go to the link (links.control).
        box = st.expander(t("sidebar.lesson_settings"), ss.get(SETTINGS_OPEN, False), icon=":material/tune:",
                          key=SETTINGS_BOX, on_change=_keep_open)
        with box:
            if box.open:
                st.caption(t("sidebar.lesson_settings_help"))
            links.control(st.number_input, t("sidebar.d_model"), min_value=state.D_MODEL_RANGE[0],
                          max_value=state.D_MODEL_RANGE[1], step=8, setting=key("d_model"), drawn=box.open)
            state.fix_heads()  # after a new d_model
            links.control(st.selectbox, t("sidebar.heads"), state.heads_options(int(ss[key("d_model")])),
                          help=t("sidebar.heads_help"), setting=key("heads"), drawn=box.open)
            links.control(st.slider, t("sidebar.seq_len"), *state.SEQ_LEN_RANGE, setting=key("seq_len"),
                          drawn=box.open)
            links.control(st.selectbox, t("sidebar.mask"), state.MASKS, format_func=lambda m: t(f"mask.{m}", lang),
                          setting=key("mask"), drawn=box.open)
            links.control(st.number_input, t("sidebar.seed"), min_value=state.SEED_RANGE[0],
                          max_value=state.SEED_RANGE[1], step=1, help=t("sidebar.seed_help"), setting=key("seed"),
                          drawn=box.open)
            links.control(st.selectbox, t("sidebar.device"), ["auto", *core.available_devices()],
                          format_func=lambda d: t("sidebar.device_auto", lang, device=core.default_device())
                          if d == "auto" else d, help=t("sidebar.device_help"), setting=key("device"), link=False,
                          drawn=box.open)


# The box is filled from the address bar when it is shown: a section rerun (st.fragment) updates the address but
# not this sidebar box, which the whole run drew. The server's address is the text until the script runs.
_LIVE_LINK = """<input class="share-url" readonly aria-label="{label}" value="{url}"
 style="width:100%;font-family:monospace;font-size:0.8rem;padding:0.4rem;border:1px solid #ccc;border-radius:0.4rem"
 onfocus="this.value = window.location.href; this.select()">
<button class="share-copy" style="margin-top:0.4rem"
 onclick="const box = this.previousElementSibling; box.value = window.location.href; box.select();
 if (navigator.clipboard) navigator.clipboard.writeText(box.value);">{copy}</button>
<script>document.querySelectorAll("input.share-url").forEach((box) => {{ box.value = window.location.href; }});</script>
"""


def share_box() -> None:
    """"Link to this view": the address of the view as it is now, in a box that selects itself, and Copy."""
    with st.popover(t("links.share"), icon=":material/link:", width="stretch"):
        st.caption(t("links.share_help"))
        st.html(_LIVE_LINK.format(url=html.escape(links.view_url()), label=html.escape(t("links.share")),
                                  copy=html.escape(t("links.copy"))), unsafe_allow_javascript=True)
