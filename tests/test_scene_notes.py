"""The numbers that scenes' notes state (assets/i18n, `<section>.scene_note.<name>`), recomputed from core.

A note is static text, so nothing on the page would notice if a change to core made it false: each claim below is
recomputed with the settings of its scene (lessons/*.py SCENES). Notes about training outcomes say "in our
measurements" and are not repeated here (they would train models for minutes).
"""
from __future__ import annotations

import math

import pytest
import torch

from core.config import ModelConfig
from core.model import build_model, count_parameters
from core.norm import LayerNorm
from core.positional import frequency_factor
from core.tasks import make_task
from core.train import PRESETS, model_config
from ui.i18n import lookup


def normalized(x: list[float], style: str, gamma: float = 1.0, beta: float = 0.0) -> torch.Tensor:
    norm = LayerNorm(len(x), style=style)
    with torch.no_grad():
        norm.weight.fill_(gamma)  # γ
        norm.bias.fill_(beta)  # β
        return norm(torch.tensor([x]))[0]


def note(key: str) -> str:
    return lookup(key, "en") + " " + lookup(key, "es")


def test_layer_norm_scenes():
    assert "1.4142" in note("ln.scene_note.gain_shift") and "0.866" in note("ln.scene_note.four_dims")
    shifted = normalized([1.0, -1.0], "annotated", gamma=2.0, beta=0.5)  # gain_shift: 0.5 ± 1.4142
    assert torch.allclose(shifted, torch.tensor([0.5 + 1.4142, 0.5 - 1.4142]), atol=1e-4)
    assert abs(float(normalized([1.0, -1.0], "torch", gamma=2.0, beta=0.5)[0]) - 2.5) < 1e-3  # "about 0.5 ± 2"
    ratio = normalized([1.0, -1.0, 0.0, 0.0], "annotated")[0] / normalized([1.0, -1.0, 0.0, 0.0], "torch")[0]
    assert abs(float(ratio) - math.sqrt(3 / 4)) < 1e-3  # four_dims: √(3/4) ≈ 0.866 (√(1/2) at d = 2)
    assert abs(float(normalized([0.01, -0.01], "annotated")[0]) - 0.7071) < 1e-3  # tiny_pair: still ±0.7071 ...
    assert abs(float(normalized([0.01, -0.01], "torch")[0]) - 0.95) < 0.005  # ... torch falls to about ±0.95


def test_the_papers_base_model_has_about_82_million_parameters():
    assert "82 M" in lookup("arch.scene_note.paper_base", "en")
    cfg = ModelConfig(src_vocab=37_000, tgt_vocab=37_000, d_model=512, n_heads=8, n_layers=6, d_ff=2048,
                      norm_first=False)
    assert round(count_parameters(build_model(cfg))["total"] / 1e6) == 82


def test_big_vocabularies_hold_almost_all_the_parameters():
    cfg = ModelConfig(src_vocab=50_000, tgt_vocab=50_000, d_model=64, n_heads=4, n_layers=2, d_ff=256)
    counts = count_parameters(build_model(cfg))
    assert counts["embeddings"] / counts["total"] > 0.9


def test_the_papers_frequency_factors():
    assert "9646.6" in note("pe.scene_note.paper_waves")
    factors = [float(frequency_factor(i, 512)) for i in (0, 128, 255)]
    assert factors[0] == pytest.approx(1.0) and factors[1] == pytest.approx(100.0, rel=1e-5)
    assert round(factors[2], 1) == 9646.6


@pytest.mark.parametrize("task, millions", [("addition", 4), ("parser", 1.4)])
def test_the_course_presets_sizes(task, millions):
    def size(preset: str) -> int:
        model = PRESETS[task][preset].model
        changes = {k: model[k] for k in ("d_model", "n_heads", "n_layers", "d_ff", "dropout", "norm_first",
                                         "positional")}
        return count_parameters(build_model(model_config(make_task(task), **changes)))["total"]

    course = size("course")
    assert round(course / 1e6, 1 if millions < 2 else 0) == millions
    if task == "addition":
        assert course > 20 * size("fast")  # "more than twenty times the fast preset's model"
