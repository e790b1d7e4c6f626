"""Error analysis of a trained model: where its greedy answers go wrong.

`error_report` decodes `n` examples greedily (the encoder once per batch, as `core.evaluation.evaluate`) and
breaks the result down by target position (which output token is wrong most often) and by the task's own
groups (`Task.categories`: the number of carries in an addition, the operator of a parsed expression),
keeping a few wrong answers to look at.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..decoding import greedy_decode
from ..tasks import BOS_ID, EOS_ID, PAD, PAD_ID, Task
from ..evaluation import default_split, token_matches


@dataclass(frozen=True)
class ErrorReport:
    """Greedy exact match overall and per group, token accuracy per target position, some wrong answers."""
    n: int
    split: str
    exact_match: float
    position_accuracy: list[float]  # position i of the target (the last counted one is EOS)
    position_count: list[int]  # how many examples have a token at position i
    groups: dict[str, tuple[float, int]]  # group label -> (exact match, examples); empty if the task has none
    mistakes: list[tuple[str, str, str]]  # (source, expected, predicted) as text


def _text(task: Task, ids: list[int], source: bool) -> str:
    if source:
        return task.format_source([s for s in task.src_vocab.decode(ids) if s != PAD])
    return task.decode_target(ids)


@torch.no_grad()
def error_report(model: nn.Module, task: Task, n: int = 1000, split: str | None = None, seed: int = 2024,
                 keep: int = 8) -> ErrorReport:
    """Greedy answers of `model` on `n` examples of `split` (default: held out, as `evaluate`), analysed."""
    split = split or default_split(task)
    batch = task.batch(n, torch.Generator().manual_seed(seed), split)
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    labels = batch.tgt_out.to(device)  # (n, T + 1), IGNORE_INDEX after EOS
    width = labels.shape[1]
    greedy = greedy_decode(model, batch.src.to(device), width, BOS_ID, EOS_ID, PAD_ID)  # (n, k <= width)
    greedy = F.pad(greedy, (0, width - greedy.shape[1]), value=PAD_ID)  # (n, width)
    model.train(was_training)
    right, counted = token_matches(greedy, labels)  # (n, width) each
    exact = (right == counted).all(dim=1).cpu()  # (n,)
    per_position = right.sum(0).cpu() / counted.sum(0).clamp(min=1).cpu()  # (width,)
    groups: dict[str, tuple[float, int]] = {}
    labels_of_rows = task.categories(batch.src)
    if labels_of_rows is not None:
        for label in sorted(set(labels_of_rows)):
            rows = torch.tensor([g == label for g in labels_of_rows])  # (n,)
            groups[label] = (exact[rows].float().mean().item(), int(rows.sum()))
    wrong = (~exact).nonzero().flatten()[:keep].tolist()
    mistakes = [(_text(task, batch.src[i].tolist(), True), _text(task, task.solve(batch.src[i:i + 1])[0].tolist(),
                                                                  False), _text(task, greedy[i].tolist(), False))
                for i in wrong]
    return ErrorReport(n, split, exact.float().mean().item(), per_position.tolist(),
                       counted.sum(0).cpu().tolist(), groups, mistakes)
