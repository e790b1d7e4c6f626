"""Lesson 11's worked solutions and answer checking, computed by the course's model (core.lab.exercises).

Each ``solve_*`` runs one exercise through the course model's own modules and reads the steps at their hook
points (core.hooks.trace); inputs are tuples of rows so a caller can cache them. ``parse_cells`` reads what a
learner typed; ``grade`` says which entries are empty or off (never the right values).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from ..device import to_numpy
from ..hooks import trace
from ..attention import scaled_dot_product_attention
from ..trace import run_with_trace
from .exercises import SOURCE_TOKENS, course_model, dropout_with_mask, wrong_entries

COURSE_EX1 = ((0.4513, -0.1872), (1.2927, -0.6469), (0.9508, 0.8249))  # the course's printed result of exercise 1
KEEP_05 = ((0.0, 1.0), (0.0, 1.0), (0.0, 0.0))  # exercise 2, p = 0.5: first column and last row dropped


def _rows(m: Sequence) -> torch.Tensor:
    return torch.tensor(m, dtype=torch.float64)  # (3, 2)


def solve_embedding() -> dict[str, np.ndarray]:
    """Exercise 1 through model.src_embed: X, sqrt(2) X (hook_embed), PE and the result (hook_out)."""
    model = course_model()
    src = torch.tensor([SOURCE_TOKENS])  # (1, 3)
    with torch.no_grad():
        out, seen = trace(model.src_embed, lambda: model.src_embed(src))  # (1, 3, 2)
        pe = model.src_embed.positional(out)  # (3, 2)
        x = model.src_embed.embed(src)  # (1, 3, 2)
    return {"X": to_numpy(x[0]), "scaled": to_numpy(seen["hook_embed"][0]), "pe": to_numpy(pe),
            "out": to_numpy(out[0])}


def solve_dropout(x: Sequence) -> dict[str, np.ndarray]:
    """Exercise 2: p = 0.1 with nothing dropped, p = 0.5 with the course's mask."""
    xt, keep = _rows(x), _rows(KEEP_05)  # (3, 2), (3, 2)
    return {"p01": to_numpy(dropout_with_mask(xt, torch.ones_like(xt), 0.1)), "keep": to_numpy(keep),
            "p05": to_numpy(dropout_with_mask(xt, keep, 0.5))}  # (3, 2) each


def solve_norm(x: Sequence) -> dict[str, np.ndarray]:
    """Exercise 3 through encoder.layers[0].norm_self_attn: mean, unbiased std, normalized."""
    norm = course_model().encoder.layers[0].norm_self_attn
    with torch.no_grad():
        _, seen = trace(norm, lambda: norm(_rows(x)))  # (3, 2)
    return {name.removeprefix("hook_"): to_numpy(v) for name, v in seen.items()}


def solve_sdpa(z: Sequence) -> dict[str, np.ndarray]:
    """Exercise 4: scaled_dot_product_attention(Z, Z, Z) seen through the layer's attention hook points."""
    attn = course_model().encoder.layers[0].self_attn
    zt = _rows(z)  # (3, 2)
    with torch.no_grad():
        (out, _), seen = trace(attn, lambda: scaled_dot_product_attention(zt, zt, zt, hooks=attn))  # (3, 2)
    return {"scores": to_numpy(seen["hook_scores"]), "weights": to_numpy(seen["hook_weights"]),
            "out": to_numpy(out)}


def solve_attention(z: Sequence) -> dict[str, np.ndarray]:
    """Exercise 5: the layer's one-head self-attention on Z; every name is a hook point of self_attn."""
    attn = course_model().encoder.layers[0].self_attn
    zt = _rows(z)[None]  # (1, 3, 2)
    with torch.no_grad():
        _, seen = trace(attn, lambda: attn(zt, zt, zt))
    return {name.removeprefix("hook_"): to_numpy(v[0, 0] if v.dim() == 4 else v[0]) for name, v in seen.items()}


