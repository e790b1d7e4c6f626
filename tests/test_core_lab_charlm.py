"""Lesson 14's core: the character corpus and baselines (core.lab.charlm), the small GPT's training and held-out
loss (core.lab.gpt), and generation with and without the KV cache (core.lab.kvcache, core.attention.LayerCache).

References are written here independently: counts in Python dicts for the baselines, the model run on the whole
sequence for the cache, a per-window loop of log-softmax for the held-out loss.
"""
from __future__ import annotations

import dataclasses
import io
import math
from collections import Counter

import pytest
import torch

from core.config import ModelConfig
from core.lab.charlm import (ALPHAS, Corpus, Vocab, baselines, bigram_cross_entropy, consecutive_windows,
                             prose_sections, random_windows, unigram_cross_entropy)
from core.lab.gpt import DEFAULT_TRAIN, LMTrainer, heldout_cross_entropy, lm_config, load_char_model
from core.lab.kvcache import causal_attention, compare_cache, generate
from core.model import build_model

TEXT = ("the cat sat on the mat. the dog sat on the log. a cat and a dog met on a mat; "
        "then the cat ran and the dog sat. ") * 4
SECTIONS = [TEXT[i:i + 40] for i in range(0, len(TEXT), 40)]
TINY = dict(d_model=16, n_heads=2, n_layers=1, d_ff=32, max_len=16)


def tiny_trainer(steps: int = 30, **changes) -> LMTrainer:
    corpus = Corpus.split(SECTIONS)
    cfg = lm_config(len(corpus.vocab), **TINY)
    return LMTrainer(corpus, cfg, dataclasses.replace(DEFAULT_TRAIN, steps=steps, batch_size=8, warmup=5, **changes))


def test_prose_sections_drop_markers_comments_and_fields():
    text = "<!-- a note to editors -->\n\n<!-- intro -->\nHello {{name}} world.\n\n<!-- empty -->\n\n<!-- b -->\nBye."
    assert prose_sections(text) == ["Hello  world.", "Bye."]


def test_split_holds_out_every_tenth_section():
    sections = [f"section {i}" for i in range(25)]
    corpus = Corpus.split(sections)
    assert corpus.heldout.split("\n\n") == ["section 0", "section 10", "section 20"]
    assert "section 10" not in corpus.train.split("\n\n") and len(corpus.train.split("\n\n")) == 22
    assert set(corpus.vocab.chars) == set(corpus.train + corpus.heldout)
    with pytest.raises(ValueError):
        Corpus.split(sections[:5])


def test_vocab_round_trip_and_unknown_characters():
    vocab = Vocab.of("hello world")
    assert vocab.decode(vocab.encode("low")) == "low"
    assert vocab.unknown("hexo!x") == "x!"
    with pytest.raises(ValueError):
        vocab.encode("xyz")


def reference_cross_entropies(train: str, heldout: str, chars: str, alpha: float) -> tuple[float, float]:
    """Add-α unigram and bigram held-out cross-entropy from Python counters (independent of charlm's tensors)."""
    V = len(chars)
    uni, pairs, firsts = Counter(train), Counter(zip(train, train[1:])), Counter(train[:-1])
    targets = list(zip(heldout, heldout[1:]))
    u = -sum(math.log((uni[c] + alpha) / (len(train) + alpha * V)) for _, c in targets) / len(targets)
    b = -sum(math.log((pairs[(p, c)] + alpha) / (firsts[p] + alpha * V)) for p, c in targets) / len(targets)
    return u, b


@pytest.mark.parametrize("alpha", [0.01, 1.0])
def test_baselines_match_counted_references(alpha):
    corpus = Corpus.split(SECTIONS)
    train, held, V = corpus.ids("train"), corpus.ids("heldout"), len(corpus.vocab)
    u, b = reference_cross_entropies(corpus.train, corpus.heldout, corpus.vocab.chars, alpha)
    assert unigram_cross_entropy(train, held, V, alpha) == pytest.approx(u, rel=1e-9)
    assert bigram_cross_entropy(train, held, V, alpha) == pytest.approx(b, rel=1e-9)


def test_baselines_pick_the_best_alpha():
    corpus = Corpus.split(SECTIONS)
    found = baselines(corpus)
    every = [reference_cross_entropies(corpus.train, corpus.heldout, corpus.vocab.chars, a) for a in ALPHAS]
    assert found.unigram == pytest.approx(min(u for u, _ in every))
    assert found.bigram == pytest.approx(min(b for _, b in every))
    assert found.uniform == pytest.approx(math.log(len(corpus.vocab)))
    assert found.bigram < found.unigram < found.uniform  # this text has strong pairs


def test_windows():
    ids = torch.arange(50)
    x, y = random_windows(ids, 4, 8, torch.Generator().manual_seed(0))
    assert x.shape == y.shape == (4, 8) and torch.equal(y, x + 1)
    x, y = consecutive_windows(ids, 8)
    real = y[y != -100]
    assert torch.equal(real, ids[1:])  # every character after the first predicted once, in order
    assert torch.equal(x[y != -100], ids[:-1])


