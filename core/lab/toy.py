"""Seeded toy modules for the lessons: the same seed gives the same weights, and the global random state is left
as it was (Streamlit reruns a page on every change, so a draw from the global generator would make an unrelated
slider redraw the weights)."""
from __future__ import annotations

from typing import Callable

import torch
from torch import nn

from ..model import init_parameters


def seeded(factory: Callable[[], nn.Module], seed: int, device: str = "cpu") -> nn.Module:
    """``factory()`` with ``core.init_parameters``' weights for `seed`, on `device`, in eval mode. The
    constructor's own random draws happen inside ``fork_rng``, so the global generator does not move."""
    with torch.random.fork_rng(devices=[]):
        module = factory()
    return init_parameters(module, seed).to(device).eval()
