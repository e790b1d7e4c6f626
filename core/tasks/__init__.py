"""Toy sequence-to-sequence tasks to train a small Transformer on: generated data only, never downloaded.

`base` holds what every task shares (special tokens, vocabularies, batches, held-out rows, the `Task` base
class; its docstring explains the batch layout and the splits); one module per kind of task; `make_task`
builds a registered task by name.
"""
from __future__ import annotations

from .addition import AdditionTask
from .base import (BOS, BOS_ID, EOS, EOS_ID, IGNORE_INDEX, PAD, PAD_ID, SPECIALS, SPLITS, Batch, Task, TaskInputError,
                   Vocabulary, held_out_mask, pad_rows)
from .parser import ParserTask
from .sequences import CopyTask, ReverseTask, SortTask

__all__ = ["AdditionTask", "BOS", "BOS_ID", "Batch", "CopyTask", "EOS", "EOS_ID", "IGNORE_INDEX", "PAD", "PAD_ID",
           "ParserTask", "ReverseTask", "SPECIALS", "SPLITS", "SortTask", "TASKS", "Task", "TaskInputError",
           "Vocabulary", "held_out_mask", "make_task", "pad_rows"]

TASKS: dict[str, type[Task]] = {cls.name: cls for cls in (CopyTask, AdditionTask, ParserTask, ReverseTask, SortTask)}


def make_task(name: str, **options) -> Task:
    """The registered task `name` with `options` (a ValueError names the known tasks)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of {sorted(TASKS)}")
    return TASKS[name](**options)
