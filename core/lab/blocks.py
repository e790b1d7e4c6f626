"""Lesson 7's computations: the feed-forward network stage by stage, dropout with a fixed draw, residual
connections taken out of a stack, an encoder and a decoder layer traced, and a GPT-2-small-sized block.

Every module is built by ``core.lab.toy.seeded`` (weights from the seed, the global random state untouched) on
toy embeddings (``core.lab.analysis.toy_embeddings``); results come back as numpy arrays (``core.to_numpy``).
"""
from __future__ import annotations

import numpy as np
import torch

from ..device import to_numpy
from ..hooks import trace
from ..layers import DecoderLayer, EncoderLayer, FeedForward
from ..masks import causal_mask
from ..norm import LayerNorm
from .analysis import toy_embeddings
from .toy import seeded  # noqa: F401 (re-exported for the tests and lessons)

GPT2 = {"vocab": 50257, "context": 1024, "d_model": 768, "heads": 12, "layers": 12, "d_ff": 3072, "dropout": 0.1}
GPT2_SHAPE = (2, 4, 768)  # (batch, tokens, d_model) of the block's seeded input


def ffn_stages(words: tuple[str, ...], d_model: int, d_ff: int, activation: str, seed: int,
               device: str = "cpu") -> tuple[list[np.ndarray], int]:
    """[X, X W1 + b1, activation(X W1 + b1), FFN(X)] for the toy embeddings of `words`, and the FFN's size."""
    ff = seeded(lambda: FeedForward(d_model, d_ff, 0.0, activation), seed, device)
    x = toy_embeddings(list(words), d_model, seed).to(device)  # (n, d_model)
    with torch.no_grad():
        out, cache = trace(ff, lambda: ff(x))  # (n, d_model)
        pre = ff.linear1(x)  # (n, d_ff)
    return [to_numpy(m) for m in (x, pre, cache["hook_hidden"], out)], sum(p.numel() for p in ff.parameters())


