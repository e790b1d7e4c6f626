"""Training a small Transformer on a task, a few steps at a time, and evaluating it honestly.

- Teacher forcing: the decoder reads BOS + the true target, shifted right, and predicts every next token.
- Loss: cross-entropy with label smoothing, skipping the labels that are IGNORE_INDEX (padding).
- AdamW, a learning rate that warms up linearly and then decays along a cosine, gradient clipping.
- `Trainer` holds everything a run needs (model, optimizer, step, data generator), so a caller can keep
  it between calls (a Streamlit page keeps it in session_state) and advance it in chunks:
  ``for record in trainer.steps(seconds=0.25): ...``. It never runs past its schedule on its own.
- Evaluation (exact match under greedy decoding, and the teacher-forced figures beside it) lives in
  `core.evaluation`; `Trainer.evaluate` and the command line use it.

Command line (see `main`): ``python -m core.train --task copy [--out PATH]`` trains a preset and saves
a checkpoint; ``python -m core.train --evaluate PATH`` prints a checkpoint's exact match.
"""
from __future__ import annotations

import argparse
import dataclasses
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import torch
import torch.nn.functional as F
from torch import nn

from .checkpoints import checkpoint_dict, load_checkpoint
from .config import ModelConfig
from .evaluation import EvalResult, evaluate, token_matches
from .loop import adamw, chunks, seeded_dropout
from .model import build_model
from .tasks import IGNORE_INDEX, PAD_ID, Task, make_task

ROOT = Path(__file__).resolve().parents[1]
CHECKPOINT_DIR = ROOT / "assets" / "checkpoints"


@dataclass(frozen=True)
class TrainConfig:
    """How to train: the schedule's length, batch, optimizer and regularization."""
    steps: int = 1000  # length of the schedule; the trainer stops there
    batch_size: int = 64
    lr: float = 1e-3  # peak learning rate, reached at the end of the warm-up
    warmup: int = 100  # steps of linear warm-up from lr / warmup to lr
    final_lr_ratio: float = 0.1  # the cosine decays from lr to lr * final_lr_ratio at the last step
    weight_decay: float = 0.01  # AdamW, on matrices only (not on biases and LayerNorm gains)
    betas: tuple[float, float] = (0.9, 0.98)  # the paper's Adam betas
    label_smoothing: float = 0.1
    clip_norm: float = 1.0  # gradient clipping by global norm
    seed: int = 0  # initial weights, training data and dropout

    def __post_init__(self):
        if self.steps < 1 or self.batch_size < 1 or self.warmup < 0 or self.lr <= 0:
            raise ValueError("steps and batch_size must be positive, warmup >= 0, lr > 0")
        if not 0 <= self.label_smoothing < 1 or not 0 <= self.final_lr_ratio <= 1:
            raise ValueError("label_smoothing must be in [0, 1) and final_lr_ratio in [0, 1]")


@dataclass(frozen=True)
class Preset:
    """A ready configuration: ModelConfig fields (without the vocabulary sizes), training and task options."""
    model: dict
    train: TrainConfig
    task: dict = field(default_factory=dict)


