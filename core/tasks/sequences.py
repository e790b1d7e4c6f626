"""Tasks on a sequence of symbols: copy it, reverse it, sort it."""
from __future__ import annotations

import torch

from .base import PAD_ID, SPECIALS, Task, TaskInputError, Vocabulary, _check_range


class CopyTask(Task):
    """Copy a random sequence of symbols "1" .. "vocab_size" (the course: 19 symbols, length 20).

    >>> task = CopyTask(length=4, vocab_size=9)
    >>> task.parse("3 1 4 1"), task.answer(["3", "1", "4", "1"])
    (['3', '1', '4', '1'], ['3', '1', '4', '1'])
    >>> task.src_vocab.encode(["3", "1", "4", "1"])  # symbol k has id k + 2: the 3 specials come first
    [5, 3, 6, 3]

    With `min_length` below `length`, lengths vary uniformly in [min_length, length] (rows are padded).
    """

    name = "copy"

    def __init__(self, length: int = 20, vocab_size: int = 19, min_length: int | None = None, holdout: float = 0.1):
        super().__init__(holdout)
        _check_range("length", length, 2, 32)
        _check_range("vocab_size", vocab_size, 2, 64)
        min_length = length if min_length is None else min_length
        _check_range("min_length", min_length, 1, length)
        self.length, self.vocab_size, self.min_length = length, vocab_size, min_length
        self.max_src_len = self.max_tgt_len = length
        self.src_vocab = self.tgt_vocab = Vocabulary(str(k) for k in range(1, vocab_size + 1))

    @property
    def options(self) -> dict:
        return {"length": self.length, "vocab_size": self.vocab_size, "min_length": self.min_length,
                "holdout": self.holdout}

    def draw(self, n, generator):
        first = len(SPECIALS)  # id of symbol "1"
        ids = torch.randint(first, first + self.vocab_size, (n, self.length), generator=generator)  # (n, L)
        if self.min_length < self.length:
            lengths = torch.randint(self.min_length, self.length + 1, (n, 1), generator=generator)  # (n, 1)
            ids = ids.masked_fill(torch.arange(self.length) >= lengths, PAD_ID)  # (n, L)
        return ids

    def solve(self, src):
        return src.clone()

    def parse(self, text):
        parts = text.replace(",", " ").split()
        if not parts:
            raise TaskInputError("empty")
        for part in parts:
            if part not in self.src_vocab.index or part in SPECIALS:
                raise TaskInputError("unknown_symbol", part, self.vocab_size)
        if len(parts) > self.length:
            raise TaskInputError("too_long", " ".join(parts[self.length:]), self.length)
        if len(parts) < self.min_length:
            raise TaskInputError("too_short", " ".join(parts), self.min_length)
        return parts


class ReverseTask(CopyTask):
    """Write the sequence backwards.

    >>> ReverseTask(length=4).answer(["3", "1", "4", "2"])
    ['2', '4', '1', '3']
    """

    name = "reverse"

    def solve(self, src):
        positions = torch.arange(src.shape[1])  # (L,)
        lengths = (src != PAD_ID).sum(dim=1, keepdim=True)  # (n, 1)
        backwards = (lengths - 1 - positions).clamp(min=0)  # (n, L): row i reads position len_i - 1 - j
        return src.gather(1, backwards).masked_fill(positions >= lengths, PAD_ID)  # (n, L)


class SortTask(CopyTask):
    """Sort the symbols by their number (repeats kept).

    >>> SortTask(length=4).answer(["3", "10", "4", "3"])
    ['3', '3', '4', '10']
    """

    name = "sort"

    def solve(self, src):
        last = len(self.src_vocab)  # larger than every id: padding sorts to the end
        ordered = src.masked_fill(src == PAD_ID, last).sort(dim=1).values  # ids grow with the symbol's number
        return ordered.masked_fill(ordered == last, PAD_ID)  # (n, L)
