"""Generating text with a decoder-only model, one token at a time, with or without a KV cache.

Without a cache every step runs the model on the whole sequence so far: at position t it computes the keys and
values of all t positions again, although those of 0..t-1 are the same as at the previous step (a causal model's
earlier positions never see later ones). With a cache (core.attention.LayerCache, one per layer) the prompt is
run once and then every step feeds only the newest token: each layer appends its key and value to the cache and
its query attends to all cached ones. Same logits (up to float rounding), same samples for the same seed, less
work per step: the model's cost per step no longer grows with the position (attention still reads t keys).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from torch import nn

from ..sampling import filter_logits, sample
from ..trace import run_with_trace


@dataclass(frozen=True)
class Generation:
    """What `generate` produced: the new token ids (k,), the model's next-token logits at every step (k, V),
    the wall-clock seconds of every step (k,) and whether a KV cache was used."""
    tokens: torch.Tensor
    logits: torch.Tensor
    seconds: tuple[float, ...]
    cached: bool


def _choose(logits: torch.Tensor, greedy: bool, temperature: float, top_k: int | None, top_p: float,
            generator: torch.Generator) -> torch.Tensor:
    """The next token id from logits (V,): the argmax, or a draw after temperature, top-k and top-p."""
    if greedy:
        return logits.argmax()  # ()
    kept = filter_logits(logits.cpu(), temperature, top_k, top_p)  # (V,)
    return sample(kept, generator)[0]  # () drawn on the CPU: the same seed gives the same draws anywhere


@torch.no_grad()
def generate(model: nn.Module, prompt: torch.Tensor, new_tokens: int, *, cached: bool = True, greedy: bool = False,
             temperature: float = 1.0, top_k: int | None = None, top_p: float = 1.0, seed: int = 0) -> Generation:
    """Continue `prompt` (n,) by `new_tokens` tokens; prompt + new tokens must fit in the model's max_len."""
    if len(prompt) < 1 or new_tokens < 1:
        raise ValueError("need a prompt of at least one token and at least one new token")
    if len(prompt) + new_tokens > model.cfg.max_len:
        raise ValueError(f"prompt + new tokens exceed max_len={model.cfg.max_len}")
    model.eval()
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    sequence = prompt.to(device)  # (n,)
    caches = model.new_caches() if cached else None
    feed = sequence  # what the next call reads: the prompt, then only the newest token when cached
    chosen, logits_seen, seconds = [], [], []
    for _ in range(new_tokens):
        start = time.perf_counter()
        logits = model(feed[None] if cached else sequence[None], caches)[0, -1]  # (V,)
        token = _choose(logits, greedy, temperature, top_k, top_p, generator).to(device)  # ()
        sequence = torch.cat([sequence, token[None]])  # (t + 1,)
        feed = token[None]  # (1,)
        seconds.append(time.perf_counter() - start)
        chosen.append(token)
        logits_seen.append(logits)
    return Generation(torch.stack(chosen).cpu(), torch.stack(logits_seen).cpu(), tuple(seconds), cached)


@torch.no_grad()
def causal_attention(model: nn.Module, tokens: torch.Tensor) -> torch.Tensor:
    """The attention weights of every layer and head on `tokens` (n,): (layers, heads, n, n), zero above the
    diagonal (a position never attends to a later one)."""
    model.eval()
    _, cache = run_with_trace(model, tokens[None].to(next(model.parameters()).device))
    names = [f"decoder.layers.{i}.self_attn.hook_weights" for i in range(len(model.decoder.layers))]
    return torch.stack([cache[name][0] for name in names]).cpu()  # (layers, heads, n, n)


@dataclass(frozen=True)
class CacheComparison:
    """The same generation without and with the KV cache, timed `repeats` times in alternation: the last run of
    each, and the fastest time of every step over the repeats (seconds, (k,) each), which a busy machine disturbs
    least. speedup = total of the fastest times without the cache / total with it."""
    plain: Generation
    cached: Generation
    plain_seconds: tuple[float, ...]
    cached_seconds: tuple[float, ...]

    @property
    def identical(self) -> bool:
        return torch.equal(self.plain.tokens, self.cached.tokens)

    @property
    def logit_gap(self) -> float:
        return float((self.plain.logits - self.cached.logits).abs().max())

    @property
    def speedup(self) -> float:
        return sum(self.plain_seconds) / sum(self.cached_seconds)


def compare_cache(model: nn.Module, prompt: torch.Tensor, new_tokens: int, repeats: int = 3,
                  **sampling) -> CacheComparison:
    """Generate the same continuation without and with the cache, `repeats` times each, alternating."""
    runs = {False: [], True: []}
    for _ in range(repeats):
        for cached in (False, True):
            runs[cached].append(generate(model, prompt, new_tokens, cached=cached, **sampling))
    fastest = {cached: tuple(map(min, zip(*(g.seconds for g in found)))) for cached, found in runs.items()}
    return CacheComparison(runs[False][-1], runs[True][-1], fastest[False], fastest[True])
