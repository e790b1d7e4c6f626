"""Tasks: vocabularies, the curriculum's worked examples, splits, seeds and the learner's input."""
import doctest

import pytest
import torch

from core.tasks import addition, base, parser, sequences
from core.tasks import (BOS_ID, EOS_ID, IGNORE_INDEX, PAD_ID, SPECIALS, TASKS, AdditionTask, CopyTask, ParserTask,
                        TaskInputError, Vocabulary, held_out_mask, make_task)

ALL_TASKS = [
    ("copy", {}), ("copy", {"length": 2, "vocab_size": 2}), ("copy", {"length": 32, "vocab_size": 64, "min_length": 1}),
    ("addition", {}), ("addition", {"digits": 1}), ("addition", {"digits": 6, "full_range": True}),
    ("parser", {}), ("parser", {"spaces": True}), ("reverse", {"length": 7, "min_length": 3}), ("sort", {}),
]


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def test_docstring_examples_hold():
    results = [doctest.testmod(module) for module in (base, sequences, addition, parser)]
    assert sum(r.attempted for r in results) >= 10 and not any(r.failed for r in results)


def test_special_tokens_come_first_and_never_collide_with_real_symbols():
    assert (PAD_ID, BOS_ID, EOS_ID) == (0, 1, 2) and IGNORE_INDEX < 0
    for name, options in ALL_TASKS:
        task = make_task(name, **options)
        for vocab in (task.src_vocab, task.tgt_vocab):
            assert vocab.tokens[:3] == list(SPECIALS)
            assert not set(vocab.symbols) & set(SPECIALS)
            assert len(set(vocab.tokens)) == len(vocab)
    with pytest.raises(ValueError):
        Vocabulary(["a", "<pad>"])
    with pytest.raises(ValueError):
        Vocabulary(["a", "a"])


def test_addition_worked_example_in_the_course_encoding_and_as_text():
    task = AdditionTask(digits=3)
    source = task.parse("153+391")
    ids = task.src_vocab.encode(source)
    offset = len(SPECIALS)  # the course's id of a symbol = our id - 3 (its 0 was digit, padding and start at once)
    assert [i - offset for i in ids] == [1, 5, 3, 10, 3, 9, 1]
    target = task.answer(source)
    assert [i - offset for i in task.tgt_vocab.encode(target)] == [5, 4, 4]
    assert task.format_source(source) == "153+391" and task.format_target(target) == "544"
    batch = task.targets(torch.tensor([ids]))
    assert batch[0].tolist() == [[BOS_ID, 5 + offset, 4 + offset, 4 + offset]]
    assert batch[1].tolist() == [[5 + offset, 4 + offset, 4 + offset, EOS_ID]]


def test_addition_ranges_and_full_range_digits():
    half, full = AdditionTask(digits=3), AdditionTask(digits=3, full_range=True)
    assert half.max_operand == 499 and half.out_digits == 3
    assert full.max_operand == 999 and full.out_digits == 4
    assert full.format_target(full.answer(full.parse("999+999"))) == "1998"
    assert half.format_target(half.answer(half.parse("999+999"))) == "1998"  # the expected answer, beyond the model
    for task in (half, full):
        batch = task.batch(500, gen(1))
        for src, tgt in zip(batch.src.tolist(), batch.tgt_out.tolist()):
            text = task.format_source(task.src_vocab.decode(src))
            a, b = map(int, text.split("+"))
            assert max(a, b) <= task.max_operand
            digits = "".join(task.tgt_vocab.decode(tgt[:-1]))
            assert int(digits) == a + b and tgt[-1] == EOS_ID


def test_addition_out_of_range_split_exceeds_every_training_operand_and_still_fits():
    task = AdditionTask(digits=2)
    for text, answer in task.examples(300, seed=3, split="out_of_range"):
        a, b = map(int, text.split("+"))
        assert max(a, b) > task.max_operand and a + b <= 99 and int(answer) == a + b
    with pytest.raises(ValueError):
        AdditionTask(digits=2, full_range=True).batch(4, gen(), "out_of_range")


