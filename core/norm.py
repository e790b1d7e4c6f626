"""Layer normalization in the two styles that course material and libraries use.

- ``"annotated"`` (the Annotated Transformer and the course): (x - mean) / (std + eps) with the
  *unbiased* standard deviation (divide by d - 1). For the 2-d vector [a, -a] it gives ±0.7071.
- ``"torch"`` (``torch.nn.LayerNorm``): (x - mean) / sqrt(var + eps) with the *biased* variance
  (divide by d). For the same vector it gives ±1.

Both then apply the learned gain (``weight``, gamma) and shift (``bias``, beta).
"""
from __future__ import annotations

import torch
from torch import nn

from .hooks import HookPoint

STYLES = ("annotated", "torch")
DEFAULT_EPS = {"annotated": 1e-6, "torch": 1e-5}


class LayerNorm(nn.Module):
    """Normalizes each token's vector over its features. Input and output (..., d_model).

    Hook points: hook_mean and hook_std (..., 1), hook_normalized (..., d_model) before gamma and beta.
    The annotated style needs d_model >= 2 (the unbiased std of one number is undefined).
    """

    def __init__(self, d_model: int, style: str = "annotated", eps: float | None = None):
        super().__init__()
        if style not in STYLES:
            raise ValueError(f"unknown LayerNorm style {style!r}; expected one of {STYLES}")
        self.style = style
        self.eps = DEFAULT_EPS[style] if eps is None else eps
        self.weight = nn.Parameter(torch.ones(d_model))
        self.bias = nn.Parameter(torch.zeros(d_model))
        self.hook_mean, self.hook_std, self.hook_normalized = HookPoint(), HookPoint(), HookPoint()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mean = self.hook_mean(x.mean(dim=-1, keepdim=True))  # (..., 1)
        centered = x - mean  # (..., d_model)
        squares = (centered * centered).sum(dim=-1, keepdim=True)  # (..., 1)
        if self.style == "annotated":
            std = self.hook_std(torch.sqrt(squares / (x.shape[-1] - 1)))  # (..., 1) unbiased
            inverse = torch.reciprocal(std + self.eps)  # (..., 1) 1 / (std + eps)
        else:
            std = self.hook_std(torch.sqrt(squares / x.shape[-1] + self.eps))  # (..., 1) biased, eps inside
            inverse = torch.reciprocal(std)  # (..., 1)
        normalized = self.hook_normalized(centered * inverse)  # (..., d_model): one division per row, not per entry
        return torch.addcmul(self.bias, self.weight, normalized)  # weight * normalized + bias, (..., d_model)
