"""core.sampling (temperature, top-k, top-p, sampling, step-wise decoding) and core.decoding.beam_search.

References are written here independently: softmax in numpy, top-k and top-p by sorting in plain Python,
beam search against brute-force enumeration of every sequence of a hand-built tiny "model", and the
log-probability of a sequence by one teacher-forced forward pass of a shipped checkpoint.
"""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from torch import nn

from core.checkpoints import load_checkpoint
from core.decoding import beam_search, greedy_decode
from core.sampling import apply_temperature, decode_steps, filter_logits, sample, top_k_filter, top_p_filter
from core.tasks import BOS_ID, EOS_ID, PAD_ID
from core.train import CHECKPOINT_DIR

SHIPPED = ("copy", "addition", "parser")


def np_softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def ranking(row: list[float]) -> list[int]:
    """Token ids from the largest value to the smallest, ties towards the lower id (plain Python)."""
    return sorted(range(len(row)), key=lambda i: (-row[i], i))


def ref_top_k(row: list[float], k: int) -> set[int]:
    return set(ranking(row)[:k])


def ref_top_p(row: list[float], p: float) -> set[int]:
    """Add tokens from the most probable down until their total reaches p."""
    finite = [v for v in row if v != -math.inf]
    top = max(finite)
    weights = [math.exp(v - top) if v != -math.inf else 0.0 for v in row]
    probs = [w / sum(weights) for w in weights]
    kept, total = set(), 0.0
    for i in ranking(probs):
        if probs[i] == 0.0:
            break
        kept.add(i)
        total += probs[i]
        if total >= p:
            break
    return kept


def kept_set(filtered: torch.Tensor) -> set[int]:
    return {int(i) for i in torch.isfinite(filtered).nonzero()[:, 0]}


@pytest.fixture(scope="module")
def rows() -> torch.Tensor:
    return torch.randn(40, 9, generator=torch.Generator().manual_seed(7), dtype=torch.float64) * 2.0  # (40, 9)


@pytest.fixture(scope="module")
def checkpoints():
    return {name: load_checkpoint(CHECKPOINT_DIR / f"{name}.pt") for name in SHIPPED}


# ---- temperature, top-k, top-p -------------------------------------------------------------------------

@pytest.mark.parametrize("T", [0.1, 0.5, 1.0, 1.7, 3.0])
def test_temperature_is_softmax_of_logits_over_t(rows, T):
    got = torch.softmax(apply_temperature(rows, T), dim=-1).numpy()
    np.testing.assert_allclose(got, np_softmax(rows.numpy() / T), rtol=1e-12, atol=1e-15)


def test_temperature_extremes_approach_argmax_and_uniform(rows):
    cold = torch.softmax(apply_temperature(rows, 1e-3), dim=-1)  # (40, 9)
    hot = torch.softmax(apply_temperature(rows, 1e4), dim=-1)
    assert torch.equal(cold.argmax(-1), rows.argmax(-1)) and float(cold.max(-1).values.min()) > 0.999
    np.testing.assert_allclose(hot.numpy(), 1 / 9, atol=2e-3)
    with pytest.raises(ValueError):
        apply_temperature(rows, 0.0)


@pytest.mark.parametrize("k", [1, 2, 5, 9, 12])
def test_top_k_matches_a_sort_based_reference(rows, k):
    filtered = top_k_filter(rows, k)
    for z, f in zip(rows.tolist(), filtered):
        assert kept_set(f) == ref_top_k(z, k)
        keep = torch.isfinite(f)
        assert torch.equal(f[keep], torch.tensor(z, dtype=torch.float64)[keep])  # survivors untouched


def test_top_k_breaks_ties_towards_the_lower_id():
    z = torch.tensor([1.0, 3.0, 2.0, 3.0, 2.0, 2.0])
    assert kept_set(top_k_filter(z, 1)) == {1}
    assert kept_set(top_k_filter(z, 3)) == {1, 3, 2} == ref_top_k(z.tolist(), 3)
    assert kept_set(top_k_filter(z, 4)) == {1, 3, 2, 4}
    with pytest.raises(ValueError):
        top_k_filter(z, 0)


