"""Where tensors live: the CPU by default (the lessons' tensors are small), CUDA or Apple's MPS on request."""
from __future__ import annotations

import numpy as np
import torch


def available_devices() -> list[str]:
    """Devices this machine can run on, best first."""
    devices = []
    if torch.cuda.is_available():
        devices.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        devices.append("mps")
    return devices + ["cpu"]


def default_device() -> str:
    """The CPU: a lesson's matrices hold a few thousand numbers, so a GPU's kernel launches and copies cost more
    than they save, and its first step also pays for starting the GPU runtime."""
    return "cpu"


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """`x` as a numpy array on the CPU, whatever device it lives on: floats as float64, other dtypes as they are.
    The one way out of torch for a chart or a table (``.numpy()`` on a GPU tensor raises)."""
    x = x.detach().cpu()
    return (x.double() if x.is_floating_point() else x).numpy()
