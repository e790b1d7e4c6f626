"""Training, greedy decoding, evaluation and checkpoints."""
import dataclasses
import io
import math
import re
from pathlib import Path

import pytest
import torch

from core import ModelConfig, build_model
from core.checkpoints import FORMAT, checkpoint_dict, load_checkpoint, save_checkpoint
from core.decoding import greedy_decode
from core.tasks import BOS_ID, EOS_ID, IGNORE_INDEX, PAD_ID, CopyTask, make_task
from core.tasks import TaskInputError
from core.evaluation import evaluate, predict
from core.train import PRESETS, Trainer, TrainConfig, learning_rate, main, model_config, sequence_loss

ROOT = Path(__file__).resolve().parents[1]
TINY_COPY = dict(d_model=32, n_heads=2, n_layers=1, d_ff=64, dropout=0.0)


@pytest.fixture(scope="module")
def trained_copy():
    """A tiny model trained on copying 8 symbols out of 10, within a fixed budget of steps."""
    task = CopyTask(length=8, vocab_size=10)
    trainer = Trainer(task, model_config(task, **TINY_COPY), TrainConfig(steps=250, batch_size=64, lr=1e-2, warmup=30))
    for _ in trainer.steps():
        pass
    return trainer


def test_a_tiny_model_learns_to_copy_within_a_fixed_budget(trained_copy):
    assert trained_copy.done and trained_copy.step == 250
    assert trained_copy.history[-1].loss < trained_copy.history[0].loss
    result = trained_copy.evaluate(n=500)
    assert result.split == "heldout"  # sequences the model never saw
    assert result.exact_match >= 0.95, result
    assert result.token_accuracy >= result.exact_match
    assert 0 <= result.teacher_forced_exact_match <= 1 and result.n == 500


def test_an_untrained_model_scores_near_zero_and_teacher_forcing_flatters():
    task = CopyTask(length=8, vocab_size=10)
    model = build_model(model_config(task, **TINY_COPY), seed=1)
    result = evaluate(model, task, n=200)
    assert result.exact_match < 0.05 and result.token_accuracy < 0.5


def test_greedy_decoding_equals_step_by_step_argmax_of_the_full_forward(trained_copy):
    model = trained_copy.model.eval()
    for src in (trained_copy.task.batch(16, torch.Generator().manual_seed(3)).src,
                torch.tensor([[3, 4, 5, PAD_ID, PAD_ID], [6, 7, 8, 9, 10]])):
        tokens, logits = greedy_decode(model, src, 9, BOS_ID, EOS_ID, PAD_ID, return_logits=True)
        prefix = torch.full((src.shape[0], 1), BOS_ID)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        with torch.no_grad():
            for t in range(tokens.shape[1]):
                full = model(src, prefix)[:, -1]  # (batch, vocab): re-runs encoder and decoder
                torch.testing.assert_close(logits[:, t], full, atol=1e-5, rtol=1e-5)
                step = full.argmax(-1).masked_fill(finished, PAD_ID)
                finished |= step == EOS_ID
                prefix = torch.cat([prefix, step[:, None]], 1)
        assert torch.equal(tokens, prefix[:, 1:])
    assert greedy_decode(model, src, 3, BOS_ID).shape == (2, 3)  # no EOS: exactly max_new_tokens


def test_predict_answers_a_learners_text(trained_copy):
    prediction = predict(trained_copy.model, trained_copy.task, "3 1 4 1 5 9 2 6")
    assert prediction.expected == "3 1 4 1 5 9 2 6" and prediction.text == prediction.expected
    assert prediction.tokens.shape[1] == 9 and prediction.tokens[0, -1] == EOS_ID
    assert prediction.logits.shape == (1, 9, len(trained_copy.task.tgt_vocab))
    with pytest.raises(TaskInputError):
        predict(trained_copy.model, trained_copy.task, "3 1 x")


