"""The trained models a page can open: the shipped checkpoints and the one this session trained.

Shipped checkpoints (``assets/checkpoints/{copy,addition,parser}.pt``) are loaded once per process with
`st.cache_resource` and shared by every session, so they are read-only: use them under ``torch.no_grad()``
in eval mode and never train them (the training page loads a private copy into a new trainer). The model a
learner trains on the training page lives in that learner's ``st.session_state`` (key `RUN_KEY`, a
`ui.training.Run`), never in a cache.
"""
from __future__ import annotations

from dataclasses import dataclass

import streamlit as st
from torch import nn

from core.checkpoints import Checkpoint, load_checkpoint
from core.tasks import Task
from core.train import CHECKPOINT_DIR

from .i18n import t

SHIPPED = ("copy", "addition", "parser")
RUN_KEY = "train_run"  # session_state key of the training page's run


@dataclass(frozen=True)
class ModelChoice:
    """A trained model with its task; `source` is "session" (trained here) or "shipped"."""
    source: str
    task_name: str
    model: nn.Module
    task: Task

    @property
    def id(self) -> str:
        return f"{self.source}:{self.task_name}"

    def label(self, lang: str | None = None) -> str:
        return t(f"models.{self.source}", lang, task=t(f"task.{self.task_name}", lang))


@st.cache_resource(show_spinner=False)
def shipped(task_name: str) -> Checkpoint:
    """The shipped checkpoint of `task_name` (shared by all sessions: read-only)."""
    return load_checkpoint(CHECKPOINT_DIR / f"{task_name}.pt")


def session_model() -> ModelChoice | None:
    """The model trained (or being trained) on the training page in this session, if any."""
    run = st.session_state.get(RUN_KEY)
    if run is None or run.trainer.step == 0 and not run.pretrained:
        return None
    return ModelChoice("session", run.task_name, run.trainer.model, run.trainer.task)


def choices() -> list[ModelChoice]:
    """Every model a page can open: this session's first (when there is one), then the shipped ones."""
    mine = session_model()
    found = [mine] if mine else []
    return found + [ModelChoice("shipped", name, shipped(name).model, shipped(name).task) for name in SHIPPED]