def test_parser_worked_example_and_spaces():
    task = ParserTask()
    assert task.format_target(task.answer(task.parse("x=4+9"))) == "ASSIGN x ADD 4 9"
    assert task.format_target(task.answer(task.parse("z = 0 / 7"))) == "ASSIGN z DIV 0 7"
    spaced = ParserTask(spaces=True)
    assert spaced.format_source(spaced.parse("y=3*2")) == "y = 3 * 2"
    assert spaced.format_target(spaced.answer(spaced.parse("y=3*2"))) == "ASSIGN y MUL 3 2"
    for text, answer in spaced.examples(50, seed=2):
        compact = text.replace(" ", "")
        assert answer.split() == ["ASSIGN", compact[0], ParserTask.OPERATORS[compact[3]], compact[2], compact[4]]


def test_reverse_and_sort_with_padding():
    reverse, sort = make_task("reverse", length=6, min_length=2), make_task("sort", length=6, min_length=2)
    for task, rule in ((reverse, lambda s: s[::-1]), (sort, lambda s: sorted(s, key=int))):
        for text, answer in task.examples(100, seed=4):
            assert answer.split() == rule(text.split())
            assert 2 <= len(text.split()) <= 6


@pytest.mark.parametrize("name,options", ALL_TASKS)
def test_batches_round_trip_and_are_well_formed(name, options):
    task = make_task(name, **options)
    batch = task.batch(64, gen(5))
    assert batch.src.shape == (64, task.max_src_len)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (64, task.max_tgt_len + 1)
    assert (batch.tgt_in[:, 0] == BOS_ID).all()
    assert ((batch.tgt_out == EOS_ID).sum(1) == 1).all()  # exactly one EOS per row
    for src_row, tgt_row in zip(batch.src.tolist(), batch.tgt_out.tolist()):
        source = [s for s in task.src_vocab.decode(src_row) if s != "<pad>"]
        text = task.format_source(source)
        assert task.parse(text) == source  # text -> symbols -> text round trip
        assert task.src_vocab.encode(task.parse(text)) == [i for i in src_row if i != PAD_ID]
        target = task.answer(source)
        labels = [i for i in tgt_row if i != IGNORE_INDEX]
        assert labels == task.tgt_vocab.encode(target) + [EOS_ID]
        assert task.decode_target(labels) == task.format_target(target)
    labels = batch.tgt_out[:, :-1]  # teacher forcing: the decoder input is the labels shifted right by one
    assert torch.equal(batch.tgt_in[:, 1:], labels.masked_fill((labels == IGNORE_INDEX) | (labels == EOS_ID), PAD_ID))


@pytest.mark.parametrize("name,options", ALL_TASKS)
def test_same_seed_same_batch_other_seed_other_batch(name, options):
    task = make_task(name, **options)
    a, b, c = task.batch(32, gen(7)), task.batch(32, gen(7)), task.batch(32, gen(8))
    assert torch.equal(a.src, b.src) and torch.equal(a.tgt_out, b.tgt_out)
    assert not torch.equal(a.src, c.src)


@pytest.mark.parametrize("name,options", [("copy", {}), ("addition", {}), ("addition", {"digits": 2}),
                                          ("parser", {}), ("sort", {"length": 5})])
def test_held_out_sources_never_appear_in_training_batches(name, options):
    task = make_task(name, **options)
    generator = gen(9)
    train = torch.cat([task.batch(256, generator, "train").src for _ in range(20)])
    held = task.batch(500, gen(10), "heldout").src
    assert not task.held_out(train).any()
    assert task.held_out(held).all()
    train_rows = {tuple(row) for row in train.tolist()}
    assert not train_rows & {tuple(row) for row in held.tolist()}
    assert all(task.is_held_out(task.src_vocab.decode([i for i in row if i != PAD_ID])) for row in held[:20].tolist())


@pytest.mark.parametrize("digits", [1, 2, 3])
def test_addition_holds_out_unordered_pairs(digits):
    """b + a is never trained on when a + b is held out: the model has seen neither order ("never seen" holds)."""
    task = make_task("addition", digits=digits)
    held = task.batch(300, gen(12), "heldout").src  # (300, 2D + 1)
    d = task.digits
    swapped = torch.cat([held[:, d + 1:], held[:, d:d + 1], held[:, :d]], dim=1)  # b + a
    assert task.held_out(swapped).all()
    assert all(task.is_held_out(list(f"{b}+{a}")) for a, b in (("".join(task.src_vocab.decode(r[:d].tolist())),
                                                                  "".join(task.src_vocab.decode(r[d + 1:].tolist())))
                                                                 for r in held[:20]))
    train = task.batch(2000, gen(13), "train").src
    assert not task.held_out(torch.cat([train[:, d + 1:], train[:, d:d + 1], train[:, :d]], dim=1)).any()


