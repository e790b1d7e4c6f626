"""Softmax saturation: why unscaled dot products starve attention of gradient (lesson 2).

The softmax p = softmax(s) of one row of scores has the Jacobian ∂p_i/∂s_j = p_i (δ_ij - p_j), that is
diag(p) - p pᵀ. When p is nearly one-hot every entry is nearly 0, so almost no gradient flows back from
the weights to the scores, and through them to Q, K, W_Q and W_K.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import torch

from .analysis import entropy, scaling_experiment
from ..attention import softmax


def softmax_jacobian(scores: torch.Tensor) -> torch.Tensor:
    """∂softmax(s)_i / ∂s_j for one row of scores, by torch autograd: (n,) -> (n, n)."""
    return torch.autograd.functional.jacobian(softmax, scores)  # (n, n)


def softmax_jacobian_formula(weights: torch.Tensor) -> torch.Tensor:
    """The same Jacobian in closed form from the weights p = softmax(s): diag(p) - p pᵀ. (n,) -> (n, n)."""
    return torch.diag(weights) - weights[:, None] * weights[None, :]  # (n, n)


def entropy_by_d_k(d_ks: Sequence[int], n_keys: int = 10, seed: int = 0,
                   draws: int = 16) -> tuple[torch.Tensor, torch.Tensor]:
    """Mean entropy (nats) of softmax(q·k) and of softmax(q·k / sqrt(d_k)) for each d_k in `d_ks`.

    Each of `draws` runs of `scaling_experiment` draws one unit-variance query and `n_keys` keys; returns
    (without scaling, with scaling), each of shape (len(d_ks),). The maximum possible is log(n_keys).
    """
    raw, scaled = torch.zeros(len(d_ks)), torch.zeros(len(d_ks))  # (len(d_ks),) each
    for i, d_k in enumerate(d_ks):
        runs = [scaling_experiment(d_k, n_keys, seed=seed * draws + r, n_pairs=2) for r in range(draws)]
        raw[i] = torch.stack([entropy(run.raw_weights) for run in runs]).mean()
        scaled[i] = torch.stack([entropy(run.scaled_weights) for run in runs]).mean()
    return raw, scaled


SATURATED = 0.99  # a softmax row whose largest weight is above this is called saturated


def jacobian_size(weights: torch.Tensor) -> torch.Tensor:
    """‖diag(p) − p pᵀ‖ (Frobenius) for each row p of `weights`, in closed form: (..., n) -> (...).

    ‖J‖² = Σ_i (p_i − p_i²)² + Σ_{i≠j} p_i² p_j² = Σ p_i² − 2 Σ p_i³ + (Σ p_i²)²."""
    squares = weights.pow(2).sum(-1)  # (...,)
    return (squares - 2 * weights.pow(3).sum(-1) + squares.pow(2)).clamp_min(0).sqrt()  # (...,)


@dataclass(frozen=True)
class SaturationCurve:
    """For each d_k, over many random queries: the median size of the softmax's Jacobian ‖J‖ and the share of
    saturated rows, without and with the division by sqrt(d_k)."""

    d_ks: tuple[int, ...]
    draws: int
    raw_median: torch.Tensor  # (len(d_ks),)
    scaled_median: torch.Tensor  # (len(d_ks),)
    raw_saturated: torch.Tensor  # (len(d_ks),) share of rows with a weight above SATURATED
    scaled_saturated: torch.Tensor  # (len(d_ks),)


def saturation_by_d_k(d_ks: Sequence[int], n_keys: int = 10, seed: int = 0, draws: int = 256) -> SaturationCurve:
    """`draws` unit-variance queries, each against its own `n_keys` unit-variance keys, for every d_k in `d_ks`;
    the softmax of q·k and of q·k / sqrt(d_k) per query, in float64."""
    medians, shares = torch.zeros(2, len(d_ks), dtype=torch.float64), torch.zeros(2, len(d_ks), dtype=torch.float64)
    for i, d_k in enumerate(d_ks):
        g = torch.Generator().manual_seed(seed)
        q = torch.randn(draws, d_k, generator=g, dtype=torch.float64)  # (draws, d_k)
        keys = torch.randn(draws, n_keys, d_k, generator=g, dtype=torch.float64)  # (draws, n_keys, d_k)
        raw = torch.einsum("rd,rkd->rk", q, keys)  # (draws, n_keys)
        for side, scores in enumerate((raw, raw / math.sqrt(d_k))):
            p = softmax(scores, dim=-1)  # (draws, n_keys)
            medians[side, i] = jacobian_size(p).quantile(0.5)  # the middle two averaged (draws is even)
            shares[side, i] = (p.max(-1).values > SATURATED).double().mean()
    return SaturationCurve(tuple(d_ks), draws, medians[0], medians[1], shares[0], shares[1])
