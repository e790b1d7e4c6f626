"""A character-level language model's data: the corpus, its vocabulary, a held-out part, two baselines, batches.

The corpus is prose handed in by the caller (lesson 14 hands in the app's own lesson texts in the learner's
language): Markdown files cut into sections at their marker lines ``<!-- name -->``. The marker comments and the
``{{fields}}`` a page fills in are dropped. Every `HOLDOUT_EVERY`-th section is held out: never trained on, it
measures how well a model predicts text it has not seen.

Both baselines predict the same characters of the held-out text as the model (every one after the first):

    unigram   p(c) = (count(c) + α) / (N + α V)                       character frequencies, no context
    bigram    p(c | b) = (count(b c) + α) / (count(b ·) + α V)        one character of context

Their α is chosen from `ALPHAS` to give the lowest held-out cross-entropy, so each baseline is the best of its
family on this text: a model has to beat the strongest version of it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

import torch

MARKER = re.compile(r"^<!--\s*([\w.-]+)\s*-->\s*$", re.MULTILINE)  # a line that names the next section
COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
FIELD = re.compile(r"\{\{[^{}]*\}\}")
HOLDOUT_EVERY = 10
ALPHAS = (0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0)
SEPARATOR = "\n\n"


def prose_sections(markdown: str) -> list[str]:
    """The sections of one prose file, in order, without marker comments and ``{{fields}}``; empty ones dropped."""
    bodies = MARKER.split(markdown)[2::2]  # [before, name, body, name, body, ...] -> the bodies
    cleaned = (FIELD.sub("", COMMENT.sub("", body)).strip() for body in bodies)
    return [body for body in cleaned if body]


@dataclass(frozen=True)
class Vocab:
    """The characters a model reads and writes, one id each, in code-point order."""
    chars: str

    @classmethod
    def of(cls, text: str) -> Vocab:
        return cls("".join(sorted(set(text))))

    def __len__(self) -> int:
        return len(self.chars)

    def unknown(self, text: str) -> str:
        """The characters of `text` this vocabulary does not have, each once, in order of appearance."""
        return "".join(dict.fromkeys(c for c in text if c not in self.chars))

    def encode(self, text: str) -> torch.Tensor:
        """Character ids of `text`: (n,) int64. ValueError on a character outside the vocabulary."""
        if missing := self.unknown(text):
            raise ValueError(f"characters outside the vocabulary: {missing!r}")
        index = {c: i for i, c in enumerate(self.chars)}
        return torch.tensor([index[c] for c in text], dtype=torch.long)  # (n,)

    def decode(self, ids) -> str:
        return "".join(self.chars[int(i)] for i in ids)


@dataclass(frozen=True)
class Corpus:
    """The training text and the held-out text (whole sections each), with one vocabulary for both."""
    train: str
    heldout: str
    vocab: Vocab
    sections: int  # sections in all
    heldout_sections: int

    @classmethod
    def split(cls, sections: list[str], every: int = HOLDOUT_EVERY) -> Corpus:
        """Sections 0, every, 2 every, ... held out; the rest for training. Needs at least `every` sections."""
        if len(sections) < every:
            raise ValueError(f"need at least {every} sections, got {len(sections)}")
        heldout = [s for i, s in enumerate(sections) if i % every == 0]
        train = [s for i, s in enumerate(sections) if i % every != 0]
        train_text, heldout_text = SEPARATOR.join(train), SEPARATOR.join(heldout)
        return cls(train_text, heldout_text, Vocab.of(train_text + heldout_text), len(sections), len(heldout))

    def ids(self, part: str) -> torch.Tensor:
        """The ids of the "train" or "heldout" text: (n,) int64."""
        return self.vocab.encode(getattr(self, part))


def _unigram(train: torch.Tensor, vocab: int, alpha: float) -> torch.Tensor:
    counts = torch.bincount(train, minlength=vocab).double()  # (V,)
    return (counts + alpha) / (counts.sum() + alpha * vocab)  # (V,)


def _bigram(train: torch.Tensor, vocab: int, alpha: float) -> torch.Tensor:
    pairs = torch.bincount(train[:-1] * vocab + train[1:], minlength=vocab * vocab).double()  # (V * V,)
    counts = pairs.view(vocab, vocab)  # (V, V): row = previous character, column = next
    return (counts + alpha) / (counts.sum(1, keepdim=True) + alpha * vocab)  # (V, V), rows sum to 1


def unigram_cross_entropy(train: torch.Tensor, heldout: torch.Tensor, vocab: int, alpha: float) -> float:
    """Mean -ln p(c) over heldout[1:] (nats per character) of the add-α character frequencies of `train`."""
    p = _unigram(train, vocab, alpha)  # (V,)
    return float(-p[heldout[1:]].log().mean())


def bigram_cross_entropy(train: torch.Tensor, heldout: torch.Tensor, vocab: int, alpha: float) -> float:
    """Mean -ln p(c | previous c) over heldout[1:] (nats per character) of the add-α bigram table of `train`."""
    p = _bigram(train, vocab, alpha)  # (V, V)
    return float(-p[heldout[:-1], heldout[1:]].log().mean())


@dataclass(frozen=True)
class Baselines:
    """Held-out cross-entropy (nats per character) of the best add-α unigram and bigram, and their α."""
    unigram: float
    bigram: float
    unigram_alpha: float
    bigram_alpha: float
    uniform: float  # ln V: knowing nothing at all


def baselines(corpus: Corpus) -> Baselines:
    train, heldout, vocab = corpus.ids("train"), corpus.ids("heldout"), len(corpus.vocab)
    uni = min((unigram_cross_entropy(train, heldout, vocab, a), a) for a in ALPHAS)
    bi = min((bigram_cross_entropy(train, heldout, vocab, a), a) for a in ALPHAS)
    return Baselines(uni[0], bi[0], uni[1], bi[1], math.log(vocab))


def random_windows(ids: torch.Tensor, batch_size: int, context: int,
                   generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """`batch_size` windows at random starts: inputs x (batch, context) and the next characters y (batch, context)."""
    starts = torch.randint(0, len(ids) - context, (batch_size,), generator=generator)  # (batch,)
    rows = starts[:, None] + torch.arange(context + 1)  # (batch, context + 1)
    window = ids[rows]  # (batch, context + 1)
    return window[:, :-1], window[:, 1:]  # (batch, context) each


def consecutive_windows(ids: torch.Tensor, context: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The whole text cut into windows that predict every character after the first exactly once.

    Window j reads ids[j c : j c + c] and predicts ids[j c + 1 : j c + c + 1]; the last window is shorter, so it
    is returned padded with -100 (ignored by the loss). x (windows, context), y (windows, context)."""
    targets = len(ids) - 1
    windows = -(-targets // context)
    x = torch.zeros(windows * context, dtype=torch.long)  # (windows * context,)
    y = torch.full((windows * context,), -100, dtype=torch.long)  # (windows * context,)
    x[:targets], y[:targets] = ids[:-1], ids[1:]
    return x.view(windows, context), y.view(windows, context)  # (windows, context) each
