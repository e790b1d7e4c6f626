"""core.lab.saturation's measure over many queries, recomputed with autograd and numpy, and the claim lesson 2
rests on: at the paper's d_k = 64, dividing by sqrt(d_k) keeps the softmax out of saturation and its Jacobian
several times larger; at d_k = 1 the two are the same."""
from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core.lab.saturation import SATURATED, jacobian_size, saturation_by_d_k

D_KS = (1, 64, 512)


def by_autograd(d_k: int, seed: int, draws: int, n_keys: int = 10) -> dict[str, np.ndarray]:
    """‖∂softmax/∂s‖ per draw by torch autograd, and the largest weight, with core's order of draws."""
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(draws, d_k, generator=g, dtype=torch.float64)
    keys = torch.randn(draws, n_keys, d_k, generator=g, dtype=torch.float64)
    out = {"raw": [], "scaled": [], "raw_max": [], "scaled_max": []}
    for r in range(draws):
        s = keys[r] @ q[r]  # (n_keys,)
        for side, scores in (("raw", s), ("scaled", s / math.sqrt(d_k))):
            jac = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), scores)
            out[side].append(float(jac.norm()))
            out[f"{side}_max"].append(float(torch.softmax(scores, -1).max()))
    return {k: np.array(v) for k, v in out.items()}


def test_jacobian_size_is_the_frobenius_norm_of_the_jacobian():
    p = torch.softmax(torch.randn(5, 7, generator=torch.Generator().manual_seed(0), dtype=torch.float64), -1)
    want = [float((torch.diag(row) - torch.outer(row, row)).norm()) for row in p]
    np.testing.assert_allclose(jacobian_size(p).numpy(), want, atol=1e-15)
    assert float(jacobian_size(torch.tensor([1.0, 0.0, 0.0]))) == 0.0  # one-hot: no gradient at all


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_medians_and_shares_match_autograd(seed):
    draws = 64
    curve = saturation_by_d_k(D_KS, seed=seed, draws=draws)
    for i, d_k in enumerate(D_KS):
        ref = by_autograd(d_k, seed, draws)
        np.testing.assert_allclose(curve.raw_median[i], np.median(ref["raw"]), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(curve.scaled_median[i], np.median(ref["scaled"]), rtol=1e-9)
        assert curve.raw_saturated[i] == np.mean(ref["raw_max"] > SATURATED)
        assert curve.scaled_saturated[i] == np.mean(ref["scaled_max"] > SATURATED)


@pytest.mark.parametrize("seed", [0, 1, 2**31 - 1])
def test_the_lesson_claim_at_its_default_d_k(seed):
    curve = saturation_by_d_k((1, 64), seed=seed)  # the lesson's 256 draws
    assert curve.raw_median[0] == curve.scaled_median[0] and curve.raw_saturated[0] == curve.scaled_saturated[0]
    assert curve.scaled_median[1] > 4 * curve.raw_median[1]  # the Jacobian several times larger with scaling
    assert curve.raw_saturated[1] > 0.25 and curve.scaled_saturated[1] == 0  # a quarter saturated, against none
