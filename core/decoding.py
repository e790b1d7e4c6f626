"""Decoding: turning a trained encoder-decoder into an output sequence, one token at a time.

At inference there is no target to feed the decoder (no teacher forcing): it starts from BOS and
reads its own previous choices. The source does not change while decoding, so the encoder runs
once per batch; only the decoder re-runs on the growing prefix at every step.

Greedy decoding takes the argmax at every step: the best next token, which need not lead to the best
sequence. Beam search keeps the `width` best partial sequences (hypotheses) instead of one; top-k and
nucleus sampling (core.sampling) draw from the same next-token logits, `next_token_logits`.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


def next_token_logits(model: nn.Module, memory: torch.Tensor, src: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
    """Logits for the token after `prefix` (batch, t): the decoder's last position -> (batch, tgt_vocab)."""
    hidden = model.decode(memory, src, prefix)  # (batch, t, d_model)
    return model.generator(hidden[:, -1])  # (batch, tgt_vocab)


@torch.no_grad()
def greedy_decode(model: nn.Module, src: torch.Tensor, max_new_tokens: int, bos_id: int, eos_id: int | None = None,
                  pad_id: int = 0, return_logits: bool = False):
    """Autoregressive argmax decoding of `src` (batch, n_src).

    Returns the generated tokens (batch, k) without BOS, k <= max_new_tokens: a row that has produced
    `eos_id` keeps its EOS and is filled with `pad_id` afterwards, and decoding stops early once every
    row has finished. With ``return_logits=True`` returns ``(tokens, logits (batch, k, tgt_vocab))``,
    the next-token logits of every step (what a decoding lesson shows).
    """
    if max_new_tokens < 1:
        raise ValueError("max_new_tokens must be at least 1")
    memory = model.encode(src)  # (batch, n_src, d_model), once per batch
    batch = src.shape[0]
    prefix = torch.full((batch, 1), bos_id, dtype=torch.long, device=src.device)  # (batch, 1)
    finished = torch.zeros(batch, dtype=torch.bool, device=src.device)  # (batch,)
    steps = []
    for _ in range(max_new_tokens):
        logits = next_token_logits(model, memory, src, prefix)  # (batch, tgt_vocab)
        token = logits.argmax(dim=-1).masked_fill(finished, pad_id)  # (batch,)
        prefix = torch.cat([prefix, token[:, None]], dim=1)  # (batch, t + 1)
        steps.append(logits)
        if eos_id is not None:
            finished |= token == eos_id
            if bool(finished.all()):
                break
    tokens = prefix[:, 1:]  # (batch, k)
    return (tokens, torch.stack(steps, dim=1)) if return_logits else tokens


@dataclass(frozen=True)
class Hypothesis:
    """A beam's result: `tokens` without BOS (ending in EOS when `finished`), `log_prob` the sum of the
    log-probabilities of its tokens, `score` = log_prob / len(tokens) ** alpha (= log_prob when alpha = 0)."""
    tokens: list[int]
    log_prob: float
    score: float
    finished: bool


@dataclass(frozen=True)
class BeamStep:
    """Every candidate expanded at one step (m = alive hypotheses x vocabulary), best first.

    parent (m,): the candidate of the previous step it extends (its index in that step's lists; -1 = the BOS
    root); token (m,); log_prob (m,): the candidate's cumulative log-probability; kept (m,) bool: it stayed
    in the beam (kept with token EOS = finished), the others were pruned."""
    parent: torch.Tensor
    token: torch.Tensor
    log_prob: torch.Tensor
    kept: torch.Tensor


@dataclass(frozen=True)
class BeamResult:
    hypotheses: list[Hypothesis]  # best score first
    steps: list[BeamStep]  # the search tree, one entry per step


def _hypothesis(tokens: torch.Tensor, log_prob: float, finished: bool, alpha: float) -> Hypothesis:
    ids = [int(i) for i in tokens]
    return Hypothesis(ids, log_prob, log_prob / max(len(ids), 1) ** alpha, finished)


@torch.no_grad()
def beam_search(model: nn.Module, src: torch.Tensor, width: int, max_new_tokens: int, bos_id: int, eos_id: int,
                alpha: float = 0.0) -> BeamResult:
    """Beam search for one source `src` (1, n_src), ranking hypotheses by their sum of log-probabilities.

    Each step extends every alive hypothesis by every token and keeps the best `width - finished` of all
    candidates; a kept candidate ending in EOS is finished and leaves the beam, which shrinks by one, so the
    search stops when `width` hypotheses have finished (or after `max_new_tokens` steps; the hypotheses still
    alive then are returned unfinished). Width 1 is greedy decoding. `alpha` > 0 divides the final scores by
    length ** alpha (length normalisation: otherwise every extra token lowers a sum of log-probabilities)."""
    if src.shape[0] != 1 or width < 1 or max_new_tokens < 1:
        raise ValueError("beam_search takes one source row, width >= 1 and max_new_tokens >= 1")
    memory = model.encode(src)  # (1, n_src, d_model)
    prefix = torch.full((1, 1), bos_id, dtype=torch.long, device=src.device)  # (beams, t)
    log_prob = torch.zeros(1, device=src.device)  # (beams,)
    where = torch.tensor([-1])  # (beams,) each alive hypothesis's index among the previous step's candidates
    done: list[Hypothesis] = []
    steps: list[BeamStep] = []
    for _ in range(max_new_tokens):
        beams = prefix.shape[0]
        logits = next_token_logits(model, memory.expand(beams, -1, -1), src.expand(beams, -1), prefix)  # (beams, V)
        total = (log_prob[:, None] + torch.log_softmax(logits, dim=-1)).flatten()  # (beams * V,)
        order = torch.sort(total, descending=True, stable=True).indices  # (m,) best first
        vocab, room = logits.shape[-1], width - len(done)
        row, token, ranked = order // vocab, order % vocab, total[order]  # (m,) parent beam, token, log-prob
        steps.append(BeamStep(where[row.cpu()], token.cpu(), ranked.cpu(), torch.arange(order.numel()) < room))
        prefix = torch.cat([prefix[row[:room]], token[:room, None]], dim=1)  # (kept, t + 1)
        ends = token[:room] == eos_id  # (kept,)
        done += [_hypothesis(prefix[i, 1:], float(ranked[i]), True, alpha) for i in ends.nonzero()[:, 0].tolist()]
        prefix, log_prob = prefix[~ends], ranked[:room][~ends]  # (beams', t + 1), (beams',)
        where = (~ends).nonzero()[:, 0].cpu()  # (beams',) their indices among this step's candidates
        if prefix.shape[0] == 0:
            break
    done += [_hypothesis(prefix[i, 1:], float(log_prob[i]), False, alpha) for i in range(prefix.shape[0])]
    return BeamResult(sorted(done, key=lambda h: -h.score), steps)


def beam_paths(beam: BeamResult) -> list[dict[int, list[int]]]:
    """For every step of a beam search, {candidate index: its tokens without BOS} of the kept candidates
    (the prefixes that go on, finished ones included), read off the tree's parent links."""
    paths, previous = [], {-1: []}
    for step in beam.steps:
        kept = {i: previous[int(step.parent[i])] + [int(step.token[i])] for i in range(int(step.kept.sum()))}
        paths.append(kept)
        previous = kept
    return paths
