"""Adding two numbers digit by digit (the course's task)."""
from __future__ import annotations

import re

import torch

from .base import Task, TaskInputError, Vocabulary, _check_range, held_out_mask


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
