"""Lesson 6's layer normalization, read step by step: `core.LayerNorm` in each style with one γ and one β, through
its hook points (mean, std, normalized), on a small matrix of token vectors."""
from __future__ import annotations

import numpy as np
import torch

from ..device import to_numpy
from ..hooks import trace
from ..norm import STYLES, LayerNorm


def traced_layer_norm(x: np.ndarray, style: str, gamma: float, beta: float, device: str = "cpu") -> dict:
    """core.LayerNorm(d, style) with γ and β on every dimension applied to x (n, d) on `device` (float64; float32
    on MPS): mean (n, 1), std (n, 1), normalized (n, d) and out (n, d), as float64 numpy."""
    dtype = torch.float32 if device == "mps" else torch.float64
    norm = LayerNorm(x.shape[1], style).to(device=device, dtype=dtype)
    with torch.no_grad():
        norm.weight.fill_(gamma)
        norm.bias.fill_(beta)
        xt = torch.tensor(x, dtype=dtype, device=device)  # (n, d)
        out, seen = trace(norm, lambda: norm(xt))  # (n, d), {"hook_mean": (n, 1), ...}
    found = {name.removeprefix("hook_"): v for name, v in seen.items()} | {"out": out}
    return {name: to_numpy(v) for name, v in found.items()}


def both_styles(x: np.ndarray, gamma: float, beta: float, device: str = "cpu") -> dict[str, dict]:
    """`traced_layer_norm` in every style that applies: the annotated style divides by d - 1, so it needs d >= 2."""
    return {style: traced_layer_norm(x, style, gamma, beta, device) for style in STYLES
            if style == "torch" or x.shape[1] >= 2}


def constant_rows(x: np.ndarray) -> list[int]:
    """Rows of x (n, d >= 2) whose values are all equal: x − μ is 0, so x̂ is 0 and the output is β."""
    return [i for i in range(x.shape[0]) if x.shape[1] >= 2 and np.ptp(x[i]) == 0]
