"""Lessons 14's and 15's tasks for bench_training.py (`--gpt`, `--finetune`; its docstring says what they measure).

Each task runs in a process of its own (bench_training.run_isolated), so its peak RSS is its own.
"""
from __future__ import annotations

import os
import resource
import time

import torch


def _train_for(trainer, seconds: float, clock: str, spent: float) -> float:
    """Train until the run's training time reaches `seconds`: on the wall clock (trainer.elapsed), or as the CPU
    time spent training so far (`spent`, evaluations excluded: what the run would have had alone on a core of a
    busy machine). Returns the CPU seconds spent training so far."""
    start = time.process_time()
    if clock == "wall":
        for _ in trainer.steps(seconds=seconds - trainer.elapsed):
            pass
    else:
        while not trainer.done and spent + time.process_time() - start < seconds:
            trainer.train_step()
    return spent + time.process_time() - start


def run_gpt(lang: str, seed: int, seconds: float, threads: int, clock: str = "wall") -> dict:
    """Lesson 14's default preset for `seconds` of training on the prose in `lang` (see the module docstring)."""
    import dataclasses

    from core.lab.charlm import baselines
    from core.lab.gpt import DEFAULT_TRAIN, LMTrainer, lm_config
    from ui.gpt_run import corpus, sample_text
    from ui.i18n import lookup

    torch.set_num_threads(threads)
    found = corpus(lang)
    base = baselines(found)
    trainer = LMTrainer(found, lm_config(len(found.vocab)), dataclasses.replace(DEFAULT_TRAIN, seed=seed))
    cpu, curve = 0.0, []
    for quarter in (0.25, 0.5, 0.75, 1.0):
        cpu = _train_for(trainer, quarter * seconds, clock, cpu)
        curve.append((trainer.step, round(trainer.elapsed, 1), round(trainer.heldout(), 4)))
    prompt = lookup("gpt.sample_prompt", lang)
    heldout = curve[-1][2]
    return {"task": f"gpt-{lang}", "seed": seed, "clock": clock, "steps": trainer.step,
            "train_seconds": round(trainer.elapsed, 2),
            "heldout_ce": heldout, "bigram_ce": round(base.bigram, 4), "unigram_ce": round(base.unigram, 4),
            "ratio_to_bigram": round(heldout / base.bigram, 3), "curve": curve, "cpu_seconds": round(cpu, 1),
            "train_chars": len(found.train), "heldout_chars": len(found.heldout),
            "sample": prompt + sample_text(trainer.model, found.vocab, prompt, seed),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _gpt_child(queue, *args):
    queue.put(run_gpt(*args))


def print_gpt(rows: list[dict]) -> None:
    for r in rows:
        print(f"{r['task']} seed {r['seed']}: held-out {r['heldout_ce']:.3f} nats/char after {r['train_seconds']} s "
              f"on the {r['clock']} clock "
              f"({r['steps']} steps, {r['cpu_seconds']} CPU s), bigram {r['bigram_ce']:.3f} "
              f"-> {r['ratio_to_bigram']:.3f}x (unigram {r['unigram_ce']:.3f}); curve {r['curve']}")
        print(f"  sample: {r['sample']!r}")


def run_finetune(lang: str, threads: int) -> list[dict]:
    """Lesson 15's three runs at its defaults, in `lang` (see the module docstring)."""
    from core import pretrained
    from core.lab import finetune as ft
    from core.lab import finetune_data as fd

    torch.set_num_threads(threads)
    model, tokenizer = pretrained.load_model(), pretrained.load_tokenizer()
    start = time.perf_counter()
    read = fd.read_language(model, tokenizer, lang)
    read_seconds, rows = time.perf_counter() - start, []
    for kind in ft.KINDS:
        wall, cpu = time.perf_counter(), time.process_time()
        run = ft.train(ft.FineTuneRun(model, tokenizer, ft.RunConfig(kind=kind, lang=lang), read))
        rows.append({"task": "finetune", "lang": lang, "run": kind, "seed": run.cfg.seed, "steps": run.step,
                     "timed_out": run.timed_out(), "heldout_accuracy": round(run.history[-1][1], 4),
                     "s_per_step": round(run.seconds / run.step, 3), "train_seconds": round(run.seconds, 1),
                     "total_seconds": round(time.perf_counter() - wall, 1),
                     "cpu_seconds": round(time.process_time() - cpu, 1), "read_seconds": round(read_seconds, 1),
                     "load_after": round(os.getloadavg()[0], 2)})
    return rows


def _finetune_child(queue, *args):
    queue.put(run_finetune(*args))


def print_finetune(rows: list[dict]) -> None:
    header = ("lang", "run", "steps", "held-out", "s/step", "train s", "total s", "cpu s", "read s", "load")
    print(" ".join(f"{h:>9}" for h in header))
    for r in rows:
        cells = (r["lang"], r["run"], r["steps"], f"{r['heldout_accuracy']:.1%}", f"{r['s_per_step']:.3f}",
                 r["train_seconds"], r["total_seconds"], r["cpu_seconds"], r["read_seconds"], r["load_after"])
        print(" ".join(f"{c!s:>9}" for c in cells) + ("  (time cap)" if r["timed_out"] else ""))
