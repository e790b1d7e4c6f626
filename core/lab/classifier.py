"""An encoder classifier of the two-range task (`core.lab.classifier_data`), for the depth experiment (lesson 12).

The model (`EncoderClassifier`): sqrt(d_model) * embedding + sinusoidal positions -> N encoder layers (the
package's `Encoder`, pre-norm or post-norm) -> mean of the outputs of the non-padding tokens -> a linear head
to the class logits. `ClassifierRun` trains one such model a few steps at a time (AdamW, constant learning
rate, fresh seeded batches) and evaluates it on a fixed test set at the end of every epoch; its steps go
through `core.loop.chunks`, the chunked loop `core.train.Trainer` runs too.

The task's names (`RangeTask`, `CLASS_RANGES`, `PAD_ID`) are importable from here as well, where the lesson and
the tests import them.
"""
from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import ModelConfig
from ..layers import Encoder
from ..loop import adamw, chunks, seeded_dropout
from ..masks import padding_mask
from ..model import Embeddings, init_parameters
from .classifier_data import CLASS_RANGES, PAD_ID, RangeTask

__all__ = ["CLASS_RANGES", "PAD_ID", "ClassifierConfig", "ClassifierRun", "EncoderClassifier",
           "EpochRecord", "RangeTask", "RunConfig", "StepRecord", "advance", "build_classifier", "count_parameters",
           "finite", "first_epoch_at", "mean_pool", "parameter_formula"]


@dataclass(frozen=True)
class ClassifierConfig:
    """The classifier's sizes. The encoder layers are the package's; `model_config` describes them."""
    n_layers: int = 1
    norm_first: bool = True  # pre-norm (GPT-2, the course) or post-norm (the 2017 paper, BERT)
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 128
    vocab: int = 200
    n_classes: int = 2
    max_len: int = 20
    dropout: float = 0.0

    def model_config(self) -> ModelConfig:
        return ModelConfig(src_vocab=self.vocab, tgt_vocab=self.n_classes, d_model=self.d_model,
                           n_heads=self.n_heads, n_layers=self.n_layers, d_ff=self.d_ff, max_len=self.max_len,
                           dropout=self.dropout, norm_first=self.norm_first, pad_id=PAD_ID)


