"""The blocks: position-wise feed-forward network, residual sub-layers, encoder and decoder layers and stacks.

Pre-norm (``norm_first=True``):  x + Dropout(Sublayer(LayerNorm(x)))   (GPT-2, the course's model)
Post-norm (``norm_first=False``): LayerNorm(x + Dropout(Sublayer(x)))  (the 2017 paper, BERT)
"""
from __future__ import annotations

import torch
from torch import nn

from .attention import MultiHeadAttention
from .hooks import HookPoint
from .norm import LayerNorm

ACTIVATION = {"relu": nn.ReLU, "gelu": nn.GELU}


class FeedForward(nn.Module):
    """FFN(x) = linear2(dropout(activation(linear1(x)))), the same weights at every position.

    Shapes: (..., d_model) -> (..., d_ff) -> (..., d_model). Hook points: hook_hidden (after the
    activation), hook_out.
    """

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = ACTIVATION[activation]()
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.hook_hidden, self.hook_out = HookPoint(), HookPoint()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        hidden = self.hook_hidden(self.activation(self.linear1(x)))  # (..., d_ff)
        return self.hook_out(self.linear2(self.dropout(hidden)))  # (..., d_model)


class _Block(nn.Module):
    """What encoder and decoder layers share: the residual wiring (each layer names its own LayerNorms)."""

    def __init__(self, dropout: float, norm_first: bool):
        super().__init__()
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)

    def residual(self, x: torch.Tensor, norm: LayerNorm, sublayer) -> torch.Tensor:
        if self.norm_first:
            return x + self.dropout(sublayer(norm(x)))  # (batch, n, d_model)
        return norm(x + self.dropout(sublayer(x)))  # (batch, n, d_model)


class EncoderLayer(_Block):
    """Self-attention and FFN, each inside a residual sub-layer (2 residual connections, 2 LayerNorms).

    Hook points: hook_resid_mid (after the attention sub-layer), hook_out (batch, n, d_model).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = True,
                 activation: str = "relu", norm_style: str = "annotated", norm_eps: float | None = None,
                 bias: bool = True, rotary: bool = False):
        super().__init__(dropout, norm_first)
        self.norm_self_attn = LayerNorm(d_model, norm_style, norm_eps)
        self.norm_ff = LayerNorm(d_model, norm_style, norm_eps)
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=bias, rotary=rotary)
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.hook_resid_mid, self.hook_out = HookPoint(), HookPoint()

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.hook_resid_mid(self.residual(x, self.norm_self_attn, lambda h: self.self_attn(h, h, h, mask)))
        return self.hook_out(self.residual(x, self.norm_ff, self.ff))  # (batch, n, d_model)


class DecoderLayer(_Block):
    """Masked self-attention, cross-attention (queries from the decoder, keys and values from the
    encoder's output, the "memory") and FFN: 3 residual connections, 3 LayerNorms.

    With ``cross_attention=False`` it is a GPT-style block (decoder-only, 2 sub-layers).
    Hook points: hook_resid_mid (after self-attention), hook_resid_cross (after cross-attention), hook_out.
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, dropout: float = 0.1, norm_first: bool = True,
                 activation: str = "relu", norm_style: str = "annotated", norm_eps: float | None = None,
                 bias: bool = True, rotary: bool = False, cross_attention: bool = True):
        super().__init__(dropout, norm_first)
        self.norm_self_attn = LayerNorm(d_model, norm_style, norm_eps)
        self.norm_cross_attn = LayerNorm(d_model, norm_style, norm_eps) if cross_attention else None
        self.norm_ff = LayerNorm(d_model, norm_style, norm_eps)
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=bias, rotary=rotary)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, bias=bias) if cross_attention else None
        self.ff = FeedForward(d_model, d_ff, dropout, activation)
        self.hook_resid_mid, self.hook_out = HookPoint(), HookPoint()
        self.hook_resid_cross = HookPoint() if cross_attention else None

    def forward(self, x, memory=None, src_mask=None, tgt_mask=None, cache=None):
        """`cache` (a core.attention.LayerCache, optional): keep this layer's self-attention keys and values."""
        self_attn = lambda h: self.self_attn(h, h, h, tgt_mask, cache=cache)  # noqa: E731
        x = self.hook_resid_mid(self.residual(x, self.norm_self_attn, self_attn))
        if self.cross_attn is not None:
            cross = lambda h: self.cross_attn(h, memory, memory, src_mask)  # noqa: E731
            x = self.hook_resid_cross(self.residual(x, self.norm_cross_attn, cross))
        return self.hook_out(self.residual(x, self.norm_ff, self.ff))  # (batch, n_tgt, d_model)


def final_norm(cfg) -> nn.Module:
    """A pre-norm stack ends with a LayerNorm (its last residual stream is otherwise never normalized)."""
    return LayerNorm(cfg.d_model, cfg.norm_style, cfg.norm_eps) if cfg.norm_first else nn.Identity()


class Encoder(nn.Module):
    """N encoder layers, then the final LayerNorm when pre-norm. (batch, n, d_model) in and out."""

    def __init__(self, cfg):
        super().__init__()
        self.layers = nn.ModuleList(EncoderLayer(**cfg.layer_kwargs()) for _ in range(cfg.n_layers))
        self.norm = final_norm(cfg)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class Decoder(nn.Module):
    """N decoder layers (with or without cross-attention), then the final LayerNorm when pre-norm."""

    def __init__(self, cfg, cross_attention: bool = True):
        super().__init__()
        kwargs = cfg.layer_kwargs() | {"cross_attention": cross_attention}
        self.layers = nn.ModuleList(DecoderLayer(**kwargs) for _ in range(cfg.n_layers))
        self.norm = final_norm(cfg)

    def forward(self, x, memory=None, src_mask=None, tgt_mask=None, caches=None):
        """`caches`: one core.attention.LayerCache per layer (optional, for generation with a KV cache)."""
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, cache=None if caches is None else caches[i])
        return self.norm(x)