def test_learning_rate_warms_up_then_decays_along_a_cosine():
    cfg = TrainConfig(steps=100, lr=1e-3, warmup=10, final_lr_ratio=0.1)
    assert learning_rate(0, cfg) == pytest.approx(1e-4) and learning_rate(9, cfg) == pytest.approx(1e-3)
    assert learning_rate(99, cfg) == pytest.approx(1e-4)
    middle = learning_rate(10 + 89 // 2, cfg)
    assert middle == pytest.approx(1e-4 + 0.9e-3 * 0.5 * (1 + math.cos(math.pi * (89 // 2) / 89)))
    lrs = [learning_rate(s, cfg) for s in range(10, 100)]
    assert all(a >= b for a, b in zip(lrs, lrs[1:]))


def test_loss_ignores_padding_and_smooths_labels():
    logits = torch.randn(2, 3, 5, generator=torch.Generator().manual_seed(0))
    labels = torch.tensor([[1, 2, IGNORE_INDEX], [3, IGNORE_INDEX, IGNORE_INDEX]])
    changed = logits.clone()
    changed[0, 2], changed[1, 1:] = 100.0, -100.0
    assert sequence_loss(logits, labels) == sequence_loss(changed, labels)
    kept = torch.stack([logits[0, 0], logits[0, 1], logits[1, 0]])
    expected = torch.nn.functional.cross_entropy(kept, torch.tensor([1, 2, 3]))
    torch.testing.assert_close(sequence_loss(logits, labels), expected)
    assert sequence_loss(logits, labels, 0.1) != sequence_loss(logits, labels)


def test_a_trainer_advanced_in_chunks_equals_one_advanced_in_one_go():
    task = make_task("addition", digits=2)
    cfg = model_config(task, d_model=16, n_heads=2, n_layers=1, d_ff=32, dropout=0.2)  # dropout: seeded per step
    train = TrainConfig(steps=12, batch_size=16, lr=3e-3, warmup=3, seed=5)
    torch.manual_seed(99)
    before = torch.rand(3)
    torch.manual_seed(99)
    one_go, chunked = Trainer(task, cfg, train), Trainer(task, cfg, train)
    list(one_go.steps())
    list(chunked.steps(n=5))
    list(chunked.steps(n=0))
    list(chunked.steps(seconds=0.0))  # stops after one step
    assert chunked.step == 6
    list(chunked.steps())
    assert chunked.done and list(chunked.steps()) == []  # never runs past the schedule
    assert [r.loss for r in one_go.history] == [r.loss for r in chunked.history]
    for a, b in zip(one_go.model.parameters(), chunked.model.parameters()):
        assert torch.equal(a, b)
    assert torch.equal(torch.rand(3), before)  # the global random state is left alone
    other = Trainer(task, cfg, dataclasses.replace(train, seed=6))
    list(other.steps(n=3))
    assert [r.loss for r in other.history] != [r.loss for r in one_go.history[:3]]


def test_step_records_are_small_frozen_values():
    trainer = Trainer.from_preset("parser", steps=2)
    records = list(trainer.steps())
    assert [r.step for r in records] == [1, 2] and records[1].elapsed >= records[1].seconds > 0
    assert 0 <= records[0].accuracy <= 1 and records[0].lr == learning_rate(0, trainer.train_cfg)
    with pytest.raises(dataclasses.FrozenInstanceError):
        records[0].loss = 0.0


def test_checkpoint_round_trip_with_weights_only(trained_copy, tmp_path):
    path = save_checkpoint(tmp_path / "copy.pt", trained_copy.model, trained_copy.task, {"exact_match": 0.97})
    raw = torch.load(path, weights_only=True)
    assert set(raw) == {"format", "config", "state_dict", "task", "metrics"} and raw["format"] == FORMAT
    assert raw["task"] == {"name": "copy", "options": trained_copy.task.options}
    loaded = load_checkpoint(path)
    assert loaded.config == trained_copy.model_cfg and loaded.metrics == {"exact_match": 0.97}
    assert loaded.task.options == trained_copy.task.options and not loaded.model.training
    src = trained_copy.task.batch(8, torch.Generator().manual_seed(1)).src
    trained_copy.model.eval()
    torch.testing.assert_close(loaded.model(src, src[:, :5]), trained_copy.model(src, src[:, :5]))
    buffer = io.BytesIO()
    torch.save(checkpoint_dict(trained_copy.model, trained_copy.task), buffer)
    buffer.seek(0)
    assert load_checkpoint(buffer).config == trained_copy.model_cfg


def test_files_that_are_not_our_checkpoints_give_a_clear_value_error(trained_copy, tmp_path):
    text = tmp_path / "notes.pt"
    text.write_text("not a checkpoint")
    good = checkpoint_dict(trained_copy.model, trained_copy.task)
    wrong_shape = dict(good, state_dict={k: v[..., :1] for k, v in good["state_dict"].items()})
    cases = {"text": None, "tensor": torch.zeros(3), "no format": {k: v for k, v in good.items() if k != "format"},
             "missing": {"format": FORMAT, "config": good["config"]},
             "bad task": dict(good, task={"name": "chess", "options": {}}),
             "bad config": dict(good, config=dict(good["config"], d_model=33)), "bad weights": wrong_shape,
             "bad metrics": dict(good, metrics=[0.9])}
    for name, content in cases.items():
        path = text if content is None else tmp_path / f"{name}.pt"
        if content is not None:
            torch.save(content, path)
        with pytest.raises(ValueError) as info:
            load_checkpoint(path)
        assert "checkpoint" in str(info.value) or str(path) in str(info.value), name
    with pytest.raises(FileNotFoundError):
        load_checkpoint(tmp_path / "absent.pt")


def test_presets_build_for_every_task():
    for name, presets in PRESETS.items():
        for kind in ("fast", "course"):
            trainer = Trainer.from_preset(name, kind, steps=1)
            assert isinstance(trainer.model_cfg, ModelConfig) and trainer.model_cfg.pad_id == PAD_ID
    assert PRESETS["copy"]["course"].model["d_model"] == 64 and PRESETS["addition"]["course"].model["n_layers"] == 3


@pytest.mark.parametrize("name", ["copy", "addition", "parser"])
def test_shipped_checkpoints_reach_99_percent_through_the_cli(name, capsys):
    path = ROOT / "assets" / "checkpoints" / f"{name}.pt"
    assert path.stat().st_size < 2_000_000
    assert main(["--evaluate", str(path)]) == 0
    out = capsys.readouterr().out
    count, figure = re.search(r"greedy exact match on (\d+) distinct heldout examples: ([\d.]+)%", out).groups()
    assert float(figure) >= 99.0, out
    task = load_checkpoint(path).task
    if name == "parser":  # every expression it holds out, each once (1000 draws reach all of them)
        draws = [task.sources(5000, torch.Generator().manual_seed(s), "fresh") for s in range(3)]
        every = torch.cat(draws).unique(dim=0)  # all 1200 expressions
        assert int(count) == int(task.held_out(every).sum())
    else:
        assert 950 <= int(count) <= 1000, out  # 1000 draws from a large held-out set: few repeats
