"""`run_with_trace`: run a model once and get every intermediate tensor by name.

Hook names and shapes, for an encoder-decoder (``{i}`` is the layer index; a decoder-only model has
the ``tgt_embed``, ``decoder`` and ``generator`` rows, with ``n_tgt`` its sequence length; the
``encoder.norm`` and ``decoder.norm`` rows exist for pre-norm models only, and
``hook_resid_cross`` only in decoders with cross-attention):

    name                                              shape
    src_embed.hook_embed                              (batch, n_src, d_model)
    src_embed.hook_out                                (batch, n_src, d_model)
    encoder.layers.{i}.norm_self_attn.hook_mean       (batch, n_src, 1)
    encoder.layers.{i}.norm_self_attn.hook_std        (batch, n_src, 1)
    encoder.layers.{i}.norm_self_attn.hook_normalized (batch, n_src, d_model)
    encoder.layers.{i}.self_attn.hook_q               (batch, h, n_src, d_k)
    encoder.layers.{i}.self_attn.hook_k               (batch, h, n_src, d_k)
    encoder.layers.{i}.self_attn.hook_v               (batch, h, n_src, d_k)
    encoder.layers.{i}.self_attn.hook_scores          (batch, h, n_src, n_src)
    encoder.layers.{i}.self_attn.hook_masked_scores   (batch, h, n_src, n_src)
    encoder.layers.{i}.self_attn.hook_weights         (batch, h, n_src, n_src)
    encoder.layers.{i}.self_attn.hook_heads           (batch, h, n_src, d_k)
    encoder.layers.{i}.self_attn.hook_out             (batch, n_src, d_model)
    encoder.layers.{i}.hook_resid_mid                 (batch, n_src, d_model)
    encoder.layers.{i}.norm_ff.hook_mean              (batch, n_src, 1)
    encoder.layers.{i}.norm_ff.hook_std               (batch, n_src, 1)
    encoder.layers.{i}.norm_ff.hook_normalized        (batch, n_src, d_model)
    encoder.layers.{i}.ff.hook_hidden                 (batch, n_src, d_ff)
    encoder.layers.{i}.ff.hook_out                    (batch, n_src, d_model)
    encoder.layers.{i}.hook_out                       (batch, n_src, d_model)
    encoder.norm.hook_mean                            (batch, n_src, 1)
    encoder.norm.hook_std                             (batch, n_src, 1)
    encoder.norm.hook_normalized                      (batch, n_src, d_model)
    tgt_embed.hook_embed                              (batch, n_tgt, d_model)
    tgt_embed.hook_out                                (batch, n_tgt, d_model)
    decoder.layers.{i}.norm_self_attn.hook_mean       (batch, n_tgt, 1)
    decoder.layers.{i}.norm_self_attn.hook_std        (batch, n_tgt, 1)
    decoder.layers.{i}.norm_self_attn.hook_normalized (batch, n_tgt, d_model)
    decoder.layers.{i}.self_attn.hook_q               (batch, h, n_tgt, d_k)
    decoder.layers.{i}.self_attn.hook_k               (batch, h, n_tgt, d_k)
    decoder.layers.{i}.self_attn.hook_v               (batch, h, n_tgt, d_k)
    decoder.layers.{i}.self_attn.hook_scores          (batch, h, n_tgt, n_tgt)
    decoder.layers.{i}.self_attn.hook_masked_scores   (batch, h, n_tgt, n_tgt)
    decoder.layers.{i}.self_attn.hook_weights         (batch, h, n_tgt, n_tgt)
    decoder.layers.{i}.self_attn.hook_heads           (batch, h, n_tgt, d_k)
    decoder.layers.{i}.self_attn.hook_out             (batch, n_tgt, d_model)
    decoder.layers.{i}.hook_resid_mid                 (batch, n_tgt, d_model)
    decoder.layers.{i}.norm_cross_attn.hook_mean      (batch, n_tgt, 1)
    decoder.layers.{i}.norm_cross_attn.hook_std       (batch, n_tgt, 1)
    decoder.layers.{i}.norm_cross_attn.hook_normalized (batch, n_tgt, d_model)
    decoder.layers.{i}.cross_attn.hook_q              (batch, h, n_tgt, d_k)
    decoder.layers.{i}.cross_attn.hook_k              (batch, h, n_src, d_k)
    decoder.layers.{i}.cross_attn.hook_v              (batch, h, n_src, d_k)
    decoder.layers.{i}.cross_attn.hook_scores         (batch, h, n_tgt, n_src)
    decoder.layers.{i}.cross_attn.hook_masked_scores  (batch, h, n_tgt, n_src)
    decoder.layers.{i}.cross_attn.hook_weights        (batch, h, n_tgt, n_src)
    decoder.layers.{i}.cross_attn.hook_heads          (batch, h, n_tgt, d_k)
    decoder.layers.{i}.cross_attn.hook_out            (batch, n_tgt, d_model)
    decoder.layers.{i}.hook_resid_cross               (batch, n_tgt, d_model)
    decoder.layers.{i}.norm_ff.hook_mean              (batch, n_tgt, 1)
    decoder.layers.{i}.norm_ff.hook_std               (batch, n_tgt, 1)
    decoder.layers.{i}.norm_ff.hook_normalized        (batch, n_tgt, d_model)
    decoder.layers.{i}.ff.hook_hidden                 (batch, n_tgt, d_ff)
    decoder.layers.{i}.ff.hook_out                    (batch, n_tgt, d_model)
    decoder.layers.{i}.hook_out                       (batch, n_tgt, d_model)
    decoder.norm.hook_mean                            (batch, n_tgt, 1)
    decoder.norm.hook_std                             (batch, n_tgt, 1)
    decoder.norm.hook_normalized                      (batch, n_tgt, d_model)

Scores are already divided by sqrt(d_k); masked scores hold -inf where the mask blocks.
"""
from __future__ import annotations

import torch
from torch import nn

from .hooks import trace
from .model import Transformer


def run_with_trace(model: nn.Module, src: torch.Tensor, tgt: torch.Tensor | None = None):
    """Run `model` once; return ``(logits, {hook name: tensor})`` (the table above).

    An encoder-decoder needs both `src` and `tgt`; a decoder-only model takes its tokens as `src`.
    The hooks are removed afterwards; the logits are those ``model(...)`` returns.
    """
    if isinstance(model, Transformer):
        if tgt is None:
            raise ValueError("an encoder-decoder model needs target tokens (tgt)")
        return trace(model, lambda: model(src, tgt))
    return trace(model, lambda: model(src))