@pytest.mark.parametrize("p", [0.01, 0.2, 0.5, 0.75, 0.9, 0.99, 1.0])
def test_top_p_matches_a_sort_based_reference(rows, p):
    filtered = top_p_filter(rows, p)
    probs = np_softmax(rows.numpy())
    for z, f, pr in zip(rows.tolist(), filtered, probs):
        kept = kept_set(f)
        assert kept == ref_top_p(z, p)
        ordered = sorted(pr, reverse=True)
        assert sum(pr[list(kept)]) >= p - 1e-12  # reaches p ...
        assert sum(ordered[:len(kept) - 1]) < p  # ... and one token fewer would not


def test_top_p_keeps_the_top_token_and_follows_an_earlier_filter():
    z = torch.log(torch.tensor([0.1, 0.6, 0.3], dtype=torch.float64))
    assert kept_set(top_p_filter(z, 0.05)) == {1}
    assert kept_set(top_p_filter(z, 0.6)) == {1}
    assert kept_set(top_p_filter(z, 0.61)) == {1, 2}
    assert kept_set(top_p_filter(z, 1.0)) == {0, 1, 2}
    after_k = top_k_filter(z, 2)  # removes token 0; top-p renormalises over {1, 2}: 2/3 and 1/3
    assert kept_set(top_p_filter(after_k, 1.0)) == {1, 2}
    assert kept_set(top_p_filter(after_k, 0.7)) == {1, 2} and kept_set(top_p_filter(after_k, 0.66)) == {1}
    for bad in (0.0, 1.01):
        with pytest.raises(ValueError):
            top_p_filter(z, bad)


@pytest.mark.parametrize("T,k,p", [(1.0, None, 1.0), (0.7, 4, 0.8), (2.5, 6, 0.5), (1.3, 1, 1.0), (0.4, None, 0.3)])
def test_filter_logits_is_temperature_then_top_k_then_top_p(rows, T, k, p):
    filtered = filter_logits(rows, T, k, p)
    for z, f in zip(rows.tolist(), filtered):
        tempered = [v / T for v in z]
        kept = ref_top_k(tempered, k) if k else set(range(len(z)))
        masked = [v if i in kept else -math.inf for i, v in enumerate(tempered)]
        want = ref_top_p(masked, p) if p < 1 else kept
        assert kept_set(f) == want
        probs = np.zeros(len(z))
        idx = sorted(want)
        probs[idx] = np_softmax(np.array([tempered[i] for i in idx]))
        np.testing.assert_allclose(torch.softmax(f, -1).numpy(), probs, rtol=1e-12, atol=1e-15)


# ---- sampling ------------------------------------------------------------------------------------------

def test_seeded_sampling_is_reproducible(rows):
    z = filter_logits(rows, 1.2, 5, 0.9)
    a = sample(z, torch.Generator().manual_seed(3), 50)  # (40, 50)
    b = sample(z, torch.Generator().manual_seed(3), 50)
    c = sample(z, torch.Generator().manual_seed(4), 50)
    assert a.shape == (40, 50) and torch.equal(a, b) and not torch.equal(a, c)
    assert bool(torch.isfinite(z.gather(-1, a)).all())  # never a removed token


