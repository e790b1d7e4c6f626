"""Checkpoints: plain dicts of tensors and numbers, loadable with ``torch.load(path, weights_only=True)``.

    {"format": FORMAT,
     "config": dataclasses.asdict(ModelConfig),        # rebuilds the architecture
     "state_dict": {parameter name: tensor},            # the trained weights
     "task": {"name": "copy", "options": {...}},        # rebuilds the task and its vocabularies
     "metrics": {"exact_match": 0.998, ...}}            # how it was trained and how well it does

No pickled classes, so loading runs no code from the file. `load_checkpoint` checks the schema and
raises a ValueError that says what is wrong with a file that is not one of ours.
"""
from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .config import ModelConfig
from .model import build_model
from .tasks import Task, make_task

FORMAT = "transformer-explainer-checkpoint/1"
KEYS = ("format", "config", "state_dict", "task", "metrics")


def checkpoint_dict(model: nn.Module, task: Task, metrics: dict | None = None) -> dict:
    """The checkpoint of `model` trained on `task` (tensors on the CPU)."""
    return {"format": FORMAT, "config": dataclasses.asdict(model.cfg),
            "state_dict": {name: t.detach().cpu() for name, t in model.state_dict().items()},
            "task": {"name": task.name, "options": dict(task.options)}, "metrics": dict(metrics or {})}


def save_checkpoint(path: str | Path, model: nn.Module, task: Task, metrics: dict | None = None) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(checkpoint_dict(model, task, metrics), path)
    return path


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint: the model (in eval mode), its task, its config and its metrics."""
    model: nn.Module
    task: Task
    config: ModelConfig
    metrics: dict


def _read(source) -> dict:
    try:
        data = torch.load(source, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError, AttributeError, OSError) as error:
        raise ValueError(f"{source} is not a checkpoint of this app: torch.load failed ({error})") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{source} is not a checkpoint of this app (no {FORMAT!r} format marker)")
    missing = [key for key in KEYS if key not in data]
    if missing:
        raise ValueError(f"{source} is an incomplete checkpoint: missing {missing}")
    return data


def from_dict(data: dict, device="cpu", source="checkpoint") -> Checkpoint:
    """Rebuild model and task from a checkpoint dict, checking every part."""
    task_info = data["task"]
    if not isinstance(task_info, dict) or not isinstance(task_info.get("options"), dict):
        raise ValueError(f"{source}: 'task' must be {{'name': ..., 'options': {{...}}}}")
    if not isinstance(data["metrics"], dict) or not isinstance(data["state_dict"], dict):
        raise ValueError(f"{source}: 'metrics' and 'state_dict' must be dicts")
    try:
        config = ModelConfig(**data["config"])
        task = make_task(task_info.get("name"), **task_info["options"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{source}: bad config or task ({error})") from error
    if (config.src_vocab, config.tgt_vocab) != (len(task.src_vocab), len(task.tgt_vocab)):
        raise ValueError(f"{source}: the model's vocabulary sizes do not match the task's")
    model = build_model(config)
    try:
        model.load_state_dict(data["state_dict"])
    except (RuntimeError, TypeError, AttributeError) as error:
        raise ValueError(f"{source}: the weights do not fit the config ({error})") from error
    return Checkpoint(model.to(device).eval(), task, config, dict(data["metrics"]))


def load_checkpoint(source, device="cpu") -> Checkpoint:
    """Load a checkpoint file (a path or a binary file object) safely (weights_only=True)."""
    return from_dict(_read(source), device, source)
