"""Assembled models: the encoder-decoder Transformer and the decoder-only (GPT-style) variant.

Transformer(X, Y) = Generator(Decoder(Encoder(X), Y)): the encoder reads the source once; the
decoder's cross-attention takes its queries from the target side and its keys and values from the
encoder output ("memory"). The generator is a linear layer to vocabulary logits whose weight is
the target embedding matrix (weight tying).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .config import ModelConfig
from .hooks import HookPoint
from .layers import Decoder, Encoder
from .masks import decoder_mask, padding_mask
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding

POSITIONAL_TABLE = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEncoding}


class Embeddings(nn.Module):
    """dropout(sqrt(d_model) * embed(tokens) + PE): tokens (..., n) -> (..., n, d_model).

    Rotary and "none" add nothing here (rotary acts inside attention). Hook points: hook_embed (the
    scaled token embedding), hook_out (after the positional encoding and dropout).
    """

    def __init__(self, vocab: int, d_model: int, max_len: int = 512, positional: str = "sinusoidal",
                 dropout: float = 0.1):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.positional = POSITIONAL_TABLE[positional](d_model, max_len) if positional in POSITIONAL_TABLE else None
        self.max_len, self.scale = max_len, math.sqrt(d_model)
        self.dropout = nn.Dropout(dropout)
        self.hook_embed, self.hook_out = HookPoint(), HookPoint()

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        if tokens.shape[-1] > self.max_len:
            raise ValueError(f"{tokens.shape[-1]} tokens is longer than max_len={self.max_len}")
        x = self.hook_embed(self.embed(tokens) * self.scale)  # (..., n, d_model)
        if self.positional is not None:
            x = x + self.positional(x)  # (..., n, d_model) + (n, d_model)
        return self.hook_out(self.dropout(x))


class Generator(nn.Linear):
    """Hidden states (..., d_model) -> vocabulary logits (..., vocab). Softmax is left to the loss."""


class Transformer(nn.Module):
    """The encoder-decoder of "Attention Is All You Need". forward(src, tgt) -> logits (batch, n_tgt, tgt_vocab)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = Embeddings(cfg.src_vocab, cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        self.tgt_embed = Embeddings(cfg.tgt_vocab, cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        self.encoder = Encoder(cfg)
        self.decoder = Decoder(cfg)
        self.generator = Generator(cfg.d_model, cfg.tgt_vocab)
        self.generator.weight = self.tgt_embed.embed.weight  # tied: (tgt_vocab, d_model)

    def src_mask(self, src: torch.Tensor) -> torch.Tensor | None:
        return None if self.cfg.pad_id is None else padding_mask(src, self.cfg.pad_id)  # (batch, 1, 1, n_src)

    def encode(self, src: torch.Tensor) -> torch.Tensor:
        return self.encoder(self.src_embed(src), self.src_mask(src))  # (batch, n_src, d_model)

    def decode(self, memory: torch.Tensor, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        tgt_mask = decoder_mask(tgt, self.cfg.pad_id)  # (batch | 1, 1, n_tgt, n_tgt)
        return self.decoder(self.tgt_embed(tgt), memory, self.src_mask(src), tgt_mask)  # (batch, n_tgt, d_model)

    def forward(self, src: torch.Tensor, tgt: torch.Tensor) -> torch.Tensor:
        return self.generator(self.decode(self.encode(src), src, tgt))  # (batch, n_tgt, tgt_vocab)


class DecoderOnly(nn.Module):
    """GPT-style: masked self-attention blocks with no encoder and no cross-attention.

    Uses the target-side vocabulary (``cfg.tgt_vocab``). forward(tokens) -> logits (batch, n, tgt_vocab).
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.tgt_embed = Embeddings(cfg.tgt_vocab, cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout)
        self.decoder = Decoder(cfg, cross_attention=False)
        self.generator = Generator(cfg.d_model, cfg.tgt_vocab)
        self.generator.weight = self.tgt_embed.embed.weight  # tied: (tgt_vocab, d_model)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        hidden = self.decoder(self.tgt_embed(tokens), tgt_mask=decoder_mask(tokens, self.cfg.pad_id))
        return self.generator(hidden)  # (batch, n, tgt_vocab)


def init_parameters(model: nn.Module, seed: int) -> nn.Module:
    """Deterministic initialization from `seed` alone: Xavier-uniform matrices, zero biases, unit LayerNorm gains."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p, generator=generator)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.fill_(1.0)
    return model


def build_model(cfg: ModelConfig, seed: int = 0) -> nn.Module:
    """The model `cfg` describes, initialized from `seed` (the same seed gives the same weights).

    The global random state is left as it was: module constructors draw from it, so they run inside fork_rng.
    """
    with torch.random.fork_rng(devices=[]):
        model = Transformer(cfg) if cfg.kind == "encoder-decoder" else DecoderOnly(cfg)
    return init_parameters(model, seed)


def create_model(src_vocab_size: int, tgt_vocab_size: int, embed_dim: int, num_layers: int, num_heads: int,
                 dropout: float = 0.1, max_len: int = 512, seed: int = 0) -> Transformer:
    """The course's exercise model: pre-norm encoder-decoder, d_ff = 4 * embed_dim, annotated LayerNorm,
    sinusoidal positions, generator tied to the target embedding."""
    cfg = ModelConfig(src_vocab=src_vocab_size, tgt_vocab=tgt_vocab_size, d_model=embed_dim, n_heads=num_heads,
                      n_layers=num_layers, d_ff=4 * embed_dim, max_len=max_len, dropout=dropout)
    return build_model(cfg, seed)


def _component(name: str) -> str:
    parts = name.split(".")
    if "self_attn" in parts or "cross_attn" in parts:
        return "attention"
    if "ff" in parts:
        return "feed_forward"
    if any(part.startswith("norm") for part in parts):
        return "layer_norm"
    if parts[0] == "generator":
        return "generator"
    return "embeddings"


def count_parameters(model: nn.Module) -> dict[str, int]:
    """Trainable parameters by component (embeddings, attention, feed_forward, layer_norm, generator) and total.

    A tied weight is counted once, under embeddings; the generator then only adds its bias.
    """
    counts = dict.fromkeys(("embeddings", "attention", "feed_forward", "layer_norm", "generator"), 0)
    for name, p in model.named_parameters():
        counts[_component(name)] += p.numel()
    counts["total"] = sum(counts.values())
    return counts
