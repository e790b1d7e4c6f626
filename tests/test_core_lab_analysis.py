"""core.lab.analysis.qkv_attention (lesson 2's one head) against the attention formula written out in numpy."""
from __future__ import annotations

import numpy as np
import pytest

from core.lab.analysis import qkv_attention, seeded_linear_weights, weight_seeds


@pytest.mark.parametrize("causal, tied", [(False, False), (True, False), (False, True)])
def test_qkv_attention_is_the_formula(causal, tied):
    words, d_model, d_k, seed = ["time", "flies", "like", "time"], 16, 4, 3
    M = {k: v.numpy() for k, v in qkv_attention(words, d_model, d_k, seed, causal, tied).items()}
    x = M["X"]
    w = {name: seeded_linear_weights(d_model, d_k, s).double().numpy() for name, s in weight_seeds(seed, tied).items()}
    q, k, v = x @ w["Q"], x @ w["K"], x @ w["V"]
    s = q @ k.T / np.sqrt(d_k)
    if causal:
        s = np.where(np.tril(np.ones((4, 4), dtype=bool)), s, -np.inf)
    a = np.exp(s - s.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(M["A"], a, atol=1e-12)
    np.testing.assert_allclose(M["O"], a @ v, atol=1e-12)
    np.testing.assert_allclose(M["D"], q @ k.T - (q @ k.T).T, atol=1e-12)
    assert np.abs(M["D"]).max() < 1e-12 if tied else np.abs(M["D"]).max() > 0.1  # symmetric only when W_K = W_Q
    assert weight_seeds(seed, tied) == ({"Q": 10, "K": 10, "V": 12} if tied else {"Q": 10, "K": 11, "V": 12})