def solve_ffn(x: Sequence, a: Sequence) -> dict[str, np.ndarray]:
    """Exercise 6: x1 = x + attention output (the first residual), then the layer's norm_ff and ff.

    "pre" is the first linear layer's output u W1ᵀ + b1 before the ReLU (negative entries included), "hidden"
    the same after it (hook_hidden), so each line of a hand calculation can be checked."""
    layer = course_model().encoder.layers[0]
    x1 = _rows(x) + _rows(a)  # (3, 2) residual
    with torch.no_grad():
        _, seen = trace(layer, lambda: layer.ff(layer.norm_ff(x1)))
        pre = layer.ff.linear1(seen["norm_ff.hook_normalized"])  # (3, 8)
    found = {name.replace(".hook_", "_"): to_numpy(v) for name, v in seen.items()}
    return {"resid": to_numpy(x1), "mean": found["norm_ff_mean"], "std": found["norm_ff_std"],
            "normalized": found["norm_ff_normalized"], "pre": to_numpy(pre), "hidden": found["ff_hidden"],
            "out": found["ff_out"]}


def course_chain() -> tuple[np.ndarray, np.ndarray]:
    """The course's inputs of exercises 4-6: Z and the attention output, rounded to 4 decimals at every step."""
    z = np.round(solve_norm(COURSE_EX1)["normalized"], 4)  # (3, 2)
    return z, np.round(solve_attention(tuple(map(tuple, z)))["out"], 4)  # (3, 2), (3, 2)


def whole_layer() -> dict[str, np.ndarray]:
    """The same layer run in one go by run_with_trace from the tokens (no rounding between steps)."""
    _, cache = run_with_trace(course_model(), torch.tensor([SOURCE_TOKENS]), torch.tensor([[1]]))
    return {name: to_numpy(cache[f"encoder.layers.0.{name}"][0]) for name in ("hook_resid_mid", "ff.hook_out")}


def layer_weights() -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The course layer's weights and biases by the exercises' names (Q, K, V, O, and the FFN's 1 and 2)."""
    layer = course_model().encoder.layers[0]
    return {name: (to_numpy(mod.weight), to_numpy(mod.bias)) for name, mod in (
        ("Q", layer.self_attn.q_proj), ("K", layer.self_attn.k_proj), ("V", layer.self_attn.v_proj),
        ("O", layer.self_attn.out_proj), ("1", layer.ff.linear1), ("2", layer.ff.linear2))}


def parse_cell(v: object) -> float | None:
    """A typed cell as a float; None when empty; NaN when it is not a finite number ("0,5" reads as 0.5)."""
    if v is None or (isinstance(v, float) and np.isnan(v)) or (isinstance(v, str) and not v.strip()):
        return None
    try:
        f = float(v.strip().replace(",", ".")) if isinstance(v, str) else float(v)
    except (TypeError, ValueError):
        return float("nan")
    return f if np.isfinite(f) else float("nan")


def parse_cells(cells: np.ndarray) -> tuple[np.ndarray, list[tuple[int, int, str]]]:
    """A 2-d array of typed cells as floats (NaN where empty or unreadable) and its unreadable cells."""
    values, bad = np.full(cells.shape, np.nan), []
    for (i, j), v in np.ndenumerate(cells):
        f = parse_cell(v)
        if f is not None and np.isnan(f):
            bad.append((i, j, str(v)[:20]))
        elif f is not None:
            values[i, j] = f
    return values, bad


def grade(values: np.ndarray, expected: np.ndarray, tol: float) -> dict[str, list]:
    """Empty cells [(row, col)] and wrong ones [(row, col, value, value - expected)] of one answer table."""
    empty = [(int(i), int(j)) for i, j in zip(*np.nonzero(np.isnan(values)))]
    filled = np.where(np.isnan(values), expected, values)  # empty cells are reported, not compared
    wrong = [(i, j, float(values[i, j]), d) for i, j, d in wrong_entries(filled, expected, tol)]
    return {"empty": empty, "wrong": wrong}
