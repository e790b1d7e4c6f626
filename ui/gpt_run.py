"""Lesson 14's corpus and training run: a character-level GPT trained on the app's own lesson texts.

The corpus is read here, not in core: the Markdown prose of every lesson in one language
(``lessons/text/*.<lang>.md``), cut into sections by `core.lab.charlm.prose_sections` and split into training and
held-out sections by `core.lab.charlm.Corpus.split`. `GPTRun` wraps `core.lab.gpt.LMTrainer` the way
`ui.training.Run` wraps lesson 9's trainer: the page keeps it in ``st.session_state[RUN_KEY]`` and calls
`advance` once per fragment run; every `SAMPLE_SECONDS` of training it measures the held-out cross-entropy and
writes a sample from a fixed prompt and seed. It holds no Streamlit objects.
"""
from __future__ import annotations

import dataclasses
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import torch

from core.lab.charlm import Baselines, Corpus, Vocab, baselines, prose_sections
from core.lab.gpt import DEFAULT_TRAIN, LMTrainer, heldout_cross_entropy, lm_config
from core.lab.kvcache import generate

ROOT = Path(__file__).resolve().parents[1]
TEXT_DIR = ROOT / "lessons" / "text"
CHECKPOINT_DIR = ROOT / "assets" / "gpt"  # apart from the task checkpoints: another format, another loader
RUN_KEY = "gpt_run"  # session_state key of this session's run
SAMPLE_SECONDS = 3.0  # training seconds between two held-out measurements and samples
SAMPLE_TEMPERATURE = 0.8  # the live samples: a fixed prompt, seed and temperature
LANGS = ("en", "es")


def corpus_sections(lang: str) -> list[str]:
    """Every section of every lesson's prose in `lang`, in lesson order (files sorted by name)."""
    return [s for path in sorted(TEXT_DIR.glob(f"*.{lang}.md")) for s in prose_sections(path.read_text("utf-8"))]


def corpus(lang: str) -> Corpus:
    return Corpus.split(corpus_sections(lang))


def checkpoint_path(lang: str) -> Path:
    return CHECKPOINT_DIR / f"gpt_{lang}.pt"


def sample_text(model: torch.nn.Module, vocab: Vocab, prompt: str, seed: int) -> str:
    """The prompt's continuation up to the end of the model's context, at SAMPLE_TEMPERATURE with `seed`."""
    ids = vocab.encode(prompt)  # (n,)
    found = generate(model, ids, model.cfg.max_len - len(ids), temperature=SAMPLE_TEMPERATURE, seed=seed)
    return vocab.decode(found.tokens.tolist())


@dataclass(frozen=True)
class Measure:
    """The held-out cross-entropy and a sample at one moment of training."""
    step: int
    elapsed: float  # training seconds so far
    heldout: float  # nats per character
    sample: str


@dataclass
class GPTRun:
    """One learner's run: the trainer, the baselines of its corpus, the measures so far, whether it runs."""
    lang: str
    trainer: LMTrainer
    baselines: Baselines
    prompt: str  # the fixed prompt of the live samples
    seed: int
    running: bool = False
    measures: list[Measure] = field(default_factory=list)
    token: str = field(default_factory=lambda: uuid.uuid4().hex)
    stepping: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def new(cls, lang: str, prompt: str, device: str = "cpu", model_changes: dict | None = None,
            **train_changes) -> GPTRun:
        found = corpus(lang)
        cfg = lm_config(len(found.vocab), **(model_changes or {}))
        train_cfg = dataclasses.replace(DEFAULT_TRAIN, **train_changes)
        run = cls(lang, LMTrainer(found, cfg, train_cfg, device), baselines(found), prompt, train_cfg.seed)
        run.measure()  # step 0: the untrained model (about ln V nats per character) and its gibberish
        return run

    @property
    def model(self) -> torch.nn.Module:
        return self.trainer.model

    @property
    def vocab(self) -> Vocab:
        return self.trainer.corpus.vocab

    def measure(self) -> Measure:
        trainer = self.trainer
        found = Measure(trainer.step, trainer.elapsed, heldout_cross_entropy(trainer.model, trainer.heldout_ids),
                        sample_text(trainer.model, self.vocab, self.prompt, self.seed))
        trainer.model.train()
        self.measures.append(found)
        return found

    def advance(self, seconds: float) -> int:
        """Train about `seconds`, then measure if SAMPLE_SECONDS of training have passed since the last measure
        (or the schedule is over). Returns the steps taken (0 when another thread is stepping this run)."""
        if not self.stepping.acquire(blocking=False):
            return 0
        try:
            taken = sum(1 for _ in self.trainer.steps(seconds=seconds))
            last = self.measures[-1]
            due = self.trainer.elapsed - last.elapsed >= SAMPLE_SECONDS
            if self.trainer.step > last.step and (due or self.trainer.done):
                self.measure()
            if self.trainer.done:
                self.running = False
            return taken
        finally:
            self.stepping.release()

    def close(self) -> None:
        """Let go of the model and optimizer (the session ended); waits for a step in progress."""
        with self.stepping:
            self.running = False
            self.trainer = None
            self.measures = []

