"""The depth experiment's toy task (lesson 12): two ranges of token ids, one per class.

A sequence of `length` tokens is class 0 when its tokens come from 1..99 and class 1 when they come from
100..199; 0 is reserved for padding. That task is easy: any one token gives the answer, so the model only needs
to know which range each token is in. The difficulty knob ``minority=m`` puts exactly m tokens of the *other*
class's range in every sequence (m < length / 2): the class is then the range that holds the majority, no
single token decides, and the model has to compare counts (length - m against m).

>>> task = RangeTask()
>>> tokens, labels = task.sample(2, torch.Generator().manual_seed(0))
>>> tokens.shape, labels.shape
(torch.Size([2, 20]), torch.Size([2]))

The classifier that learns it, and its training run, are in `core.lab.classifier`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

PAD_ID = 0
TEST_SEED = 2024  # the test set is the same for every run, whatever the run's seed
CLASS_RANGES = ((1, 99), (100, 199))  # class c draws its tokens from CLASS_RANGES[c], both ends included


@dataclass(frozen=True)
class RangeTask:
    """Class 0: tokens from 1..99, class 1: tokens from 100..199; `minority` tokens of every sequence come from
    the other class's range (0 = the course's task). The class is the range that holds the majority."""
    length: int = 20
    minority: int = 0
    test_size: int = 1000

    def __post_init__(self):
        if self.length < 1 or self.test_size < 1 or not 0 <= 2 * self.minority < self.length:
            raise ValueError("length and test_size must be positive and 0 <= minority < length / 2")

    @property
    def vocab(self) -> int:
        return CLASS_RANGES[-1][1] + 1  # ids 0 (PAD) .. 199

    @property
    def n_classes(self) -> int:
        return len(CLASS_RANGES)

    def sample(self, n: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """n sequences (n, length) and their classes (n,): each class with probability 1/2, then every token
        uniform in its range; `minority` positions per row, chosen at random, use the other class's range."""
        labels = torch.randint(0, self.n_classes, (n,), generator=generator)  # (n,)
        shuffled = torch.rand(n, self.length, generator=generator).argsort(dim=1)  # (n, length) a permutation
        minority = shuffled < self.minority  # (n, length), exactly `minority` True per row
        source = torch.where(minority, 1 - labels[:, None], labels[:, None])  # (n, length) range of each token
        low = torch.tensor([lo for lo, _ in CLASS_RANGES])[source]  # (n, length) first token of the range
        size = torch.tensor([hi - lo + 1 for lo, hi in CLASS_RANGES])[source]  # (n, length) 99 or 100 tokens
        uniform = torch.rand(n, self.length, generator=generator)  # (n, length) in [0, 1)
        return low + (uniform * size).long(), labels  # (n, length) token ids, (n,)

    def test_set(self) -> tuple[torch.Tensor, torch.Tensor]:
        """The fixed test set: `test_size` sequences drawn with TEST_SEED."""
        return self.sample(self.test_size, torch.Generator().manual_seed(TEST_SEED))
