"""What a Transformer costs: exact parameter counts without allocating, weight-only formulas, and the
multiply-adds and memory of one layer as the sequence grows.

Counting convention: one multiply-add (MAC) is one multiplication plus one addition, i.e. 2 FLOPs. Matrix
products are counted exactly (an (a x b) @ (b x c) product is a*b*c MACs); softmax and LayerNorm are cheap
element-wise work and are given as orders of magnitude (about n*d for a LayerNorm, h*n^2 exponentials for a
softmax). Pure Python and torch; no UI code.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torch.overrides import TorchFunctionMode

from ..config import ModelConfig
from ..layers import EncoderLayer
from ..model import DecoderOnly, Transformer, count_parameters
from .toy import seeded


class ShapesOnly(TorchFunctionMode):
    """Inside this mode `torch.empty` (which nn.Linear and nn.Embedding use for their weights) makes "meta"
    tensors, which have a shape but no memory, and the random fills of `torch.nn.init` do nothing.

    Everything else (the small LayerNorm vectors, the sinusoidal table) is built as usual on the CPU. Not
    the whole meta device: its first random fill or `arange` imports torch's compiler, which takes seconds."""

    SKIPPED = frozenset({"normal_", "uniform_", "kaiming_uniform_", "kaiming_normal_", "xavier_uniform_",
                         "xavier_normal_", "trunc_normal_", "orthogonal_"})

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") in self.SKIPPED:
            return args[0] if args else kwargs["tensor"]  # the tensor to fill, left as it is
        if func is torch.empty:
            kwargs = {**kwargs, "device": "meta"}
        return func(*args, **kwargs)


def meta_model(cfg: ModelConfig) -> nn.Module:
    """The model `cfg` describes, with every weight matrix on torch's "meta" device: every shape is real but no
    memory is allocated, so even a 100-million-parameter configuration is counted in a fraction of a second.
    The weights hold no values (nothing is initialized): use it to count, never to run."""
    with ShapesOnly(), torch.random.fork_rng(devices=[]):
        return Transformer(cfg) if cfg.kind == "encoder-decoder" else DecoderOnly(cfg)


def numel(module: nn.Module | None) -> int:
    """Parameters of one module (a tied weight counted once within it); 0 for None."""
    return 0 if module is None else sum(p.numel() for p in module.parameters())


def parameter_breakdown(cfg: ModelConfig) -> dict[str, int]:
    """Exact counts of the encoder-decoder `cfg` describes, read off the real module tree (meta device).

    Keys: the five components of `count_parameters` and "total"; then one per box of the diagram:
    "src_embed", "tgt_embed", "enc_layer", "enc_attn", "enc_ff", "enc_norms", "enc_final_norm",
    "dec_layer", "dec_self_attn", "dec_cross_attn", "dec_ff", "dec_norms", "dec_final_norm", "generator_new"
    (what the generator adds beyond the tied target embedding: its bias)."""
    if cfg.kind != "encoder-decoder":
        raise ValueError("parameter_breakdown describes the encoder-decoder")
    model = meta_model(cfg)
    counts = count_parameters(model)
    enc, dec = model.encoder.layers[0], model.decoder.layers[0]
    norms = lambda layer: sum(numel(m) for name, m in layer.named_children() if name.startswith("norm"))  # noqa: E731
    return counts | {
        "src_embed": numel(model.src_embed), "tgt_embed": numel(model.tgt_embed),
        "enc_layer": numel(enc), "enc_attn": numel(enc.self_attn), "enc_ff": numel(enc.ff), "enc_norms": norms(enc),
        "enc_final_norm": numel(model.encoder.norm),
        "dec_layer": numel(dec), "dec_self_attn": numel(dec.self_attn), "dec_cross_attn": numel(dec.cross_attn),
        "dec_ff": numel(dec.ff), "dec_norms": norms(dec), "dec_final_norm": numel(model.decoder.norm),
        "generator_new": counts["generator"],
    }


