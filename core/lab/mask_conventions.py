"""Other libraries' mask conventions, and the cost of structured (efficient-attention) masks.

`core.masks` keeps one convention: a boolean mask, ``True`` = keep. Course material and libraries meet
two more, and mixing them up is a classic bug, so lesson 3 shows the three side by side:

    convention                          kept   blocked   how it reaches the scores
    keep (the Annotated Transformer)    1      0         scores.masked_fill(mask == 0, -1e9)
    TensorFlow tutorial                 0.0    1.0       scores + mask * -1e9
    PyTorch nn.MultiheadAttention       False  True      attn_mask (n_q, n_k) and key_padding_mask (batch, n_k)

The functions here build each convention's masks the way its source does and turn scores into weights
with `core.softmax`. On every row with at least one kept key the three give exactly the same weights
(e^(-1e9 - max) underflows to 0, as e^(-inf) does). They differ only on a row whose keys are all
blocked: -1e9 leaves a finite, meaningless row; -inf gives zeros with `core.softmax` (NaN with a plain one).

The counting functions give the kept entries per query row of `sliding_window_mask` and
`global_local_mask` in closed form, so the cost can be plotted for sequences far too long to build.
"""
from __future__ import annotations

import torch

from ..attention import softmax

NEG_BIG = -1e9  # the "minus a billion" of the Annotated Transformer and the TensorFlow tutorial


def keep_convention_weights(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Annotated Transformer: mask 1/True = keep; blocked scores are overwritten with -1e9."""
    return softmax(scores.masked_fill(mask == 0, NEG_BIG), dim=-1)  # (..., n_q, n_k)


def tf_look_ahead_mask(n: int) -> torch.Tensor:
    """TensorFlow tutorial: 1 - band_part(ones, -1, 0), i.e. 1.0 above the diagonal (the future)."""
    return 1.0 - torch.ones(n, n).tril()  # (n, n)


def tf_padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """TensorFlow tutorial: 1.0 where the key is padding: (batch, 1, 1, n)."""
    return (tokens == pad_id).float()[:, None, None, :]  # (batch, 1, 1, n)


def tf_combined_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """TensorFlow tutorial's decoder mask: max(padding mask, look-ahead mask), (batch, 1, n, n)."""
    look_ahead = tf_look_ahead_mask(tokens.shape[-1]).to(tokens.device)  # (n, n)
    return torch.maximum(tf_padding_mask(tokens, pad_id), look_ahead)  # (batch, 1, n, n)


def tf_convention_weights(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """TensorFlow tutorial: mask 1.0 = block, added to the scores as mask * -1e9."""
    return softmax(scores + mask.to(scores.dtype) * NEG_BIG, dim=-1)  # (..., n_q, n_k)


def torch_attn_mask(n: int) -> torch.Tensor:
    """PyTorch's boolean causal `attn_mask`: True above the diagonal (blocked), (n, n)."""
    return torch.ones(n, n, dtype=torch.bool).triu(diagonal=1)  # (n, n)


def torch_key_padding_mask(tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """PyTorch's `key_padding_mask`: True where the key is padding, (batch, n)."""
    return tokens == pad_id  # (batch, n)


def torch_convention_weights(scores: torch.Tensor, attn_mask: torch.Tensor | None = None,
                             key_padding_mask: torch.Tensor | None = None) -> torch.Tensor:
    """nn.MultiheadAttention's rule: a key is blocked if `attn_mask` or `key_padding_mask` says True.

    scores (batch, h, n_q, n_k); attn_mask (n_q, n_k); key_padding_mask (batch, n_k)."""
    blocked = torch.zeros(scores.shape, dtype=torch.bool, device=scores.device)  # (batch, h, n_q, n_k)
    if attn_mask is not None:
        blocked = blocked | attn_mask  # (n_q, n_k) broadcasts over batch and heads
    if key_padding_mask is not None:
        blocked = blocked | key_padding_mask[:, None, None, :]  # (batch, 1, 1, n_k)
    return softmax(scores.masked_fill(blocked, float("-inf")), dim=-1)  # (batch, h, n_q, n_k)


def window_kept_per_row(n: int, width: int, dilation: int = 1) -> torch.Tensor:
    """Kept keys of each query under `sliding_window_mask(n, width, dilation)`, without building it: (n,).

    Query i keeps i + k * dilation for |k| <= width, inside 0..n-1."""
    i = torch.arange(n)  # (n,)
    before = torch.clamp(i // dilation, max=width)  # keys to the left
    after = torch.clamp((n - 1 - i) // dilation, max=width)  # keys to the right
    return before + after + 1  # (n,)


def global_local_kept_per_row(n: int, width: int, global_positions: list[int]) -> torch.Tensor:
    """Kept keys of each query under `global_local_mask(n, width, global_positions)`: (n,).

    A global query keeps all n keys; any other query keeps its window plus the global keys outside it.
    Positions outside 0..n-1 are ignored, as `global_local_mask` ignores them."""
    kept = window_kept_per_row(n, width)  # (n,)
    g = torch.tensor(sorted({p for p in global_positions if 0 <= p < n}), dtype=torch.long)  # (n_global,)
    if g.numel() == 0:
        return kept
    i = torch.arange(n)  # (n,)
    outside = ((g[None, :] - i[:, None]).abs() > width).sum(-1)  # (n,) global keys beyond the window
    kept = kept + outside
    kept[g] = n
    return kept  # (n,)