def test_sampled_frequencies_approach_the_filtered_distribution():
    z = torch.tensor([2.0, 1.5, 1.0, 0.5, 0.0, -1.0], dtype=torch.float64)
    filtered = filter_logits(z, 0.8, 4, 0.9)
    want = torch.softmax(filtered, -1).numpy()
    n = 200_000
    counts = np.bincount(sample(filtered, torch.Generator().manual_seed(0), n).numpy(), minlength=6)
    sigma = np.sqrt(want * (1 - want) / n)  # binomial standard error of each frequency
    tolerance = 5 * sigma.max()  # about 0.0056: a correct sampler stays inside with overwhelming probability
    assert np.abs(counts / n - want).max() < tolerance
    assert counts[want == 0].sum() == 0 and (want == 0).sum() >= 2  # the filters removed tokens, never drawn
    assert np.abs(np_softmax(z.numpy()) - want).max() > 10 * tolerance  # unfiltered sampling would fail the test
    assert np.abs(np_softmax(z.numpy() / 0.8) - want).max() > 10 * tolerance  # temperature alone would too


# ---- step-wise decoding on the shipped checkpoints -------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_step_wise_greedy_equals_greedy_decode(checkpoints, name):
    model, task = checkpoints[name].model, checkpoints[name].task
    src = task.sources(6, torch.Generator().manual_seed(1), "fresh")  # (6, n_src)
    steps = task.max_tgt_len + 1
    tokens, logits = greedy_decode(model, src, steps, BOS_ID, EOS_ID, PAD_ID, return_logits=True)
    trace = decode_steps(model, src, steps, BOS_ID, EOS_ID, PAD_ID, greedy=True)
    assert torch.equal(trace.tokens, tokens)
    torch.testing.assert_close(trace.logits, logits)
    torch.testing.assert_close(trace.before, torch.softmax(logits, -1))
    assert torch.equal(trace.after.argmax(-1), logits.argmax(-1)) and bool((trace.after.sum(-1) == 1).all())


@pytest.mark.parametrize("name", SHIPPED)
def test_step_wise_sampling_records_what_it_drew_from(checkpoints, name):
    model, task = checkpoints[name].model, checkpoints[name].task
    src = task.sources(8, torch.Generator().manual_seed(2), "fresh")
    steps, kw = task.max_tgt_len + 1, {"temperature": 1.6, "top_k": 5, "top_p": 0.8}
    one = decode_steps(model, src, steps, BOS_ID, EOS_ID, PAD_ID, **kw, generator=torch.Generator().manual_seed(9))
    two = decode_steps(model, src, steps, BOS_ID, EOS_ID, PAD_ID, **kw, generator=torch.Generator().manual_seed(9))
    assert torch.equal(one.tokens, two.tokens)
    torch.testing.assert_close(one.after, torch.softmax(filter_logits(one.logits, **kw), -1))
    live = torch.ones_like(one.tokens, dtype=torch.bool)  # positions before (and at) a row's EOS
    live[:, 1:] = (one.tokens[:, :-1] != EOS_ID).cumprod(dim=1).bool()
    picked = one.after.gather(-1, one.tokens[..., None])[..., 0]  # (8, k)
    assert bool((picked[live] > 0).all())  # every drawn token survived the filters
    assert bool((one.after > 0).sum(-1).le(5).all())  # top-k = 5 at most
    prefix = torch.cat([torch.full((8, 1), BOS_ID), one.tokens[:, :-1]], dim=1)  # teacher-force the samples
    torch.testing.assert_close(one.logits, model(src, prefix), atol=1e-5, rtol=1e-5)


def test_sampling_with_k_1_is_greedy(checkpoints):
    model, task = checkpoints["addition"].model, checkpoints["addition"].task
    src = task.sources(16, torch.Generator().manual_seed(4), "fresh")
    greedy = greedy_decode(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID)
    sampled = decode_steps(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID, temperature=2.5, top_k=1,
                           generator=torch.Generator().manual_seed(0))
    assert torch.equal(sampled.tokens, greedy)
    with pytest.raises(ValueError):
        decode_steps(model, src, 4, BOS_ID, EOS_ID, PAD_ID)  # sampling without a generator


# ---- beam search ---------------------------------------------------------------------------------------

