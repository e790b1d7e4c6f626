"""Transformer visual explainer: the frame around the lessons.

Run with ``streamlit run app.py``. This file sets up the page, the navigation (translated section and page
titles) and the shared sidebar, then runs the lesson the user picked. A lesson is one line in `PAGES`
(ui/lessons.py).
"""
from pathlib import Path

import streamlit as st
import torch

from ui import limits, links, parts, presentation, sidebar, state
from ui.i18n import t
from ui.lessons import PAGES, SECTIONS  # the lessons, in order; a lesson is one line there

ROOT = Path(__file__).resolve().parent

# One thread: on a 2-core machine two torch threads made training ~100x slower while the other core was busy.
torch.set_num_threads(1)
state.init()
limits.watch_session()  # a closed tab's training places and, past Streamlit's reconnect window, its models go back
st.set_page_config(page_title=t("app.title"), page_icon=":material/hub:", layout="wide",
                   initial_sidebar_state="expanded")


def navigation() -> dict[str, list[st.Page]]:
    """{translated section title: [pages]} in `SECTIONS` order; empty sections are left out."""
    sections: dict[str, list[st.Page]] = {}
    for section in SECTIONS:
        pages = [st.Page(ROOT / path, title=t(title_key), icon=icon, url_path=url, default=url == "")
                 for page_section, path, title_key, icon, url in PAGES if page_section == section]
        if pages:
            sections[t(f"nav.{section}")] = pages
    return sections


sections = navigation()
page = st.navigation(sections, position="sidebar", expanded=True)  # every lesson, no "View more"
presentation.style()
with st.sidebar:
    st.markdown(f"### {t('app.title')}")
sidebar.sidebar()
with st.sidebar:
    share = st.container()  # filled after the page: the link then holds the page's own settings
    st.caption(t("app.sidebar_caption"))
st.session_state.pop(parts.CURRENT, None)  # a lesson with sub-lessons sets it again
page.run()
links.finish(seek=parts.seek)  # a link's parameters of another part open that part
with share:
    sidebar.share_box()
presentation.lesson_buttons(page, [p for pages in sections.values() for p in pages])  # in the sidebar's order
