"""Decoding: turning a trained encoder-decoder into an output sequence, one token at a time.

At inference there is no target to feed the decoder (no teacher forcing): it starts from BOS and
reads its own previous choices. The source does not change while decoding, so the encoder runs
once per batch; only the decoder re-runs on the growing prefix at every step.

Greedy decoding takes the argmax at every step. (Beam search, top-k and nucleus sampling choose
differently from the same next-token logits, `next_token_logits`.)
"""
from __future__ import annotations

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