class TableModel(nn.Module):
    """A tiny "model" whose next-token logits are a fixed table lookup on the prefix (BOS excluded).

    It speaks the encoder-decoder interface beam_search uses: encode(src), decode(memory, src, prefix)
    -> (batch, t, V) with the logits in the last position, and an identity generator."""

    def __init__(self, table: dict[tuple[int, ...], list[float]]):
        super().__init__()
        self.table = table
        self.generator = nn.Identity()

    def encode(self, src):
        return torch.zeros(src.shape[0], src.shape[1], 1, dtype=torch.float64)

    def decode(self, memory, src, prefix):
        rows = [self.table[tuple(int(x) for x in row[1:])] for row in prefix]
        out = torch.zeros(prefix.shape[0], prefix.shape[1], len(rows[0]), dtype=torch.float64)
        out[:, -1] = torch.tensor(rows, dtype=torch.float64)
        return out


def random_table(vocab: int, length: int, seed: int) -> dict[tuple[int, ...], list[float]]:
    g = torch.Generator().manual_seed(seed)
    return {prefix: (torch.randn(vocab, generator=g, dtype=torch.float64) * 2).tolist()
            for n in range(length) for prefix in itertools.product(range(vocab), repeat=n)}


def brute_force(table, vocab: int, length: int, eos: int, alpha: float = 0.0) -> list[tuple[tuple[int, ...], float]]:
    """Every complete sequence (ends in EOS, or reaches `length`) with its log-probability and score."""
    out = []
    for n in range(1, length + 1):
        for seq in itertools.product(range(vocab), repeat=n):
            if eos in seq[:-1] or (n < length and seq[-1] != eos):
                continue
            lp = sum(float(np.log(np_softmax(np.array(table[seq[:i]]))[seq[i]])) for i in range(n))
            out.append((seq, lp, lp / n ** alpha))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("alpha", [0.0, 1.0])
def test_exhaustive_beam_search_equals_brute_force(seed, alpha):
    vocab, length, eos = 4, 3, 2
    table = random_table(vocab, length, seed)
    src = torch.zeros(1, 2, dtype=torch.long)
    result = beam_search(TableModel(table), src, vocab ** length, length, bos_id=1, eos_id=eos, alpha=alpha)
    every = brute_force(table, vocab, length, eos, alpha)
    got = {tuple(h.tokens): (h.log_prob, h.score, h.finished) for h in result.hypotheses}
    assert len(got) == len(result.hypotheses) == len(every)  # every complete sequence, each once
    for seq, lp, score in every:
        assert got[seq][0] == pytest.approx(lp, abs=1e-10) and got[seq][1] == pytest.approx(score, abs=1e-10)
        assert got[seq][2] == (seq[-1] == eos)
    best = max(every, key=lambda e: e[2])
    assert tuple(result.hypotheses[0].tokens) == best[0]
    assert [h.score for h in result.hypotheses] == sorted((h.score for h in result.hypotheses), reverse=True)


def test_beam_search_finds_what_greedy_misses():
    """Greedy takes A (0.6) and then has to split 0.6 over two endings; B (0.4) ends with certainty."""
    A, B, EOS = 3, 4, 2
    lg = math.log
    table = {(): [-50, -50, -50, lg(0.6), lg(0.4)],
             (A,): [-50, -50, -50, lg(0.5), lg(0.5)], (B,): [-50, -50, 0.0, -50, -50],
             (A, A): [-50, -50, 0.0, -50, -50], (A, B): [-50, -50, 0.0, -50, -50]}
    model, src = TableModel(table), torch.zeros(1, 1, dtype=torch.long)
    narrow = beam_search(model, src, 1, 3, bos_id=1, eos_id=EOS)
    wide = beam_search(model, src, 2, 3, bos_id=1, eos_id=EOS)
    assert narrow.hypotheses[0].tokens == [A, A, EOS]  # greedy: 0.6 x 0.5 = 0.3 (first of the tie)
    assert narrow.hypotheses[0].log_prob == pytest.approx(math.log(0.3), abs=1e-9)
    assert wide.hypotheses[0].tokens == [B, EOS] and wide.hypotheses[0].log_prob == pytest.approx(math.log(0.4),
                                                                                                  abs=1e-9)


