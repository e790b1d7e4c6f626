"""Measurements shown by the attention lessons."""
import math

import pytest
import torch

from core.lab.analysis import entropy, mean_attention_distance, scaling_experiment, toy_embeddings


def test_entropy_of_uniform_and_one_hot_rows():
    uniform, one_hot = torch.full((4,), 0.25), torch.tensor([0.0, 1.0, 0.0, 0.0])
    assert entropy(uniform).item() == pytest.approx(math.log(4))
    assert entropy(one_hot).item() == 0.0


def test_mean_attention_distance():
    previous_token = torch.tensor([[1.0, 0, 0], [1, 0, 0], [0, 1, 0]])  # each query looks one step back
    assert mean_attention_distance(previous_token).tolist() == [0.0, 1.0, 1.0]


@pytest.mark.parametrize("d_k", [4, 64, 512])
def test_scaling_keeps_the_score_variance_near_one(d_k):
    exp = scaling_experiment(d_k, seed=0)
    assert exp.raw_variance == pytest.approx(d_k, rel=0.15)
    assert exp.scaled_variance == pytest.approx(1.0, rel=0.15)
    torch.testing.assert_close(exp.scaled_scores, exp.raw_scores / math.sqrt(d_k))


def test_without_scaling_softmax_saturates_at_large_d_k():
    runs = [scaling_experiment(512, n_keys=10, seed=seed, n_pairs=10) for seed in range(20)]
    raw_entropy = torch.stack([entropy(e.raw_weights) for e in runs]).mean()
    scaled_entropy = torch.stack([entropy(e.scaled_weights) for e in runs]).mean()
    assert raw_entropy < 0.4 * scaled_entropy
    assert torch.stack([e.raw_weights.max() for e in runs]).mean() > 0.8
    assert torch.stack([e.scaled_weights.max() for e in runs]).mean() < 0.6


def test_toy_embeddings_are_stable_per_word():
    a = toy_embeddings(["the", "cat", "the"], 8, seed=3)
    torch.testing.assert_close(a[0], a[2])
    torch.testing.assert_close(toy_embeddings(["cat"], 8, seed=3)[0], a[1])
    assert not torch.equal(toy_embeddings(["cat"], 8, seed=4)[0], a[1])
    assert toy_embeddings([], 8, seed=0).shape == (0, 8)
