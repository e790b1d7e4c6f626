"""Merge translation keys into both catalogs: ``python -m scripts.catalog PART.json [PART.json ...]``.

A part is ``{"en": {"section": {"key": "text", ...}}, "es": {...}}`` with the same keys in both languages.
The merge holds a lock on the catalog folder, so several people (or helpers) can add keys at once without
losing each other's; existing keys are overwritten by the part's. The files are rewritten with indent 2,
UTF-8 and a trailing newline, as the rest of the project expects.
"""
from __future__ import annotations

import fcntl
import json
import sys
from pathlib import Path

CATALOG_DIR = Path(__file__).resolve().parents[1] / "assets" / "i18n"
LANGUAGES = ("en", "es")


def deep_merge(into: dict, part: dict) -> dict:
    for name, value in part.items():
        if isinstance(value, dict) and isinstance(into.get(name), dict):
            deep_merge(into[name], value)
        else:
            into[name] = value
    return into


def merge(part: dict) -> None:
    if sorted(part) != sorted(LANGUAGES):
        raise SystemExit(f"a part needs exactly the languages {LANGUAGES}, got {sorted(part)}")
    with open(CATALOG_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for lang in LANGUAGES:
            path = CATALOG_DIR / f"{lang}.json"
            catalog = deep_merge(json.loads(path.read_text("utf-8")), part[lang])
            path.write_text(json.dumps(catalog, indent=2, ensure_ascii=False) + "\n", "utf-8")


def main(paths: list[str]) -> int:
    for path in paths:
        merge(json.loads(Path(path).read_text("utf-8")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