@pytest.mark.parametrize("width", [2, 5])
def test_beam_tree_is_consistent(width):
    vocab, length = 5, 4
    table = random_table(vocab, length, 11)
    result = beam_search(TableModel(table), torch.zeros(1, 1, dtype=torch.long), width, length, 1, 2)
    paths, previous_lp = {-1: ()}, {-1: 0.0}
    finished = 0
    for step in result.steps:
        assert len(step.token) == len(paths) * vocab  # every alive hypothesis x every token
        assert bool((step.log_prob[:-1] >= step.log_prob[1:]).all())  # best first
        n_kept = int(step.kept.sum())
        assert n_kept == min(width - finished, len(step.token)) and bool(step.kept[:n_kept].all())
        new = {}
        for i in range(len(step.token)):
            prefix = paths[int(step.parent[i])]
            logp = np.log(np_softmax(np.array(table[prefix])))[int(step.token[i])]
            assert float(step.log_prob[i]) == pytest.approx(previous_lp[int(step.parent[i])] + logp, abs=1e-10)
            if step.kept[i] and int(step.token[i]) != 2:
                new[i] = prefix + (int(step.token[i]),)
        finished += int((step.kept & (step.token == 2)).sum())
        previous_lp = {i: float(step.log_prob[i]) for i in new}
        paths = new
    assert len(result.hypotheses) == width


@pytest.mark.parametrize("name", SHIPPED)
def test_width_1_is_greedy_decode_on_the_shipped_checkpoints(checkpoints, name):
    model, task = checkpoints[name].model, checkpoints[name].task
    src = task.sources(5, torch.Generator().manual_seed(5), "fresh")
    steps = task.max_tgt_len + 1
    greedy, logits = greedy_decode(model, src, steps, BOS_ID, EOS_ID, PAD_ID, return_logits=True)
    for row in range(5):
        found = beam_search(model, src[row:row + 1], 1, steps, BOS_ID, EOS_ID).hypotheses
        want = greedy[row].tolist()
        want = want[:want.index(EOS_ID) + 1] if EOS_ID in want else want
        assert len(found) == 1 and found[0].tokens == want
        want_lp = torch.log_softmax(logits[row, :len(want)], -1).gather(-1, torch.tensor(want)[:, None]).sum()
        assert found[0].log_prob == pytest.approx(float(want_lp), abs=1e-4)


@pytest.mark.parametrize("name", SHIPPED)
def test_beam_log_probs_match_a_teacher_forced_pass(checkpoints, name):
    model, task = checkpoints[name].model, checkpoints[name].task
    src = task.encode_source(task.examples(1, seed=3)[0][0])
    result = beam_search(model, src, 4, task.max_tgt_len + 1, BOS_ID, EOS_ID)
    assert len(result.hypotheses) == 4
    for h in result.hypotheses:
        tgt = torch.tensor([[BOS_ID, *h.tokens[:-1]]])
        with torch.no_grad():
            lp = torch.log_softmax(model(src, tgt)[0], -1).gather(-1, torch.tensor(h.tokens)[:, None]).sum()
        assert h.log_prob == pytest.approx(float(lp), abs=1e-4)
        assert h.finished == (h.tokens[-1] == EOS_ID)


def test_beam_search_rejects_bad_arguments():
    model = TableModel(random_table(3, 2, 0))
    for kw in ({"width": 0, "max_new_tokens": 2}, {"width": 2, "max_new_tokens": 0}):
        with pytest.raises(ValueError):
            beam_search(model, torch.zeros(1, 1, dtype=torch.long), bos_id=1, eos_id=2, **kw)
    with pytest.raises(ValueError):
        beam_search(model, torch.zeros(2, 1, dtype=torch.long), 2, 2, 1, 2)
