"""core.lab.toy.seeded and core.mask_of_kind: the shared builders the lessons use."""
import pytest
import torch

import core
from core.lab.toy import seeded


def test_seeded_is_reproducible_and_leaves_the_global_generator_alone():
    torch.manual_seed(123)
    before = torch.random.get_rng_state()
    a = seeded(lambda: core.MultiHeadAttention(16, 4), seed=7)
    b = seeded(lambda: core.MultiHeadAttention(16, 4), seed=7)
    assert torch.equal(torch.random.get_rng_state(), before)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    assert not a.training
    c = seeded(lambda: core.MultiHeadAttention(16, 4), seed=8)
    assert not torch.equal(next(a.parameters()), next(c.parameters()))


def test_mask_of_kind_shapes_and_values():
    ids = torch.tensor([[5, 6, 0], [7, 0, 0]])  # (2, 3), PAD = 0
    assert core.mask_of_kind("none", ids, 0) is None
    causal = core.mask_of_kind("causal", ids, 0)
    assert causal.shape == (1, 1, 3, 3) and torch.equal(causal[0, 0], torch.ones(3, 3, dtype=torch.bool).tril())
    padding = core.mask_of_kind("padding", ids, 0)
    assert padding.shape == (2, 1, 1, 3) and padding[1, 0, 0].tolist() == [True, False, False]
    both = core.mask_of_kind("both", ids, 0)
    assert both.shape == (2, 1, 3, 3) and torch.equal(both, causal & padding)
    with pytest.raises(ValueError):
        core.mask_of_kind("diagonal", ids, 0)
