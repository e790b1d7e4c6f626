"""Assembled models: the encoder-decoder Transformer, the decoder-only (GPT-style) and the encoder-only
(BERT-style) variants.

Transformer(X, Y) = Generator(Decoder(Encoder(X), Y)): the encoder reads the source once; the
decoder's cross-attention takes its queries from the target side and its keys and values from the
encoder output ("memory"). The generator is a linear layer to vocabulary logits whose weight is
the target embedding matrix (weight tying).
"""
from __future__ import annotations

import math

import torch
from torch import nn

from .attention import LayerCache
from .config import ModelConfig
from .hooks import HookPoint
from .layers import Decoder, Encoder
from .masks import decoder_mask, padding_mask
from .norm import LayerNorm
from .positional import LearnedPositionalEncoding, SinusoidalPositionalEncoding

POSITIONAL_TABLE = {"sinusoidal": SinusoidalPositionalEncoding, "learned": LearnedPositionalEncoding}


class Embeddings(nn.Module):
    """dropout(sqrt(d_model) * embed(tokens) + PE): tokens (..., n) -> (..., n, d_model).

    Rotary and "none" add nothing here (rotary acts inside attention). BERT-style options (all off by
    default): `scale=False` drops the sqrt(d_model) factor, `type_vocab > 0` adds a token-type (segment)
    embedding, `norm_style` adds a LayerNorm on the sum (before dropout):
    dropout(LayerNorm(embed(tokens) + PE + type_embed(token_types))).
    Hook points: hook_embed (the (scaled) token embedding), hook_out (after positions, types, norm, dropout).
    """

    def __init__(self, vocab: int, d_model: int, max_len: int = 512, positional: str = "sinusoidal",
                 dropout: float = 0.1, *, scale: bool = True, type_vocab: int = 0, norm_style: str | None = None,
                 norm_eps: float | None = None):
        super().__init__()
        self.embed = nn.Embedding(vocab, d_model)
        self.positional = POSITIONAL_TABLE[positional](d_model, max_len) if positional in POSITIONAL_TABLE else None
        self.token_type = nn.Embedding(type_vocab, d_model) if type_vocab else None
        self.norm = LayerNorm(d_model, norm_style, norm_eps) if norm_style else None
        self.max_len, self.scale = max_len, math.sqrt(d_model) if scale else 1.0
        self.dropout = nn.Dropout(dropout)
        self.hook_embed, self.hook_out = HookPoint(), HookPoint()

    @classmethod
    def from_config(cls, cfg: ModelConfig, vocab: int) -> Embeddings:
        return cls(vocab, cfg.d_model, cfg.max_len, cfg.positional, cfg.dropout, scale=cfg.embed_scale,
                   type_vocab=cfg.type_vocab, norm_style=cfg.norm_style if cfg.embed_norm else None,
                   norm_eps=cfg.norm_eps)

    def forward(self, tokens: torch.Tensor, token_types: torch.Tensor | None = None, offset: int = 0) -> torch.Tensor:
        """`offset`: the position of the first token (generation with a KV cache feeds one new token at a time)."""
        if offset + tokens.shape[-1] > self.max_len:
            raise ValueError(f"{offset + tokens.shape[-1]} tokens is longer than max_len={self.max_len}")
        x = self.hook_embed(self.embed(tokens) * self.scale)  # (..., n, d_model)
        if self.positional is not None and offset:
            # the tables read only a length: the first offset + n rows, of which the last n are these tokens'
            x = x + self.positional(x.new_empty(offset + x.shape[-2], 0))[offset:]  # (..., n, d_model) + (n, d_model)
        elif self.positional is not None:
            x = x + self.positional(x)  # (..., n, d_model) + (n, d_model)
        if self.token_type is not None:
            types = torch.zeros_like(tokens) if token_types is None else token_types  # (..., n)
            x = x + self.token_type(types)  # (..., n, d_model)
        if self.norm is not None:
            x = self.norm(x)  # (..., n, d_model)
        return self.hook_out(self.dropout(x))


class Generator(nn.Linear):
    """Hidden states (..., d_model) -> vocabulary logits (..., vocab). Softmax is left to the loss."""


class Transformer(nn.Module):
    """The encoder-decoder of "Attention Is All You Need". forward(src, tgt) -> logits (batch, n_tgt, tgt_vocab)."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = Embeddings.from_config(cfg, cfg.src_vocab)
        self.tgt_embed = Embeddings.from_config(cfg, cfg.tgt_vocab)
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
        self.tgt_embed = Embeddings.from_config(cfg, cfg.tgt_vocab)
        self.decoder = Decoder(cfg, cross_attention=False)
        self.generator = Generator(cfg.d_model, cfg.tgt_vocab)
        self.generator.weight = self.tgt_embed.embed.weight  # tied: (tgt_vocab, d_model)

    def forward(self, tokens: torch.Tensor, caches: list[LayerCache] | None = None) -> torch.Tensor:
        """`caches` (optional, one `LayerCache` per layer): `tokens` continue the sequence the caches hold, which
        keep every layer's keys and values for the next call (generation with a KV cache; no padding)."""
        if caches is None:
            hidden = self.decoder(self.tgt_embed(tokens), tgt_mask=decoder_mask(tokens, self.cfg.pad_id))
            return self.generator(hidden)  # (batch, n, tgt_vocab)
        seen, n = len(caches[0]), tokens.shape[-1]
        mask = torch.ones(n, seen + n, dtype=torch.bool, device=tokens.device).tril(diagonal=seen)  # (n, seen + n)
        hidden = self.decoder(self.tgt_embed(tokens, offset=seen), tgt_mask=mask, caches=caches)  # (batch, n, d_model)
        return self.generator(hidden)  # (batch, n, tgt_vocab)

    def new_caches(self) -> list[LayerCache]:
        """An empty KV cache: one `LayerCache` per decoder layer."""
        return [LayerCache() for _ in self.decoder.layers]


class EncoderOnly(nn.Module):
    """BERT-style: the encoder stack alone (no decoder, no generator), e.g. a sentence encoder.

    Uses the source-side vocabulary (``cfg.src_vocab``). Keys equal to ``cfg.pad_id`` are masked out, unless
    `keep` (batch, n), True for real tokens, says which ones are padding (a tokenizer's attention mask).
    forward(tokens, token_types=None, keep=None) -> hidden states (batch, n, d_model): one vector per token.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.src_embed = Embeddings.from_config(cfg, cfg.src_vocab)
        self.encoder = Encoder(cfg)

    def forward(self, tokens: torch.Tensor, token_types: torch.Tensor | None = None,
                keep: torch.Tensor | None = None) -> torch.Tensor:
        if keep is not None:
            mask = keep[:, None, None, :]  # (batch, 1, 1, n)
        else:
            mask = None if self.cfg.pad_id is None else padding_mask(tokens, self.cfg.pad_id)  # (batch, 1, 1, n)
        return self.encoder(self.src_embed(tokens, token_types), mask)  # (batch, n, d_model)


MODEL_KINDS = {"encoder-decoder": Transformer, "decoder-only": DecoderOnly, "encoder-only": EncoderOnly}


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
        model = MODEL_KINDS[cfg.kind](cfg)
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
