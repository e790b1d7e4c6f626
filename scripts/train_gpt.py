"""Train lesson 14's shipped character-level GPTs: one per language, on the app's own lesson texts.

    python -m scripts.train_gpt [--langs en es] [--seed 0] [--steps 1500]

Writes ``assets/gpt/gpt_<lang>.pt`` (the default preset of core.lab.gpt trained to the end of its
schedule, on the training sections only) and prints the held-out cross-entropy against the two baselines.
"""
from __future__ import annotations

import argparse
import dataclasses
import os

import torch

from core.lab.charlm import baselines
from core.lab.gpt import DEFAULT_TRAIN, LMTrainer, lm_config
from ui.gpt_run import checkpoint_path, corpus


def train(lang: str, seed: int, steps: int) -> None:
    found = corpus(lang)
    base = baselines(found)
    trainer = LMTrainer(found, lm_config(len(found.vocab)), dataclasses.replace(DEFAULT_TRAIN, seed=seed, steps=steps))
    for record in trainer.steps():
        if record.step % 250 == 0:
            print(f"{lang} step {record.step:5d}  loss {record.loss:.3f}  {record.elapsed:.0f} s", flush=True)
    heldout = trainer.heldout()
    metrics = {"heldout_cross_entropy": heldout, "bigram_cross_entropy": base.bigram,
               "unigram_cross_entropy": base.unigram, "train_chars": len(found.train),
               "heldout_chars": len(found.heldout)}
    out = checkpoint_path(lang)
    out.parent.mkdir(parents=True, exist_ok=True)
    torch.save(trainer.checkpoint(metrics), out)
    print(f"{lang}: held-out {heldout:.3f} nats/char, bigram {base.bigram:.3f} ({heldout / base.bigram:.2f}x), "
          f"unigram {base.unigram:.3f}; {trainer.elapsed:.0f} s; saved {out} ({out.stat().st_size / 1e6:.2f} MB); "
          f"load average {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--langs", nargs="+", default=["en", "es"], choices=("en", "es"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--steps", type=int, default=DEFAULT_TRAIN.steps)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for lang in args.langs:
        train(lang, args.seed, args.steps)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
