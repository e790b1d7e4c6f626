"""Attention masks.

Convention in this package: a boolean mask, ``True`` = this query may attend to this key (keep),
``False`` = blocked. Masks broadcast against scores of shape (batch, heads, n_q, n_k).
Other conventions (``True`` = block, ``1.0`` = block added as ``mask * -1e9``) are converted by
`to_block_mask` and `to_tf_mask`, so the three can be shown side by side.
"""
from __future__ import annotations

import torch


def causal_mask(n: int, device=None) -> torch.Tensor:
    """Look-ahead mask: position i may attend to positions j <= i.

    >>> causal_mask(3).int()
    tensor([[1, 0, 0],
            [1, 1, 0],
            [1, 1, 1]], dtype=torch.int32)
    """
    return torch.ones(n, n, dtype=torch.bool, device=device).tril()  # (n, n)


def padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """Block the keys that are padding, for every query: shape (batch, 1, 1, n)."""
    return (tokens != pad_id)[:, None, None, :]  # (batch, 1, 1, n)


def decoder_mask(tokens: torch.Tensor, pad_id: int | None = None) -> torch.Tensor:
    """Causal AND padding mask for a decoder's self-attention: shape (batch, 1, n, n)."""
    n = tokens.shape[-1]
    mask = causal_mask(n, tokens.device)[None, None]  # (1, 1, n, n)
    if pad_id is not None:
        mask = mask & padding_mask(tokens, pad_id)  # (batch, 1, n, n)
    return mask


MASK_KINDS = ("none", "causal", "padding", "both")  # the kinds a lesson offers


def mask_of_kind(kind: str, tokens: torch.Tensor, pad_id: int) -> torch.Tensor | None:
    """The boolean mask of one kind for a batch of ids (batch, n), broadcasting to (batch, heads, n, n):
    None for "none", causal (1, 1, n, n), padding (batch, 1, 1, n), or both (batch, 1, n, n)."""
    if kind not in MASK_KINDS:
        raise ValueError(f"unknown mask kind {kind!r}; expected one of {MASK_KINDS}")
    if kind == "causal":
        return causal_mask(tokens.shape[-1], tokens.device)[None, None]  # (1, 1, n, n)
    if kind == "padding":
        return padding_mask(tokens, pad_id)  # (batch, 1, 1, n)
    if kind == "both":
        return decoder_mask(tokens, pad_id)  # (batch, 1, n, n)
    return None


def additive_mask(mask: torch.Tensor) -> torch.Tensor:
    """The same mask as numbers to add to the scores: 0 where kept, -inf where blocked."""
    zeros = torch.zeros(mask.shape, device=mask.device)
    return zeros.masked_fill(~mask, float("-inf"))


def apply_mask(scores: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
    """Blocked scores become -inf, so softmax gives them weight exactly 0."""
    if mask is None:
        return scores
    return torch.where(mask, scores, float("-inf"))  # (..., n_q, n_k)


def sliding_window_mask(n: int, width: int, dilation: int = 1) -> torch.Tensor:
    """Each query sees the keys within `width` steps of it that are a multiple of `dilation` away.

    With dilation 1 this is the local window of Longformer; larger dilations skip keys, so the same
    number of kept entries per row covers a longer span.
    """
    offset = torch.arange(n)[None, :] - torch.arange(n)[:, None]  # (n, n) key index - query index
    return (offset.abs() <= width * dilation) & (offset % dilation == 0)


def global_local_mask(n: int, width: int, global_positions: list[int]) -> torch.Tensor:
    """A sliding window plus global tokens that attend to every key and are attended to by every query.
    Positions outside 0..n-1 are ignored (a sequence shorter than the number of global tokens has them all)."""
    mask = sliding_window_mask(n, width)  # (n, n)
    idx = torch.tensor(sorted({p for p in global_positions if 0 <= p < n}), dtype=torch.long)  # (n_global,)
    mask[idx, :] = True
    mask[:, idx] = True
    return mask


def to_block_mask(mask: torch.Tensor) -> torch.Tensor:
    """PyTorch ``nn.MultiheadAttention`` convention: ``True`` = blocked."""
    return ~mask


def to_tf_mask(mask: torch.Tensor) -> torch.Tensor:
    """TensorFlow-tutorial convention: 1.0 = blocked, added to the scores as ``mask * -1e9``."""
    return (~mask).float()
