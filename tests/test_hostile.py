"""Attacks on a public server, kept as regressions: hostile checkpoint uploads and hostile links.

Uploads: every kind of broken or hostile file (generated here) is refused by `core.checkpoints` with a
ValueError before a model is built, and a decompression bomb costs no memory (measured in a subprocess);
through the lesson, the upload gets the translated "not a checkpoint of this app" message, never an exception.
Links: every lesson opened with hostile values in every parameter it writes (deep nesting, long text, wrong
types) shows no exception; tables from links obey the editor's own label limit; text boxes have a max_chars.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import torch
from conftest import start_page

from core.checkpoints import load_checkpoint
from ui import limits
from ui.i18n import t
from ui.lessons import PAGES

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
SHIPPED = ROOT / "assets" / "checkpoints" / "parser.pt"


def saved(data) -> io.BytesIO:
    buffer = io.BytesIO()
    torch.save(data, buffer)
    buffer.seek(0)
    return buffer


def shipped() -> dict:
    return torch.load(SHIPPED, weights_only=True)


def deflated(data: io.BytesIO) -> io.BytesIO:
    """The same archive with every record deflated (what a bomb is made of)."""
    out = io.BytesIO()
    with zipfile.ZipFile(data) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            target.writestr(info.filename, source.read(info))
    out.seek(0)
    return out


def with_changes(**changes) -> dict:
    data = shipped()
    for dotted, value in changes.items():
        node, *path, last = [data, *dotted.split("__")]
        for part in path:
            node = node[part]
        node[last] = value
    return data


HOSTILE = {
    "huge d_model": lambda: saved(with_changes(config__d_model=2048, config__d_ff=8192)),
    "2000 layers": lambda: saved(with_changes(config__n_layers=2000)),
    "d_model 1e6": lambda: saved(with_changes(config__d_model=10**6)),
    "float length": lambda: saved(with_changes(config__max_len=6.5)),
    "bool size": lambda: saved(with_changes(config__n_layers=True)),
    "unknown config key": lambda: saved(with_changes(config__evil=1)),
    "config not a dict": lambda: saved(with_changes(config=[1, 2])),
    "metrics not a dict": lambda: saved(with_changes(metrics=[1])),
    "task options float": lambda: saved(with_changes(task__options={"spaces": 0.5, "holdout": 0.1})),
    "unknown task option": lambda: saved(with_changes(task__options={"depth": 3})),
    "weights of another shape": lambda: saved(with_changes(config__d_ff=128)),
    "not a zip": lambda: io.BytesIO(b"\x80\x04K\x01." * 100),
    "deflated records": lambda: deflated(saved(shipped())),
    "empty file": lambda: io.BytesIO(b""),
}


@pytest.mark.parametrize("kind", HOSTILE)
def test_a_hostile_checkpoint_is_refused_before_a_model_is_built(kind):
    with pytest.raises(ValueError):
        load_checkpoint(HOSTILE[kind](), limits=limits.MODEL_LIMITS, max_bytes=limits.MAX_CHECKPOINT_BYTES)


def test_the_shipped_checkpoints_pass_the_upload_checks():
    for path in sorted((ROOT / "assets" / "checkpoints").glob("*.pt")):
        load_checkpoint(path, limits=limits.MODEL_LIMITS, max_bytes=limits.MAX_CHECKPOINT_BYTES)


def test_records_larger_than_allowed_are_refused_unread():
    data = saved({"format": "x", "blob": torch.zeros(2**20)})  # 4 MB of stored records
    with pytest.raises(ValueError, match="more than"):
        load_checkpoint(data, max_bytes=2**20)


BOMB = """
import io, resource, sys, zipfile
sys.path.insert(0, {root!r})
import torch
from core.checkpoints import load_checkpoint
buffer = io.BytesIO()
torch.save({{"format": "transformer-explainer-checkpoint/1", "blob": torch.zeros(2**28, dtype=torch.uint8)}}, buffer)
bomb = io.BytesIO()
with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as source, zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as target:
    for info in source.infolist():
        target.writestr(info.filename, source.read(info))
del buffer, source
bomb = io.BytesIO(bomb.getvalue())
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    load_checkpoint(bomb)
except ValueError:
    pass
print(bomb.getbuffer().nbytes, (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


def test_a_decompression_bomb_costs_no_memory():
    """A 256 MB record deflated to well under a megabyte: refused before anything is inflated."""
    done = subprocess.run([sys.executable, "-c", BOMB.format(root=str(ROOT))], capture_output=True, text=True,
                          timeout=300, check=True)
    size, grown = map(int, done.stdout.split())
    assert size < 2 * 2**20, size
    assert grown < 50 * 2**20, f"loading the bomb grew the peak memory by {grown / 2**20:.0f} MB"


@pytest.mark.parametrize("kind", ["2000 layers", "deflated records", "metrics not a dict", "unknown task option"])
def test_an_upload_through_the_lesson_gets_the_polite_message(kind):
    at = start_page(APP, lesson="lessons/09_training.py", numbers=False)
    at.file_uploader(key="train_upload").set_value(("evil.pt", HOSTILE[kind]().getvalue(), "application/octet-stream"))
    at.run()
    assert not at.exception, [e.value[:300] for e in at.exception]
    assert [e.value for e in at.error] == [t("train.upload_not_ours", name="evil\\.pt")]
    assert "train_run" not in at.session_state or at.session_state["train_run"] is None


# ---- links ------------------------------------------------------------------------------------------------

TABLES = ("sim_vectors", "ln_x", "dec_toy")  # the editors' parameters: in a link only when edited
HOSTILE_VALUES = {"nesting": "[" * 1000, "long": "x" * 100_000, "number": "-1e999", "not a number": "NaN",
                  "object": json.dumps({"a": [1, {"b": None}]}), "table": json.dumps([["w" * 60_000, 1.0, 2.0]])}


@pytest.mark.parametrize("lesson", [path for _, path, *_ in PAGES])
def test_hostile_link_values_never_raise(lesson):
    names = set(start_page(APP, lesson=lesson, numbers=False).query_params) | {"scene", *TABLES}
    for kind, value in HOSTILE_VALUES.items():
        at = start_page(ROOT / lesson, query={**{name: value for name in names}, "lang": "es"})  # the lesson alone
        # reads its link (through app.py the start page would take it first)
        assert not at.exception, f"{kind}: {[e.value[:300] for e in at.exception]}"
        for table in TABLES:  # a link's table obeys the editor's label limit
            assert all(len(label) <= 24 for label in at.session_state[f"{table}_table"].iloc[:, 0]) \
                if f"{table}_table" in at.session_state else True


@pytest.mark.parametrize("lesson", [path for _, path, *_ in PAGES])
def test_every_text_box_has_a_length_limit(lesson):
    at = start_page(APP, lesson=lesson, numbers=False)
    for box in [*at.text_input, *at.text_area]:
        assert box.max_chars, f"{box.key} has no max_chars: a link could carry any length"
