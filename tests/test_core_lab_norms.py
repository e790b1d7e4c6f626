"""core.lab.norms (lesson 6's step-by-step layer norm) against the two formulas written out in numpy and against
torch's nn.LayerNorm."""
from __future__ import annotations

import numpy as np
import pytest
import torch

from core.lab.norms import both_styles, constant_rows, traced_layer_norm
from core.norm import DEFAULT_EPS

X = np.array([[0.4513, -0.1872], [1.2927, -0.6469], [0.9508, 0.8249]])  # the course's example


@pytest.mark.parametrize("gamma, beta", [(1.0, 0.0), (2.0, 0.5)])
def test_both_styles_are_their_formulas(gamma, beta):
    R = both_styles(X, gamma, beta)
    mean = X.mean(axis=1, keepdims=True)
    s = X.std(axis=1, ddof=1, keepdims=True)  # annotated: unbiased, eps added to the std
    sigma = np.sqrt(X.var(axis=1, keepdims=True) + DEFAULT_EPS["torch"])  # torch: biased, eps inside the root
    np.testing.assert_allclose(R["annotated"]["mean"], mean, atol=1e-12)
    np.testing.assert_allclose(R["annotated"]["out"], gamma * (X - mean) / (s + DEFAULT_EPS["annotated"]) + beta,
                               atol=1e-12)
    np.testing.assert_allclose(R["torch"]["std"], sigma, atol=1e-12)
    reference = torch.nn.LayerNorm(2, eps=DEFAULT_EPS["torch"], dtype=torch.float64)
    with torch.no_grad():
        reference.weight.fill_(gamma)
        reference.bias.fill_(beta)
        np.testing.assert_allclose(R["torch"]["out"], reference(torch.tensor(X)).numpy(), atol=1e-12)
    assert traced_layer_norm(X, "torch", gamma, beta)["normalized"].shape == (3, 2)


def test_one_dimension_has_only_the_torch_style_and_equal_rows_are_found():
    assert list(both_styles(X[:, :1], 1.0, 0.0)) == ["torch"]
    assert constant_rows(np.array([[1.0, 1.0], [1.0, 2.0], [-3.0, -3.0]])) == [0, 2]
    assert constant_rows(X[:, :1]) == []  # one dimension: no row "of equal values" to speak of
