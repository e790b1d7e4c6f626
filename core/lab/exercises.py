"""The course's worked exercises (CURRICULUM.md, lesson 11): its tiny model, its weights, and answer checking.

The model is ``create_model(src_vocab_size=3, tgt_vocab_size=3, embed_dim=2, num_layers=1, num_heads=1,
dropout=0.)`` with the course's embeddings and encoder weights copied in. Every weight matrix is in
``nn.Linear`` layout (out_features, in_features), so a layer computes y = x Wᵀ + b.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..model import Transformer, create_model

SOURCE_TOKENS = (2, 2, 1)  # the source sentence of every exercise
EMBEDDINGS = {2: (0.3191, -0.8395), 1: (0.0293, 0.8776)}  # token id -> its row of src_embed.embed
ENCODER_WEIGHTS = {  # parameter name under encoder.layers.0 -> value
    "self_attn.q_proj": (((0.8635, 0.7223), (0.5531, 0.3659)), (0.6123, -0.2899)),
    "self_attn.k_proj": (((-0.0060, -0.5075), (-0.0329, 0.8903)), (0.2253, -0.4414)),
    "self_attn.v_proj": (((0.4922, -0.3579), (-0.5233, 0.0872)), (0.0727, -0.5929)),
    "self_attn.out_proj": (((1.2168, -0.1905), (-0.0890, -0.5564)), (-0.5157, -0.1097)),
    "ff.linear1": (((0.4008, 0.1917), (-0.4451, -0.6482), (0.7679, 0.5881), (-0.7363, -0.6416),
                    (0.2594, 0.4606), (0.4195, -0.2898), (0.2920, 0.0965), (-0.0160, 0.0162)),
                   (0.0312, 0.2093, 0.2466, -0.5398, -0.3994, 0.3540, 0.4932, -0.2173)),
    "ff.linear2": (((0.5994, -0.2837, -0.2077, -0.5024, -0.5487, 0.7268, 0.6768, -0.6624),
                    (-0.4707, 0.2907, 0.2848, 0.4173, 0.4015, 0.4828, 0.1108, 0.1021)),
                   (0.0928, -0.2395)),
}


def course_model(dtype: torch.dtype = torch.float64) -> Transformer:
    """The exercises' model with the course's embeddings and encoder weights, in eval mode.

    LayerNorm gains stay 1 and shifts 0 (as `create_model` initializes them), as in the course.
    """
    model = create_model(src_vocab_size=3, tgt_vocab_size=3, embed_dim=2, num_layers=1, num_heads=1, dropout=0.)
    model = model.to(dtype)
    layer = model.encoder.layers[0]
    with torch.no_grad():
        for token, row in EMBEDDINGS.items():
            model.src_embed.embed.weight[token] = torch.tensor(row, dtype=dtype)  # (2,)
        for name, (weight, bias) in ENCODER_WEIGHTS.items():
            linear: nn.Linear = layer.get_submodule(name)
            linear.weight.copy_(torch.tensor(weight, dtype=dtype))  # (out, in)
            linear.bias.copy_(torch.tensor(bias, dtype=dtype))  # (out,)
    return model.eval()


def dropout_with_mask(x: torch.Tensor, keep: torch.Tensor, p: float) -> torch.Tensor:
    """Inverted dropout with a given mask: keep * x / (1 - p), the rule nn.Dropout applies in training.

    `keep` has x's shape (1 = kept, 0 = dropped); nn.Dropout draws it at random, here it is given so an
    exercise can fix which entries are dropped.
    """
    if not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability must be in [0, 1), got {p}")
    return x * keep / (1.0 - p)  # (..., d) survivors scaled by 1 / (1 - p)


def wrong_entries(answer: np.ndarray, expected: np.ndarray, tol: float) -> list[tuple[int, int, float]]:
    """Entries of a 2-d answer further than `tol` from the expected value: [(row, column, answer - expected)].

    Rows and columns count from 0; a NaN in the answer counts as wrong (with a NaN difference). Comparing
    |answer - expected| <= tol + 1e-12 keeps an answer exactly tol away right despite float rounding.
    """
    answer, expected = np.asarray(answer, dtype=float), np.asarray(expected, dtype=float)
    if answer.shape != expected.shape or answer.ndim != 2:
        raise ValueError(f"answer shape {answer.shape} does not match the expected {expected.shape}")
    diff = answer - expected  # (n, d)
    bad = ~(np.abs(diff) <= tol + 1e-12)  # NaN compares False, so it is wrong
    return [(int(i), int(j), float(diff[i, j])) for i, j in zip(*np.nonzero(bad))]

