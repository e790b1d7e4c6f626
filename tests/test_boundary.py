"""The layers import one way: app.py -> lessons/ -> ui/ -> core/ (see README, "File map").

`core` must stay usable without any UI library (a notebook, a training script, a test), so it never
imports streamlit, altair, pandas, ui or lessons; `ui` is shared by the lessons and never imports one.
"""
from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
UI_LIBRARIES = ("streamlit", "altair", "pandas")
FORBIDDEN = {"core": UI_LIBRARIES + ("ui", "lessons", "app"), "ui": ("lessons", "app")}

_IMPORT_CORE = """
import importlib, json, pkgutil, sys
import core
after_core = sorted(sys.modules)
for info in pkgutil.walk_packages(core.__path__, "core."):
    importlib.import_module(info.name)
print(json.dumps({"core": after_core, "submodules": sorted(sys.modules)}))
"""


def imported_modules(source: str, module: str) -> set[str]:
    """Absolute names of every module `source` (the module named `module`) imports, relative imports resolved.

    ``from a import b`` yields both ``a`` and ``a.b`` (b may be a submodule).
    """
    package = module.split(".")[:-1]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            prefix = base + ([node.module] if node.module else [])
            if prefix:
                names.add(".".join(prefix))
            names.update(".".join(prefix + [alias.name]) for alias in node.names)
    return names


def violations(source: str, module: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(name for name in imported_modules(source, module)
                  if name.split(".")[0] in forbidden)


def modules_of(package: str) -> dict[str, Path]:
    files = sorted((ROOT / package).rglob("*.py"))
    return {".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__"): path
            for path in files}


def test_the_checker_sees_every_kind_of_import():
    source = "import streamlit as st\nimport pandas.api\nfrom altair import Chart\nfrom . import norm\n"
    assert violations(source, "core.sub.mod", FORBIDDEN["core"]) == ["altair", "altair.Chart", "pandas.api",
                                                                      "streamlit"]
    assert imported_modules("from .masks import apply_mask", "core.attention") == {"core.masks",
                                                                                 "core.masks.apply_mask"}
    assert violations("from lessons import lesson", "ui.charts", FORBIDDEN["ui"]) == ["lessons", "lessons.lesson"]
    assert violations("from .. import lessons", "ui.charts", FORBIDDEN["ui"]) == ["lessons"]
    assert violations("from ..core import attention", "ui.sub.charts", FORBIDDEN["ui"]) == []
    assert violations("import core\nfrom core.masks import causal_mask", "ui.charts", FORBIDDEN["ui"]) == []


def test_core_and_ui_import_only_downwards():
    core_modules = modules_of("core")
    assert "core" in core_modules and len(core_modules) > 3, core_modules
    found = {}
    for package, forbidden in FORBIDDEN.items():
        for module, path in modules_of(package).items():
            bad = violations(path.read_text(encoding="utf-8"), module, forbidden)
            if bad:
                found[str(path.relative_to(ROOT))] = bad
    assert not found, f"imports against the layering: {found}"


def test_importing_core_loads_no_ui_library():
    result = subprocess.run([sys.executable, "-c", _IMPORT_CORE], cwd=ROOT, capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    for stage, modules in loaded.items():
        tops = {name.split(".")[0] for name in modules}
        assert "core" in tops and "torch" in tops, tops
        assert tops.isdisjoint(UI_LIBRARIES + ("ui", "lessons")), (stage, sorted(tops & set(UI_LIBRARIES)))
