"""Checkpoints: plain dicts of tensors and numbers, loadable with ``torch.load(path, weights_only=True)``.

    {"format": FORMAT,
     "config": dataclasses.asdict(ModelConfig),        # rebuilds the architecture
     "state_dict": {parameter name: tensor},            # the trained weights
     "task": {"name": "copy", "options": {...}},        # rebuilds the task and its vocabularies
     "metrics": {"exact_match": 0.998, ...}}            # how it was trained and how well it does

No pickled classes, so loading runs no code from the file. `load_checkpoint` checks the schema and
raises a ValueError that says what is wrong with a file that is not one of ours. A file from a stranger (an
upload) is bounded before anything is inflated or built: `torch.save` writes a zip archive of stored
(uncompressed) records, so a compressed record, or records larger than `max_bytes` in all, are refused
unread; and with `limits` every size in the config is checked (exact integers, at most the limit) before
the model is built.
"""
from __future__ import annotations

import dataclasses
import pickle
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from .config import ModelConfig
from .model import build_model
from .tasks import Task, make_task

FORMAT = "transformer-explainer-checkpoint/1"
KEYS = ("format", "config", "state_dict", "task", "metrics")
MAX_BYTES = 64 * 2**20  # the records of a checkpoint, uncompressed (ours are 0.1-0.7 MB)
SIZES = ("src_vocab", "tgt_vocab", "d_model", "n_heads", "n_layers", "d_ff", "max_len")  # ints that cost memory


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


def _check_archive(source, max_bytes: int) -> None:
    """Refuse, before torch reads it, a file whose records are compressed or larger than `max_bytes` in all
    (a 1 MB file of deflated zeros would otherwise inflate to a gigabyte)."""
    try:
        with zipfile.ZipFile(source) as archive:
            records = archive.infolist()
    except FileNotFoundError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
        raise ValueError(f"{source} is not a checkpoint of this app: not a torch.save archive ({error})") from error
    finally:
        if hasattr(source, "seek"):
            source.seek(0)
    if any(record.compress_type != zipfile.ZIP_STORED for record in records):
        raise ValueError(f"{source} is not a checkpoint of this app: compressed records (torch.save stores them)")
    total = sum(record.file_size for record in records)
    if total > max_bytes:
        raise ValueError(f"{source}: {total:,} bytes of records, more than the {max_bytes:,} allowed")


def _read(source, max_bytes: int = MAX_BYTES) -> dict:
    _check_archive(source, max_bytes)
    try:
        data = torch.load(source, map_location="cpu", weights_only=True)
    except FileNotFoundError:
        raise
    except Exception as error:  # whatever a broken archive makes torch raise
        raise ValueError(f"{source} is not a checkpoint of this app: torch.load failed ({error})") from error
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise ValueError(f"{source} is not a checkpoint of this app (no {FORMAT!r} format marker)")
    missing = [key for key in KEYS if key not in data]
    if missing:
        raise ValueError(f"{source} is an incomplete checkpoint: missing {missing}")
    return data


def check_sizes(config: Mapping, limits: Mapping[str, int]) -> None:
    """Every size of a config dict an exact integer within `limits` (ValueError otherwise): checked before a
    model is built from a file, so a config cannot ask for more memory than the lesson's own controls."""
    for name in SIZES:
        value = config.get(name)
        if type(value) is not int or not 1 <= value <= limits.get(name, value):
            raise ValueError(f"config {name}={value!r} must be an integer from 1 to {limits.get(name)}")


def from_dict(data: dict, device="cpu", source="checkpoint", limits: Mapping[str, int] | None = None) -> Checkpoint:
    """Rebuild model and task from a checkpoint dict, checking every part (the sizes against `limits`)."""
    task_info = data["task"]
    if not isinstance(task_info, dict) or not isinstance(task_info.get("options"), dict):
        raise ValueError(f"{source}: 'task' must be {{'name': ..., 'options': {{...}}}}")
    if not isinstance(data["metrics"], dict) or not isinstance(data["state_dict"], dict):
        raise ValueError(f"{source}: 'metrics' and 'state_dict' must be dicts")
    if not isinstance(data["config"], dict):
        raise ValueError(f"{source}: 'config' must be a dict")
    if limits is not None:
        check_sizes(data["config"], limits)
        if not all(type(v) in (int, bool) for k, v in task_info["options"].items() if k != "holdout"):
            raise ValueError(f"{source}: task options (but the held-out share) must be integers or flags")
    try:
        config = ModelConfig(**data["config"])
        task = make_task(task_info.get("name"), **task_info["options"])
    except (TypeError, ValueError) as error:
        raise ValueError(f"{source}: bad config or task ({error})") from error
    if (config.src_vocab, config.tgt_vocab) != (len(task.src_vocab), len(task.tgt_vocab)):
        raise ValueError(f"{source}: the model's vocabulary sizes do not match the task's")
    try:
        model = build_model(config)
        model.load_state_dict(data["state_dict"])
    except (RuntimeError, TypeError, AttributeError, ValueError) as error:
        raise ValueError(f"{source}: the weights do not fit the config ({error})") from error
    return Checkpoint(model.to(device).eval(), task, config, dict(data["metrics"]))


def load_checkpoint(source, device="cpu", limits: Mapping[str, int] | None = None,
                    max_bytes: int = MAX_BYTES) -> Checkpoint:
    """Load a checkpoint file (a path or a binary file object) safely (weights_only=True); `limits` bounds
    the config's sizes ({"d_model": 256, ...}) and `max_bytes` the archive's records, for a file from a stranger."""
    return from_dict(_read(source, max_bytes), device, source, limits)
