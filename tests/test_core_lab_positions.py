"""core.lab.positions (lesson 5's experiments) against numpy written from the definitions."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core.lab import positions
from core.lab.analysis import seeded_linear_weights, toy_embeddings


def numpy_pe(n: int, d: int) -> np.ndarray:
    """The paper's table: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(the same)."""
    pe = np.zeros((n, d))
    for p in range(n):
        for j in range(d):
            angle = p / 10000 ** (2 * (j // 2) / d)
            pe[p, j] = math.sin(angle) if j % 2 == 0 else math.cos(angle)
    return pe


def numpy_attention(x: np.ndarray, w: list[np.ndarray]) -> np.ndarray:
    q, k, v = (x @ m for m in w)
    s = q @ k.T / math.sqrt(q.shape[1])
    a = np.exp(s - s.max(axis=1, keepdims=True))
    return a / a.sum(axis=1, keepdims=True) @ v


@pytest.mark.parametrize("kind, n, seed", [("reversed", 5, 0), ("shuffled", 5, 0), ("shuffled", 2, 7)])
def test_permutation_is_a_reordering_never_the_identity(kind, n, seed):
    order = positions.permutation(n, kind, seed)
    assert sorted(order) == list(range(n)) and order != list(range(n))
    assert order == positions.permutation(n, kind, seed)


def test_without_pe_attention_only_moves_with_the_tokens():
    words = ["dog", "bites", "man"]
    x = toy_embeddings(words, 16, 0)  # (3, 16)
    order = [2, 1, 0]
    outs, gaps = positions.both_orders(x, order, 0)
    w = [seeded_linear_weights(16, 16, j).double().numpy() for j in (1, 2, 3)]
    xn, pe = x.double().numpy(), numpy_pe(3, 16)
    np.testing.assert_allclose(outs["plain"][0].numpy(), numpy_attention(xn, w), atol=1e-5)
    np.testing.assert_allclose(outs["pe"][1].numpy(), numpy_attention(xn[order] + pe, w), atol=1e-5)
    assert gaps["plain"] < 1e-5 < 1e-2 < gaps["pe"]  # equivariant without PE; not with it


def test_offset_dots_depend_on_the_offset_only():
    O = positions.offset_dots(64, 16, 5, (0, 1, 10, 58, 60))
    pe = numpy_pe(64, 16)
    np.testing.assert_allclose(O["dots"], pe @ pe.T, atol=1e-5)
    assert O["p"] == [0, 1, 10, 58]  # 60 + 5 is past the table
    omega = 1 / 10000 ** (2 * np.arange(8) / 16)
    np.testing.assert_allclose(O["at_p"], [np.cos(5 * omega).sum()] * 4, atol=1e-5)
    assert O["formula"] == pytest.approx(np.cos(5 * omega).sum(), abs=1e-12) and O["spread"] < 1e-5


def test_scale_rows_by_hand():
    v = toy_embeddings(["a", "b", "c"], 64, 1).double().numpy()  # unit-variance rows
    rows = positions.scale_rows(v)
    small, pe = v / 8, numpy_pe(3, 64)
    np.testing.assert_allclose(rows["E"], np.linalg.norm(small, axis=1))
    np.testing.assert_allclose(rows["scaled_E"], np.linalg.norm(v, axis=1))
    cos = lambda a, b: (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)  # noqa: E731
    np.testing.assert_allclose(rows["cos_plain"], cos(small + pe, small), atol=1e-6)
    np.testing.assert_allclose(rows["cos_scaled"], cos(v + pe, v), atol=1e-6)
    assert rows["cos_scaled"].mean() > rows["cos_plain"].mean()  # the lesson's point: √d keeps the token visible


def test_rotary_scores_depend_on_the_offset_and_match_rotation_matrices():
    R = positions.rotary(40, 8, 3)
    theta = 1 / 10000 ** (2 * np.arange(4) / 8)
    q, k = R.q.double().numpy(), R.k.double().numpy()

    def turn(v: np.ndarray, p: int) -> np.ndarray:
        out = v.copy()
        for i, th in enumerate(theta):
            c, s = math.cos(p * th), math.sin(p * th)
            out[2 * i], out[2 * i + 1] = c * v[2 * i] - s * v[2 * i + 1], s * v[2 * i] + c * v[2 * i + 1]
        return out

    for p, r in ((0, 0), (3, 7), (20, 11)):
        assert R.scores[p, r] == pytest.approx(turn(q, p) @ turn(k, r), abs=1e-5)
    np.testing.assert_allclose(np.diagonal(R.scores, 4), R.scores[0, 4], atol=1e-5)  # offset 4 everywhere
    pe = numpy_pe(40, 8)
    assert R.added[2, 6] == pytest.approx((q + pe[2]) @ (k + pe[6]), abs=1e-5)
    assert R.pair(1, [0, 1], 4)[1] == pytest.approx(tuple(turn(q, 1)[2:4]), abs=1e-6)


def test_frequency_rows_match_the_paper_exponent_factor_and_wavelength():
    d, pairs = 512, [0, 128, 255]
    rows = positions.frequency_rows(pairs, d)
    assert rows["exponent"] == [0.0, 0.5, 510 / 512]
    np.testing.assert_allclose(rows["factor"], [10000.0 ** (2 * i / d) for i in pairs], rtol=1e-12)
    np.testing.assert_allclose(rows["wavelength"], [2 * math.pi * 10000.0 ** (2 * i / d) for i in pairs], rtol=1e-12)
    assert rows["factor"][1] == pytest.approx(100.0)  # 10000^(1/2): the middle pair turns once every 2π·100 positions
