"""Properties every lesson relies on: softmax, masks, causality, padding, seeds, positions."""
import dataclasses
import math

import pytest
import torch

from core import (ModelConfig, additive_mask, apply_rotary, build_model, causal_mask, contextualize, count_parameters,
                  decoder_mask, padding_mask, scaled_dot_product_attention, sinusoidal_encoding, softmax)
from core.masks import global_local_mask, sliding_window_mask, to_block_mask, to_tf_mask
from core.positional import frequency_factor

PAD = 0


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def small_config(**changes):
    cfg = ModelConfig(src_vocab=11, tgt_vocab=13, d_model=16, n_heads=4, n_layers=2, d_ff=32, dropout=0.0,
                      pad_id=PAD)
    return dataclasses.replace(cfg, **changes)


def test_softmax_rows_sum_to_one_even_for_huge_scores():
    x = randn(4, 7, seed=1) * 1e4
    w = softmax(x)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(4))
    torch.testing.assert_close(softmax(randn(3, 5)), torch.softmax(randn(3, 5), -1))


def test_fully_masked_row_gives_zeros_not_nan_and_finite_gradients():
    q = randn(1, 3, 4, seed=2).requires_grad_()
    k, v = randn(1, 3, 4, seed=3), randn(1, 3, 4, seed=4)
    mask = torch.tensor([[True, True, False], [False, False, False], [True, False, False]])
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    assert not torch.isnan(out).any() and torch.equal(weights[0, 1], torch.zeros(3))
    out.sum().backward()
    assert torch.isfinite(q.grad).all()


def test_masked_weights_are_exactly_zero_and_rows_sum_to_one():
    q, k, v = randn(2, 6, 8, seed=5), randn(2, 6, 8, seed=6), randn(2, 6, 8, seed=7)
    mask = causal_mask(6)
    _, weights = scaled_dot_product_attention(q, k, v, mask)
    assert torch.all(weights[:, ~mask] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 6))


def test_mask_forms_and_conventions():
    tokens = torch.tensor([[5, 6, PAD], [7, PAD, PAD]])
    assert padding_mask(tokens, PAD).shape == (2, 1, 1, 3)
    combined = decoder_mask(tokens, PAD)
    assert combined.shape == (2, 1, 3, 3)
    expected = torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 0]], dtype=torch.bool)
    assert torch.equal(combined[0, 0], expected)
    additive = additive_mask(causal_mask(3))
    assert additive[0, 0] == 0 and additive[0, 1] == float("-inf")
    assert torch.equal(to_block_mask(causal_mask(3)), ~causal_mask(3))
    assert torch.equal(to_tf_mask(causal_mask(3)), 1 - torch.ones(3, 3).tril())  # the TF tutorial's look-ahead mask


def test_efficient_attention_masks_keep_about_w_entries_per_row():
    n, w = 64, 3
    window = sliding_window_mask(n, w)
    assert window[32].sum() == 2 * w + 1 and window[0].sum() == w + 1
    dilated = sliding_window_mask(n, w, dilation=2)
    assert dilated[32].sum() == 2 * w + 1 and dilated[32, 34] and not dilated[32, 33]
    with_global = global_local_mask(n, w, [0])
    assert with_global[0].all() and with_global[:, 0].all() and with_global[32].sum() == 2 * w + 2


def test_lesson_one_with_the_course_vectors():
    x = torch.tensor([[0.2, 0.8, 0.3], [0.7, 0.2, 0.9], [0.3, 0.5, 0.2], [0.1, 0.3, 0.4], [0.8, 0.1, 0.6]])
    s, a, c = contextualize(x)
    assert (s.shape, a.shape, c.shape) == ((5, 5), (5, 5), (5, 3))
    assert s[0, 0].item() == pytest.approx(0.77) and s[1, 4].item() == pytest.approx(1.12)
    torch.testing.assert_close(a, torch.softmax(x @ x.T, -1))
    torch.testing.assert_close(c, torch.softmax(x @ x.T, -1) @ x)
    scaled, _, _ = contextualize(x, scale=True)
    torch.testing.assert_close(scaled, x @ x.T / math.sqrt(3))


def test_changing_future_target_tokens_leaves_earlier_outputs_unchanged():
    model = build_model(small_config(), seed=0).eval()
    src = torch.tensor([[3, 4, 5, 6]])
    tgt_a, tgt_b = torch.tensor([[1, 2, 3, 4, 5]]), torch.tensor([[1, 2, 3, 9, 12]])
    out_a, out_b = model(src, tgt_a), model(src, tgt_b)
    torch.testing.assert_close(out_a[:, :3], out_b[:, :3])
    assert not torch.allclose(out_a[:, 3:], out_b[:, 3:])


