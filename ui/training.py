"""A training run that lives in one learner's session and advances a chunk at a time (lesson 9).

`Run` wraps `core.train.Trainer` with what the training page shows: greedy and teacher-forced exact match
on held-out examples every `eval_every` steps, and snapshots of every attention map on one fixed probe
example taken at those moments (the learner scrubs through them). It holds no Streamlit objects: the page
keeps it in ``st.session_state[ui.models.RUN_KEY]`` and calls `advance` once per fragment run.
"""
from __future__ import annotations

import io
import threading
import time
import uuid
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from core.checkpoints import Checkpoint
from core.trace import run_with_trace
from core.evaluation import evaluate
from core.train import TrainConfig, Trainer

# Training between two redraws of a live section (lessons 9, 12, 14 and 15): at most two redraws a second, and a
# click waits at most this long. A live section draws first and trains after: its timer asks for the next run
# while this one trains, so that run starts as soon as this one ends, and Streamlit then drops whatever this run
# enqueued and had not yet sent. Drawn before the chunk, it is sent while the chunk trains (trained first, the
# page stood still for seconds: lesson 9 showed 10 of a copy run's ~15 chunks in session 16's code).
CHUNK_SECONDS = 0.5
EVAL_EXAMPLES, EVAL_SEED = 200, 2024  # held-out draws behind the live accuracy curves (repeats count once)
MAX_EVALUATIONS = 25  # evaluations (and attention snapshots) per run, at most
LEARNED = 0.99  # greedy exact match at which lesson 9 calls a task learned (its fast presets "reach 99%")
KINDS = ("encoder", "decoder", "cross")  # encoder self-attention, decoder masked self-attention, cross-attention
HOOKS = {"encoder": "encoder.layers.{i}.self_attn.hook_weights", "decoder": "decoder.layers.{i}.self_attn.hook_weights",
         "cross": "decoder.layers.{i}.cross_attn.hook_weights"}


@dataclass(frozen=True)
class Evaluation:
    step: int
    exact_match: float  # greedy decoding, whole sequence right
    teacher_forced_exact_match: float
    token_accuracy: float  # greedy
    seconds: float  # evaluation time (not counted as training time)
    n: int  # distinct held-out examples evaluated (EVAL_EXAMPLES draws, repeats once)


@torch.no_grad()
def attention_maps(model: torch.nn.Module, src: torch.Tensor, tgt_in: torch.Tensor) -> dict[str, np.ndarray]:
    """Every attention map of one example: {kind: (layers, heads, n_query, n_key)} as float32 numpy."""
    was_training = model.training
    model.eval()
    _, cache = run_with_trace(model, src, tgt_in)
    model.train(was_training)
    layers = len(model.encoder.layers)
    return {kind: torch.stack([cache[HOOKS[kind].format(i=i)][0] for i in range(layers)]).float().cpu().numpy()
            for kind in KINDS}  # (layers, h, n_q, n_k) each


