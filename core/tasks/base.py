"""What every toy task shares: the special tokens, vocabularies, batches, held-out rows and the `Task` base.

Every task maps a source sequence of symbols to a target sequence of symbols. Vocabularies start with
three special tokens that no real symbol can spell: PAD (id 0, fills short rows), BOS (id 1, the
decoder's start token) and EOS (id 2, the end of a target); real symbols get ids 3, 4, ... So the
course's digit encoding (digit d -> d, '+' -> 10, where 0 is also padding and start token) becomes
digit d -> d + 3 and '+' -> 13 here.

A batch, for one example whose target symbols are y1 y2 y3:

    decoder input  (tgt_in):  BOS  y1   y2   y3         teacher forcing: the true previous token
    labels         (tgt_out): y1   y2   y3   EOS        the next token at each position

Labels at padded positions are IGNORE_INDEX, so the loss and the accuracies skip them.

Held-out examples: a fixed fraction of each task's source sequences (chosen by a hash of the ids, so
the same for every seed) is never drawn for training; `split="heldout"` draws only those, so an
evaluation there is on sequences the model has never seen. Splits: "train", "heldout", "fresh" (new
draws from the training distribution) and, for half-range addition, "out_of_range".
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
SPECIALS = (PAD, BOS, EOS)
PAD_ID, BOS_ID, EOS_ID = 0, 1, 2
IGNORE_INDEX = -100  # label value the loss and the accuracies skip (torch's default ignore_index)
SPLITS = ("train", "heldout", "fresh", "out_of_range")


class TaskInputError(ValueError):
    """Text a learner typed that a task cannot read. `code` is machine-readable (the UI translates it),
    `part` the offending piece of the text, `limit` a number the message refers to (a length), if any.

    Codes: "empty", "unknown_symbol", "too_long", "too_short", "bad_format".
    """

    def __init__(self, code: str, part: str = "", limit: int | None = None):
        self.code, self.part, self.limit = code, part, limit
        super().__init__(f"{code}: {part!r}" + ("" if limit is None else f" (limit {limit})"))


class Vocabulary:
    """Special tokens first (PAD=0, BOS=1, EOS=2), then the task's real symbols.

    >>> v = Vocabulary(["a", "b"])
    >>> v.encode(["b", "a"]), v.decode([4, 3, 2, 0])
    ([4, 3], ['b', 'a', '<eos>', '<pad>'])
    """

    def __init__(self, symbols):
        symbols = list(symbols)
        clashes = [s for s in symbols if s in SPECIALS]
        if clashes or len(set(symbols)) != len(symbols):
            raise ValueError(f"symbols must be distinct and never a special token: {symbols}")
        self.tokens = list(SPECIALS) + symbols
        self.index = {token: i for i, token in enumerate(self.tokens)}

    def __len__(self) -> int:
        return len(self.tokens)

    @property
    def symbols(self) -> list[str]:
        return self.tokens[len(SPECIALS):]

    def encode(self, symbols) -> list[int]:
        return [self.index[s] for s in symbols]

    def decode(self, ids) -> list[str]:
        return [self.tokens[int(i)] for i in ids]


@dataclass(frozen=True)
class Batch:
    """src (batch, n_src) and tgt_in (batch, n_tgt) padded with PAD_ID; tgt_out (batch, n_tgt) the labels,
    IGNORE_INDEX at padding."""
    src: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor

    def to(self, device) -> "Batch":
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device))


def held_out_mask(ids: torch.Tensor, fraction: float) -> torch.Tensor:
    """Which rows of `ids` (batch, n) belong to the held-out set: a hash of the row below `fraction`.

    A polynomial hash over the ids, then an integer mixer (all values stay below 2**62, so int64 never
    overflows). Depends on the ids alone: the same rows are held out for every seed and every run.
    """
    h = torch.zeros(ids.shape[0], dtype=torch.int64)
    for column in ids.to(torch.int64).unbind(-1):  # (batch,) each
        h = (h * 1_000_003 + column + 1) & 0x7FFFFFFF
    h = ((h ^ (h >> 15)) * 0x2C1B3C6D) & 0x7FFFFFFF
    h = ((h ^ (h >> 12)) * 0x297A2D39) & 0x7FFFFFFF
    h = h ^ (h >> 15)  # (batch,) in [0, 2**31)
    return (h % 100_000) < round(fraction * 100_000)


def pad_rows(rows: list[list[int]], width: int | None = None) -> torch.Tensor:
    """Lists of ids of different lengths -> (len(rows), width) padded with PAD_ID."""
    width = max(map(len, rows)) if width is None else width
    return torch.tensor([row + [PAD_ID] * (width - len(row)) for row in rows], dtype=torch.long)


def _check_range(name: str, value, low, high) -> None:
    if not low <= value <= high:
        raise ValueError(f"{name}={value} must be between {low} and {high}")


class Task:
    """A source -> target mapping. Subclasses set `name`, build `src_vocab` and `tgt_vocab`, and implement
    `draw` (random sources as ids), `solve` (their targets as ids), `parse` and, if needed, `format_*`.

    Both `draw` and `solve` work on whole batches of ids at once: a Python loop per example would cost
    more than the training step it feeds.
    """

    name = ""
    max_src_len = 0  # symbols, without specials
    max_tgt_len = 0  # symbols, without EOS

    def __init__(self, holdout: float = 0.1):
        _check_range("holdout", holdout, 0.0, 0.5)
        self.holdout = float(holdout)

    @property
    def options(self) -> dict:
        """The keyword arguments that rebuild this task (saved in checkpoints)."""
        return {"holdout": self.holdout}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.options.items())})"

    # --- what a subclass implements -----------------------------------------------------------------
    def draw(self, n: int, generator: torch.Generator) -> torch.Tensor:
        """`n` random sources: ids (n, max_src_len), PAD_ID after a shorter row's end."""
        raise NotImplementedError

    def solve(self, src: torch.Tensor) -> torch.Tensor:
        """Sources (n, max_src_len) -> their targets (n, max_tgt_len), PAD_ID after a shorter row's end."""
        raise NotImplementedError

    def parse(self, text: str) -> list[str]:
        """Learner's text -> source symbols, or TaskInputError."""
        raise NotImplementedError

    def format_source(self, symbols) -> str:
        return " ".join(symbols)

    def format_target(self, symbols) -> str:
        return " ".join(symbols)

    def draw_out_of_range(self, n: int, generator: torch.Generator) -> torch.Tensor:
        raise ValueError(f"the {self.name} task has no out-of-range split")

    def categories(self, src: torch.Tensor) -> list[str] | None:
        """A label per source row (n, n_src) for error analysis, or None when the task has no natural groups."""
        return None

    # --- generic ------------------------------------------------------------------------------------
    def answer(self, source: list[str]) -> list[str]:
        """The target symbols of one source (the same `solve` the batches use)."""
        tgt = self.solve(pad_rows([self.src_vocab.encode(source)], self.max_src_len))[0]  # (max_tgt_len,)
        return [token for token in self.tgt_vocab.decode(tgt.tolist()) if token != PAD]

    def encode_source(self, text: str) -> torch.Tensor:
        """Learner's text -> source ids (1, n) ready for the model (TaskInputError if unreadable)."""
        return torch.tensor([self.src_vocab.encode(self.parse(text))], dtype=torch.long)

    def decode_target(self, ids) -> str:
        """Target ids (no BOS) -> text, stopping at the first EOS or PAD."""
        symbols = []
        for token in self.tgt_vocab.decode(ids):
            if token in (EOS, PAD):
                break
            symbols.append(token)
        return self.format_target(symbols)

    def is_held_out(self, source: list[str]) -> bool:
        """Whether this source is in the held-out set (so a model trained here has never seen it)."""
        ids = pad_rows([self.src_vocab.encode(source)], self.max_src_len)  # (1, max_src_len)
        return self.holdout > 0 and bool(self.held_out(ids)[0])

    def held_out(self, src: torch.Tensor) -> torch.Tensor:
        """Which sources (n, max_src_len) are in the held-out set: (n,) booleans, the same for every seed."""
        return held_out_mask(src, self.holdout)

    def sources(self, n: int, generator: torch.Generator, split: str = "train") -> torch.Tensor:
        """`n` sources (n, max_src_len) of ids from `split` (see the module docstring)."""
        if split not in SPLITS:
            raise ValueError(f"unknown split {split!r}; expected one of {SPLITS}")
        if split == "out_of_range":
            return self.draw_out_of_range(n, generator)
        if split == "fresh" or (split == "train" and self.holdout == 0):
            return self.draw(n, generator)
        if split == "heldout" and self.holdout == 0:
            raise ValueError("this task holds nothing out (holdout=0); use split='fresh'")
        return self._filtered_sources(n, generator, keep_held_out=split == "heldout")

    def _filtered_sources(self, n, generator, keep_held_out: bool, max_rounds: int = 50) -> torch.Tensor:
        share = self.holdout if keep_held_out else 1.0 - self.holdout
        draw_size = max(16, math.ceil(1.2 * n / share))
        kept, count = [], 0
        for _ in range(max_rounds):
            ids = self.draw(draw_size, generator)  # (draw_size, max_src_len)
            rows = ids[self.held_out(ids) == keep_held_out]  # (k, max_src_len)
            kept.append(rows)
            count += rows.shape[0]
            if count >= n:
                return torch.cat(kept)[:n]  # (n, max_src_len)
        raise ValueError(f"the {self.name} task has (almost) no {'held-out' if keep_held_out else 'training'} "
                         f"examples with these options; use split='fresh' or another holdout")

    def targets(self, src: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Sources (n, n_src) -> (tgt_in, tgt_out), each (n, max_tgt_len + 1): BOS y.. and y.. EOS."""
        tgt = self.solve(src)  # (n, T)
        n = tgt.shape[0]
        tgt_in = torch.cat([torch.full((n, 1), BOS_ID), tgt], dim=1)  # (n, T + 1)
        tgt_out = torch.cat([tgt, torch.full((n, 1), PAD_ID)], dim=1)  # (n, T + 1)
        lengths = (tgt != PAD_ID).sum(dim=1)  # (n,)
        tgt_out[torch.arange(n), lengths] = EOS_ID
        return tgt_in, tgt_out.masked_fill(tgt_out == PAD_ID, IGNORE_INDEX)

    def batch(self, n: int, generator: torch.Generator, split: str = "train") -> Batch:
        """`n` examples from `split`, drawn with `generator` (the same generator state, the same batch)."""
        src = self.sources(n, generator, split)
        return Batch(src, *self.targets(src))

    def examples(self, n: int, seed: int = 0, split: str = "train") -> list[tuple[str, str]]:
        """`n` (source text, target text) pairs, for showing the data."""
        src = self.sources(n, torch.Generator().manual_seed(seed), split)
        pairs = []
        for src_row, tgt_row in zip(src.tolist(), self.solve(src).tolist()):
            source = [s for s in self.src_vocab.decode(src_row) if s != PAD]
            pairs.append((self.format_source(source), self.decode_target(tgt_row)))
        return pairs