@pytest.mark.parametrize("kind", ["encoder-decoder", "decoder-only"])
def test_padding_does_not_change_the_outputs_of_real_tokens(kind):
    model = build_model(small_config(kind=kind), seed=1).eval()
    short, padded = torch.tensor([[3, 4, 5]]), torch.tensor([[3, 4, 5, PAD, PAD]])
    if kind == "decoder-only":
        torch.testing.assert_close(model(padded)[:, :3], model(short), atol=1e-6, rtol=0)
    else:
        tgt = torch.tensor([[1, 7, 8]])
        torch.testing.assert_close(model(padded, tgt), model(short, tgt), atol=1e-6, rtol=0)
        memory_short, memory_padded = model.encode(short), model.encode(padded)
        torch.testing.assert_close(memory_padded[:, :3], memory_short, atol=1e-6, rtol=0)


@pytest.mark.parametrize("positional", ["sinusoidal", "learned", "rotary"])
def test_same_seed_same_model_other_seed_other_model(positional):
    cfg = small_config(positional=positional)
    a, b, c = build_model(cfg, seed=3), build_model(cfg, seed=3), build_model(cfg, seed=4)
    for (name, pa), pb, pc in zip(a.state_dict().items(), b.state_dict().values(), c.state_dict().values()):
        assert torch.equal(pa, pb), name
    assert any(not torch.equal(pa, pc) for pa, pc in zip(a.parameters(), c.parameters()))


def test_building_a_model_does_not_touch_the_global_random_state():
    torch.manual_seed(123)
    expected = torch.rand(3)
    torch.manual_seed(123)
    build_model(small_config(), seed=9)
    assert torch.equal(torch.rand(3), expected)


def test_dropout_is_identity_in_eval_and_scales_survivors_in_training():
    model = build_model(small_config(dropout=0.5), seed=0)
    tokens = torch.tensor([[3, 4, 5, 6]])
    model.eval()
    clean = model.src_embed(tokens)
    torch.testing.assert_close(model.src_embed(tokens), clean)
    model.train()
    torch.manual_seed(0)
    noisy = model.src_embed(tokens)
    kept = noisy != 0
    assert 0 < kept.sum() < kept.numel()
    torch.testing.assert_close(noisy[kept], clean[kept] * 2)


def test_sinusoidal_formula_and_the_course_factors():
    pe = sinusoidal_encoding(50, 8)
    pos, i = 7, 2
    assert pe[pos, 2 * i].item() == pytest.approx(math.sin(pos / 10000 ** (2 * i / 8)), abs=1e-6)
    assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(pos / 10000 ** (2 * i / 8)), abs=1e-6)
    assert frequency_factor(0, 512).item() == pytest.approx(1.0)
    assert frequency_factor(128, 512).item() == pytest.approx(100.0)
    assert frequency_factor(255, 512).item() == pytest.approx(9646.6, abs=0.05)
    assert sinusoidal_encoding(4, 5).shape == (4, 5)  # odd widths work too


def test_rotary_dot_product_depends_only_on_the_offset():
    d = 8
    q0, k0 = randn(d, seed=8), randn(d, seed=9)
    def score(p, r):
        seq = torch.zeros(max(p, r) + 1, d)
        qs, ks = seq.clone(), seq.clone()
        qs[p], ks[r] = q0, k0
        return (apply_rotary(qs)[p] @ apply_rotary(ks)[r]).item()
    assert score(5, 2) == pytest.approx(score(13, 10), abs=1e-5)
    assert score(5, 2) != pytest.approx(score(5, 4), abs=1e-3)
    x = randn(6, d, seed=10)
    torch.testing.assert_close(apply_rotary(x).norm(dim=-1), x.norm(dim=-1))  # a rotation keeps lengths


def test_parameter_count_matches_the_formula():
    d, d_ff, n, v_src, v_tgt = 16, 32, 2, 11, 13
    counts = count_parameters(build_model(small_config(), seed=0))
    attention_per_module = 4 * d * d + 4 * d
    assert counts["attention"] == attention_per_module * (n + 2 * n)  # encoder self + decoder self and cross
    assert counts["feed_forward"] == (2 * d * d_ff + d_ff + d) * 2 * n
    assert counts["layer_norm"] == 2 * d * (2 * n + 3 * n + 2)  # 2 + 3 per layer, one final norm per stack
    assert counts["embeddings"] == (v_src + v_tgt) * d
    assert counts["generator"] == v_tgt  # the weight is tied to the target embedding; only the bias is new
    assert counts["total"] == sum(p.numel() for p in build_model(small_config(), seed=0).parameters())


@pytest.mark.parametrize("changes", [dict(n_heads=3), dict(d_model=0), dict(positional="abs"), dict(dropout=1.0)])
def test_invalid_configs_are_refused_with_a_clear_message(changes):
    with pytest.raises(ValueError):
        small_config(**changes)