@dataclass
class Run:
    """One learner's run: the trainer, its evaluations and attention snapshots, and whether it is running."""
    task_name: str
    trainer: Trainer  # None once closed
    pretrained: bool = False
    running: bool = False
    evaluations: list[Evaluation] = field(default_factory=list)
    snapshots: list[tuple[int, dict[str, np.ndarray]]] = field(default_factory=list)  # (step, attention_maps)
    eval_seconds: float = 0.0
    token: str = field(default_factory=lambda: uuid.uuid4().hex)  # tells runs apart (caches keyed on a run)
    # Taken without waiting by `advance`: a second script thread of the same session (Streamlit Cloud forces
    # fast reruns, which start a new thread while the old one still runs) never steps the model at once.
    stepping: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def new(cls, task_name: str, preset: str, device: str, task_options: dict, model_changes: dict,
            **train_changes) -> Run:
        trainer = Trainer.from_preset(task_name, preset, device, task_options, model_changes, **train_changes)
        run = cls(task_name, trainer)
        run.evaluate_now()  # step 0: the untrained model, and a uniform-ish first snapshot
        return run

    @classmethod
    def from_checkpoint(cls, task_name: str, checkpoint: Checkpoint, device: str) -> Run:
        """A run holding a private copy of a shipped model (trained elsewhere; nothing left to train)."""
        trained = checkpoint.metrics.get("train_config", {})
        steps = int(checkpoint.metrics.get("steps", 1))
        cfg = TrainConfig(**{k: tuple(v) if k == "betas" else v for k, v in trained.items()}) if trained else \
            TrainConfig(steps=steps)
        trainer = Trainer(checkpoint.task, checkpoint.config, cfg, device)
        trainer.model.load_state_dict(checkpoint.model.state_dict())
        trainer.step, trainer.elapsed = cfg.steps, float(checkpoint.metrics.get("train_seconds", 0.0))
        run = cls(task_name, trainer, pretrained=True)
        run.evaluate_now()
        return run

    @property
    def eval_every(self) -> int:
        return max(5, -(-self.trainer.train_cfg.steps // MAX_EVALUATIONS))

    @property
    def probe(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The fixed example whose attention is snapshotted: (src (1, n_src), tgt_in (1, n_tgt)), held out."""
        task = self.trainer.task
        split = "heldout" if task.holdout > 0 else "fresh"
        batch = task.batch(1, torch.Generator().manual_seed(EVAL_SEED), split)
        return batch.src.to(self.trainer.device), batch.tgt_in.to(self.trainer.device)

    @property
    def learned(self) -> bool:
        """Whether an evaluation has reached LEARNED greedy exact match."""
        return any(e.exact_match >= LEARNED for e in self.evaluations)

    def evaluate_now(self) -> Evaluation:
        start = time.perf_counter()
        result = evaluate(self.trainer.model, self.trainer.task, n=EVAL_EXAMPLES, seed=EVAL_SEED)
        self.snapshots.append((self.trainer.step, attention_maps(self.trainer.model, *self.probe)))
        seconds = time.perf_counter() - start
        self.eval_seconds += seconds
        found = Evaluation(self.trainer.step, result.exact_match, result.teacher_forced_exact_match,
                           result.token_accuracy, seconds, result.n)
        self.evaluations.append(found)
        return found

    def advance(self, seconds: float = CHUNK_SECONDS) -> int:
        """Train for about `seconds`, evaluating whenever `eval_every` steps have passed since the last evaluation
        (and at the end of the schedule), so the curves and snapshots keep their spacing whatever a chunk holds.
        The evaluation at which the task is first learned ends the chunk, so the page can say so at once rather
        than up to a chunk later. Returns the steps taken (0 when another thread is stepping this run); stops the
        run at the end."""
        if not self.stepping.acquire(blocking=False):
            return 0
        try:
            deadline, taken, learned = time.perf_counter() + seconds, 0, self.learned
            while not self.trainer.done and (taken == 0 or time.perf_counter() < deadline):
                due = self.evaluations[-1].step + self.eval_every - self.trainer.step  # steps to the next evaluation
                left = max(0.0, deadline - time.perf_counter())
                taken += sum(1 for _ in self.trainer.steps(n=max(1, due), seconds=left))
                if self.trainer.step - self.evaluations[-1].step >= self.eval_every or self.trainer.done:
                    if self.evaluate_now().exact_match >= LEARNED and not learned:
                        break
            if self.trainer.done:
                self.running = False
            return taken
        finally:
            self.stepping.release()

    def close(self) -> None:
        """Let go of the model, its optimizer, its history and snapshots: the session that held this run has
        ended for good (ui/limits.py). Waits for a step in progress; the run is unusable afterwards."""
        with self.stepping:
            self.running = False
            self.trainer = None
            self.snapshots, self.evaluations = [], []

    def history_frame(self) -> pd.DataFrame:
        """One row per step (loss, teacher-forced token accuracy, learning rate, seconds) with the evaluations."""
        steps = pd.DataFrame([vars(r) for r in self.trainer.history],
                             columns=["step", "loss", "accuracy", "lr", "seconds", "elapsed"])
        evals = pd.DataFrame([vars(e) for e in self.evaluations]).drop(columns=["seconds", "n"], errors="ignore")
        if evals.empty:
            return steps
        return steps.merge(evals, on="step", how="outer").sort_values("step").reset_index(drop=True)

    def checkpoint_bytes(self) -> bytes:
        """The checkpoint file. Streamlit calls this in a worker thread when the button is clicked: it waits for a
        chunk in progress, so the file never mixes two steps."""
        buffer = io.BytesIO()
        with self.stepping:
            last = self.evaluations[-1] if self.evaluations else None
            metrics = {"heldout_exact_match": last.exact_match, "heldout_examples": last.n} if last else {}
            torch.save(self.trainer.checkpoint(metrics), buffer)
        return buffer.getvalue()

