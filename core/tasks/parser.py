"""Parsing "v = a op b" into the prefix form of its tree."""
from __future__ import annotations

import torch

from .base import Task, TaskInputError, Vocabulary


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
