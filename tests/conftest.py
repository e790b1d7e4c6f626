"""Shared test set-up: the project root on sys.path and one torch thread (see README, "Threads")."""
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

torch.set_num_threads(1)


def widget(at, kind: str, key: str):
    """The AppTest widget of `kind` ("selectbox", "slider", ...) bound under `key`.

    ui.state.bind appends a hash of the options to the key of a widget whose options change, so the key on
    screen is `key` or `key_<8 hex digits>`.
    """
    import re

    pattern = re.compile(re.escape(key) + r"(_[0-9a-f]{8})?")
    found = [w for w in getattr(at, kind) if w.key and pattern.fullmatch(w.key)]
    assert len(found) == 1, f"expected one {kind} bound to {key!r}, found {[w.key for w in found]}"
    return found[0]


def start_page(path, *, lang: str = "en", numbers: bool = True, state: dict | None = None,
               query: dict | None = None, lesson: str | None = None):
    """Run `path` (app.py or one page) through AppTest with the given settings and session state.

    With `query`, the settings come from the URL instead of `lang`. With `lesson` (a page file relative to the
    project root), app.py runs first and then switches to it, as the sidebar link does (a switch before the
    first run would run the page without the frame).
    """
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(path), default_timeout=60)
    at.session_state["cfg_show_numbers"] = numbers
    if query is None:
        at.session_state["cfg_lang"] = lang
    else:
        at.query_params.update(query)
    for name, value in (state or {}).items():
        at.session_state[name] = value
    at.run()
    if lesson is not None:
        at.switch_page(lesson).run()
    return at
