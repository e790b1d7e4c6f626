"""Toy sequence-to-sequence tasks to train a small Transformer on: generated data only, never downloaded.

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
import re
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


def _digits(numbers: torch.Tensor, width: int) -> torch.Tensor:
    """Integers (n,) -> their decimal digits (n, width), most significant first, zero-padded."""
    powers = 10 ** torch.arange(width - 1, -1, -1)  # (width,)
    return numbers[:, None] // powers % 10  # (n, width)


def _number(digits: torch.Tensor) -> torch.Tensor:
    """Decimal digits (n, width) -> integers (n,)."""
    powers = 10 ** torch.arange(digits.shape[1] - 1, -1, -1)  # (width,)
    return (digits * powers).sum(dim=1)


class AdditionTask(Task):
    """a + b with up to `digits` digits each, operands zero-padded, the sum's digits as the target.

    Half range (the course): a, b in [0, (10^D - 1) // 2], so the sum keeps D digits.
    Full range: a, b in [0, 10^D - 1], and the sum gets D + 1 digits.

    >>> task = AdditionTask(digits=3)
    >>> task.parse("153+391"), task.answer(task.parse("153+391"))
    (['1', '5', '3', '+', '3', '9', '1'], ['5', '4', '4'])
    >>> [i - 3 for i in task.src_vocab.encode(task.parse("153+391"))]  # the course's ids
    [1, 5, 3, 10, 3, 9, 1]
    >>> task.parse("7+5"), task.format_target(task.answer(task.parse("7+5")))
    (['0', '0', '7', '+', '0', '0', '5'], '012')

    The out-of-range split (half range only) has one operand above the largest seen in training and a
    sum that still fits in D digits: the model has never seen such a digit in that place. A learner may
    type a sum that needs D + 1 digits: `answer` gives it, though the model can only write D.
    """

    name = "addition"

    def __init__(self, digits: int = 3, full_range: bool = False, holdout: float = 0.1):
        super().__init__(holdout)
        _check_range("digits", digits, 1, 6)
        self.digits, self.full_range = digits, bool(full_range)
        self.max_operand = 10 ** digits - 1 if full_range else (10 ** digits - 1) // 2
        self.out_digits = digits + 1 if full_range else digits
        self.max_src_len, self.max_tgt_len = 2 * digits + 1, self.out_digits
        self.src_vocab = Vocabulary([str(d) for d in range(10)] + ["+"])
        self.tgt_vocab = Vocabulary([str(d) for d in range(10)])
        self.zero = self.src_vocab.index["0"]  # digit d has id zero + d, in both vocabularies
        assert self.tgt_vocab.index["0"] == self.zero

    @property
    def options(self) -> dict:
        return {"digits": self.digits, "full_range": self.full_range, "holdout": self.holdout}

    def _encode(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        plus = torch.full((a.shape[0], 1), self.src_vocab.index["+"])
        return torch.cat([_digits(a, self.digits) + self.zero, plus, _digits(b, self.digits) + self.zero], dim=1)

    def draw(self, n, generator):
        pairs = torch.randint(0, self.max_operand + 1, (n, 2), generator=generator)  # (n, 2)
        return self._encode(pairs[:, 0], pairs[:, 1])  # (n, 2D + 1)

    def draw_out_of_range(self, n, generator):
        if self.full_range:
            raise ValueError("full-range addition already trains on every D-digit operand: no out-of-range split")
        top = 10 ** self.digits - 1
        big = torch.randint(self.max_operand + 1, top + 1, (n,), generator=generator)  # (n,)
        small = (torch.rand(n, generator=generator) * (top - big + 1)).long()  # big + small <= top
        swap = torch.rand(n, generator=generator) < 0.5
        return self._encode(torch.where(swap, small, big), torch.where(swap, big, small))

    def held_out(self, src):
        """Held out by the unordered pair: a + b and b + a are both held out or both trained on."""
        a, b = src[:, : self.digits], src[:, self.digits + 1:]  # (n, D) each
        first = (_number(a - self.zero) <= _number(b - self.zero))[:, None]  # (n, 1)
        ordered = torch.cat([torch.where(first, a, b), src[:, self.digits:self.digits + 1],
                             torch.where(first, b, a)], dim=1)  # (n, 2D + 1): smaller operand first
        return held_out_mask(ordered, self.holdout)

    def solve(self, src):
        a = _number(src[:, : self.digits] - self.zero)  # (n,)
        b = _number(src[:, self.digits + 1:] - self.zero)  # (n,)
        return _digits(a + b, self.out_digits) + self.zero  # (n, out_digits)

    def categories(self, src):
        """How many carries the column-by-column sum of each row makes: "0", "1", ..., str(D)."""
        a = src[:, : self.digits] - self.zero  # (n, D) digits, most significant first
        b = src[:, self.digits + 1:] - self.zero  # (n, D)
        carry = torch.zeros(src.shape[0], dtype=torch.long)  # (n,)
        count = torch.zeros(src.shape[0], dtype=torch.long)  # (n,)
        for column in range(self.digits - 1, -1, -1):
            carry = (a[:, column] + b[:, column] + carry >= 10).long()  # (n,)
            count += carry
        return [str(k) for k in count.tolist()]

    def answer(self, source):
        a, b = "".join(source).split("+")
        return list(str(int(a) + int(b)).zfill(self.out_digits))  # may be D + 1 digits in half range

    def parse(self, text):
        compact = "".join(text.split())
        if not compact:
            raise TaskInputError("empty")
        for char in compact:
            if char not in "0123456789+":
                raise TaskInputError("unknown_symbol", char)
        match = re.fullmatch(r"(\d+)\+(\d+)", compact)
        if match is None:
            raise TaskInputError("bad_format", compact)
        for operand in match.groups():
            if len(operand.lstrip("0")) > self.digits:
                raise TaskInputError("too_long", operand, self.digits)
        a, b = (int(operand) for operand in match.groups())
        return list(str(a).zfill(self.digits)) + ["+"] + list(str(b).zfill(self.digits))

    def format_source(self, symbols):
        return "".join(symbols)

    def format_target(self, symbols):
        return "".join(symbols)


class ParserTask(Task):
    """Parse "v = a op b" into the prefix form of its tree ['ASSIGN', v, [OP, a, b]].

    v in {x, y, z}, op in {+, -, *, /} (ADD, SUB, MUL, DIV), a and b digits: 3 * 4 * 10 * 10 = 1200
    expressions in all. With `spaces`, the source has a space token between symbols.

    >>> task = ParserTask()
    >>> task.parse("x=4+9"), task.format_target(task.answer(task.parse("x=4+9")))
    (['x', '=', '4', '+', '9'], 'ASSIGN x ADD 4 9')
    >>> ParserTask(spaces=True).parse("y=7 /2")
    ['y', ' ', '=', ' ', '7', ' ', '/', ' ', '2']
    """

    name = "parser"
    VARIABLES = ("x", "y", "z")
    OPERATORS = {"+": "ADD", "-": "SUB", "*": "MUL", "/": "DIV"}
    DIGITS = tuple(str(d) for d in range(10))

    def __init__(self, spaces: bool = False, holdout: float = 0.1):
        super().__init__(holdout)
        self.spaces = bool(spaces)
        self.max_src_len, self.max_tgt_len = (9 if self.spaces else 5), 5
        self.src_vocab = Vocabulary([*self.VARIABLES, "=", *self.OPERATORS, *self.DIGITS] + ([" "] if spaces else []))
        self.tgt_vocab = Vocabulary(["ASSIGN", *self.OPERATORS.values(), *self.VARIABLES, *self.DIGITS])
        # source id -> target id of the same symbol ('+' -> ADD, 'x' -> x, '4' -> 4); 0 for '=' and ' '
        table = {**{s: s for s in self.VARIABLES + self.DIGITS}, **self.OPERATORS}
        self.to_target = torch.tensor([self.tgt_vocab.index.get(table.get(s), 0) for s in self.src_vocab.tokens])

    @property
    def options(self) -> dict:
        return {"spaces": self.spaces, "holdout": self.holdout}

    def _ids(self, symbols) -> torch.Tensor:
        return torch.tensor(self.src_vocab.encode(symbols))

    def draw(self, n, generator):
        def pick(choices):
            return self._ids(choices)[torch.randint(0, len(choices), (n,), generator=generator)]  # (n,)
        equals = torch.full((n,), self.src_vocab.index["="])
        src = torch.stack([pick(self.VARIABLES), equals, pick(self.DIGITS), pick(list(self.OPERATORS)),
                           pick(self.DIGITS)], dim=1)  # (n, 5)
        if not self.spaces:
            return src
        spaced = torch.full((n, 9), self.src_vocab.index[" "])
        spaced[:, ::2] = src
        return spaced  # (n, 9)

    def solve(self, src):
        core = src[:, ::2] if self.spaces else src  # (n, 5): v = a op b
        assign = torch.full((src.shape[0],), self.tgt_vocab.index["ASSIGN"])
        v, a, op, b = (self.to_target[core[:, i]] for i in (0, 2, 3, 4))  # (n,) each
        return torch.stack([assign, v, op, a, b], dim=1)  # (n, 5): ASSIGN v OP a b

    def categories(self, src):
        """The operator of each row: "ADD", "SUB", "MUL" or "DIV"."""
        op = (src[:, ::2] if self.spaces else src)[:, 3]  # (n,) source ids of the operator
        return self.tgt_vocab.decode(self.to_target[op].tolist())

    def parse(self, text):
        compact = "".join(text.split())
        if not compact:
            raise TaskInputError("empty")
        for char in compact:
            if char not in self.src_vocab.index:
                raise TaskInputError("unknown_symbol", char)
        if len(compact) > 5:
            raise TaskInputError("too_long", compact[5:], 5)
        expected = (self.VARIABLES, ("=",), self.DIGITS, tuple(self.OPERATORS), self.DIGITS)
        if len(compact) < 5 or any(char not in allowed for char, allowed in zip(compact, expected)):
            raise TaskInputError("bad_format", compact)
        if not self.spaces:
            return list(compact)
        spaced = [" "] * 9
        spaced[::2] = list(compact)
        return spaced

    def format_source(self, symbols):
        return "".join(symbols)


TASKS: dict[str, type[Task]] = {cls.name: cls for cls in (CopyTask, AdditionTask, ParserTask, ReverseTask, SortTask)}


def make_task(name: str, **options) -> Task:
    """The registered task `name` with `options` (a ValueError names the known tasks)."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; expected one of {sorted(TASKS)}")
    return TASKS[name](**options)