def weight_only_layer(d_model: int, d_ff: int) -> dict[str, int]:
    """The course's per-encoder-layer formula, weights only (no biases): attention 4 d^2 (W_Q, W_K, W_V, W_O),
    FFN 2 d d_ff (W_1, W_2), two LayerNorms 4 d (a gain and a shift of d each)."""
    d = d_model
    parts = {"attention": 4 * d * d, "feed_forward": 2 * d * d_ff, "layer_norm": 4 * d}
    return parts | {"total": sum(parts.values())}


def formula_counts(d: int, d_ff: int, layers: int, v_src: int, v_tgt: int, pre_norm: bool) -> dict[str, int]:
    """The encoder-decoder's parameters by the closed-form formulas with biases, per component of
    `count_parameters` and "total" (what lesson 8 shows beside the model's own counts)."""
    attn, ff, norm = 4 * d * d + 4 * d, 2 * d * d_ff + d_ff + d, 2 * d
    n_norms = 5 * layers + (2 if pre_norm else 0)  # 2 per encoder layer, 3 per decoder layer, 2 final (pre-norm)
    counts = {"embeddings": (v_src + v_tgt) * d, "attention": 3 * layers * attn, "feed_forward": 2 * layers * ff,
              "layer_norm": n_norms * norm, "generator": v_tgt}
    return counts | {"total": sum(counts.values())}


def weight_only_counts(d: int, d_ff: int, layers: int, v_src: int, v_tgt: int, pre_norm: bool) -> dict[str, int]:
    """The same components weights only (no biases): attention and FFN by the course's formula (3N attention
    blocks, 2N FFNs), the embeddings and LayerNorms as they are, no generator bias."""
    f, w = formula_counts(d, d_ff, layers, v_src, v_tgt, pre_norm), weight_only_layer(d, d_ff)
    counts = {"embeddings": f["embeddings"], "attention": 3 * layers * w["attention"],
              "feed_forward": 2 * layers * w["feed_forward"], "layer_norm": f["layer_norm"], "generator": 0}
    return counts | {"total": sum(counts.values())}


def encoder_layer_macs(n: int, d_model: int, d_ff: int) -> dict[str, int]:
    """Multiply-adds of one encoder layer on n tokens (one sequence).

    projections: Q, K, V and the output, four (n x d) @ (d x d) products = 4 n d^2;
    scores: Q K^T over all heads = n^2 d; weighted_sum: A V over all heads = n^2 d;
    feed_forward: (n x d) @ (d x d_ff) and back = 2 n d d_ff; layer_norm: ~ n d each, two of them."""
    d = d_model
    parts = {"projections": 4 * n * d * d, "scores": n * n * d, "weighted_sum": n * n * d,
             "feed_forward": 2 * n * d * d_ff, "layer_norm": 2 * n * d}
    return parts | {"total": sum(parts.values())}


def decoder_layer_macs(n_tgt: int, n_src: int, d_model: int, d_ff: int) -> dict[str, int]:
    """Multiply-adds of one decoder layer: masked self-attention on n_tgt tokens (counted in full: the mask
    zeroes weights but the dense product is still computed), cross-attention (Q and the output on n_tgt
    positions, K and V on the n_src memory positions, an n_tgt x n_src score matrix), the FFN, three LayerNorms."""
    d = d_model
    parts = {"projections": 4 * n_tgt * d * d + 2 * n_tgt * d * d + 2 * n_src * d * d,
             "scores": n_tgt * n_tgt * d + n_tgt * n_src * d, "weighted_sum": n_tgt * n_tgt * d + n_tgt * n_src * d,
             "feed_forward": 2 * n_tgt * d * d_ff, "layer_norm": 3 * n_tgt * d}
    return parts | {"total": sum(parts.values())}


