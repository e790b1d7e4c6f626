"""Measurements the attention lessons show: entropy, attention distance, the scaling experiment, toy inputs."""
from __future__ import annotations

import math
import zlib
from dataclasses import dataclass

import torch

from ..attention import scaled_dot_product_attention, softmax
from ..masks import causal_mask
from ..positional import sinusoidal_encoding


def entropy(weights: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Shannon entropy in nats of each distribution along `dim` (0 log 0 counts as 0).

    Uniform over n keys gives log(n); a one-hot row gives 0.
    """
    logs = torch.where(weights > 0, weights.log(), torch.zeros_like(weights))
    return -(weights * logs).sum(dim)


def mean_attention_distance(weights: torch.Tensor) -> torch.Tensor:
    """Average |i - j| under each query's weights: sum_j w_ij |i - j|. (..., n_q, n_k) -> (..., n_q)."""
    n_q, n_k = weights.shape[-2:]
    distance = (torch.arange(n_k)[None, :] - torch.arange(n_q)[:, None]).abs().to(weights)  # (n_q, n_k)
    return (weights * distance).sum(-1)


@dataclass(frozen=True)
class ScalingExperiment:
    """One query against `n_keys` random keys with unit-variance entries, scored with and without 1/sqrt(d_k)."""

    d_k: int
    raw_scores: torch.Tensor  # (n_keys,) q·k
    scaled_scores: torch.Tensor  # (n_keys,) q·k / sqrt(d_k)
    raw_weights: torch.Tensor  # (n_keys,) softmax of the raw scores
    scaled_weights: torch.Tensor  # (n_keys,)
    raw_variance: float  # variance of q·k over many random pairs: about d_k
    scaled_variance: float  # about 1


def scaling_experiment(d_k: int, n_keys: int = 10, seed: int = 0, n_pairs: int = 2000) -> ScalingExperiment:
    """Why divide by sqrt(d_k): dot products of random unit-variance vectors have variance d_k."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(d_k, generator=g)  # (d_k,)
    keys = torch.randn(n_keys, d_k, generator=g)  # (n_keys, d_k)
    raw = keys @ q  # (n_keys,)
    scaled = raw / math.sqrt(d_k)
    a, b = torch.randn(n_pairs, d_k, generator=g), torch.randn(n_pairs, d_k, generator=g)  # (n_pairs, d_k)
    dots = (a * b).sum(-1)  # (n_pairs,)
    return ScalingExperiment(d_k, raw, scaled, softmax(raw), softmax(scaled),
                             dots.var().item(), (dots / math.sqrt(d_k)).var().item())


def token_seed(token: str, seed: int) -> int:
    """A stable integer for (token, seed): the same word gets the same vector in every sentence and process."""
    return zlib.crc32(f"{seed}:{token}".encode("utf-8"))


def toy_embeddings(tokens: list[str], d_model: int, seed: int) -> torch.Tensor:
    """Random but reproducible unit-variance vectors, one per token: (n, d_model). Stand-ins for learned embeddings."""
    rows = [torch.randn(d_model, generator=torch.Generator().manual_seed(token_seed(t, seed))) for t in tokens]
    return torch.stack(rows) if rows else torch.zeros(0, d_model)  # (n, d_model)


def seeded_linear_weights(d_in: int, d_out: int, seed: int) -> torch.Tensor:
    """A (d_in, d_out) projection matrix with variance 1/d_in, so projected vectors keep unit scale."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(d_in, d_out, generator=g) / math.sqrt(d_in)  # (d_in, d_out)


PROJECTIONS = ("Q", "K", "V")


def weight_seeds(seed: int, tied: bool) -> dict[str, int]:
    """W_Q, W_K, W_V get seeds 3s + 1, 3s + 2, 3s + 3: distinct, and fixed by the shared seed s.
    Tied: W_K reuses W_Q's seed, so W_K = W_Q."""
    seeds = {name: 3 * seed + k for k, name in enumerate(PROJECTIONS, start=1)}
    return {**seeds, "K": seeds["Q"]} if tied else seeds


class Recorder:
    """Stands in for a module's hook points: keeps what `scaled_dot_product_attention` passes through them."""

    def __init__(self):
        self.seen: dict[str, torch.Tensor] = {}

    def __getattr__(self, name: str):
        if not name.startswith("hook_"):
            raise AttributeError(name)
        return lambda x: self.seen.setdefault(name.removeprefix("hook_"), x)


def qkv_attention(words: list[str], d_model: int, d_k: int, seed: int, causal: bool, tied: bool,
                  device: str = "cpu") -> dict[str, torch.Tensor]:
    """One head of lesson 2 on `device` (float64; float32 on MPS): X = E + PE (n, d_model), the seeded
    projections W (d_model, d_k), Q, K, V (n, d_k), S = Q Kᵀ, its scaled and masked forms and the weights A
    (n, n), the output O (n, d_k), and the asymmetry D = S − Sᵀ."""
    dtype = torch.float32 if device == "mps" else torch.float64
    n = len(words)
    x = (toy_embeddings(words, d_model, seed) + sinusoidal_encoding(n, d_model)).to(device, dtype)  # (n, d_model)
    w = {name: seeded_linear_weights(d_model, d_k, s).to(device, dtype)
         for name, s in weight_seeds(seed, tied).items()}  # (d_model, d_k) each
    q, k, v = (x @ w[name] for name in PROJECTIONS)  # (n, d_k) each
    mask = causal_mask(n, device) if causal else None  # (n, n), True = keep
    hooks = Recorder()
    out, weights = scaled_dot_product_attention(q, k, v, mask, hooks=hooks)  # (n, d_k), (n, n)
    raw = q @ k.T  # (n, n), before the division by sqrt(d_k)
    return {"X": x, "W_Q": w["Q"], "W_K": w["K"], "W_V": w["V"], "Q": q, "K": k, "V": v, "S": raw,
            "S_scaled": hooks.seen["scores"], "S_masked": hooks.seen["masked_scores"], "A": weights, "O": out,
            "D": raw - raw.T}
