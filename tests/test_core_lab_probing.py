"""core.lab.probing (lesson 13's reading of MiniLM) against independent computations: plain loops over the pattern
scores, and the word pieces counted with Hugging Face's own BertTokenizer word by word."""
from __future__ import annotations

import math
import re

import numpy as np

from core import pretrained
from core.lab import probing

SPANISH = "El animal no cruzó la calle porque estaba demasiado cansado"
ENGLISH = "The animal didn't cross the street because it was too tired"


def random_patterns(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    found = {p: rng.random((3, 4)) for p in pretrained.PATTERNS}  # (L, h)
    found["same_word"][:] = np.nan  # a text with no word of two pieces
    return found


def test_strongest_and_leaders_by_plain_loops():
    patterns = random_patterns()
    best, top = probing.strongest(patterns)
    for layer in range(3):
        for head in range(4):
            scores = {p: patterns[p][layer, head] for p in pretrained.PATTERNS
                      if not math.isnan(patterns[p][layer, head])}
            name = max(scores, key=scores.get)
            assert pretrained.PATTERNS[best[layer * 4 + head]] == name and top[layer * 4 + head] == scores[name]
    leaders = probing.leaders(patterns)
    assert leaders["same_word"] is None
    for p in ("previous", "next", "special"):
        layer, head, score = leaders[p]
        assert score == patterns[p].max() == patterns[p][layer, head]


def test_without_specials_drops_and_renormalises():
    weights = np.random.default_rng(1).dirichlet(np.ones(5), size=(2, 5))  # (2, 5, 5), rows sum to 1
    keep = np.array([False, True, True, True, False])
    got = probing.without_specials(weights, keep)
    assert got.shape == (2, 3, 3)
    np.testing.assert_allclose(got.sum(-1), 1.0)
    np.testing.assert_allclose(got[1, 0], weights[1, 1, 1:4] / weights[1, 1, 1:4].sum())


def hf_pieces(text: str) -> tuple[int, int]:
    """(words, pieces) by transformers' BertTokenizer on each word of a plain regex split (punctuation apart)."""
    from transformers import BertTokenizer
    tokenizer = BertTokenizer(str(pretrained.model_dir() / "vocab.txt"), do_lower_case=True)
    words = re.findall(r"\w+|[^\w\s]", text)
    return len(words), sum(len(tokenizer.tokenize(w)) for w in words)


def test_a_spanish_sentence_costs_many_more_pieces_per_word():
    tokenizer = pretrained.load_tokenizer()
    batch = pretrained.encode(tokenizer, [(SPANISH, ENGLISH)])
    counts = probing.pieces_per_word(batch.tokens[0], batch.words[0], batch.types[0].tolist())
    assert counts == [hf_pieces(SPANISH), hf_pieces(ENGLISH)] == [(10, 17), (13, 13)]  # the scene note's numbers
    single = pretrained.encode(tokenizer, [SPANISH])
    assert probing.pieces_per_word(single.tokens[0], single.words[0], single.types[0].tolist()) == [(10, 17)]


def test_closest_pair_is_the_largest_off_diagonal_cosine_by_a_plain_loop():
    vectors = np.random.default_rng(2).normal(size=(5, 8))  # (m, d)
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    cosine = unit @ unit.T  # (m, m), 1 on the diagonal
    pairs = {(a, b): cosine[a, b] for a in range(5) for b in range(a + 1, 5)}
    assert probing.closest_pair(cosine) == max(pairs, key=pairs.get)
    twins = np.array([[1.0, 0.2, 0.9], [0.2, 1.0, 0.1], [0.9, 0.1, 1.0]])
    assert probing.closest_pair(twins) == (0, 2)
