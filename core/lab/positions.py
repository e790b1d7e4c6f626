"""Lesson 5's experiments on position information: attention on a reordered sentence, an untrained learned table,
the offset property of PE·PEᵀ, the √d_model scaling of the embeddings, and rotary embeddings (RoPE).

Every random draw takes the shared seed; weights and token vectors are seeded stand-ins for trained ones.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from ..attention import scaled_dot_product_attention
from ..positional import LearnedPositionalEncoding, apply_rotary, frequency_factor, sinusoidal_encoding
from .analysis import seeded_linear_weights


def permutation(n: int, kind: str, seed: int) -> list[int]:
    """New order of the n tokens: "reversed", or a seeded shuffle that is never the identity (n >= 2)."""
    if kind == "reversed":
        return list(range(n))[::-1]
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    return order[1:] + order[:1] if order == sorted(order) else order


def attend(x: torch.Tensor, weights: list[torch.Tensor]) -> torch.Tensor:
    """Self-attention of the rows of x (n, d) with the projections W_Q, W_K, W_V (d, d): (n, d)."""
    w_q, w_k, w_v = weights
    out, _ = scaled_dot_product_attention(x @ w_q, x @ w_k, x @ w_v)  # (n, d)
    return out


def both_orders(x: torch.Tensor, order: list[int], seed: int) -> tuple[dict, dict]:
    """Attention outputs of x (n, d) in its order and in `order`, without ("plain") and with ("pe") the sinusoidal
    encoding, and the largest gap between them once the moved output is put back in the original order."""
    n, d = x.shape
    pe_n = sinusoidal_encoding(n, d).to(x.device, x.dtype)  # (n, d)
    weights = [seeded_linear_weights(d, d, seed + j).to(x.device, x.dtype) for j in (1, 2, 3)]  # (d, d) each
    back = torch.argsort(torch.tensor(order, device=x.device))  # undoes the permutation
    outs, gaps = {}, {}
    for name, add in (("plain", torch.zeros_like(pe_n)), ("pe", pe_n)):  # (n, d) each
        outs[name] = (attend(x + add, weights), attend(x[order] + add, weights))  # (n, d), (n, d)
        gaps[name] = float((outs[name][1][back] - outs[name][0]).abs().max())
    return outs, gaps


def learned_table(length: int, d: int, seed: int) -> LearnedPositionalEncoding:
    """An untrained table of `length` positions: seeded standard normal values stand in for the trained ones."""
    table = LearnedPositionalEncoding(d, length)
    with torch.no_grad():
        table.weight.copy_(torch.randn(length, d, generator=torch.Generator().manual_seed(seed + 4)))  # (L, d)
    return table


def frequency_rows(pairs: list[int], d: int) -> dict[str, list[float] | np.ndarray]:
    """For each pair i of dimensions (2i, 2i+1): the exponent 2i/d_model, the frequency factor 10000^(2i/d_model)
    (float64) and the wavelength 2π · factor, in positions."""
    factor = frequency_factor(torch.tensor(pairs, dtype=torch.int64), d).numpy()  # (pairs,) float64
    return {"exponent": [2 * i / d for i in pairs], "factor": factor, "wavelength": 2 * math.pi * factor}


def offset_dots(P: int, d: int, k: int, starts: tuple[int, ...]) -> dict:
    """PE·PEᵀ for P positions (P, P) in float64, the dot products PE_p · PE_(p+k) for the `starts` p that fit,
    the closed form Σ_i cos(k ω_i) over the complete (sin, cos) pairs, and the spread of PE_p · PE_(p+k) over
    every p (0 up to rounding: the dot product depends on k only)."""
    pe = sinusoidal_encoding(P, d).double()  # (P, d)
    dots = pe @ pe.T  # (P, P)
    omega = 1.0 / frequency_factor(torch.arange(d // 2), d)  # (d // 2,) float64
    along = dots.diagonal(k)  # (P - k,): PE_p · PE_(p+k) for every p
    fits = [p for p in starts if p + k < P]
    return {"dots": dots.numpy(), "p": fits, "at_p": [float(dots[p, p + k]) for p in fits],
            "formula": float(torch.cos(k * omega).sum()), "spread": float(along.max() - along.min())}


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Cosine of each row of `a` with the same row of `b`: (n, d), (n, d) -> (n,)."""
    return (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))


def scale_rows(vectors: np.ndarray) -> dict[str, np.ndarray]:
    """Why √d_model: an embedding row E at the usual initial scale (std 1/√d), given as `vectors` / √d for seeded
    unit-variance `vectors` (n, d), against PE. Per row: ‖E‖, ‖√d·E‖, ‖PE‖, and the cosine of E + PE and of
    √d·E + PE with E (how much of the token survives the sum)."""
    n, d = vectors.shape
    small = vectors / math.sqrt(d)  # (n, d)
    scaled = math.sqrt(d) * small  # (n, d)
    pe = sinusoidal_encoding(n, d).double().numpy()  # (n, d)
    norm = lambda m: np.linalg.norm(m, axis=1)  # noqa: E731
    return {"E": norm(small), "scaled_E": norm(scaled), "PE": norm(pe),
            "cos_plain": cosines(small + pe, small), "cos_scaled": cosines(scaled + pe, small)}


@dataclass(frozen=True)
class Rotary:
    """A seeded q and k (d_k,), turned to every position (P, d_k), their scores q'_p · k'_r (P, P), and the
    additive alternative (q + PE_p) · (k + PE_r) (P, P)."""

    q: torch.Tensor
    k: torch.Tensor
    q_rot: torch.Tensor
    k_rot: torch.Tensor
    scores: np.ndarray
    added: np.ndarray

    def pair(self, i: int, steps: list[int], k: int) -> list[tuple[float, float]]:
        """Dimensions (2i, 2i+1) of q at the positions `steps`, then of k at those positions plus k."""
        return [tuple(self.q_rot[p, 2 * i: 2 * i + 2].tolist()) for p in steps] + \
               [tuple(self.k_rot[p + k, 2 * i: 2 * i + 2].tolist()) for p in steps]


def rotary(P: int, d_rope: int, seed: int, device: str = "cpu") -> Rotary:
    """RoPE on a seeded q and k (core.positional.apply_rotary on `device`), P positions."""
    g = torch.Generator().manual_seed(seed + 5)
    q, k = torch.randn(d_rope, generator=g), torch.randn(d_rope, generator=g)  # (d_k,) each
    q_rot = apply_rotary(q.expand(P, d_rope).to(device)).cpu()  # (P, d_k): row p is q at position p
    k_rot = apply_rotary(k.expand(P, d_rope).to(device)).cpu()  # (P, d_k)
    pe = sinusoidal_encoding(P, d_rope).double()  # (P, d_k)
    return Rotary(q, k, q_rot, k_rot, (q_rot.double() @ k_rot.double().T).numpy(),  # (P, P): q row, k column
                  ((q.double() + pe) @ (k.double() + pe).T).numpy())  # (P, P)