def test_held_out_share_is_about_the_fraction_and_the_same_for_every_seed():
    task = CopyTask()
    ids = task.sources(20000, gen(11), "fresh")
    share = held_out_mask(ids, 0.1).float().mean().item()
    assert 0.09 < share < 0.11
    assert torch.equal(held_out_mask(ids, 0.1), held_out_mask(ids.clone(), 0.1))
    parser = ParserTask()  # 1200 expressions: about 120 are never trained on
    every = torch.cat([parser.sources(5000, gen(s), "fresh") for s in range(3)]).unique(dim=0)
    assert every.shape[0] == 1200 and 80 < held_out_mask(every, 0.1).sum() < 160


def test_holdout_zero_trains_on_everything_and_has_no_heldout_split():
    task = make_task("parser", holdout=0.0)
    assert task.batch(8, gen(), "train").src.shape == (8, 5)
    with pytest.raises(ValueError):
        task.batch(8, gen(), "heldout")
    with pytest.raises(ValueError):
        task.batch(8, gen(), "validation")


@pytest.mark.parametrize("name,options,text,code,part", [
    ("copy", {}, "   ", "empty", ""),
    ("copy", {"vocab_size": 9}, "3 12 4", "unknown_symbol", "12"),
    ("copy", {"vocab_size": 9}, "3 a 4", "unknown_symbol", "a"),
    ("copy", {"vocab_size": 9}, "3 <eos> 4", "unknown_symbol", "<eos>"),
    ("copy", {"length": 3}, "1 2 3 4 5", "too_long", "4 5"),
    ("copy", {"length": 4}, "1 2", "too_short", "1 2"),
    ("addition", {}, "", "empty", ""),
    ("addition", {}, "12-3", "unknown_symbol", "-"),
    ("addition", {}, "12+", "bad_format", "12+"),
    ("addition", {}, "1+2+3", "bad_format", "1+2+3"),
    ("addition", {"digits": 2}, "123+4", "too_long", "123"),
    ("parser", {}, "", "empty", ""),
    ("parser", {}, "w=4+9", "unknown_symbol", "w"),
    ("parser", {}, "x=4+9+1", "too_long", "+1"),
    ("parser", {}, "x+4=9", "bad_format", "x+4=9"),
    ("parser", {}, "x=4", "bad_format", "x=4"),
])
def test_input_errors_carry_a_code_and_the_offending_part(name, options, text, code, part):
    task = make_task(name, **options)
    with pytest.raises(TaskInputError) as info:
        task.encode_source(text)
    assert info.value.code == code and info.value.part == part
    assert isinstance(info.value, ValueError)


def test_learner_input_is_normalized_before_encoding():
    assert AdditionTask(digits=3).encode_source(" 7 + 05 ").tolist() == AdditionTask(digits=3).encode_source(
        "007+005").tolist()
    assert make_task("copy", length=3, vocab_size=9).encode_source("3, 1,4").tolist() == [[5, 3, 6]]
    assert ParserTask(spaces=True).encode_source("x=4+9").shape == (1, 9)


def test_options_rebuild_the_task_and_bad_options_are_refused():
    for name, options in ALL_TASKS:
        task = make_task(name, **options)
        again = make_task(task.name, **task.options)
        assert again.options == task.options and torch.equal(again.batch(8, gen()).src, task.batch(8, gen()).src)
    assert set(TASKS) >= {"copy", "addition", "parser", "reverse", "sort"}
    for name, bad in [("copy", {"length": 1}), ("copy", {"length": 33}), ("copy", {"vocab_size": 1}),
                      ("addition", {"digits": 0}), ("addition", {"digits": 7}), ("parser", {"holdout": 0.9})]:
        with pytest.raises(ValueError):
            make_task(name, **bad)
    with pytest.raises(ValueError, match="unknown task"):
        make_task("translate")
