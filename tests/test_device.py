"""Every lesson honours the device setting, checked without a GPU: with a fake GPU (tests/fake_gpu.py) chosen in
the sidebar, a tensor sent to it stays on the CPU as `OnGpu`, which refuses .numpy() before .cpu() and any
operation that mixes it with a CPU tensor, as a real GPU does. Each lesson runs at its defaults on that device."""
from __future__ import annotations

from pathlib import Path

import pytest
import torch

import core
from conftest import start_page
from fake_gpu import OnGpu, fake_gpu
from ui.lessons import PAGES

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def gpu(monkeypatch):
    with fake_gpu(monkeypatch):
        monkeypatch.setattr(core, "available_devices", lambda: ["cuda", "cpu"])
        yield


def test_the_fake_gpu_refuses_what_a_real_one_refuses(gpu):
    layer = torch.nn.Linear(4, 2).to("cuda")
    x = torch.randn(3, 4)  # (3, 4) on the CPU
    assert isinstance(layer.weight, OnGpu)
    with pytest.raises(AssertionError, match="mixes"):
        layer(x)
    y = layer(x.to("cuda"))  # (3, 2) on the GPU
    with pytest.raises(AssertionError, match="numpy"):
        y.detach().numpy()
    assert core.to_numpy(y).shape == (3, 2) and not isinstance(y.cpu(), OnGpu)


@pytest.mark.parametrize("path", [p for _, p, *_ in PAGES], ids=lambda p: Path(p).stem)
def test_every_lesson_runs_on_the_chosen_device(gpu, path):
    at = start_page(ROOT / "app.py", state={"cfg_device": "cuda"}, lesson=path)
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["cfg_device"] == "cuda"