# "course": the course reference's sizes (d_model / layers / heads / d_ff) and its batches, with dropout 0.1.
# "fast": tuned on a 2-core CPU with one torch thread to reach 99% greedy exact match on held-out examples
# quickly (see tests/benchmarks/bench_training.py). Small models with a high learning rate win there: these
# tasks have unlimited fresh data, so dropout only slows learning, and a CPU step costs about as much per
# operation as per number, so fewer, smaller layers make each step cheaper.
COURSE_MODEL = dict(dropout=0.1, positional="sinusoidal", norm_first=True)
FAST_MODEL = dict(dropout=0.0, positional="sinusoidal", norm_first=True)
PRESETS: dict[str, dict[str, Preset]] = {
    "copy": {
        "course": Preset(dict(COURSE_MODEL, d_model=64, n_layers=2, n_heads=2, d_ff=128),
                         TrainConfig(steps=3000, batch_size=64, lr=5e-4, warmup=200)),
        "fast": Preset(dict(FAST_MODEL, d_model=32, n_layers=1, n_heads=2, d_ff=64),
                       TrainConfig(steps=400, batch_size=64, lr=1e-2, warmup=60)),
    },
    "addition": {
        "course": Preset(dict(COURSE_MODEL, d_model=256, n_layers=3, n_heads=4, d_ff=512),
                         TrainConfig(steps=1500, batch_size=128, lr=5e-4, warmup=150)),
        "fast": Preset(dict(FAST_MODEL, d_model=64, n_layers=2, n_heads=4, d_ff=128),
                       TrainConfig(steps=1200, batch_size=128, lr=5e-3, warmup=100)),
    },
    "parser": {
        "course": Preset(dict(COURSE_MODEL, d_model=128, n_layers=3, n_heads=4, d_ff=512),
                         TrainConfig(steps=500, batch_size=64, lr=5e-4, warmup=50)),
        "fast": Preset(dict(FAST_MODEL, d_model=32, n_layers=2, n_heads=2, d_ff=64),
                       TrainConfig(steps=120, batch_size=64, lr=1e-2, warmup=20)),
    },
}
# Extra tasks: reversal learns like copy; sorting needs a second layer and more steps (about 550 to 99%).
PRESETS["reverse"] = PRESETS["copy"]
PRESETS["sort"] = {"course": PRESETS["copy"]["course"],
                   "fast": Preset(dict(FAST_MODEL, d_model=32, n_layers=2, n_heads=2, d_ff=64),
                                  TrainConfig(steps=600, batch_size=64, lr=1e-2, warmup=60))}


def model_config(task: Task, **fields) -> ModelConfig:
    """The ModelConfig for `task`: its vocabulary sizes, room for its longest sequences, PAD masked out."""
    max_len = max(task.max_src_len, task.max_tgt_len + 1)
    return ModelConfig(src_vocab=len(task.src_vocab), tgt_vocab=len(task.tgt_vocab), max_len=max_len,
                       pad_id=PAD_ID, **fields)


