"""Gradient norms per layer at initialization: pre-norm vs post-norm stacks (lesson 6).

Xiong et al. (2020), "On Layer Normalization in the Transformer Architecture", compared the gradients of
freshly initialized Post-LN and Pre-LN Transformers. `gradient_norms_at_init` repeats a toy version of that
measurement: a stack of encoder layers with seeded weights, one seeded random input, a regression loss on a
seeded random target, one backward pass, and the gradient norm of every layer's parameters.
"""
from __future__ import annotations

import torch
from torch import nn

from ..config import ModelConfig
from ..layers import Encoder
from ..model import init_parameters


def parameter_gradient_norm(module: nn.Module) -> float:
    """The L2 norm of all of `module`'s parameter gradients taken together (0 if none has a gradient)."""
    squares = [p.grad.double().pow(2).sum() for p in module.parameters() if p.grad is not None]
    return float(torch.stack(squares).sum().sqrt()) if squares else 0.0


def gradient_norms_at_init(n_layers: int, d_model: int, n_heads: int, norm_first: bool, seed: int,
                           n_tokens: int = 8, norm_style: str = "annotated") -> list[float]:
    """Gradient norm of each layer's parameters (first layer first) for one backward pass at initialization.

    The stack is `core.layers.Encoder` (N encoder layers, d_ff = 4 d_model, no dropout; pre-norm ends with
    a final LayerNorm) initialized by `init_parameters(stack, seed)`. The loss is the mean squared error
    between the output and a random target: a plain sum of squares of the output would not do, because the
    output comes out of a LayerNorm and its sum of squares is (almost) the same whatever the input is.
    """
    cfg = ModelConfig(src_vocab=1, tgt_vocab=1, d_model=d_model, n_heads=n_heads, n_layers=n_layers,
                      d_ff=4 * d_model, dropout=0.0, norm_first=norm_first, norm_style=norm_style)
    with torch.random.fork_rng(devices=[]):  # the constructors draw from the global generator
        stack = init_parameters(Encoder(cfg), seed)
    generator = torch.Generator().manual_seed(seed)
    x = torch.randn(1, n_tokens, d_model, generator=generator)  # (1, n, d_model)
    target = torch.randn(1, n_tokens, d_model, generator=generator)  # (1, n, d_model)
    loss = (stack(x) - target).pow(2).mean()  # scalar
    loss.backward()
    return [parameter_gradient_norm(layer) for layer in stack.layers]
