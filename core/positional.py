"""Positional information: sinusoidal (the paper), learned, and rotary (RoPE).

Attention is permutation-equivariant, so position has to be put in. Sinusoidal and learned
encodings are added to the (scaled) token embeddings; rotary rotates q and k inside attention.
"""
from __future__ import annotations

import math

import torch
from torch import nn

BASE = 10000.0  # the paper's base for the wavelengths


def frequency_factor(i: int | torch.Tensor, d_model: int) -> torch.Tensor:
    """10000^(2i / d_model): the divisor of the position in dimensions 2i and 2i+1 (wavelength / 2π)."""
    return torch.as_tensor(BASE, dtype=torch.float64) ** (2 * torch.as_tensor(i, dtype=torch.float64) / d_model)


def sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(pos / 10000^(2i/d)). Shape (max_len, d)."""
    position = torch.arange(max_len, dtype=torch.float32)[:, None]  # (max_len, 1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(BASE) / d_model))  # (ceil(d/2),)
    angles = position * div_term  # (max_len, ceil(d/2))
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles[:, : d_model // 2])
    return pe  # (max_len, d_model)


def create_fixed_positional_encoding(dim: int, max_len: int) -> torch.Tensor:
    """The course's name for the sinusoidal table, with a leading batch axis: (1, max_len, dim)."""
    return sinusoidal_encoding(max_len, dim)[None]


def index_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The naive idea: add the position index itself to every dimension. Grows without bound."""
    return torch.arange(max_len, dtype=torch.float32)[:, None].expand(max_len, d_model).clone()  # (max_len, d)


class SinusoidalPositionalEncoding(nn.Module):
    """Adds the fixed sinusoidal table; no parameters (a buffer that is not saved)."""

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        self.register_buffer("pe", sinusoidal_encoding(max_len, d_model), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pe[: x.shape[-2]]  # (n, d_model), broadcasts over the batch


class LearnedPositionalEncoding(nn.Module):
    """A (max_len x d_model) table of trained vectors: cannot represent positions past max_len."""

    def __init__(self, d_model: int, max_len: int):
        super().__init__()
        self.weight = nn.Parameter(torch.zeros(max_len, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        n = x.shape[-2]
        if n > self.weight.shape[0]:
            raise ValueError(f"sequence of {n} tokens is longer than the learned table ({self.weight.shape[0]})")
        return self.weight[:n]  # (n, d_model)


def rotary_angles(n: int, d: int, device=None) -> torch.Tensor:
    """Angle pos / 10000^(2i/d) for every position and pair of dimensions: (n, d // 2)."""
    position = torch.arange(n, dtype=torch.float32, device=device)[:, None]  # (n, 1)
    inv_freq = BASE ** (-torch.arange(0, d - 1, 2, dtype=torch.float32, device=device) / d)  # (d // 2,)
    return position * inv_freq  # (n, d // 2)


def apply_rotary(x: torch.Tensor) -> torch.Tensor:
    """RoPE: rotate each pair (x[2i], x[2i+1]) of position p by the angle p / 10000^(2i/d).

    For q at position p and k at position r, q·k then depends on p - r only. Shape (..., n, d) kept;
    with an odd d the last dimension is left unrotated.
    """
    n, d = x.shape[-2], x.shape[-1]
    angles = rotary_angles(n, d, x.device)  # (n, d // 2)
    cos, sin = angles.cos(), angles.sin()
    even, odd = x[..., 0 : 2 * (d // 2) : 2], x[..., 1 : 2 * (d // 2) : 2]  # (..., n, d // 2) each
    rotated = torch.stack((even * cos - odd * sin, even * sin + odd * cos), dim=-1)  # (..., n, d // 2, 2)
    out = rotated.flatten(-2)  # (..., n, 2 * (d // 2))
    return torch.cat((out, x[..., 2 * (d // 2) :]), dim=-1)  # (..., n, d)
