"""Attention, from plain similarity to multi-head attention.

Lesson 1 uses `similarity`, `softmax` and `contextualize` (no learned weights). Every later lesson,
and the trained models, use `scaled_dot_product_attention` through `MultiHeadAttention`: it is the
only attention implementation in the package.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .hooks import NO_HOOKS, HookPoint
from .masks import apply_mask
from .positional import apply_rotary


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax: subtract the row maximum before exponentiating.

    A row that is entirely -inf (every key blocked) gives zeros instead of NaN: its maximum is clamped
    to the lowest finite float, so every exp is 0 and the sum is 0. Any other row sums to at least 1
    (its maximum contributes e^0 = 1), so dividing by max(sum, 1) changes nothing there. The maximum
    is a constant shift that cancels out, so no gradient flows through it (detach: less work).
    """
    row_max = x.detach().amax(dim=dim, keepdim=True).clamp(min=torch.finfo(x.dtype).min)
    e = torch.exp(x - row_max)
    total = e.sum(dim=dim, keepdim=True)
    return e * torch.reciprocal(total.clamp(min=1.0))  # e / total, one division per row


def similarity(x: torch.Tensor, scale: bool = False) -> torch.Tensor:
    """S = X Xᵀ: entry (i, j) is the dot product of word i and word j; divided by sqrt(d) if `scale`."""
    s = x @ x.transpose(-2, -1)  # (n, d) @ (d, n) -> (n, n)
    return s / math.sqrt(x.shape[-1]) if scale else s


def contextualize(x: torch.Tensor, scale: bool = False) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Lesson 1 in one call: S = X Xᵀ, A = softmax(S) row by row, C = A X. Returns (S, A, C)."""
    s = similarity(x, scale)  # (n, n)
    a = softmax(s, dim=-1)  # (n, n), rows sum to 1
    c = a @ x  # (n, n) @ (n, d) -> (n, d)
    return s, a, c


def scaled_dot_product_attention(query, key, value, mask=None, hooks=NO_HOOKS):
    """Attention(Q, K, V) = softmax(Q Kᵀ / sqrt(d_k)) V, with an optional boolean mask (True = keep).

    Shapes: query (..., n_q, d_k), key (..., n_k, d_k), value (..., n_k, d_v); the mask broadcasts
    to (..., n_q, n_k). Returns ``(output (..., n_q, d_v), weights (..., n_q, n_k))``.
    `hooks` is any object with ``hook_scores``, ``hook_masked_scores`` and ``hook_weights``
    (a `MultiHeadAttention` passes itself so its hook points see each step).
    """
    d_k = query.shape[-1]
    scores = hooks.hook_scores(query @ key.transpose(-2, -1) / math.sqrt(d_k))  # (..., n_q, n_k)
    masked = hooks.hook_masked_scores(apply_mask(scores, mask))  # (..., n_q, n_k)
    weights = hooks.hook_weights(softmax(masked, dim=-1))  # (..., n_q, n_k)
    return weights @ value, weights  # (..., n_q, d_v), (..., n_q, n_k)


class LayerCache:
    """The keys and values one attention layer has computed so far (the KV cache of one layer).

    At generation step t a decoder-only model needs the keys and values of positions 0..t, but those of
    0..t-1 do not change (causal attention: an earlier position never sees a later one). So they are kept
    and only the new position's are computed: `extend` appends them and returns all of them.
    keys, values: (batch, h, n_seen, d_k), None before the first call.
    """

    def __init__(self):
        self.keys: torch.Tensor | None = None
        self.values: torch.Tensor | None = None

    def __len__(self) -> int:
        return 0 if self.keys is None else self.keys.shape[-2]

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append k, v (batch, h, n_new, d_k) and return every key and value so far (batch, h, n_seen, d_k)."""
        if self.keys is not None:
            k = torch.cat([self.keys, k], dim=-2)  # (batch, h, n_seen + n_new, d_k)
            v = torch.cat([self.values, v], dim=-2)  # (batch, h, n_seen + n_new, d_k)
        self.keys, self.values = k, v
        return k, v


class MultiHeadAttention(nn.Module):
    """h heads of d_k = d_model / h, concatenated and projected by W_O (the paper's section 3.2.2).

    Dropout is applied by the residual sub-layer around it, not to the attention weights, so the
    weights a lesson shows are the weights the model used.

    Called as ``attn(query, key, value, mask=None)`` with inputs (batch, n, d_model); returns
    (batch, n_q, d_model). Hook points: hook_q, hook_k, hook_v (batch, h, n, d_k), hook_scores,
    hook_masked_scores, hook_weights (batch, h, n_q, n_k), hook_heads (batch, h, n_q, d_k),
    hook_out (batch, n_q, d_model).

    With ``cache=LayerCache()`` (self-attention while generating) the keys and values of the new positions are
    appended to the cache and the queries attend to every position cached so far; hook_k and hook_v then
    see the new positions only. Rotary positions are not supported with a cache (they would need offsets).
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = True, rotary: bool = False):
        super().__init__()
        if n_heads < 1 or d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        self.n_heads, self.d_k, self.rotary = n_heads, d_model // n_heads, rotary
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.hook_q, self.hook_k, self.hook_v = HookPoint(), HookPoint(), HookPoint()  # (batch, h, n, d_k) each
        self.hook_scores = HookPoint()  # (batch, h, n_q, n_k): QKᵀ/√d_k
        self.hook_masked_scores = HookPoint()  # (batch, h, n_q, n_k): blocked places at -inf
        self.hook_weights = HookPoint()  # (batch, h, n_q, n_k): softmax over the keys
        self.hook_heads = HookPoint()  # (batch, h, n_q, d_k): the weights times V
        self.hook_out = HookPoint()  # (batch, n_q, d_model): the heads joined, through W_O

    def split_heads(self, x: torch.Tensor) -> torch.Tensor:
        batch, n, _ = x.shape
        return x.view(batch, n, self.n_heads, self.d_k).transpose(1, 2)  # (batch, h, n, d_k)

    def forward(self, query, key, value, mask=None, cache: LayerCache | None = None):
        q = self.split_heads(self.q_proj(query))  # (batch, h, n_q, d_k)
        k = self.split_heads(self.k_proj(key))  # (batch, h, n_k, d_k)
        v = self.hook_v(self.split_heads(self.v_proj(value)))  # (batch, h, n_k, d_k)
        if self.rotary:
            if cache is not None:
                raise ValueError("the KV cache does not support rotary positions")
            q, k = apply_rotary(q), apply_rotary(k)
        q, k = self.hook_q(q), self.hook_k(k)
        if cache is not None:
            k, v = cache.extend(k, v)  # (batch, h, n_seen, d_k) each
        heads, _ = scaled_dot_product_attention(q, k, v, mask, hooks=self)  # (batch, h, n_q, d_k)
        heads = self.hook_heads(heads)
        batch, _, n_q, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(batch, n_q, self.n_heads * self.d_k)  # (batch, n_q, d_model)
        return self.hook_out(self.out_proj(concat))  # (batch, n_q, d_model)
