"""Lesson 13's reading of a real model's attention and tokens: each head's strongest pattern, the weights with
[CLS] and [SEP] taken out, the heads that lead each pattern, how many WordPiece pieces a word costs, and the
closest pair of sentences.

Pure numpy on what ``core.pretrained`` returns (``head_patterns``' scores, ``encode``'s tokens and words).
"""
from __future__ import annotations

import numpy as np

from ..pretrained import PATTERNS, SPECIAL_TOKENS


def pattern_scores(patterns: dict[str, np.ndarray]) -> np.ndarray:
    """(L * h, len(PATTERNS)): every head's score for every pattern, heads flattened layer by layer (NaN where a
    text cannot show a pattern, e.g. same_word with no word of two pieces)."""
    return np.stack([patterns[p] for p in PATTERNS], axis=-1).reshape(-1, len(PATTERNS))


def strongest(patterns: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Per head (flattened layer by layer): the index in PATTERNS of its largest score, and that score."""
    scores = pattern_scores(patterns)  # (L * h, P)
    best = np.argmax(np.nan_to_num(scores, nan=-1.0), axis=1)  # (L * h,): NaN (no such query) never wins
    return best, scores[np.arange(len(scores)), best]


def leaders(patterns: dict[str, np.ndarray]) -> dict[str, tuple[int, int, float] | None]:
    """{pattern: (layer, head, score) of the head that does it most (0-based), or None if the text cannot show it}."""
    found = {}
    for p in PATTERNS:
        values = patterns[p]  # (L, h)
        if np.isfinite(values).any():
            layer, head = np.unravel_index(np.nanargmax(values), values.shape)
            found[p] = (int(layer), int(head), float(values[layer, head]))
        else:
            found[p] = None
    return found


def without_specials(weights: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Drop the [CLS]/[SEP] rows and columns of (..., n, n) weights and renormalise each row to sum to 1."""
    kept = weights[..., keep, :][..., keep]  # (..., m, m)
    return kept / kept.sum(axis=-1, keepdims=True)


def pieces_per_word(tokens: list[str], words: list[int | None], types: list[int]) -> list[tuple[int, int]]:
    """[(words, pieces)] per sentence of a tokenized input (sentence A, then B if there is one): the words the
    tokenizer's pre-split saw (punctuation is a word of its own) and the WordPiece tokens that make them up
    ([CLS] and [SEP] left out)."""
    found: dict[int, list[int]] = {}
    for tok, word, kind in zip(tokens, words, types):
        if tok not in SPECIAL_TOKENS and word is not None:
            found.setdefault(kind, []).append(word)
    return [(len(set(found[kind])), len(found[kind])) for kind in sorted(found)]


def closest_pair(cosine: np.ndarray) -> tuple[int, int]:
    """(a, b), 0-based: the two different sentences whose (m, m) cosine similarity is largest (of a tie, the first
    cell row by row, so a < b for a symmetric matrix)."""
    off = cosine - 2 * np.eye(len(cosine))  # (m, m): the diagonal (1) can never win
    a, b = np.unravel_index(np.argmax(off), off.shape)
    return int(a), int(b)
