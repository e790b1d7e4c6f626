"""Sampling the next token: temperature, top-k, nucleus (top-p), and decoding step by step with them.

A language model gives logits z over the vocabulary; the model's distribution is softmax(z). A decoding
strategy turns that distribution into a choice:

    temperature T   softmax(z / T): T < 1 sharpens it (towards the argmax), T > 1 flattens it (towards uniform)
    top-k           keep the k most probable tokens, renormalise; k = 1 is greedy, k = V changes nothing
    top-p (nucleus) keep the smallest set of most probable tokens whose total probability reaches p
                    (Holtzman et al. 2020, "The Curious Case of Neural Text Degeneration")

Filters work on logits: a removed token gets -inf, so softmax gives it probability exactly 0 and every
filter can follow another. `filter_logits` applies them in the usual order: temperature, top-k, top-p.
Ties are broken towards the lower token id (a stable sort), so the same logits always keep the same set.
Every random draw takes an explicit `torch.Generator`: the same seed gives the same samples.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from .decoding import beam_search, next_token_logits
from .tasks import BOS_ID, EOS_ID, PAD_ID


def apply_temperature(logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """z / T for T > 0: (..., V) -> (..., V). softmax(z / T) is the tempered distribution."""
    if not temperature > 0:
        raise ValueError("temperature must be positive")
    return logits / temperature  # (..., V)


def _ranked(logits: torch.Tensor) -> torch.Tensor:
    """Token ids from most to least probable, ties towards the lower id: (..., V) -> (..., V)."""
    return torch.sort(logits, dim=-1, descending=True, stable=True).indices  # (..., V)


def top_k_filter(logits: torch.Tensor, k: int) -> torch.Tensor:
    """Keep the k largest logits of each row (exactly k, ties towards the lower id), -inf elsewhere."""
    vocab = logits.shape[-1]
    if not 1 <= k:
        raise ValueError("k must be at least 1")
    order = _ranked(logits)  # (..., V)
    rank_keeps = torch.arange(vocab, device=logits.device) < k  # (V,) the first k ranks survive
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, rank_keeps.expand_as(order))  # (..., V)
    return logits.masked_fill(~keep, float("-inf"))  # (..., V)


def top_p_filter(logits: torch.Tensor, p: float) -> torch.Tensor:
    """Nucleus filter: keep the smallest set of most probable tokens whose probability sums to at least p.

    A token is kept when the tokens ranked above it hold less than p, so the most probable token is
    always kept (even for tiny p) and p = 1 keeps every token with non-zero probability."""
    if not 0 < p <= 1:
        raise ValueError("p must be in (0, 1]")
    order = _ranked(logits)  # (..., V)
    probs = torch.softmax(logits, dim=-1).gather(-1, order)  # (..., V) sorted, largest first
    before = torch.cumsum(probs, dim=-1) - probs  # (..., V) probability of the tokens ranked above
    rank_keeps = (before < p) & (probs > 0)  # (..., V)
    rank_keeps[..., 0] = True  # never an empty set
    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, order, rank_keeps)  # (..., V)
    return logits.masked_fill(~keep, float("-inf"))  # (..., V)


def filter_logits(logits: torch.Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float = 1.0) -> torch.Tensor:
    """Temperature, then top-k (None: off), then top-p (1.0: off): (..., V) -> (..., V), -inf where removed."""
    z = apply_temperature(logits, temperature)  # (..., V)
    if top_k is not None and top_k < logits.shape[-1]:
        z = top_k_filter(z, top_k)  # (..., V)
    if top_p < 1.0:
        z = top_p_filter(z, top_p)  # (..., V)
    return z


def sample(logits: torch.Tensor, generator: torch.Generator, num_samples: int = 1) -> torch.Tensor:
    """Draw token ids from softmax(logits) (-inf = never): (..., V) -> (..., num_samples), with replacement."""
    probs = torch.softmax(logits, dim=-1)  # (..., V)
    flat = probs.reshape(-1, probs.shape[-1])  # (rows, V)
    draws = torch.multinomial(flat, num_samples, replacement=True, generator=generator)  # (rows, num_samples)
    return draws.reshape(*probs.shape[:-1], num_samples)  # (..., num_samples)


@dataclass(frozen=True)
class DecodeTrace:
    """A generation step by step (batch rows, k steps, vocabulary V; the prefix at step s is BOS + tokens[:, :s]).

    tokens (batch, k): the choices (PAD after a row's EOS); logits (batch, k, V): the model's next-token
    logits; before (batch, k, V) = softmax(logits), the model's distribution; after (batch, k, V): the
    distribution the strategy drew from (one-hot at the argmax for greedy)."""
    tokens: torch.Tensor
    logits: torch.Tensor
    before: torch.Tensor
    after: torch.Tensor


@torch.no_grad()
def decode_steps(model: nn.Module, src: torch.Tensor, max_new_tokens: int, bos_id: int, eos_id: int,
                 pad_id: int = 0, *, greedy: bool = False, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float = 1.0, generator: torch.Generator | None = None) -> DecodeTrace:
    """Decode `src` (batch, n_src) greedily or by sampling with the filters, recording every step.

    Stops once every row has produced `eos_id` (like `greedy_decode`, whose tokens greedy=True reproduces)."""
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    if not greedy and generator is None:
        raise ValueError("sampling needs an explicit torch.Generator (seeded)")
    memory = model.encode(src)  # (batch, n_src, d_model)
    prefix = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)  # (batch, 1)
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)  # (batch,)
    logits_seen, after_seen = [], []
    for _ in range(max_new_tokens):
        logits = next_token_logits(model, memory, src, prefix)  # (batch, V)
        if greedy:
            token = logits.argmax(dim=-1)  # (batch,)
            after = nn.functional.one_hot(token, logits.shape[-1]).to(logits.dtype)  # (batch, V)
        else:
            kept = filter_logits(logits, temperature, top_k, top_p)  # (batch, V)
            after = torch.softmax(kept, dim=-1)  # (batch, V)
            token = sample(kept.cpu(), generator)[:, 0].to(src.device)  # (batch,) drawn on the CPU: reproducible
        token = token.masked_fill(finished, pad_id)  # (batch,)
        prefix = torch.cat([prefix, token[:, None]], dim=1)  # (batch, t + 1)
        logits_seen.append(logits)
        after_seen.append(after)
        finished |= token == eos_id
        if bool(finished.all()):
            break
    logits = torch.stack(logits_seen, dim=1)  # (batch, k, V)
    return DecodeTrace(prefix[:, 1:], logits, torch.softmax(logits, dim=-1), torch.stack(after_seen, dim=1))


def sequence_log_prob(trace: DecodeTrace, row: int = 0) -> float:
    """log P of what row `row` of a trace chose: the sum over its steps of the model's log-probability (T = 1)
    of the chosen token, whatever the strategy drew from (how greedy, sampling and beam search are compared)."""
    log_p = torch.log_softmax(trace.logits[row].double(), dim=-1)  # (k, V)
    return float(log_p.gather(-1, trace.tokens[row][:, None]).sum())


def filter_stages(z: torch.Tensor, temperature: float, top_k: int, top_p: float, generator: torch.Generator,
                  n_draws: int) -> dict:
    """One distribution's logits z (V,) through each filter in turn, as a decoding lesson shows them.

    Returns {"P": {stage: probabilities (V,)}, "kept": {stage: bool (V,)}, "counts": (V,) of n_draws draws from
    the final distribution}; the stages are "model" (z), "temp" (z / T), "topk", "topp" (each on z / T) and
    "all" (filter_logits: T, then top-k, then top-p). top_k >= V means no top-k filter."""
    V = len(z)
    zT = apply_temperature(z, temperature)  # (V,)
    stages = {"model": z, "temp": zT, "topk": top_k_filter(zT, top_k), "topp": top_p_filter(zT, top_p),
              "all": filter_logits(z, temperature, top_k if top_k < V else None, top_p)}  # each (V,), -inf removed
    draws = sample(stages["all"], generator, n_draws)  # (n_draws,)
    return {"P": {name: torch.softmax(v, dim=-1).double().cpu().numpy() for name, v in stages.items()},
            "kept": {name: torch.isfinite(v).cpu().numpy() for name, v in stages.items()},
            "counts": torch.bincount(draws, minlength=V).cpu().numpy()}  # counts: (V,)


def decode_strategies(model: nn.Module, src: torch.Tensor, max_new_tokens: int, strategy: dict, width: int,
                      alpha: float, seed: int, n_samples: int) -> dict:
    """One source `src` (1, n_src) decoded every way a decoding lesson compares, in eval mode (the model's mode
    is given back): {"greedy": DecodeTrace, "sampling": one seeded sample, "many": `n_samples` seeded samples
    (one batch), "beam": BeamResult of width `width` and length penalty `alpha`}. `strategy` holds
    decode_steps' temperature, top_k and top_p; BOS, EOS and PAD are core.tasks' ids."""
    was_training = model.training
    model.eval()
    try:
        return {"greedy": decode_steps(model, src, max_new_tokens, BOS_ID, EOS_ID, PAD_ID, greedy=True),
                "sampling": decode_steps(model, src, max_new_tokens, BOS_ID, EOS_ID, PAD_ID, **strategy,
                                         generator=torch.Generator().manual_seed(seed)),
                "many": decode_steps(model, src.expand(n_samples, -1), max_new_tokens, BOS_ID, EOS_ID, PAD_ID,
                                     **strategy, generator=torch.Generator().manual_seed(seed)),
                "beam": beam_search(model, src, width, max_new_tokens, BOS_ID, EOS_ID, alpha)}
    finally:
        model.train(was_training)
