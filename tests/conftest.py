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
