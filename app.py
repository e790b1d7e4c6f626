"""Transformer visual explainer: the frame around the lessons.

Run with ``streamlit run app.py``. This file sets up the page, the navigation (translated section and page
titles) and the shared sidebar, then runs the lesson the user picked. A lesson is one line in `PAGES`.
"""
from pathlib import Path

import streamlit as st
import torch

from ui import state
from ui.i18n import t

ROOT = Path(__file__).resolve().parent
SECTIONS = ("attention", "blocks", "model", "practice")  # navigation order; keys of nav.* in the catalogs
# (section, file, title key, icon, url path). Only pages that exist and work are listed.
# A url path must differ from the file's name without its number ("similarity" for 01_similarity.py):
# until st.navigation first runs in a process (and in every AppTest run) Streamlit still serves the old
# pages/ folder mode, which would run a page whose url matches its file directly, without this frame.
PAGES = (
    ("attention", "pages/01_similarity.py", "sim.nav_title", ":material/join_inner:", "similarity-to-attention"),
    ("attention", "pages/02_attention.py", "qkv.nav_title", ":material/key:", "queries-keys-values"),
    ("attention", "pages/03_masks.py", "masks.nav_title", ":material/visibility_off:", "attention-masks"),
    ("attention", "pages/04_multi_head.py", "mha.nav_title", ":material/view_week:", "multi-head-attention"),
    ("blocks", "pages/05_positional_encoding.py", "pe.nav_title", ":material/pin_drop:", "position-information"),
    ("blocks", "pages/06_layer_norm.py", "ln.nav_title", ":material/equalizer:", "layer-normalization"),
    ("blocks", "pages/07_blocks.py", "blocks.nav_title", ":material/stacks:", "encoder-decoder-blocks"),
    ("model", "pages/08_architecture.py", "arch.nav_title", ":material/account_tree:", "whole-transformer"),
)

# One thread: on a 2-core machine two torch threads made training ~100x slower while the other core was busy.
torch.set_num_threads(1)
state.init()
st.set_page_config(page_title=t("app.title"), page_icon=":material/hub:", layout="wide",
                   initial_sidebar_state="expanded")


def navigation() -> dict[str, list[st.Page]]:
    """{translated section title: [pages]} in `SECTIONS` order; empty sections are left out."""
    sections: dict[str, list[st.Page]] = {}
    for section in SECTIONS:
        pages = [st.Page(ROOT / path, title=t(title_key), icon=icon, url_path=url)
                 for page_section, path, title_key, icon, url in PAGES if page_section == section]
        if pages:
            sections[t(f"nav.{section}")] = pages
    return sections


page = st.navigation(navigation(), position="sidebar")
with st.sidebar:
    st.markdown(f"### {t('app.title')}")
state.sidebar()
with st.sidebar:
    st.caption(t("app.sidebar_caption"))
page.run()
