"""Lesson 15's labelled sentences, and what the frozen pretrained model makes of them (core.lab.finetune's data).

The data: ``assets/finetune/sentences.tsv``, short sentences the project wrote about four topics, each in English
and in Spanish (row i of one language is the translation of row i of the other), split into train and held-out.
`read_language` passes them once through every layer of the frozen model (`ReadSet`); a run then takes its
`Inputs` from there: the vectors entering its first trained layer, or the token ids for the random run.
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import torch
from torch import nn

from ..pretrained import Encoded, encode

DATA_PATH = Path(__file__).resolve().parents[2] / "assets" / "finetune" / "sentences.tsv"
TOPICS = ("sport", "food", "weather", "music")
LANGUAGES = ("en", "es")


@dataclass(frozen=True)
class LabelledSet:
    """Sentences and their topics (indices into TOPICS)."""
    texts: tuple[str, ...]
    labels: tuple[int, ...]


def load_sentences(lang: str, split: str, path: Path = DATA_PATH) -> LabelledSet:
    """The sentences of one language ("en" or "es") and split ("train" or "heldout"), in file order."""
    if lang not in LANGUAGES or split not in ("train", "heldout"):
        raise ValueError(f"unknown language {lang!r} or split {split!r}")
    with open(path, encoding="utf-8", newline="") as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["split"] == split]
    return LabelledSet(tuple(r[lang] for r in rows), tuple(TOPICS.index(r["topic"]) for r in rows))


def token_counts(tokenizer, lang: str) -> list[int]:
    """How many WordPiece tokens ([CLS] and [SEP] included) each sentence of `lang` has, training then held-out."""
    texts = load_sentences(lang, "train").texts + load_sentences(lang, "heldout").texts
    return [len(found.ids) for found in tokenizer.encode_batch(list(texts))]


@torch.no_grad()
def hidden_at(model: nn.Module, batch: Encoded, layer: int) -> torch.Tensor:
    """The pretrained model's hidden states entering layer `layer` (0 = the embeddings' output): (m, n, d_model)."""
    x = model.src_embed(batch.ids, batch.types)  # (m, n, d_model)
    for block in model.encoder.layers[:layer]:
        x = block(x, batch.mask[:, None, None, :])  # (m, n, d_model)
    return x


@dataclass(frozen=True)
class Inputs:
    """What a run feeds its classifier for a set of sentences (token ids or frozen hidden states)."""
    x: torch.Tensor  # (m, n) ids or (m, n, d_model) hidden states
    types: torch.Tensor  # (m, n)
    keep: torch.Tensor  # (m, n) True for real tokens
    labels: torch.Tensor  # (m,)

    def rows(self, index: torch.Tensor) -> Inputs:
        """The sentences `index`, trimmed to their longest real length."""
        n = int(self.keep[index].sum(dim=1).max())
        return Inputs(self.x[index, :n], self.types[index, :n], self.keep[index, :n], self.labels[index])


@dataclass(frozen=True)
class ReadSet:
    """A set of sentences read once by the frozen pretrained model."""
    batch: Encoded  # the tokens, right-padded
    hidden: torch.Tensor  # (L + 1, m, n, d_model): the vectors entering each layer, then the last layer's output
    labels: torch.Tensor  # (m,)

    def inputs(self, below: int) -> Inputs:
        """A frozen-bottom run's inputs: the vectors entering layer `below`."""
        return Inputs(self.hidden[below], self.batch.types, self.batch.mask, self.labels)

    def token_inputs(self, vocab: torch.Tensor) -> Inputs:
        """The random run's inputs: token ids renumbered as rows of its cut embedding table (`vocab`, sorted)."""
        return Inputs(torch.searchsorted(vocab, self.batch.ids), self.batch.types, self.batch.mask, self.labels)


@torch.no_grad()
def read_language(model: nn.Module, tokenizer, lang: str) -> dict[str, ReadSet]:
    """{"train": ..., "heldout": ...}: the sentences of `lang` through every layer of the frozen model, once."""
    found = {}
    for split in ("train", "heldout"):
        data = load_sentences(lang, split)
        batch = encode(tokenizer, list(data.texts), model.cfg.pad_id)
        states = [hidden_at(model, batch, 0)]  # (m, n, d_model)
        for block in model.encoder.layers:
            states.append(block(states[-1], batch.mask[:, None, None, :]))  # (m, n, d_model)
        found[split] = ReadSet(batch, torch.stack(states), torch.tensor(data.labels))  # (L + 1, m, n, d_model)
    return found


def unseen_share(tokenizer, train: LabelledSet, heldout: LabelledSet) -> float:
    """The share of the held-out sentences' WordPiece tokens ([CLS], [SEP] left out) that no training sentence has."""
    def pieces(data):
        return [tok for found in tokenizer.encode_batch(list(data.texts)) for tok in found.tokens[1:-1]]
    seen = set(pieces(train))
    held = pieces(heldout)
    return sum(tok not in seen for tok in held) / len(held)
