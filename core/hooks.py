"""Hook points: identity modules that let a caller read intermediate tensors.

A `HookPoint` returns its input unchanged. `run_with_trace` attaches a forward hook to every
hook point of a model, runs it once, records what passed through each point under the point's
module path (e.g. ``encoder.layers.0.self_attn.hook_weights``) and removes the hooks again, so
`forward()` stays a plain function that returns logits.
"""
from __future__ import annotations

from types import SimpleNamespace

import torch
from torch import nn


class HookPoint(nn.Module):
    """Identity: ``hook(x) is x``. Exists only to be observed."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


def _identity(x: torch.Tensor) -> torch.Tensor:
    return x


# Stand-in for a module's hook points when a function is called on its own.
NO_HOOKS = SimpleNamespace(hook_scores=_identity, hook_masked_scores=_identity, hook_weights=_identity)


def hook_names(model: nn.Module) -> list[str]:
    """Names of every hook point of `model`, in module order."""
    return [name for name, module in model.named_modules() if isinstance(module, HookPoint)]


def trace(model: nn.Module, run) -> tuple[object, dict[str, torch.Tensor]]:
    """Call ``run()`` with every hook point of `model` recording; return ``(result, {name: tensor})``.

    The tensors are detached. Hooks are removed even if ``run`` raises.
    """
    cache: dict[str, torch.Tensor] = {}
    handles = []
    for name, module in model.named_modules():
        if isinstance(module, HookPoint):
            def record(_module, _inputs, output, name=name):
                cache[name] = output.detach()
            handles.append(module.register_forward_hook(record))
    try:
        result = run()
    finally:
        for handle in handles:
            handle.remove()
    return result, cache
