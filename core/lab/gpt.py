"""A small GPT: a decoder-only, pre-norm, causal Transformer trained to predict the next character.

`LMTrainer` trains `core.model.DecoderOnly` on a `core.lab.charlm.Corpus` a few steps at a time (the page owns
the loop, as with core.train.Trainer): random windows of the training text, cross-entropy of every next
character, AdamW with warm-up and a cosine (core.train.learning_rate), gradient clipping. `heldout_cross_entropy`
is the honest figure: nats per character on the held-out text, never trained on, the same characters the
baselines predict. Generation (`generate`) lives in core.lab.kvcache.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from ..config import ModelConfig
from ..loop import adamw, chunks, seeded_dropout
from ..model import build_model
from ..train import StepRecord, TrainConfig, learning_rate
from .charlm import Corpus, Vocab, consecutive_windows, random_windows

IGNORE = -100  # a padded target (consecutive_windows)
# The default preset, chosen on this project's 2-core CPU (one torch thread): about 8 steps a second, held-out
# cross-entropy about 0.75x the bigram's after 60 s (tests/benchmarks/bench_training.py --gpt). A context of 128
# with half the batch learned more slowly in the same time.
DEFAULT_MODEL = dict(d_model=64, n_heads=4, n_layers=2, d_ff=256, max_len=64, dropout=0.0,
                     positional="learned", norm_first=True, activation="gelu")
DEFAULT_TRAIN = TrainConfig(steps=1500, batch_size=32, lr=1e-2, warmup=50, final_lr_ratio=0.1,
                            weight_decay=0.01, betas=(0.9, 0.98), label_smoothing=0.0, clip_norm=1.0, seed=0)


def lm_config(vocab: int, **fields) -> ModelConfig:
    """A decoder-only ModelConfig for a character vocabulary of size `vocab` (`fields` change DEFAULT_MODEL)."""
    return ModelConfig(src_vocab=vocab, tgt_vocab=vocab, kind="decoder-only", pad_id=None,
                       **{**DEFAULT_MODEL, **fields})


def lm_loss(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Mean -ln p(next character): logits (batch, n, V), targets (batch, n) with IGNORE where padded."""
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=IGNORE)


@torch.no_grad()
def heldout_cross_entropy(model: nn.Module, ids: torch.Tensor, batch_windows: int = 64) -> float:
    """Nats per character of `model` on the text `ids` (n,): every character after the first, once."""
    context = model.cfg.max_len
    x, y = consecutive_windows(ids, context)  # (windows, context) each
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    total, counted = 0.0, int((y != IGNORE).sum())
    for first in range(0, len(x), batch_windows):
        xb, yb = x[first:first + batch_windows].to(device), y[first:first + batch_windows].to(device)
        logits = model(xb)  # (b, context, V)
        total += float(F.cross_entropy(logits.flatten(0, 1), yb.flatten(), ignore_index=IGNORE, reduction="sum"))
    model.train(was_training)
    return total / counted


class LMTrainer:
    """A character-level GPT training run, advanced a few steps at a time (see core.train.Trainer)."""

    def __init__(self, corpus: Corpus, model_cfg: ModelConfig, train_cfg: TrainConfig = DEFAULT_TRAIN,
                 device: str | torch.device = "cpu"):
        if model_cfg.kind != "decoder-only" or model_cfg.tgt_vocab != len(corpus.vocab):
            raise ValueError("a decoder-only model over the corpus's vocabulary is needed")
        self.corpus, self.model_cfg, self.train_cfg = corpus, model_cfg, train_cfg
        self.device = torch.device(device)
        self.model = build_model(model_cfg, seed=train_cfg.seed).to(self.device)
        self.optimizer = adamw(self.model, learning_rate(0, train_cfg), train_cfg.weight_decay, betas=train_cfg.betas)
        self.train_ids, self.heldout_ids = corpus.ids("train"), corpus.ids("heldout")  # (n_train,), (n_heldout,)
        self.data = torch.Generator().manual_seed(train_cfg.seed)
        self.step, self.elapsed = 0, 0.0
        self.history: list[StepRecord] = []

    @property
    def done(self) -> bool:
        return self.step >= self.train_cfg.steps

    def train_step(self) -> StepRecord:
        """One optimizer step on `batch_size` random windows of the training text."""
        start = time.perf_counter()
        cfg = self.train_cfg
        lr = learning_rate(self.step, cfg)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        x, y = random_windows(self.train_ids, cfg.batch_size, self.model_cfg.max_len, self.data)  # (b, n) each
        x, y = x.to(self.device), y.to(self.device)
        self.model.train()
        with seeded_dropout(cfg.seed, self.step, self.model_cfg.dropout, self.device):
            logits = self.model(x)  # (b, n, V)
        loss = lm_loss(logits, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(self.model.parameters(), cfg.clip_norm)
        self.optimizer.step()
        accuracy = (logits.detach().argmax(-1) == y).float().mean().item()
        self.step += 1
        seconds = time.perf_counter() - start
        self.elapsed += seconds
        record = StepRecord(self.step, loss.item(), accuracy, lr, seconds, self.elapsed)
        self.history.append(record)
        return record

    def steps(self, n: int | None = None, seconds: float | None = None):
        """Yield up to `n` steps (None: to the end of the schedule), stopping once `seconds` have passed."""
        return chunks(self.train_step, lambda: self.done, n, seconds)

    def heldout(self) -> float:
        return heldout_cross_entropy(self.model, self.heldout_ids)

    def checkpoint(self, metrics: dict | None = None) -> dict:
        """A plain dict: the model config and weights, the vocabulary, how it was trained."""
        trained = {"steps": self.step, "train_seconds": self.elapsed,
                   "train_config": dataclasses.asdict(self.train_cfg)}
        return {"config": dataclasses.asdict(self.model_cfg), "state_dict": self.model.state_dict(),
                "vocab": self.corpus.vocab.chars, "metrics": trained | (metrics or {})}


@dataclass(frozen=True)
class CharModel:
    """A trained character model (eval mode) with its vocabulary and what its checkpoint says about it."""
    model: nn.Module
    vocab: Vocab
    metrics: dict


def load_char_model(source, device: str = "cpu") -> CharModel:
    """A checkpoint written from `LMTrainer.checkpoint` (a path or a file object), loaded with weights_only."""
    found = torch.load(source, map_location="cpu", weights_only=True)
    cfg = ModelConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in found["config"].items()})
    if cfg.kind != "decoder-only" or cfg.tgt_vocab != len(found["vocab"]):
        raise ValueError("not a character-level GPT checkpoint")
    model = build_model(cfg)
    model.load_state_dict(found["state_dict"])
    return CharModel(model.to(device).eval(), Vocab(found["vocab"]), dict(found.get("metrics", {})))
