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

from dataclasses import dataclass

import torch

from ..attention import softmax
from ..masks import global_local_mask, mask_of_kind, sliding_window_mask, to_block_mask, to_tf_mask

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


def parse_batch(text: str, lo: int, hi: int, max_chars: int) -> tuple[list[list[str]], str | None]:
    """One sentence per non-empty line of `text`, whitespace tokens, and what is wrong with them, or None:
    "too_long" past `max_chars` characters, "count" outside `lo`..`hi` sentences."""
    sentences = [line.split() for line in text.splitlines() if line.split()]
    if len(text) > max_chars:
        return sentences, "too_long"
    return sentences, None if lo <= len(sentences) <= hi else "count"


def mask_shapes(tokens: torch.Tensor, pad_id: int) -> dict[str, tuple[int, ...]]:
    """The shape of each mask kind's boolean mask for `tokens` (batch, n), by kind: each broadcasts against the
    scores (batch, h, n, n)."""
    return {kind: tuple(mask_of_kind(kind, tokens, pad_id).shape) for kind in ("padding", "causal", "both")}


@dataclass(frozen=True)
class Conventions:
    """One mask kind on one batch, written the three ways (each (batch, 1, n, n), 1.0 where the convention puts
    a 1 or True), the weights each convention gives, and whether core's converters give the same masks."""

    masks: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # keep, TensorFlow, PyTorch's blocked
    weights: tuple[torch.Tensor, torch.Tensor, torch.Tensor]  # (batch, h, n, n) each
    converters_agree: bool  # core.masks.to_tf_mask / to_block_mask of the keep mask give the other two


def three_conventions(scores: torch.Tensor, tokens: torch.Tensor, kind: str, pad_id: int) -> Conventions:
    """The masks of `kind` ("none", "causal", "padding", "both") for `tokens` (batch, n), each built the way its
    source builds it, applied to `scores` (batch, h, n, n). Runs on the CPU (the sources' builders do)."""
    batch, n = tokens.shape
    causal, padding = kind in ("causal", "both"), kind in ("padding", "both")
    scores, tokens = scores.cpu(), tokens.cpu()
    keep = torch.ones(batch, 1, n, n, dtype=torch.bool)  # (batch, 1, n, n)
    if (mask := mask_of_kind(kind, tokens, pad_id)) is not None:
        keep = keep & mask
    tf = torch.zeros(1, 1, n, n)
    if causal:
        tf = tf_combined_mask(tokens, pad_id) if padding else tf_look_ahead_mask(n)  # (batch, 1, n, n) or (n, n)
    elif padding:
        tf = tf_padding_mask(tokens, pad_id)  # (batch, 1, 1, n)
    attn_mask = torch_attn_mask(n) if causal else None  # (n, n)
    key_padding = torch_key_padding_mask(tokens, pad_id) if padding else None  # (batch, n)
    blocked = torch.zeros(batch, 1, n, n, dtype=torch.bool)  # what nn.MultiheadAttention ends up blocking
    if causal:
        blocked = blocked | attn_mask
    if padding:
        blocked = blocked | key_padding[:, None, None, :]
    weights = (keep_convention_weights(scores, keep), tf_convention_weights(scores, tf),
               torch_convention_weights(scores, attn_mask, key_padding))
    tf = tf.expand(batch, 1, n, n)  # (batch, 1, n, n)
    agree = torch.equal(tf, to_tf_mask(keep)) and torch.equal(blocked, to_block_mask(keep))
    return Conventions((keep.double(), tf.double(), blocked.double()), weights, agree)


def blocked_query_row(scores: torch.Tensor, tokens: torch.Tensor, pad_id: int) -> torch.Tensor:
    """The row of the first PAD query, `scores` (n, n) of a sentence `tokens` (n,), under a mask that blocks PAD
    queries as well as PAD keys, so every key of the row is blocked: its weights by torch.softmax (NaN) and by
    core.softmax (zeros), (2, n). The sentence must have a PAD."""
    real = tokens != pad_id  # (n,)
    i = int((~real).nonzero()[0])  # the first PAD query
    row = scores[i].masked_fill(~(real[i] & real), float("-inf"))  # (n,) every entry -inf
    return torch.stack([torch.softmax(row, dim=-1), softmax(row, dim=-1)])  # (2, n)


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


def pattern_mask(kind: str, n: int, width: int, dilation: int = 1, n_global: int = 1) -> torch.Tensor:
    """An efficient-attention pattern as a keep-mask (n, n): "window" (sliding, `width` each side), "dilated"
    (every `dilation`-th key within `width` steps) or "global" (a window plus the first `n_global` tokens)."""
    if kind == "global":
        return global_local_mask(n, width, list(range(n_global)))  # (n, n)
    return sliding_window_mask(n, width, dilation if kind == "dilated" else 1)  # (n, n)


def pattern_kept(kind: str, ns: tuple[int, ...], width: int, dilation: int = 1, n_global: int = 1) -> list[int]:
    """Kept entries of `pattern_mask(kind, n, ...)` for each n in `ns`, counted in closed form (n may be huge)."""
    if kind == "global":
        return [int(global_local_kept_per_row(n, width, list(range(n_global))).sum()) for n in ns]
    step = dilation if kind == "dilated" else 1
    return [int(window_kept_per_row(n, width, step).sum()) for n in ns]