@pytest.mark.parametrize("positional", ["learned", "sinusoidal"])
def test_kv_cache_gives_the_full_forward_pass(positional):
    cfg = ModelConfig(src_vocab=11, tgt_vocab=11, kind="decoder-only", d_model=16, n_heads=4, n_layers=2, d_ff=32,
                      max_len=24, dropout=0.0, positional=positional)
    model = build_model(cfg, seed=3).eval()
    if positional == "learned":  # init_parameters leaves no trace of position in a learned table: give it one
        torch.nn.init.normal_(model.tgt_embed.positional.weight, generator=torch.Generator().manual_seed(1))
    tokens = torch.randint(0, 11, (2, 20), generator=torch.Generator().manual_seed(0))  # (2, 20)
    with torch.no_grad():
        full = model(tokens)  # (2, 20, 11)
        caches = model.new_caches()
        pieces = [model(tokens[:, :7], caches)] + [model(tokens[:, i:i + 1], caches) for i in range(7, 20)]
    assert torch.allclose(torch.cat(pieces, dim=1), full, atol=1e-5)
    assert len(caches[0]) == 20 and caches[1].keys.shape == (2, 4, 20, 4)


def test_kv_cache_refuses_rotary():
    cfg = ModelConfig(src_vocab=5, tgt_vocab=5, kind="decoder-only", d_model=8, n_heads=2, n_layers=1, d_ff=8,
                      max_len=8, positional="rotary")
    model = build_model(cfg).eval()
    with pytest.raises(ValueError):
        model(torch.zeros(1, 3, dtype=torch.long), model.new_caches())


def test_generation_is_the_same_with_and_without_the_cache():
    model = tiny_trainer().model.eval()
    prompt = torch.tensor([1, 2, 3])
    plain = generate(model, prompt, 12, cached=False, temperature=1.3, top_k=6, top_p=0.9, seed=5)
    cached = generate(model, prompt, 12, cached=True, temperature=1.3, top_k=6, top_p=0.9, seed=5)
    assert torch.equal(plain.tokens, cached.tokens)
    assert torch.allclose(plain.logits, cached.logits, atol=1e-5)
    assert len(plain.seconds) == len(cached.seconds) == 12
    greedy = generate(model, prompt, 12, greedy=True)
    sequence = prompt.tolist()
    with torch.no_grad():
        for _ in range(12):  # the reference: argmax of the full forward pass, step after step
            sequence.append(int(model(torch.tensor([sequence]))[0, -1].argmax()))
    assert greedy.tokens.tolist() == sequence[3:]
    with pytest.raises(ValueError):
        generate(model, prompt, 14)  # past max_len = 16


def test_causal_attention_of_every_layer_and_head():
    model = tiny_trainer().model
    weights = causal_attention(model, torch.tensor([1, 2, 3, 4, 5]))
    assert weights.shape == (1, 2, 5, 5)
    assert float(weights.triu(1).abs().max()) == 0.0
    assert torch.allclose(weights.sum(-1), torch.ones(1, 2, 5))


def reference_heldout(model, ids: torch.Tensor) -> float:
    """-ln p of every character after the first, from one window of max_len characters at a time."""
    n, total = model.cfg.max_len, 0.0
    with torch.no_grad():
        for start in range(0, len(ids) - 1, n):
            x, y = ids[start:start + n][: len(ids) - 1 - start], ids[start + 1:start + n + 1]
            logp = torch.log_softmax(model(x[None])[0], dim=-1)  # (len, V)
            total -= float(logp[torch.arange(len(y)), y].sum())
    return total / (len(ids) - 1)


def test_training_learns_and_heldout_loss_is_right():
    trainer = tiny_trainer(steps=60)
    first = trainer.heldout()
    assert first == pytest.approx(reference_heldout(trainer.model, trainer.heldout_ids), rel=1e-5)
    records = list(trainer.steps())
    assert len(records) == 60 and trainer.done
    last = heldout_cross_entropy(trainer.model, trainer.heldout_ids)
    assert last == pytest.approx(reference_heldout(trainer.model, trainer.heldout_ids), rel=1e-5)
    assert last < first - 0.5


def test_chunks_equal_one_go_and_checkpoint_round_trip():
    chunked, whole = tiny_trainer(steps=12), tiny_trainer(steps=12)
    for _ in range(3):
        list(chunked.steps(n=4))
    list(whole.steps())
    assert [r.loss for r in chunked.history] == [r.loss for r in whole.history]
    buffer = io.BytesIO()
    torch.save(whole.checkpoint({"note": 1}), buffer)
    buffer.seek(0)
    loaded = load_char_model(buffer)
    tokens = torch.tensor([[1, 2, 3, 4]])
    with torch.no_grad():
        assert torch.equal(loaded.model(tokens), whole.model.eval()(tokens))
    assert loaded.vocab == whole.corpus.vocab and loaded.metrics["steps"] == 12


def test_with_the_cache_each_step_computes_one_new_key_per_layer():
    """What the timing chart shows, counted instead of timed: the positions whose keys a step computes."""
    model = tiny_trainer().model.eval()
    counted = {False: [], True: []}
    for cached in (False, True):
        hook = model.decoder.layers[0].self_attn.hook_k.register_forward_hook(
            lambda _m, _i, k, cached=cached: counted[cached].append(k.shape[-2]))
        generate(model, torch.tensor([1, 2, 3, 4]), 6, cached=cached, seed=0)
        hook.remove()
    assert counted[False] == [4, 5, 6, 7, 8, 9]  # the whole sequence again at every step
    assert counted[True] == [4, 1, 1, 1, 1, 1]  # the prompt once, then only the newest token


def test_compare_cache_keeps_the_fastest_time_of_every_step():
    model = tiny_trainer().model
    found = compare_cache(model, torch.tensor([1, 2, 3]), 8, repeats=2, temperature=0.9, seed=4)
    assert found.identical and found.logit_gap < 1e-5
    assert len(found.plain_seconds) == len(found.cached_seconds) == 8
    assert all(fast <= slow for fast, slow in zip(found.cached_seconds, found.cached.seconds))
    assert found.speedup == pytest.approx(sum(found.plain_seconds) / sum(found.cached_seconds))