def learning_rate(step: int, cfg: TrainConfig) -> float:
    """Learning rate of step `step` (0-based): linear warm-up to cfg.lr, then a cosine down to lr * final_lr_ratio."""
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = min(1.0, (step - cfg.warmup) / max(1, cfg.steps - 1 - cfg.warmup))
    floor = cfg.lr * cfg.final_lr_ratio
    return floor + (cfg.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def sequence_loss(logits: torch.Tensor, labels: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Mean cross-entropy over the labels that are not IGNORE_INDEX: logits (batch, n, vocab), labels (batch, n).

    With label smoothing ε the target distribution is (1 - ε) on the true token plus ε / vocab everywhere.
    """
    return F.cross_entropy(logits.flatten(0, 1), labels.flatten(), ignore_index=IGNORE_INDEX,
                           label_smoothing=label_smoothing)


@dataclass(frozen=True)
class StepRecord:
    """One training step: its number (1-based), loss, teacher-forced token accuracy, learning rate,
    the seconds it took and the training seconds so far."""
    step: int
    loss: float
    accuracy: float
    lr: float
    seconds: float
    elapsed: float


class Trainer:
    """A training run that can be advanced a few steps at a time and resumed later.

    Holds the model, the optimizer, the step counter and the data generator; the learning rate is a
    function of the step, and dropout is seeded from (seed, step), so a run advanced in chunks equals
    one advanced in one go.
    """

    def __init__(self, task: Task, model_cfg: ModelConfig, train_cfg: TrainConfig = TrainConfig(),
                 device: str | torch.device = "cpu"):
        self.task, self.model_cfg, self.train_cfg = task, model_cfg, train_cfg
        self.device = torch.device(device)
        self.model = build_model(model_cfg, seed=train_cfg.seed).to(self.device)
        self.optimizer = adamw(self.model, learning_rate(0, train_cfg), train_cfg.weight_decay,
                               betas=train_cfg.betas, fused=self.device.type in ("cpu", "cuda"))
        self.data = torch.Generator().manual_seed(train_cfg.seed)
        self.step, self.elapsed = 0, 0.0
        self.history: list[StepRecord] = []

    @classmethod
    def from_preset(cls, task_name: str, preset: str = "fast", device="cpu", task_options: dict | None = None,
                    model_changes: dict | None = None, **train_changes) -> "Trainer":
        """A trainer for a registered task and preset ("fast" or "course").

        `task_options` edit the task (e.g. ``{"digits": 4}``), `model_changes` the ModelConfig fields
        (e.g. ``{"d_model": 64}``) and `train_changes` the TrainConfig (e.g. ``seed=1, steps=500``).
        """
        chosen = PRESETS[task_name][preset]
        task = make_task(task_name, **{**chosen.task, **(task_options or {})})
        cfg = model_config(task, **{**chosen.model, **(model_changes or {})})
        return cls(task, cfg, dataclasses.replace(chosen.train, **train_changes), device)

    @property
    def done(self) -> bool:
        return self.step >= self.train_cfg.steps

    def _dropout_rng(self):
        """Dropout seeded from (seed, step) (core.loop.seeded_dropout)."""
        return seeded_dropout(self.train_cfg.seed, self.step, self.model_cfg.dropout, self.device)

    def train_step(self) -> StepRecord:
        """One optimizer step on a fresh training batch."""
        start = time.perf_counter()
        cfg = self.train_cfg
        lr = learning_rate(self.step, cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        batch = self.task.batch(cfg.batch_size, self.data, "train").to(self.device)
        self.model.train()
        with self._dropout_rng():
            logits = self.model(batch.src, batch.tgt_in)  # (batch, n_tgt, tgt_vocab)
        loss = sequence_loss(logits, batch.tgt_out, cfg.label_smoothing)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm)
        self.optimizer.step()
        correct, counted = token_matches(logits.detach().argmax(-1), batch.tgt_out)
        self.step += 1
        seconds = time.perf_counter() - start
        self.elapsed += seconds
        record = StepRecord(self.step, loss.item(), (correct.sum() / counted.sum()).item(), lr, seconds, self.elapsed)
        self.history.append(record)
        return record

    def steps(self, n: int | None = None, seconds: float | None = None) -> Iterator[StepRecord]:
        """Yield up to `n` steps (None: to the end of the schedule), stopping once `seconds` have passed."""
        return chunks(self.train_step, lambda: self.done, n, seconds)

    def evaluate(self, n: int = 1000, split: str | None = None, seed: int = 2024) -> EvalResult:
        """`evaluate` of this trainer's model on its task (held-out examples by default)."""
        return evaluate(self.model, self.task, n=n, split=split, seed=seed)

    def checkpoint(self, metrics: dict | None = None) -> dict:
        """The checkpoint dict of the model as it is now (see core.checkpoints), with how it was trained."""
        trained = {"steps": self.step, "train_seconds": self.elapsed,
                   "train_config": dataclasses.asdict(self.train_cfg)}
        return checkpoint_dict(self.model, self.task, trained | (metrics or {}))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m core.train", description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=sorted(PRESETS), help="train this task and save a checkpoint")
    parser.add_argument("--preset", choices=("fast", "course"), default="fast")
    parser.add_argument("--out", type=Path, help="checkpoint to write (default assets/checkpoints/TASK.pt)")
    parser.add_argument("--evaluate", type=Path, metavar="PATH", help="evaluate this checkpoint instead")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest for these small models)")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.evaluate:
        loaded = load_checkpoint(args.evaluate, device=args.device)
        print(f"{args.evaluate}: {loaded.task!r}")
        for split in ("heldout", "fresh", "out_of_range"):
            try:
                result = evaluate(loaded.model, loaded.task, split=split)
            except ValueError:  # the task has no such split (e.g. holdout=0, or full-range addition)
                continue
            print(f"greedy exact match on {result.n} distinct {result.split} examples: {result.exact_match:.2%} "
                  f"(token accuracy {result.token_accuracy:.2%}; teacher-forced exact match "
                  f"{result.teacher_forced_exact_match:.2%})")
        return 0
    if not args.task:
        parser.error("give --task NAME to train, or --evaluate PATH")
    trainer = Trainer.from_preset(args.task, args.preset, args.device, seed=args.seed)
    for record in trainer.steps():
        if record.step % 100 == 0 or trainer.done:
            print(f"step {record.step:5d}  loss {record.loss:.4f}  token acc {record.accuracy:.3f}  "
                  f"lr {record.lr:.2e}  {record.elapsed:.1f} s")
    result = trainer.evaluate()
    out = args.out or CHECKPOINT_DIR / f"{args.task}.pt"
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(trainer.checkpoint({"exact_match": result.exact_match, "token_accuracy": result.token_accuracy,
                                   "eval_split": result.split, "eval_n": result.n}), out)
    print(f"greedy exact match on {result.n} distinct {result.split} examples: {result.exact_match:.2%}; saved {out} "
          f"({out.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