def apply_dropout(x: torch.Tensor, p: float, training: bool, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """nn.Dropout(p) on x with the random draws fixed by `seed`; returns (output, kept: True where kept)."""
    dropout = torch.nn.Dropout(p).train(training)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        out = dropout(x)  # (n, d): zeros where dropped, x / (1 - p) elsewhere (train); x itself (eval)
        torch.manual_seed(seed)  # the same draws again, on ones: the keep mask itself
        kept = dropout(torch.ones_like(x)) != 0  # (n, d)
    return out, kept


def without_residual(layer: EncoderLayer, x: torch.Tensor) -> torch.Tensor:
    """An encoder layer's two sub-layers with the residual additions taken out (lesson 7's experiment).

    Pre-norm: Sublayer(LayerNorm(x)) instead of x + Sublayer(LayerNorm(x)); post-norm: LayerNorm(Sublayer(x))."""
    if layer.norm_first:
        h = layer.norm_self_attn(x)  # (batch, n, d_model)
        x = layer.self_attn(h, h, h)  # (batch, n, d_model)
        return layer.ff(layer.norm_ff(x))  # (batch, n, d_model)
    x = layer.norm_self_attn(layer.self_attn(x, x, x))  # (batch, n, d_model)
    return layer.norm_ff(layer.ff(x))  # (batch, n, d_model)


def stream_stats(x: torch.Tensor) -> tuple[float, float]:
    """Mean token norm ||x_i|| and mean cosine similarity between different tokens of x (1, n, d) (NaN if n = 1)."""
    norms = x[0].norm(dim=-1)  # (n,)
    unit = x[0] / norms[:, None].clamp(min=1e-12)  # (n, d)
    cos = unit @ unit.T  # (n, n)
    n = x.shape[1]
    pairs = float((cos.sum() - cos.diagonal().sum()) / (n * (n - 1))) if n > 1 else float("nan")
    return float(norms.mean()), pairs


def residual_experiment(words: tuple[str, ...], d_model: int, heads: int, d_ff: int, activation: str,
                        norm_first: bool, n_layers: int, seed: int, device: str = "cpu") -> dict[str, list]:
    """{"with": [...], "without": [...]}: (mean norm, mean cosine) of the stream after each of `n_layers` encoder
    layers (layer i seeded with seed + i), with and without the residual additions. Index 0 is the input."""
    x = toy_embeddings(list(words), d_model, seed)[None].to(device)  # (1, n, d_model)
    streams, stats = {"with": x, "without": x}, {"with": [stream_stats(x)], "without": [stream_stats(x)]}
    with torch.no_grad():
        for i in range(n_layers):
            layer = seeded(lambda: EncoderLayer(d_model, heads, d_ff, 0.0, norm_first, activation), seed + i, device)
            streams = {"with": layer(streams["with"]), "without": without_residual(layer, streams["without"])}
            for name, stream in streams.items():
                stats[name].append(stream_stats(stream))
    return stats


def sublayers(layer: torch.nn.Module) -> list[tuple[str, str, str]]:
    """(LayerNorm, sub-layer, hook after the residual) for every residual sub-layer of `layer`, in order."""
    norms = [name for name, child in layer.named_children() if isinstance(child, LayerNorm)]
    after = [h for h in ("hook_resid_mid", "hook_resid_cross", "hook_out") if getattr(layer, h, None) is not None]
    return [(norm, norm.removeprefix("norm_"), hook) for norm, hook in zip(norms, after, strict=True)]


def trace_layers(src: tuple[str, ...], tgt: tuple[str, ...], d_model: int, heads: int, d_ff: int, activation: str,
                 norm_first: bool, seed: int, device: str = "cpu") -> dict:
    """{"encoder": (tensors, sub-layers), "decoder": (tensors, sub-layers)}: every hook tensor of an encoder layer
    on `src` and of a decoder layer (causal mask) on `tgt` whose memory is the encoder layer's output."""
    enc = seeded(lambda: EncoderLayer(d_model, heads, d_ff, 0.1, norm_first, activation), seed, device)
    dec = seeded(lambda: DecoderLayer(d_model, heads, d_ff, 0.1, norm_first, activation), seed + 1, device)
    x = toy_embeddings(list(src), d_model, seed)[None].to(device)  # (1, n_src, d_model)
    y = toy_embeddings(list(tgt), d_model, seed)[None].to(device)  # (1, n_tgt, d_model)
    causal = causal_mask(len(tgt), device)[None, None]  # (1, 1, n_tgt, n_tgt)
    with torch.no_grad():
        memory, enc_cache = trace(enc, lambda: enc(x))  # (1, n_src, d_model)
        _, dec_cache = trace(dec, lambda: dec(y, memory, None, causal))  # (1, n_tgt, d_model)
    encoder = {"input": to_numpy(x)} | {k: to_numpy(v) for k, v in enc_cache.items()}
    decoder = {"input": to_numpy(y), "memory": to_numpy(memory)} | {k: to_numpy(v) for k, v in dec_cache.items()}
    return {"encoder": (encoder, sublayers(enc)), "decoder": (decoder, sublayers(dec))}


def gpt2_block(seed: int, device: str = "cpu") -> tuple[tuple, tuple, dict[str, int]]:
    """A GPT-2-small-sized block (pre-norm, GELU, torch-style LayerNorm, no attention biases) on a seeded
    (2, 4, 768) input, eval mode, causal mask. Returns (input shape, output shape, {child: parameter count})."""
    block = seeded(lambda: DecoderLayer(GPT2["d_model"], GPT2["heads"], GPT2["d_ff"], dropout=GPT2["dropout"],
                                        norm_first=True, activation="gelu", norm_style="torch", bias=False,
                                        cross_attention=False), seed, device)
    x = torch.randn(*GPT2_SHAPE, generator=torch.Generator().manual_seed(seed)).to(device)  # (2, 4, 768)
    with torch.no_grad():
        y = block(x, tgt_mask=causal_mask(GPT2_SHAPE[1], device)[None, None])  # (2, 4, 768)
    counts = {name: sum(p.numel() for p in child.parameters()) for name, child in block.named_children()}
    return tuple(x.shape), tuple(y.shape), {name: n for name, n in counts.items() if n}


GPT2_FORMULA = {"norm": "2 · {d}", "self_attn": "4 · {d}²", "ff": "2 · {d} · {f} + {f} + {d}"}  # per child module


def gpt2_formulas(children: list[str]) -> list[str]:
    """The closed-form parameter count of each child of the GPT-2 block, written with its sizes."""
    return [GPT2_FORMULA["norm" if name.startswith("norm") else name].format(d=GPT2["d_model"], f=GPT2["d_ff"])
            for name in children]


def tensor_axes(kind: str, name: str) -> tuple[str, str | None]:
    """Which sentence labels the rows and the columns of a traced tensor: "src", "tgt", or None (feature columns).

    An encoder's tensors are all on the source; a decoder's are on the target, except the memory and the
    cross-attention's keys and values (rows: source) and the cross-attention's scores (columns: source)."""
    rows = "src" if kind == "encoder" or name in ("memory", "cross_attn.hook_k", "cross_attn.hook_v") else "tgt"
    if name.rsplit(".", 1)[-1] not in ("hook_scores", "hook_masked_scores", "hook_weights"):
        return rows, None
    return rows, "src" if kind == "encoder" or name.startswith("cross_attn") else "tgt"


def hook_kind(name: str) -> str:
    """The kind of a traced tensor, from its name: 'norm_ff.hook_std' -> 'norm_std', 'cross_attn.hook_q' -> 'cross_q',
    'self_attn.hook_weights' -> 'attn_weights', 'hook_out' -> 'layer_out', 'ff.hook_hidden' -> 'ff_hidden'."""
    parent, _, leaf = name.rpartition(".")
    leaf = leaf.removeprefix("hook_")
    if parent == "cross_attn" and leaf in ("q", "k", "v"):
        return f"cross_{leaf}"
    group = "norm" if parent.startswith("norm") else "attn" if parent.endswith("attn") else parent or "layer"
    return f"{group}_{leaf}"
