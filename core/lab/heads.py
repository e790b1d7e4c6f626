"""Lesson 4's multi-head computation: one seeded `core.MultiHeadAttention` on a toy sentence, read through its
hook points, with every intermediate shape and the per-head measurements the lesson shows.

X (1, n, d_model) -> Q, K, V split into h heads (1, h, n, d_k) -> attention per head -> concat (1, n, d_model)
-> W_O.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from .. import hooks
from ..attention import MultiHeadAttention
from ..device import to_numpy
from ..masks import mask_of_kind
from ..tasks import PAD_ID
from ..positional import sinusoidal_encoding
from .analysis import entropy, mean_attention_distance, toy_embeddings
from .toy import seeded

BIAS = 0.5  # biases from U(-BIAS, BIAS) (init_parameters zeroes them): a query bias gives a head a favourite key
ARRAYS = ("q", "k", "v", "scores", "masked_scores", "weights", "heads")  # hook points read per head


def sentence_ids(tokens: tuple[str, ...], n_pad: int) -> torch.Tensor:
    """Ids from the sentence's own little vocabulary (0-2 are core's PAD, BOS, EOS), then n_pad PADs: (1, n)."""
    vocab = {word: k + 3 for k, word in enumerate(dict.fromkeys(tokens))}
    return torch.tensor([[vocab[w] for w in tokens] + [PAD_ID] * n_pad])  # (1, n)


def seeded_attention(d_model: int, heads: int, seed: int, device: str = "cpu") -> MultiHeadAttention:
    """The real module: Xavier weights from `seed` (core.init_parameters), then biases from U(-BIAS, BIAS) drawn in
    parameter order with a generator seeded with seed + 1. The global random state is left alone."""
    module = seeded(lambda: MultiHeadAttention(d_model, heads), seed)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-BIAS, BIAS, generator=generator)
    return module.to(device)


def attention_steps(x: torch.Tensor, heads: int, seed: int, mask: torch.Tensor | None) -> dict[str, torch.Tensor]:
    """Self-attention of `x` (b, n, d_model) through a seeded `MultiHeadAttention` (Xavier weights, zero biases) on
    x's device; every hook point's tensor by its name without "hook_" (q, k, v, scores, masked_scores, weights,
    heads, out: (b, h, n, ·) per head)."""
    module = seeded(lambda: MultiHeadAttention(x.shape[-1], heads), seed, str(x.device))
    with torch.no_grad():
        _, cache = hooks.trace(module, lambda: module(x, x, x, mask))
    return {name.removeprefix("hook_"): value for name, value in cache.items()}


@dataclass(frozen=True)
class BatchAttention:
    """A ragged batch padded, masked and attended (lesson 3)."""

    sentences: list[list[str]]  # as given
    tokens: list[list[str]]  # padded to the longest with the PAD label
    ids: torch.Tensor  # (batch, n), PAD_ID where padded
    mask: torch.Tensor | None  # the mask kind's boolean mask, broadcasting to (batch, h, n, n)
    steps: dict[str, torch.Tensor]  # `attention_steps` of the batch

    @property
    def keep(self) -> torch.Tensor:
        """The mask as each sentence sees it, all True for no mask: (batch, n, n)."""
        batch, n = self.ids.shape
        keep = torch.ones(batch, 1, n, n, dtype=torch.bool, device=self.ids.device)  # (batch, 1, n, n)
        return (keep if self.mask is None else keep & self.mask)[:, 0]  # (batch, n, n)


def batch_attention(sentences: list[list[str]], pad: str, d_model: int, heads: int, seed: int, mask_kind: str,
                    device: str = "cpu") -> BatchAttention:
    """Pad the sentences (PAD_ID, shown as `pad`), build the mask of `mask_kind`, and run seeded self-attention on
    the toy embeddings of the padded tokens (a PAD gets the toy vector of `pad`)."""
    n = max(map(len, sentences))
    tokens = [s + [pad] * (n - len(s)) for s in sentences]
    vocab = {w: i for i, w in enumerate(dict.fromkeys(w for s in sentences for w in s), start=PAD_ID + 1)}
    ids = torch.tensor([[vocab[w] for w in s] + [PAD_ID] * (n - len(s)) for s in sentences], device=device)  # (b, n)
    mask = mask_of_kind(mask_kind, ids, PAD_ID)  # broadcasts to (b, h, n, n), or None
    x = toy_embeddings([w for row in tokens for w in row], d_model, seed).view(len(tokens), n, d_model)  # (b, n, d)
    return BatchAttention(sentences, tokens, ids, mask, attention_steps(x.to(device), heads, seed, mask))


def toy_input(words: list[str], d_model: int, seed: int) -> torch.Tensor:
    """X = E + PE: seeded unit-variance token vectors plus the sinusoidal encoding, (1, n, d_model)."""
    n = len(words)
    return (toy_embeddings(words, d_model, seed) + sinusoidal_encoding(n, d_model))[None]  # (1, n, d)


def shapes(x: torch.Tensor, module: MultiHeadAttention, cache: dict, concat: torch.Tensor,
           out: torch.Tensor) -> dict[str, tuple]:
    """The live shape after every step from X to the output, by step name."""
    b, n, d_model = x.shape
    projected = module.q_proj(x)  # (b, n, d): the shape before the split
    found = {"x": x.shape, "proj": projected.shape, "view": projected.view(b, n, module.n_heads, module.d_k).shape,
             "split": cache["hook_q"].shape, "scores": cache["hook_scores"].shape,
             "masked": cache["hook_masked_scores"].shape, "weights": cache["hook_weights"].shape,
             "heads": cache["hook_heads"].shape, "back": cache["hook_heads"].transpose(1, 2).shape,
             "concat": concat.shape, "out": out.shape}
    return {name: tuple(shape) for name, shape in found.items()}


def multi_head(tokens: tuple[str, ...], n_pad: int, d_model: int, heads: int, seed: int, mask_kind: str,
               device: str = "cpu") -> dict:
    """Every tensor lesson 4 shows, as numpy (batch 0), plus the live shapes and the parameter list."""
    words = [*tokens, *["[PAD]"] * n_pad]
    ids = sentence_ids(tokens, n_pad).to(device)  # (1, n)
    n = ids.shape[1]
    x = toy_input(words, d_model, seed).to(device)  # (1, n, d)
    module = seeded_attention(d_model, heads, seed, device)
    mask = mask_of_kind(mask_kind, ids, PAD_ID)  # broadcasts to (1, h, n, n), or None
    with torch.no_grad():
        out, cache = hooks.trace(module, lambda: module(x, x, x, mask))  # (1, n, d)
        concat = cache["hook_heads"].transpose(1, 2).reshape(1, n, d_model)  # (1, n, d)
        rebuilt = module.out_proj(concat)  # (1, n, d): concat W_Oᵀ + b_O
        found = shapes(x, module, cache, concat, out)
    keep = torch.ones(1, 1, n, n, dtype=torch.bool, device=device) if mask is None else mask
    arrays = {name: to_numpy(cache[f"hook_{name}"][0]) for name in ARRAYS}
    arrays.update(x=to_numpy(x[0]), concat=to_numpy(concat[0]), out=to_numpy(out[0]),
                  keep=to_numpy(keep.expand(1, 1, n, n)[0, 0]).astype(float))
    arrays["rebuild_error"] = float((rebuilt - out).abs().max())
    arrays["shapes"] = found
    arrays["params"] = [(name, tuple(p.shape), p.numel()) for name, p in module.named_parameters()]
    return arrays


def head_summary(weights: np.ndarray, n_real: int) -> dict[str, np.ndarray]:
    """Per head, averaged over the real tokens' queries: entropy (nats), mean attention distance, weight on itself,
    and the key each head looks at most. `weights` (h, n, n) -> each (h,)."""
    w = torch.from_numpy(weights)  # (h, n, n)
    return {"entropy": to_numpy(entropy(w)[:, :n_real].mean(-1)),  # (h,)
            "distance": to_numpy(mean_attention_distance(w)[:, :n_real].mean(-1)),  # (h,)
            "self_weight": np.einsum("hii->hi", weights)[:, :n_real].mean(axis=1),  # (h,)
            "favourite": weights[:, :n_real].mean(axis=1).argmax(axis=1)}  # (h,)


STEPS = (  # (step name as in `shapes`, the code that makes it, its symbolic shape): the lesson's table of steps
    ("x", "x", "(b, n, d_model)"), ("proj", "q_proj(x)", "(b, n, d_model)"),
    ("view", ".view(b, n, h, d_k)", "(b, n, h, d_k)"), ("split", ".transpose(1, 2)", "(b, h, n, d_k)"),
    ("scores", "q @ k.transpose(-2, -1) / √d_k", "(b, h, n, n)"),
    ("masked", "apply_mask(scores, mask)", "(b, h, n, n)"), ("weights", "softmax(masked, dim=-1)", "(b, h, n, n)"),
    ("heads", "weights @ v", "(b, h, n, d_k)"), ("back", ".transpose(1, 2)", "(b, n, h, d_k)"),
    ("concat", ".reshape(b, n, h · d_k)", "(b, n, d_model)"), ("out", "out_proj(concat)", "(b, n, d_model)"))
