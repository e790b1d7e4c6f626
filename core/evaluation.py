"""Honest evaluation of a trained model: whole-sequence exact match under greedy decoding (what the model
does on its own), token accuracy, and the teacher-forced figures beside them to show the gap; and the
model's greedy answer to one input a learner typed."""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .decoding import greedy_decode
from .tasks import BOS_ID, EOS_ID, IGNORE_INDEX, PAD_ID, Batch, Task


def token_matches(predicted: torch.Tensor, labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(correct, counted): both (batch, n) booleans; positions whose label is IGNORE_INDEX are not counted."""
    counted = labels != IGNORE_INDEX
    return (predicted == labels) & counted, counted


@dataclass(frozen=True)
class EvalResult:
    """Exact match (every token of the sequence right, EOS included) and token accuracy, greedy and teacher-forced."""
    exact_match: float
    token_accuracy: float
    teacher_forced_exact_match: float
    teacher_forced_token_accuracy: float
    n: int
    split: str
    seconds: float


def default_split(task: Task) -> str:
    """Held-out examples when the task holds some out (never trained on), else fresh draws."""
    return "heldout" if task.holdout > 0 else "fresh"


@torch.no_grad()
def evaluate(model: nn.Module, task: Task, n: int = 1000, split: str | None = None, seed: int = 2024,
             batch_size: int = 1000) -> EvalResult:
    """Greedy and teacher-forced accuracy of `model` on the distinct examples among `n` draws of `split` with `seed`.

    By default the held-out split (never trained on), or fresh draws when the task holds nothing out. Draws repeat
    in a small task (the parser holds out about 120 expressions), so repeats are evaluated once: the result's `n`
    is how many distinct examples were evaluated.
    """
    start = time.perf_counter()
    requested, split = split, split or default_split(task)
    try:
        batch = task.batch(n, torch.Generator().manual_seed(seed), split)
    except ValueError:
        if requested is not None:
            raise
        split = "fresh"  # the default, in a task space too small to hold anything out
        batch = task.batch(n, torch.Generator().manual_seed(seed), split)
    src = torch.unique(batch.src, dim=0)  # (n_distinct, n_src): each example once
    batch = Batch(src, *task.targets(src))
    n = src.shape[0]
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    totals = torch.zeros(6)  # greedy right, greedy exact, teacher-forced right, teacher-forced exact, counted, rows
    for first in range(0, n, batch_size):
        src, tgt_in, labels = (t[first:first + batch_size].to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
        width = labels.shape[1]
        greedy = greedy_decode(model, src, width, BOS_ID, EOS_ID, PAD_ID)  # (b, k <= width)
        greedy = F.pad(greedy, (0, width - greedy.shape[1]), value=PAD_ID)  # (b, width)
        forced = model(src, tgt_in).argmax(-1)  # (b, width)
        g_right, counted = token_matches(greedy, labels)
        f_right, _ = token_matches(forced, labels)
        totals += torch.tensor([g_right.sum(), (g_right == counted).all(1).sum(), f_right.sum(),
                                (f_right == counted).all(1).sum(), counted.sum(), src.shape[0]], dtype=torch.float)
    model.train(was_training)
    g_right, g_exact, f_right, f_exact, counted, rows = totals.tolist()
    return EvalResult(g_exact / rows, g_right / counted, f_exact / rows, f_right / counted, n, split,
                      time.perf_counter() - start)


@dataclass(frozen=True)
class Prediction:
    """A model's greedy answer to a learner's input: source ids (1, n_src), generated ids (1, k) ending in EOS
    when the model stopped, the logits of every step (1, k, tgt_vocab), the answer as text and the expected one."""
    src: torch.Tensor
    tokens: torch.Tensor
    logits: torch.Tensor
    text: str
    expected: str


@torch.no_grad()
def predict(model: nn.Module, task: Task, text: str) -> Prediction:
    """Greedy-decode the learner's `text` (TaskInputError if the task cannot read it)."""
    was_training = model.training
    model.eval()
    src = task.encode_source(text).to(next(model.parameters()).device)  # (1, n_src)
    tokens, logits = greedy_decode(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID, return_logits=True)
    model.train(was_training)
    expected = task.format_target(task.answer(task.parse(text)))
    return Prediction(src, tokens, logits, task.decode_target(tokens[0].tolist()), expected)
