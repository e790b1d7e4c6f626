"""run_with_trace: the documented hook table is the real one, and tracing changes nothing."""
import dataclasses
import re

import pytest
import torch

import core.trace
from core import HookPoint, ModelConfig, build_model, run_with_trace


def documented_hooks() -> dict[str, str]:
    """{name pattern with {i}: shape string} parsed from core.trace's docstring table."""
    rows = re.findall(r"^\s+((?:src|tgt|encoder|decoder)\S+)\s+(\([^)]*\))\s*$", core.trace.__doc__, re.M)
    return dict(rows)


def shape_of(text: str, sizes: dict) -> tuple:
    return tuple(sizes[part.strip()] if not part.strip().isdigit() else int(part) for part in text[1:-1].split(","))


CFG = ModelConfig(src_vocab=9, tgt_vocab=7, d_model=12, n_heads=3, n_layers=2, d_ff=20, dropout=0.0)
SIZES = dict(batch=2, n_src=5, n_tgt=4, d_model=12, h=3, d_k=4, d_ff=20)


def traced(cfg, src, tgt=None):
    return run_with_trace(build_model(cfg, seed=0).eval(), src, tgt)


def test_every_traced_tensor_is_documented_with_its_shape_and_every_row_occurs():
    table = documented_hooks()
    assert len(table) >= 50
    _, cache = traced(CFG, torch.randint(0, 9, (2, 5)), torch.randint(0, 7, (2, 4)))
    seen = set()
    for name, tensor in cache.items():
        pattern = re.sub(r"\.layers\.\d+\.", ".layers.{i}.", name)
        assert pattern in table, f"{name} is not in the docstring table"
        assert tensor.shape == shape_of(table[pattern], SIZES), name
        seen.add(pattern)
    assert seen == set(table)  # a pre-norm encoder-decoder has every documented hook point
    assert len(cache) == len([m for m in build_model(CFG).modules() if isinstance(m, HookPoint)])


def test_decoder_only_and_post_norm_hooks_are_a_documented_subset():
    table = documented_hooks()
    cfg = dataclasses.replace(CFG, kind="decoder-only", norm_first=False)
    _, cache = traced(cfg, torch.randint(0, 7, (2, 4)))
    for name, tensor in cache.items():
        pattern = re.sub(r"\.layers\.\d+\.", ".layers.{i}.", name)
        assert tensor.shape == shape_of(table[pattern], SIZES), name
        assert "cross" not in name and not name.startswith(("encoder", "decoder.norm"))


def test_tracing_leaves_the_logits_unchanged_and_removes_its_hooks():
    model = build_model(CFG, seed=1).eval()
    src, tgt = torch.randint(0, 9, (2, 5)), torch.randint(0, 7, (2, 4))
    plain = model(src, tgt)
    logits, _ = run_with_trace(model, src, tgt)
    torch.testing.assert_close(logits, plain, atol=0, rtol=0)
    assert all(not m._forward_hooks for m in model.modules())


def test_hooks_are_removed_even_when_the_run_fails():
    model = build_model(CFG, seed=1)
    with pytest.raises(ValueError):
        run_with_trace(model, torch.randint(0, 9, (1, 5)))  # an encoder-decoder needs tgt
    with pytest.raises(Exception):
        run_with_trace(model, torch.randint(0, 9, (1, 5)), torch.randint(0, 7, (1, 999)))  # longer than max_len
    assert all(not m._forward_hooks for m in model.modules())


def test_masked_scores_hold_minus_infinity_where_the_decoder_mask_blocks():
    _, cache = traced(CFG, torch.randint(0, 9, (2, 5)), torch.randint(0, 7, (2, 4)))
    masked = cache["decoder.layers.0.self_attn.hook_masked_scores"]
    upper = torch.ones(4, 4, dtype=torch.bool).triu(1)
    assert torch.isinf(masked[..., upper]).all() and torch.isfinite(masked[..., ~upper]).all()