def crossovers(d_model: int, d_ff: int) -> dict[str, int]:
    """Sequence lengths where one cost overtakes another in `encoder_layer_macs`:
    "order": n^2 d = n d^2 (self-attention vs a recurrent layer, the paper's Table 1) at n = d;
    "scores_vs_ffn": scores + weighted sum (2 n^2 d) = FFN (2 n d d_ff) at n = d_ff;
    "scores_vs_projections": 2 n^2 d = 4 n d^2 at n = 2 d."""
    return {"order": d_model, "scores_vs_ffn": d_ff, "scores_vs_projections": 2 * d_model}


def cost_curves(d_model: int, d_ff: int, points: int = 64) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """Multiply-adds of one encoder layer's parts against the sequence length n, for the cost chart.

    n runs over about `points` geometric steps (rounded, repeats dropped) from 1 to well past the crossovers
    (8 max(d_ff, 2d), at least 128). Curves: "scores" the n^2 part (QK^T and the weighted sum, 2 n^2 d), "ffn"
    the feed-forward (2 n d d_ff), "projections" W_Q, W_K, W_V and W_O (4 n d^2)."""
    d = d_model
    ns = np.unique(np.geomspace(1, max(8 * max(d_ff, 2 * d), 128), points).round())  # (points,) or fewer
    return ns, {"scores": 2 * ns * ns * d, "ffn": 2 * ns * d * d_ff, "projections": 4 * ns * d * d}


def layer_memory(n: int, d_model: int, heads: int, d_ff: int) -> dict[str, int]:
    """Examples of the numbers (floats) one encoder layer produces for one sequence of n tokens and keeps for
    backprop: the attention weights (h x n x n), one (n x d) activation (Q, K, V, the attention output and the
    residual stream are each this size) and the FFN's hidden layer (n x d_ff). Not the total: autograd keeps
    several of each (see `saved_for_backward`)."""
    return {"attention_weights": heads * n * n, "activation": n * d_model, "ffn_hidden": n * d_ff}


def saved_for_backward(module: nn.Module, *inputs: torch.Tensor) -> int:
    """Bytes autograd keeps to backpropagate through `module(*inputs)`: every tensor its forward pass saves for
    the backward pass (``torch.autograd.graph.saved_tensors_hooks``), each storage counted once (views of one
    tensor share it), the module's own parameters left out (they exist whether or not we train)."""
    params = {p.untyped_storage().data_ptr() for p in module.parameters()}
    storages: dict[int, int] = {}

    def pack(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        if storage.data_ptr() not in params:
            storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        module(*inputs)
    return sum(storages.values())


def encoder_layer_saved_bytes(n: int, d_model: int, heads: int, d_ff: int, dropout: float = 0.1,
                              norm_first: bool = True, seed: int = 0, device: str = "cpu") -> int:
    """`saved_for_backward` of one seeded encoder layer in training mode on one sequence of n tokens (float32,
    dropout on: its keep masks are saved too)."""
    layer = seeded(lambda: EncoderLayer(d_model, heads, d_ff, dropout, norm_first), seed, device).train()
    x = torch.randn(1, n, d_model, generator=torch.Generator().manual_seed(seed)).to(device)  # (1, n, d)
    return saved_for_backward(layer, x.requires_grad_())


def shared_vocab_range(millions: float, d_model: int, heads: int, d_ff: int, layers: int) -> tuple[float, float]:
    """The vocabulary sizes V for which the post-norm encoder-decoder with one embedding matrix shared by the
    source, the target and the generator (the paper's section 3.4; our generator keeps its bias) has a parameter
    count that rounds to `millions` M. The count is linear in V: a + V (d + 1)."""
    def shared(vocab: int) -> int:
        cfg = ModelConfig(src_vocab=vocab, tgt_vocab=vocab, d_model=d_model, n_heads=heads, n_layers=layers,
                          d_ff=d_ff, norm_first=False)
        counts = parameter_breakdown(cfg)
        return counts["total"] - counts["src_embed"]
    slope = shared(2) - shared(1)  # d + 1: one embedding row and one generator bias per token
    base = shared(1) - slope  # everything that does not grow with V
    return (1e6 * (millions - 0.5) - base) / slope, (1e6 * (millions + 0.5) - base) / slope
