"""Softmax saturation: why unscaled dot products starve attention of gradient (lesson 2).

The softmax p = softmax(s) of one row of scores has the Jacobian ∂p_i/∂s_j = p_i (δ_ij - p_j), that is
diag(p) - p pᵀ. When p is nearly one-hot every entry is nearly 0, so almost no gradient flows back from
the weights to the scores, and through them to Q, K, W_Q and W_K.
"""
from __future__ import annotations

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
