"""The one chunked training loop: what `core.train.Trainer` and `core.lab.classifier.ClassifierRun` share.

A run is advanced a few steps at a time (a page trains for half a second, redraws, and trains on), so every
piece of randomness is a function of the run's seed and step, never of how the steps were grouped:
- `chunks(step, finished, n, seconds)` yields steps until the run is finished, `n` steps were taken or
  `seconds` have passed (at least one step when there is one left);
- `seeded_dropout(seed, step, ...)` seeds the global generator from (seed, step) while dropout draws and
  restores it afterwards;
- `adamw(model, ...)` is the optimizer both use: weight decay on matrices only.
"""
from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from typing import TypeVar

import torch
from torch import nn

Record = TypeVar("Record")


def chunks(step: Callable[[], Record], finished: Callable[[], bool], n: int | None = None,
           seconds: float | None = None) -> Iterator[Record]:
    """Yield `step()` while not `finished()`, at most `n` times (None: no limit), stopping once `seconds`
    have passed since the first step began (None: no limit)."""
    start, count = time.perf_counter(), 0
    while not finished() and (n is None or count < n):
        yield step()
        count += 1
        if seconds is not None and time.perf_counter() - start >= seconds:
            return


@contextlib.contextmanager
def seeded_dropout(seed: int, step: int, dropout: float, device: torch.device | None = None):
    """The global generator seeded from (seed, step) inside, restored after (nothing at all without dropout)."""
    if dropout == 0:
        yield
        return
    devices = [device.index or 0] if device is not None and device.type == "cuda" else []
    with torch.random.fork_rng(devices=devices):
        torch.manual_seed(seed * 1_000_003 + step)
        yield


def adamw(model: nn.Module, lr: float, weight_decay: float, **options) -> torch.optim.AdamW:
    """AdamW with weight decay on the matrices (dim >= 2) and none on biases, gains and shifts."""
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return torch.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                              {"params": no_decay, "weight_decay": 0.0}], lr=lr, **options)
