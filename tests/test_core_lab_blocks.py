"""core.lab.blocks (lesson 7's computations) against independent computations."""
from __future__ import annotations

import math

import numpy as np
import torch

import core
from core.lab import blocks
from core.lab.analysis import toy_embeddings

WORDS = ("time", "flies", "like", "an", "arrow")


def test_ffn_stages_are_the_formula_on_the_modules_weights():
    stages, params = blocks.ffn_stages(WORDS, 8, 32, "relu", seed=3)
    ff = blocks.seeded(lambda: core.FeedForward(8, 32, 0.0, "relu"), 3)
    x = toy_embeddings(list(WORDS), 8, 3).double().numpy()  # (n, 8)
    w1, b1 = ff.linear1.weight.double().detach().numpy(), ff.linear1.bias.double().detach().numpy()
    w2, b2 = ff.linear2.weight.double().detach().numpy(), ff.linear2.bias.double().detach().numpy()
    pre = x @ w1.T + b1  # (n, 32)
    hidden = np.maximum(pre, 0)  # (n, 32)
    for got, want in zip(stages, (x, pre, hidden, hidden @ w2.T + b2)):
        np.testing.assert_allclose(got, want, atol=1e-5)
    assert params == 2 * 8 * 32 + 32 + 8


def test_dropout_keeps_its_draw_scales_survivors_and_leaves_the_global_state_alone():
    x = torch.randn(6, 40, generator=torch.Generator().manual_seed(0))  # (6, 40)
    before = torch.random.get_rng_state()
    out, kept = blocks.apply_dropout(x, 0.5, True, seed=7)
    assert torch.equal(torch.random.get_rng_state(), before)
    torch.testing.assert_close(out, torch.where(kept, x * 2, torch.zeros_like(x)))
    assert 0.3 < float((~kept).float().mean()) < 0.7
    again, kept_again = blocks.apply_dropout(x, 0.5, True, seed=7)
    assert torch.equal(again, out) and torch.equal(kept_again, kept)
    same, all_kept = blocks.apply_dropout(x, 0.5, False, seed=7)
    assert torch.equal(same, x) and bool(all_kept.all())


def test_residual_experiment_with_residuals_is_the_stack_and_without_drops_the_additions():
    stats = blocks.residual_experiment(WORDS, 16, 4, 64, "relu", True, 3, seed=1)
    x = toy_embeddings(list(WORDS), 16, 1)[None]  # (1, n, 16)
    with_res, without = x, x
    with torch.no_grad():
        for i in range(3):
            layer = blocks.seeded(lambda: core.EncoderLayer(16, 4, 64, 0.0, True, "relu"), 1 + i)
            h = layer.norm_self_attn(with_res)  # (1, n, 16)
            mid = with_res + layer.self_attn(h, h, h)  # (1, n, 16)
            with_res = mid + layer.ff(layer.norm_ff(mid))  # (1, n, 16)
            g = layer.norm_self_attn(without)  # (1, n, 16)
            without = layer.ff(layer.norm_ff(layer.self_attn(g, g, g)))  # (1, n, 16)
    for name, stream in (("with", with_res), ("without", without)):
        norm = float(stream[0].norm(dim=-1).mean())
        unit = torch.nn.functional.normalize(stream[0], dim=-1)  # (n, 16)
        cos = [float(unit[i] @ unit[j]) for i in range(5) for j in range(5) if i != j]
        assert math.isclose(stats[name][-1][0], norm, rel_tol=1e-5)
        assert math.isclose(stats[name][-1][1], sum(cos) / len(cos), rel_tol=1e-4, abs_tol=1e-6)
    assert len(stats["with"]) == 4 and math.isnan(blocks.stream_stats(x[:, :1])[1])


def test_traced_layers_and_their_sublayers():
    traced = blocks.trace_layers(WORDS, ("el", "tiempo", "vuela"), 16, 4, 64, "gelu", False, seed=0)
    encoder, enc_rows = traced["encoder"]
    decoder, dec_rows = traced["decoder"]
    assert encoder["hook_out"].shape == (1, 5, 16) and decoder["hook_out"].shape == (1, 3, 16)
    assert decoder["cross_attn.hook_weights"].shape == (1, 4, 3, 5)
    np.testing.assert_allclose(decoder["memory"], encoder["hook_out"])
    np.testing.assert_allclose(decoder["cross_attn.hook_weights"].sum(-1), 1.0, atol=1e-6)
    assert [sub for _, sub, _ in enc_rows] == ["self_attn", "ff"]
    assert [sub for _, sub, _ in dec_rows] == ["self_attn", "cross_attn", "ff"]


def test_tensor_axes_and_hook_kinds():
    assert blocks.tensor_axes("encoder", "self_attn.hook_weights") == ("src", "src")
    assert blocks.tensor_axes("decoder", "cross_attn.hook_weights") == ("tgt", "src")
    assert blocks.tensor_axes("decoder", "self_attn.hook_scores") == ("tgt", "tgt")
    assert blocks.tensor_axes("decoder", "cross_attn.hook_v") == ("src", None)
    assert blocks.tensor_axes("decoder", "memory") == ("src", None)
    assert blocks.hook_kind("norm_ff.hook_std") == "norm_std"
    assert blocks.hook_kind("cross_attn.hook_q") == "cross_q"
    assert blocks.hook_kind("hook_out") == "layer_out"


def test_gpt2_block_counts_match_the_closed_forms():
    x_shape, y_shape, counts = blocks.gpt2_block(seed=0)
    d, f = 768, 3072
    assert x_shape == y_shape == (2, 4, 768)
    assert counts == {"norm_self_attn": 2 * d, "self_attn": 4 * d * d, "norm_ff": 2 * d, "ff": 2 * d * f + f + d}
    assert sum(counts.values()) == 7_084_800
    formulas = dict(zip(counts, blocks.gpt2_formulas(list(counts))))
    assert formulas == {"norm_self_attn": "2 · 768", "self_attn": "4 · 768²", "norm_ff": "2 · 768",
                        "ff": "2 · 768 · 3072 + 3072 + 768"}