class EncoderClassifier(nn.Module):
    """tokens (batch, n) -> class logits (batch, n_classes). PAD tokens are masked as keys and left out of the mean."""

    def __init__(self, cfg: ClassifierConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = Embeddings(cfg.vocab, cfg.d_model, cfg.max_len, "sinusoidal", cfg.dropout)
        self.encoder = Encoder(cfg.model_config())
        self.head = nn.Linear(cfg.d_model, cfg.n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(self.embed(tokens), padding_mask(tokens, PAD_ID))  # (batch, n, d_model)
        return self.head(mean_pool(hidden, tokens != PAD_ID))  # (batch, n_classes)


def mean_pool(hidden: torch.Tensor, keep: torch.Tensor) -> torch.Tensor:
    """Mean of the vectors where `keep` is True: hidden (batch, n, d), keep (batch, n) -> (batch, d).

    A row with nothing to keep gives zeros (the count is clamped to 1), not NaN."""
    weights = keep.to(hidden.dtype)[..., None]  # (batch, n, 1)
    return (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1.0)  # (batch, d)


def build_classifier(cfg: ClassifierConfig, seed: int = 0) -> EncoderClassifier:
    """The classifier initialized from `seed` alone (Xavier matrices, zero biases), global RNG left alone."""
    with torch.random.fork_rng(devices=[]):
        model = EncoderClassifier(cfg)
    return init_parameters(model, seed)


def count_parameters(model: nn.Module) -> int:
    """Trainable parameters (the sinusoidal table is a buffer, not a parameter)."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


@dataclass(frozen=True)
class RunConfig:
    """How to train: an epoch is `steps_per_epoch` fresh batches; the learning rate is constant."""
    epochs: int = 10
    steps_per_epoch: int = 50
    batch_size: int = 64
    lr: float = 1e-3
    weight_decay: float = 0.01  # AdamW, on matrices only
    seed: int = 0  # initial weights and training batches

    def __post_init__(self):
        if min(self.epochs, self.steps_per_epoch, self.batch_size) < 1 or self.lr <= 0 or self.weight_decay < 0:
            raise ValueError("epochs, steps_per_epoch and batch_size must be positive, lr > 0, weight_decay >= 0")


@dataclass(frozen=True)
class StepRecord:
    """One optimizer step: its number (1-based), epoch (1-based), batch loss and accuracy, seconds it took;
    `test_accuracy` is set on the last step of an epoch (the test set was evaluated), else None."""
    step: int
    epoch: int
    loss: float
    accuracy: float
    seconds: float
    test_accuracy: float | None = None


@dataclass(frozen=True)
class EpochRecord:
    """One finished epoch: mean training loss and accuracy over its steps, test loss and accuracy at its end."""
    epoch: int
    train_loss: float
    train_accuracy: float
    test_loss: float
    test_accuracy: float
    seconds: float  # training seconds of the epoch (evaluation excluded)


class ClassifierRun:
    """One training run that can be advanced a few steps at a time and resumed later.

    The learning rate is constant and the batches come from a generator seeded with `run.seed`, so a run
    advanced in chunks equals one advanced in one go, and asking for more epochs later continues exactly
    where a longer run would have been.
    """

    def __init__(self, task: RangeTask, model_cfg: ClassifierConfig, run_cfg: RunConfig = RunConfig()):
        self.task, self.model_cfg, self.run_cfg = task, model_cfg, run_cfg
        self.model = build_classifier(model_cfg, seed=run_cfg.seed)
        self.optimizer = adamw(self.model, run_cfg.lr, run_cfg.weight_decay)
        self.data = torch.Generator().manual_seed(run_cfg.seed)
        self.test_tokens, self.test_labels = task.test_set()  # (test_size, length), (test_size,)
        self.step, self.elapsed = 0, 0.0
        self.history: list[EpochRecord] = []
        self._epoch_steps: list[StepRecord] = []
        self.n_parameters = count_parameters(self.model)

    @property
    def epoch(self) -> int:
        """Epochs finished."""
        return len(self.history)

    def done(self, epochs: int | None = None) -> bool:
        return self.epoch >= (self.run_cfg.epochs if epochs is None else epochs)

    def _dropout_rng(self):
        """Dropout seeded from (seed, step) (core.loop.seeded_dropout)."""
        return seeded_dropout(self.run_cfg.seed, self.step, self.model_cfg.dropout)

    def train_step(self) -> StepRecord:
        """One AdamW step on a fresh batch; at the end of an epoch, evaluate on the test set."""
        start = time.perf_counter()
        tokens, labels = self.task.sample(self.run_cfg.batch_size, self.data)  # (batch, length), (batch,)
        self.model.train()
        with self._dropout_rng():
            logits = self.model(tokens)  # (batch, n_classes)
        loss = F.cross_entropy(logits, labels)  # (), the batch's mean
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.step += 1
        seconds = time.perf_counter() - start
        self.elapsed += seconds
        accuracy = (logits.detach().argmax(-1) == labels).float().mean().item()
        record = StepRecord(self.step, self.epoch + 1, loss.item(), accuracy, seconds)
        self._epoch_steps.append(record)
        if len(self._epoch_steps) == self.run_cfg.steps_per_epoch:
            record = StepRecord(**{**record.__dict__, "test_accuracy": self._end_epoch().test_accuracy})
        return record

    def _end_epoch(self) -> EpochRecord:
        steps, self._epoch_steps = self._epoch_steps, []
        test_loss, test_accuracy = self.evaluate()
        epoch = EpochRecord(self.epoch + 1, sum(s.loss for s in steps) / len(steps),
                            sum(s.accuracy for s in steps) / len(steps), test_loss, test_accuracy,
                            sum(s.seconds for s in steps))
        self.history.append(epoch)
        return epoch

    @torch.no_grad()
    def evaluate(self) -> tuple[float, float]:
        """(cross-entropy, accuracy) on the fixed test set, in eval mode."""
        self.model.eval()
        logits = self.model(self.test_tokens)  # (test_size, n_classes)
        loss = F.cross_entropy(logits, self.test_labels).item()  # the test set's mean
        return loss, (logits.argmax(-1) == self.test_labels).float().mean().item()

    def steps(self, n: int | None = None, seconds: float | None = None,
              epochs: int | None = None) -> Iterator[StepRecord]:
        """Yield up to `n` steps (None: until `epochs` epochs are done, default the config's), stopping once
        `seconds` have passed. Never runs past `epochs`."""
        return chunks(self.train_step, lambda: self.done(epochs), n, seconds)


def advance(runs: list[ClassifierRun], epochs: int, seconds: float) -> None:
    """Round-robin: one step of every unfinished run in turn, until `seconds` have passed or all are done."""
    def one_round() -> None:
        for run in runs:
            if not run.done(epochs):
                run.train_step()
    for _ in chunks(one_round, lambda: all(run.done(epochs) for run in runs), seconds=seconds):
        pass


def parameter_formula(cfg: ClassifierConfig) -> dict[str, int]:
    """The parameter count by part, from the sizes alone (the page prints it beside the model's own count).

    embeddings V d; per layer: attention 4 (d² + d), FFN 2 d d_ff + d_ff + d, two LayerNorms 4 d;
    a final LayerNorm 2 d when pre-norm; head d C + C."""
    d, ff = cfg.d_model, cfg.d_ff
    layer = 4 * (d * d + d) + (2 * d * ff + ff + d) + 4 * d
    parts = {"embeddings": cfg.vocab * d, "layers": cfg.n_layers * layer, "final_norm": 2 * d if cfg.norm_first else 0,
             "head": d * cfg.n_classes + cfg.n_classes}
    return parts | {"total": sum(parts.values())}


def first_epoch_at(history: list[EpochRecord], accuracy: float = 1.0) -> int | None:
    """The first epoch whose test accuracy reached `accuracy`, or None."""
    return next((e.epoch for e in history if e.test_accuracy >= accuracy), None)


def finite(x: float) -> float | None:
    """x, or None when it is NaN or infinite (a diverged run), for tables and charts."""
    return x if math.isfinite(x) else None
