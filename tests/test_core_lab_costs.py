"""core.lab.costs: what lesson 8 says about the paper's parameter counts and about the memory autograd keeps,
recomputed independently (closed-form counts written out here; saved tensors counted by hand)."""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

import core
from core.lab import costs
from core.lab.toy import seeded


def shared_count(vocab: int, d: int, d_ff: int, n: int) -> int:
    """The post-norm encoder-decoder with biases and one embedding matrix shared by source, target and generator
    (the generator keeps a bias of V): written out, not read off a model."""
    attention, ffn, norm = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * d
    return 3 * n * attention + 2 * n * ffn + 5 * n * norm + vocab * d + vocab


def test_sharing_one_matrix_gives_63_1_million_for_the_base_model():
    assert shared_count(37_000, 512, 2048, 6) == 63_119_496
    cfg = core.ModelConfig(src_vocab=37_000, tgt_vocab=37_000, d_model=512, n_heads=8, n_layers=6, d_ff=2048,
                           norm_first=False)
    counts = costs.parameter_breakdown(cfg)
    assert counts["total"] - counts["src_embed"] == 63_119_496


def test_no_single_vocabulary_matches_both_the_base_and_the_big_rows():
    base = costs.shared_vocab_range(65, 512, 8, 2048, 6)
    big = costs.shared_vocab_range(213, 1024, 16, 4096, 6)
    for (lo, hi), (millions, d, d_ff) in ((base, (65, 512, 2048)), (big, (213, 1024, 4096))):
        inside = [v for v in range(30_000, 45_000) if round(shared_count(v, d, d_ff, 6) / 1e6) == millions]
        assert inside[0] == int(lo) + 1 and inside[-1] == int(hi)  # the range is exactly the vocabularies that round
    assert big[1] < base[0]  # the big row needs a smaller vocabulary than the base row: no overlap
    assert not base[0] <= 37_000 <= base[1] and not big[0] <= 37_000 <= big[1]


def test_saved_for_backward_counts_the_saved_inputs_and_masks():
    x = torch.randn(3, 5, requires_grad=True)  # (3, 5)
    linear = nn.Linear(5, 7)
    assert costs.saved_for_backward(linear, x) == 3 * 5 * 4  # the input, float32; the weight is not counted
    relu = nn.Sequential(nn.Linear(5, 7), nn.ReLU())
    assert costs.saved_for_backward(relu, x) == (3 * 5 + 3 * 7) * 4  # the input and the ReLU's output
    dropout = nn.Dropout(0.5).train()
    assert costs.saved_for_backward(dropout, x) == 3 * 5 * 4  # the keep mask (a float mask on the CPU)


def test_an_encoder_layer_keeps_several_times_the_example_rows():
    n, d, h, d_ff = 16, 64, 4, 256
    rows = sum(costs.layer_memory(n, d, h, d_ff).values())  # floats
    kept = costs.encoder_layer_saved_bytes(n, d, h, d_ff)
    assert 3 < kept / (4 * rows) < 5  # "about 3x" and more: the rows are examples, not the total
    layer = seeded(lambda: core.EncoderLayer(d, h, d_ff, 0.0), 0).train()
    without_dropout = costs.saved_for_backward(layer, torch.randn(1, n, d, requires_grad=True))
    assert without_dropout < kept  # dropout's masks are kept too
    assert without_dropout >= 4 * (h * n * n + 3 * n * d + n * d_ff)  # at least the weights, Q, K, V, the hidden


def test_cost_curves_agree_with_the_layer_count_and_cross_where_the_lesson_says():
    d, d_ff = 16, 64
    ns, curves = costs.cost_curves(d, d_ff)
    assert ns[0] == 1 and ns[-1] == 8 * max(d_ff, 2 * d) and len(ns) <= 64 and all(ns[1:] > ns[:-1])
    for i in (0, len(ns) // 2, len(ns) - 1):
        macs = costs.encoder_layer_macs(int(ns[i]), d, d_ff)  # the table's count, part by part
        assert curves["scores"][i] == macs["scores"] + macs["weighted_sum"]
        assert curves["ffn"][i] == macs["feed_forward"]
        assert curves["projections"][i] == macs["projections"]
    cross = costs.crossovers(d, d_ff)
    at = lambda n: int(np.searchsorted(ns, n))  # noqa: E731
    for name, n in (("ffn", cross["scores_vs_ffn"]), ("projections", cross["scores_vs_projections"])):
        i = at(n)
        if ns[i] == n:  # the two curves meet exactly at the crossover the chart marks
            assert curves["scores"][i] == curves[name][i]
    assert (curves["scores"] > curves["ffn"])[ns > d_ff].all() and (curves["scores"] < curves["ffn"])[ns < d_ff].all()
    assert costs.cost_curves(512, 2048)[0][-1] == 8 * 2048
