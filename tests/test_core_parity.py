"""core against PyTorch's own implementations, with copied weights."""
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from core import DecoderLayer, EncoderLayer, LayerNorm, MultiHeadAttention, causal_mask, scaled_dot_product_attention
from core.hooks import trace

ATOL = 1e-5


def randn(*shape, seed=0):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


@pytest.mark.parametrize("masked", [False, True])
def test_attention_matches_torch_sdpa(masked):
    q, k, v = randn(2, 3, 5, 8, seed=1), randn(2, 3, 7, 8, seed=2), randn(2, 3, 7, 4, seed=3)
    mask = (randn(2, 1, 5, 7, seed=4) > -0.5) if masked else None
    if masked:
        mask[..., 0] = True  # torch gives NaN for fully blocked rows; those are tested on their own
    out, weights = scaled_dot_product_attention(q, k, v, mask)
    torch.testing.assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=mask), atol=ATOL, rtol=0)
    assert out.shape == (2, 3, 5, 4) and weights.shape == (2, 3, 5, 7)


def copy_mha(ours: MultiHeadAttention, ref: nn.MultiheadAttention):
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)


@pytest.mark.parametrize("d_model,n_heads", [(8, 1), (16, 4), (24, 3)])
def test_multi_head_matches_nn_multihead_attention(d_model, n_heads):
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model, n_heads)
    ref = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
    copy_mha(ours, ref)
    x, memory = randn(2, 5, d_model, seed=5), randn(2, 6, d_model, seed=6)
    keep = causal_mask(5)
    out, cache = trace(ours, lambda: ours(x, x, x, keep))
    ref_out, ref_weights = ref(x, x, x, attn_mask=~keep, average_attn_weights=False)
    torch.testing.assert_close(out, ref_out, atol=ATOL, rtol=0)
    torch.testing.assert_close(cache["hook_weights"], ref_weights, atol=ATOL, rtol=0)
    # cross-attention: queries from x, keys and values from memory
    torch.testing.assert_close(ours(x, memory, memory), ref(x, memory, memory)[0], atol=ATOL, rtol=0)


def test_torch_style_layer_norm_matches_nn_layer_norm():
    ours, ref = LayerNorm(6, style="torch"), nn.LayerNorm(6)
    with torch.no_grad():
        ours.weight.copy_(randn(6, seed=7)), ours.bias.copy_(randn(6, seed=8))
        ref.weight.copy_(ours.weight), ref.bias.copy_(ours.bias)
    x = randn(3, 4, 6, seed=9) * 3 + 1
    torch.testing.assert_close(ours(x), ref(x), atol=ATOL, rtol=0)


def test_annotated_layer_norm_matches_formula():
    ours = LayerNorm(5, style="annotated", eps=1e-6)
    x = randn(4, 5, seed=10) * 2 - 1
    mean = x.sum(-1, keepdim=True) / 5
    std = (((x - mean) ** 2).sum(-1, keepdim=True) / 4).sqrt()  # unbiased: divide by d - 1
    torch.testing.assert_close(ours(x), (x - mean) / (std + 1e-6), atol=ATOL, rtol=0)


def test_the_two_styles_on_the_course_two_dimensional_example():
    x = torch.tensor([[3.0, 1.0]])
    torch.testing.assert_close(LayerNorm(2, "annotated")(x), torch.tensor([[0.7071, -0.7071]]), atol=1e-4, rtol=0)
    torch.testing.assert_close(LayerNorm(2, "torch")(x), torch.tensor([[1.0, -1.0]]), atol=1e-4, rtol=0)


def copy_block(ours, ref, cross: bool):
    """Copy an EncoderLayer/DecoderLayer's weights into nn.TransformerEncoderLayer/DecoderLayer."""
    copy_mha(ours.self_attn, ref.self_attn)
    norms = [(ours.norm_self_attn, ref.norm1), (ours.norm_ff, ref.norm3 if cross else ref.norm2)]
    if cross:
        copy_mha(ours.cross_attn, ref.multihead_attn)
        norms.append((ours.norm_cross_attn, ref.norm2))
    with torch.no_grad():
        for mine, theirs in [(ours.ff.linear1, ref.linear1), (ours.ff.linear2, ref.linear2)] + norms:
            mine.weight.copy_(randn(*mine.weight.shape, seed=mine.weight.numel()) * 0.5 + (mine.weight.dim() == 1))
            mine.bias.copy_(randn(*mine.bias.shape, seed=mine.bias.numel() + 1) * 0.1)
            theirs.weight.copy_(mine.weight), theirs.bias.copy_(mine.bias)


@pytest.mark.parametrize("norm_first", [True, False])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_nn_transformer_encoder_layer(norm_first, activation):
    torch.manual_seed(1)
    ours = EncoderLayer(16, 4, 32, dropout=0.0, norm_first=norm_first, activation=activation, norm_style="torch")
    ref = nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0, activation=activation, batch_first=True,
                                     norm_first=norm_first)
    copy_block(ours, ref, cross=False)
    x = randn(2, 5, 16, seed=11)
    torch.testing.assert_close(ours(x), ref(x), atol=ATOL, rtol=0)


@pytest.mark.parametrize("norm_first", [True, False])
def test_decoder_layer_matches_nn_transformer_decoder_layer(norm_first):
    torch.manual_seed(2)
    ours = DecoderLayer(16, 2, 24, dropout=0.0, norm_first=norm_first, norm_style="torch")
    ref = nn.TransformerDecoderLayer(16, 2, 24, dropout=0.0, batch_first=True, norm_first=norm_first)
    copy_block(ours, ref, cross=True)
    x, memory = randn(2, 4, 16, seed=12), randn(2, 6, 16, seed=13)
    keep = causal_mask(4)
    torch.testing.assert_close(ours(x, memory, tgt_mask=keep), ref(x, memory, tgt_mask=~keep), atol=ATOL, rtol=0)
