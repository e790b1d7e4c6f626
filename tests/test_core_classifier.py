"""core.lab.classifier: the token-range task, the encoder classifier, its parameter count and the training run.

References are independent of the code under test: ranges and counts checked on the raw token ids, mean pooling
against numpy, the parameter count against the formula written out here, and learning against a fixed budget.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from core.lab.classifier import (
    PAD_ID,
    ClassifierConfig,
    ClassifierRun,
    EpochRecord,
    RangeTask,
    RunConfig,
    build_classifier,
    count_parameters,
    first_epoch_at,
    mean_pool,
    parameter_formula,
)


def draw(task: RangeTask, n: int = 4000, seed: int = 0):
    return task.sample(n, torch.Generator().manual_seed(seed))


def low_counts(tokens: torch.Tensor) -> torch.Tensor:
    return ((tokens >= 1) & (tokens <= 99)).sum(dim=1)  # (n,) tokens in class 0's range


# ---- the task ----------------------------------------------------------------------------------------------

def test_the_course_task_puts_every_token_in_its_class_range():
    tokens, labels = draw(RangeTask())
    assert tokens.shape == (4000, 20) and tokens.dtype == torch.long and labels.shape == (4000,)
    zero, one = tokens[labels == 0], tokens[labels == 1]
    assert zero.min() == 1 and zero.max() == 99  # the whole range is used, both ends included
    assert one.min() == 100 and one.max() == 199
    assert 0.45 < labels.float().mean() < 0.55  # two balanced classes
    assert (tokens != PAD_ID).all()


@pytest.mark.parametrize("m", [1, 5, 9])
def test_minority_tokens_come_from_the_other_range_exactly_m_per_sequence(m):
    tokens, labels = draw(RangeTask(minority=m))
    lows = low_counts(tokens)
    assert (lows[labels == 0] == 20 - m).all() and (lows[labels == 1] == m).all()
    assert ((tokens >= 1) & (tokens <= 199)).all()
    positions = (tokens > 99)[labels == 0].float().mean(dim=0)  # where class 0's minority tokens sit
    assert positions.min() > 0.5 * m / 20 and positions.max() < 1.5 * m / 20  # spread over all positions


def test_a_minority_that_could_tie_or_win_is_refused():
    for m in (10, 11, -1):
        with pytest.raises(ValueError):
            RangeTask(minority=m)


def test_sampling_is_seeded_and_the_test_set_is_fixed():
    a, b = draw(RangeTask(minority=3), 50, seed=7), draw(RangeTask(minority=3), 50, seed=7)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], draw(RangeTask(minority=3), 50, seed=8)[0])
    first, second = RangeTask().test_set(), RangeTask().test_set()
    assert torch.equal(first[0], second[0]) and first[0].shape == (1000, 20)


# ---- the model ---------------------------------------------------------------------------------------------

def test_mean_pool_matches_numpy_and_gives_zeros_for_an_empty_row():
    hidden = torch.randn(3, 5, 4, generator=torch.Generator().manual_seed(0))
    keep = torch.tensor([[1, 1, 0, 0, 0], [1, 1, 1, 1, 1], [0, 0, 0, 0, 0]], dtype=torch.bool)
    got = mean_pool(hidden, keep).numpy()
    h = hidden.numpy()
    np.testing.assert_allclose(got[0], h[0, :2].mean(axis=0), rtol=1e-6)
    np.testing.assert_allclose(got[1], h[1].mean(axis=0), rtol=1e-6)
    assert np.all(got[2] == 0)


@pytest.mark.parametrize("norm_first", [True, False])
def test_padding_is_ignored(norm_first):
    model = build_classifier(ClassifierConfig(n_layers=2, norm_first=norm_first), seed=3).eval()
    real = torch.tensor([[5, 150, 17, 99, 100, 3], [120, 121, 122, 190, 7, 8]])
    padded = torch.cat([real, torch.zeros(2, 4, dtype=torch.long)], dim=1)  # (2, 10): 4 PAD at the end
    with torch.no_grad():
        before = model(padded)
        np.testing.assert_allclose(before.numpy(), model(real).numpy(), atol=1e-5)  # same as no padding at all
        model.embed.embed.weight[PAD_ID] = torch.randn(32, generator=torch.Generator().manual_seed(1)) * 10
        after = model(padded)
        empty = model(torch.zeros(1, 6, dtype=torch.long))
    np.testing.assert_allclose(after.numpy(), before.numpy(), atol=1e-5)
    assert torch.isfinite(empty).all()


def reference_parameters(n_layers: int, norm_first: bool, vocab=200, d=32, d_ff=128, classes=2) -> int:
    attention = 4 * (d * d + d)  # W_Q, W_K, W_V, W_O with biases
    ffn = d * d_ff + d_ff + d_ff * d + d
    norms = 2 * (2 * d)  # two LayerNorms (gain and bias) per encoder layer
    final = 2 * d if norm_first else 0
    return vocab * d + n_layers * (attention + ffn + norms) + final + d * classes + classes


@pytest.mark.parametrize("n_layers", [1, 2, 4])
@pytest.mark.parametrize("norm_first", [True, False])
def test_parameter_count_equals_the_formula(n_layers, norm_first):
    cfg = ClassifierConfig(n_layers=n_layers, norm_first=norm_first)
    expected = reference_parameters(n_layers, norm_first)
    assert count_parameters(build_classifier(cfg)) == expected
    assert parameter_formula(cfg)["total"] == expected
    assert ClassifierRun(RangeTask(test_size=4), cfg).n_parameters == expected


def test_the_same_seed_gives_the_same_model_and_the_global_rng_is_left_alone():
    state = torch.random.get_rng_state()
    a, b = build_classifier(ClassifierConfig(), seed=5), build_classifier(ClassifierConfig(), seed=5)
    assert all(torch.equal(p, q) for p, q in zip(a.state_dict().values(), b.state_dict().values()))
    c = build_classifier(ClassifierConfig(), seed=6)
    assert not torch.equal(a.head.weight, c.head.weight)
    assert torch.equal(torch.random.get_rng_state(), state)


# ---- training ----------------------------------------------------------------------------------------------

SMALL = RunConfig(epochs=3, steps_per_epoch=4, batch_size=16, lr=3e-3, seed=2)


def make_run(run_cfg: RunConfig = SMALL, **model) -> ClassifierRun:
    return ClassifierRun(RangeTask(minority=4, test_size=200), ClassifierConfig(**({"n_layers": 2} | model)), run_cfg)


def numbers(history) -> list[tuple]:
    return [dataclasses.astuple(dataclasses.replace(e, seconds=0.0)) for e in history]


def weights_equal(a: ClassifierRun, b: ClassifierRun) -> bool:
    return all(torch.equal(p, q) for p, q in zip(a.model.state_dict().values(), b.model.state_dict().values()))


def test_the_same_seed_gives_the_same_history_and_another_seed_does_not():
    a, b = make_run(), make_run()
    list(a.steps())
    list(b.steps())
    assert len(a.history) == 3 and numbers(a.history) == numbers(b.history) and weights_equal(a, b)
    c = make_run(dataclasses.replace(SMALL, seed=3))
    list(c.steps())
    assert numbers(c.history) != numbers(a.history)


@pytest.mark.parametrize("norm_first", [True, False])
def test_chunked_training_equals_training_in_one_go(norm_first):
    whole, chunked = make_run(norm_first=norm_first), make_run(norm_first=norm_first)
    records = list(whole.steps())
    pieces = []
    while not chunked.done():
        pieces += list(chunked.steps(n=5))
    assert [r.loss for r in pieces] == [r.loss for r in records]
    assert numbers(chunked.history) == numbers(whole.history) and weights_equal(whole, chunked)


def test_more_epochs_later_continue_exactly_and_steps_never_run_past_the_end():
    longer, shorter = make_run(), make_run(dataclasses.replace(SMALL, epochs=1))
    list(longer.steps())
    assert len(list(shorter.steps())) == 4 and shorter.done() and list(shorter.steps()) == []
    assert len(list(shorter.steps(epochs=3))) == 8
    assert shorter.step == longer.step == 12 and list(shorter.steps(epochs=3)) == []
    assert numbers(shorter.history) == numbers(longer.history) and weights_equal(shorter, longer)
    run = make_run()
    assert len(list(run.steps(seconds=0.0))) == 1  # a time budget still makes progress, one step at least


def test_records_report_the_test_accuracy_at_each_epoch_end_and_it_matches_a_recomputation():
    run = make_run()
    records = list(run.steps())
    ends = [r for r in records if r.test_accuracy is not None]
    assert [r.step for r in ends] == [4, 8, 12] and [r.epoch for r in ends] == [1, 2, 3]
    assert [r.test_accuracy for r in ends] == [e.test_accuracy for e in run.history]
    assert run.history[-1].train_loss == pytest.approx(np.mean([r.loss for r in records[-4:]]))
    tokens, labels = run.task.test_set()
    with torch.no_grad():
        logits = run.model.eval()(tokens)
    assert run.history[-1].test_accuracy == pytest.approx((logits.argmax(-1) == labels).double().mean().item())
    assert run.history[-1].test_loss == pytest.approx(F.cross_entropy(logits, labels).item(), rel=1e-5)


def test_a_one_block_encoder_learns_the_course_task_within_a_small_budget():
    run = ClassifierRun(RangeTask(), ClassifierConfig(n_layers=1),
                        RunConfig(epochs=2, steps_per_epoch=20, batch_size=64, lr=1e-3, seed=0))
    list(run.steps())
    assert run.step == 40 and run.history[-1].test_accuracy > 0.95


def test_first_epoch_at():
    history = [EpochRecord(i + 1, 0.1, 0.9, 0.1, acc, 0.0) for i, acc in enumerate((0.5, 0.9, 1.0, 0.99, 1.0))]
    assert first_epoch_at(history) == 3 and first_epoch_at(history, 0.9) == 2
    assert first_epoch_at(history[:2]) is None and first_epoch_at([]) is None


# ---- the lesson's claims, at the settings its presets use (seed 0, batch 64, 50 steps per epoch) -----------

def preset_run(n_layers: int, norm_first: bool, minority: int, lr: float, epochs: int) -> ClassifierRun:
    run = ClassifierRun(RangeTask(minority=minority), ClassifierConfig(n_layers=n_layers, norm_first=norm_first),
                        RunConfig(epochs=epochs, steps_per_epoch=50, batch_size=64, lr=lr, seed=0))
    list(run.steps())
    return run


@pytest.mark.parametrize("norm_first", [True, False])
def test_claim_every_depth_learns_the_course_task_in_its_first_epoch(norm_first):
    assert preset_run(4, norm_first, 0, 1e-3, 1).history[0].test_accuracy == 1.0


def test_claim_at_a_high_learning_rate_deep_post_norm_stays_at_chance_and_pre_norm_learns():
    pre, post = preset_run(4, True, 8, 1e-2, 3), preset_run(4, False, 8, 1e-2, 3)
    assert pre.history[-1].test_accuracy > 0.995
    assert max(e.test_accuracy for e in post.history) <= 0.55


def test_advance_steps_every_run_in_turn_like_running_each_alone():
    from core.lab.classifier import advance
    cfg = RunConfig(epochs=2, steps_per_epoch=2, batch_size=8)
    runs = [ClassifierRun(RangeTask(), ClassifierConfig(n_layers=n, d_model=8, n_heads=2, d_ff=16), cfg)
            for n in (1, 2)]
    alone = [ClassifierRun(RangeTask(), ClassifierConfig(n_layers=n, d_model=8, n_heads=2, d_ff=16), cfg)
             for n in (1, 2)]
    advance(runs, 1, seconds=60)  # all done long before the time is up: one epoch each, then it returns
    assert [r.step for r in runs] == [2, 2] and all(r.done(1) and not r.done() for r in runs)
    for run in alone:
        list(run.steps(epochs=1))
    for x, y in zip(runs, alone):  # the same numbers (the seconds differ)
        assert [(e.train_loss, e.test_accuracy) for e in x.history] == [(e.train_loss, e.test_accuracy) for e in y.history]
    advance(runs, 2, seconds=0.0)  # the time is up after one round: one step of each
    assert [r.step for r in runs] == [3, 3]


def test_the_task_module_runs_its_example_and_the_classifier_module_gives_the_same_names():
    import doctest

    from core.lab import classifier, classifier_data
    assert doctest.testmod(classifier_data).failed == 0
    for name in ("RangeTask", "CLASS_RANGES", "PAD_ID"):  # where the lesson and the tests import them
        assert getattr(classifier, name) is getattr(classifier_data, name)
