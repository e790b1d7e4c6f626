"""Where tensors live: CUDA if there is one, else Apple's MPS, else the CPU."""
from __future__ import annotations

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
    return available_devices()[0]
