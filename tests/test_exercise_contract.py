"""The course's worked exercises (CURRICULUM.md lesson 11) through the `create_model` contract."""
import math

import pytest
import torch
from course_numbers import B_1, B_2, B_K, B_O, B_Q, B_V, EMBEDDED, SRC, W_1, W_2, W_K, W_O, W_Q, W_V, X
from torch import nn

from core import create_fixed_positional_encoding, create_model, run_with_trace

ENCODER_PARAMETERS = {
    f"encoder.layers.0.{module}.{kind}"
    for module in ["self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.out_proj",
                   "ff.linear1", "ff.linear2", "norm_self_attn", "norm_ff"]
    for kind in ["weight", "bias"]
} | {"encoder.norm.weight", "encoder.norm.bias"}


def course_model():
    model = create_model(src_vocab_size=3, tgt_vocab_size=3, embed_dim=2, num_layers=1, num_heads=1, dropout=0.)
    layer = model.encoder.layers[0]
    with torch.no_grad():
        model.src_embed.embed.weight[2] = X[0]
        model.src_embed.embed.weight[1] = X[2]
        for linear, (w, b) in [(layer.self_attn.q_proj, (W_Q, B_Q)), (layer.self_attn.k_proj, (W_K, B_K)),
                               (layer.self_attn.v_proj, (W_V, B_V)), (layer.self_attn.out_proj, (W_O, B_O)),
                               (layer.ff.linear1, (W_1, B_1)), (layer.ff.linear2, (W_2, B_2))]:
            linear.weight.copy_(torch.tensor(w)), linear.bias.copy_(torch.tensor(b))
    return model.eval()


def test_encoder_has_exactly_the_78_named_parameters():
    model = create_model(3, 3, 2, 1, 1, 0.)
    encoder = {name: p for name, p in model.named_parameters() if name.startswith("encoder.")}
    assert set(encoder) == ENCODER_PARAMETERS
    assert sum(p.numel() for p in encoder.values()) == 78
    assert model.encoder.layers[0].ff.linear1.weight.shape == (8, 2)  # d_ff = 4 x embed_dim


def test_module_attributes_and_tied_generator():
    model = create_model(3, 3, 2, 1, 1, 0.)
    assert isinstance(model.src_embed.embed, nn.Embedding)
    assert model.generator.weight is model.tgt_embed.embed.weight
    assert model.encoder.norm.style == "annotated" and model.encoder.layers[0].norm_first


def test_exercise_1_positional_encoding_and_embedding():
    pe = create_fixed_positional_encoding(2, 3)
    assert pe.shape == (1, 3, 2)
    expected_pe = torch.tensor([[0.0, 1.0], [0.8415, 0.5403], [0.9093, -0.4161]])
    torch.testing.assert_close(pe[0], expected_pe, atol=1e-4, rtol=0)
    model = course_model()
    torch.testing.assert_close(model.src_embed(SRC)[0], EMBEDDED, atol=1e-4, rtol=0)
    torch.testing.assert_close(model.src_embed(SRC)[0], math.sqrt(2) * model.src_embed.embed(SRC)[0] + pe[0])


def test_exercise_2_dropout_scales_survivors():
    model = create_model(3, 3, 2, 1, 1, dropout=0.1).train()
    torch.manual_seed(0)
    out = model.src_embed(SRC)[0]
    kept = out != 0
    clean = math.sqrt(2) * model.src_embed.embed(SRC)[0] + create_fixed_positional_encoding(2, 3)[0]
    torch.testing.assert_close(out[kept], clean[kept] / 0.9)


def test_exercise_3_layer_norm_means_and_unbiased_stds():
    _, cache = run_with_trace(course_model(), SRC, torch.tensor([[1]]))
    prefix = "encoder.layers.0.norm_self_attn."
    torch.testing.assert_close(cache[prefix + "hook_mean"][0, :, 0], torch.tensor([0.1320, 0.3229, 0.8879]),
                               atol=1e-4, rtol=0)
    torch.testing.assert_close(cache[prefix + "hook_std"][0, :, 0], torch.tensor([0.4515, 1.3715, 0.0890]),
                               atol=1e-4, rtol=0)
    normalized = cache[prefix + "hook_normalized"][0]
    torch.testing.assert_close(normalized.abs(), torch.full((3, 2), 1 / math.sqrt(2)), atol=1e-4, rtol=0)


def test_exercises_4_to_6_attention_and_ffn_against_hand_formulas():
    _, cache = run_with_trace(course_model(), SRC, torch.tensor([[1]]))
    layer = "encoder.layers.0."
    z = cache[layer + "norm_self_attn.hook_normalized"][0]  # (3, 2), gamma = 1 and beta = 0
    # exercise 4 (Q = K = V = z) by hand
    weights = torch.softmax(z @ z.T / math.sqrt(2), dim=-1)
    assert weights.sum(-1).tolist() == pytest.approx([1, 1, 1])
    # exercise 5: one head with the course's weights, y = x Wᵀ + b
    lin = lambda x, w, b: x @ torch.tensor(w).T + torch.tensor(b)  # noqa: E731
    q, k, v = lin(z, W_Q, B_Q), lin(z, W_K, B_K), lin(z, W_V, B_V)
    a = torch.softmax(q @ k.T / math.sqrt(2), dim=-1)
    torch.testing.assert_close(cache[layer + "self_attn.hook_weights"][0, 0], a, atol=1e-5, rtol=0)
    attn_out = lin(a @ v, W_O, B_O)
    torch.testing.assert_close(cache[layer + "self_attn.hook_out"][0], attn_out, atol=1e-5, rtol=0)
    # exercise 6: residual, LayerNorm (annotated), FFN
    x1 = EMBEDDED + attn_out
    x1_norm = (x1 - x1.mean(-1, keepdim=True)) / (x1.std(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(cache[layer + "hook_resid_mid"][0], x1, atol=1e-4, rtol=0)
    ffn = lin(torch.relu(lin(x1_norm, W_1, B_1)), W_2, B_2)
    torch.testing.assert_close(cache[layer + "ff.hook_out"][0], ffn, atol=1e-4, rtol=0)
