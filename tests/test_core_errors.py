"""core.lab.errors.error_report and Task.categories against references written here: Python integer arithmetic for
carries, the operator read off the text, and a per-example greedy loop that re-runs the whole model."""
from __future__ import annotations

import pytest
import torch

from core.checkpoints import load_checkpoint
from core.lab.errors import error_report
from core.tasks import BOS_ID, EOS_ID, IGNORE_INDEX, make_task
from conftest import ROOT


def carries(a: int, b: int) -> int:
    count = carry = 0
    while a or b:
        carry = int(a % 10 + b % 10 + carry >= 10)
        count += carry
        a, b = a // 10, b // 10
    return count


@pytest.mark.parametrize("digits", [1, 3, 6])
def test_addition_categories_count_carries(digits):
    task = make_task("addition", digits=digits, full_range=True)
    src = task.draw(300, torch.Generator().manual_seed(digits))
    for row, label in zip(src.tolist(), task.categories(src)):
        text = task.format_source(task.src_vocab.decode(row))
        a, b = (int(x) for x in text.split("+"))
        assert label == str(carries(a, b)), text
    if digits == 3:
        assert task.categories(task.encode_source("999+1")) == ["3"] and task.categories(
            task.encode_source("123+456")) == ["0"]


@pytest.mark.parametrize("spaces", [False, True])
def test_parser_categories_are_the_operators(spaces):
    task = make_task("parser", spaces=spaces)
    src = task.draw(200, torch.Generator().manual_seed(1))
    names = {"+": "ADD", "-": "SUB", "*": "MUL", "/": "DIV"}
    for row, label in zip(src.tolist(), task.categories(src)):
        text = "".join(task.src_vocab.decode(row)).replace(" ", "")
        assert label == names[text[3]], text


def test_copy_has_no_categories():
    task = make_task("copy")
    assert task.categories(task.draw(4, torch.Generator().manual_seed(0))) is None


def greedy_one(model, src_row: torch.Tensor, width: int) -> list[int]:
    prefix = [BOS_ID]
    with torch.no_grad():
        for _ in range(width):
            prefix.append(int(model(src_row[None], torch.tensor([prefix]))[0, -1].argmax()))
            if prefix[-1] == EOS_ID:
                break
    return prefix[1:]


@pytest.mark.parametrize("name, noise", [("addition", 0.02), ("parser", 0.06)])
def test_error_report_matches_a_per_example_loop(name, noise):
    loaded = load_checkpoint(ROOT / "assets" / "checkpoints" / f"{name}.pt")
    model, task = loaded.model, loaded.task
    # A half-trained copy of the model makes mistakes worth counting: perturb the weights a little.
    with torch.no_grad():
        generator = torch.Generator().manual_seed(0)
        for p in model.parameters():
            p.add_(noise * torch.randn(p.shape, generator=generator))
    n, seed = 200, 7
    report = error_report(model, task, n=n, seed=seed, keep=5)
    batch = task.batch(n, torch.Generator().manual_seed(seed), report.split)
    width = batch.tgt_out.shape[1]
    right = torch.zeros(width)
    counted = torch.zeros(width)
    exact, groups = [], {}
    for src_row, labels, group in zip(batch.src, batch.tgt_out, task.categories(batch.src)):
        predicted = greedy_one(model, src_row, width)
        predicted += [-1] * (width - len(predicted))
        ok = True
        for i, label in enumerate(labels.tolist()):
            if label == IGNORE_INDEX:
                continue
            counted[i] += 1
            right[i] += predicted[i] == label
            ok &= predicted[i] == label
        exact.append(ok)
        groups.setdefault(group, []).append(ok)
    assert report.exact_match == pytest.approx(sum(exact) / n)
    assert 0 < report.exact_match < 1, "the perturbed model should be partly wrong"
    assert report.position_accuracy == pytest.approx((right / counted).tolist())
    assert report.position_count == counted.long().tolist()
    assert report.groups == {g: pytest.approx((sum(v) / len(v), len(v))) for g, v in groups.items()}
    assert len(report.mistakes) == 5
    for source, expected, predicted in report.mistakes:
        assert expected == task.format_target(task.answer(task.parse(source))) and predicted != expected
