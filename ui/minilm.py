"""The pretrained MiniLM-L6 that lessons 13 and 15 read, loaded once per process (about 90 MB) and shared."""
import threading

import streamlit as st

from core import pretrained


@st.cache_resource(show_spinner=False)
def minilm():
    """(model, tokenizer, lock): MiniLM-L6 in eval mode with gradients off, shared read-only by every session
    and both lessons. Fine-tuning trains copies of its layers, never these. The lock serialises whatever attaches
    hooks to the shared modules or runs them for a long time, so two sessions never trace at once."""
    return pretrained.load_model(), pretrained.load_tokenizer(), threading.Lock()
