"""Training speed benchmark (not a test): each task with a preset, on the CPU, one thread, one process.

For every task: training seconds (evaluation excluded) and steps until greedy exact match on 1000
held-out examples (never trained on) first reaches 95% and 99%, evaluated every `--every` steps; the
exact match at the end of the schedule; ms per step of our model and of `torch.nn.Transformer` with the
same sizes, batches and optimizer (timed in alternating rounds so a busy machine slows both alike);
and the peak resident memory of the process that trained the task.

    python tests/benchmarks/bench_training.py [--tasks copy addition parser] [--seeds 0 1 2] [--json PATH]
    python tests/benchmarks/bench_training.py --tasks --gpt en es [--gpt-seconds 60] [--seeds 0 1 2]
    python tests/benchmarks/bench_training.py --tasks --finetune en es [--json PATH]

`--gpt LANG...` adds lesson 14's task: the default preset of core.lab.gpt trained on the lessons' prose in LANG
for `--gpt-seconds` of training time (evaluation excluded), its held-out cross-entropy at every quarter of that
time, the best bigram's and unigram's held-out cross-entropy on the same text in the same run, and the sample the
page would show (its fixed prompt and seed) at the end. Target: at most 0.85x the bigram's within 60 s.

`--finetune LANG...` adds lesson 15's task: its three runs (frozen, top layers fine-tuned, random weights) at the
lesson's defaults and seed, one after the other as the page trains them, on the sentences of LANG: the held-out
accuracy at the end, the training seconds per step (evaluation excluded), the run's total seconds on the wall clock
and in CPU time (building the run and its evaluations included), and the load average after each run. The
sentences are read through MiniLM once per language first (`read s`), as the page does. Target: every run at most
about 60 s of one core on a quiet machine. (The two lessons' tasks are in lesson_tasks.py, beside this file.)

Each task and seed runs in its own process (so peak RSS is that run's). Times are wall-clock;
`cpu_seconds_to_99` is the process CPU time over the same span: when it is much lower than the wall
time, the machine was busy with something else.
"""
from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from torch import nn  # noqa: E402

from core.positional import sinusoidal_encoding  # noqa: E402
from core.train import PRESETS, Trainer, sequence_loss  # noqa: E402
from lesson_tasks import _finetune_child, _gpt_child, print_finetune, print_gpt  # noqa: E402  (lessons 14, 15)


class TorchReference(nn.Module):
    """Our architecture's sizes in torch's own modules: nn.Embedding, nn.Transformer, a tied generator."""

    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab, cfg.d_model)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab, cfg.d_model)
        sizes = dict(d_model=cfg.d_model, nhead=cfg.n_heads, dim_feedforward=cfg.d_ff, dropout=cfg.dropout,
                     activation=cfg.activation, batch_first=True, norm_first=cfg.norm_first)
        encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**sizes), cfg.n_layers, nn.LayerNorm(cfg.d_model),
                                        enable_nested_tensor=False)
        self.transformer = nn.Transformer(custom_encoder=encoder, num_decoder_layers=cfg.n_layers, **sizes)
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab)
        self.generator.weight = self.tgt_embed.weight
        self.register_buffer("pe", sinusoidal_encoding(cfg.max_len, cfg.d_model), persistent=False)

    def forward(self, src, tgt):
        scale, n = math.sqrt(self.cfg.d_model), tgt.shape[1]
        causal = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)  # True = blocked
        src_pad, tgt_pad = src == self.cfg.pad_id, tgt == self.cfg.pad_id
        x = self.src_embed(src) * scale + self.pe[: src.shape[1]]
        y = self.tgt_embed(tgt) * scale + self.pe[:n]
        out = self.transformer(x, y, tgt_mask=causal, src_key_padding_mask=src_pad, tgt_key_padding_mask=tgt_pad,
                               memory_key_padding_mask=src_pad)
        return self.generator(out)


def reference_step_fn(trainer: Trainer):
    """One training step of the torch reference, on the same kind of batches with the same optimizer."""
    cfg = trainer.train_cfg
    model = TorchReference(trainer.model_cfg)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay,
                                  fused=True)
    generator = torch.Generator().manual_seed(cfg.seed)

    def step():
        batch = trainer.task.batch(cfg.batch_size, generator, "train")
        model.train()
        loss = sequence_loss(model(batch.src, batch.tgt_in), batch.tgt_out, cfg.label_smoothing)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
        optimizer.step()
        loss.item()
    return step


def paired_ms_per_step(task: str, preset: str, seed: int, rounds: int = 5, steps: int = 10) -> tuple[float, float]:
    """Median ms per step of ours and of the reference, timed in alternating rounds."""
    ours = Trainer.from_preset(task, preset, seed=seed, steps=10 ** 6)
    reference = reference_step_fn(ours)
    for _ in range(3):  # warm-up
        ours.train_step()
        reference()
    ours_ms, ref_ms = [], []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(steps):
            ours.train_step()
        ours_ms.append((time.perf_counter() - start) * 1000 / steps)
        start = time.perf_counter()
        for _ in range(steps):
            reference()
        ref_ms.append((time.perf_counter() - start) * 1000 / steps)
    return statistics.median(ours_ms), statistics.median(ref_ms)


def run_one(task: str, preset: str, seed: int, every: int, n_eval: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    trainer = Trainer.from_preset(task, preset, seed=seed)
    reached: dict[float, tuple[int, float, float]] = {}
    cpu_training = 0.0
    result = None
    while not trainer.done:
        cpu_start = time.process_time()
        for _ in trainer.steps(n=every):
            pass
        cpu_training += time.process_time() - cpu_start
        result = trainer.evaluate(n=n_eval)  # held-out examples, never trained on; not counted as training time
        for goal in (0.95, 0.99):
            if goal not in reached and result.exact_match >= goal:
                reached[goal] = (trainer.step, trainer.elapsed, cpu_training)
    ours_ms, ref_ms = paired_ms_per_step(task, preset, seed)
    hit95, hit99 = reached.get(0.95, (None, None, None)), reached.get(0.99, (None, None, None))
    return {"task": task, "preset": preset, "seed": seed, "steps": trainer.step,
            "train_seconds": round(trainer.elapsed, 2), "seconds_to_95": _round(hit95[1]), "steps_to_95": hit95[0],
            "seconds_to_99": _round(hit99[1]), "steps_to_99": hit99[0], "cpu_seconds_to_99": _round(hit99[2]),
            "final_exact_match": result.exact_match, "eval_split": result.split,
            "ms_per_step": round(ours_ms, 2), "ms_per_step_torch_ref": round(ref_ms, 2),
            "train_ms_per_step": round(trainer.elapsed * 1000 / trainer.step, 2),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}


def _round(value):
    return None if value is None else round(value, 2)


def _child(queue, *args):
    queue.put(run_one(*args))


def run_isolated(*args, target=_child) -> dict:
    """run_one (or `target`) in a fresh process, so its peak RSS is its own."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    process = context.Process(target=target, args=(queue, *args))
    process.start()
    row = queue.get()
    process.join()
    return row


def _fmt(value, digits=2):
    return "-" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def print_table(rows: list[dict]) -> None:
    header = ("task", "seed", "s to 95%", "steps", "s to 99%", "steps", "cpu s", "final EM", "ms/step", "torch ms",
              "ratio", "RSS MB")
    print(" ".join(f"{h:>9}" for h in header))
    for r in rows:
        cells = (r["task"], r["seed"], r["seconds_to_95"], r["steps_to_95"], r["seconds_to_99"], r["steps_to_99"],
                 r["cpu_seconds_to_99"], r["final_exact_match"], r["ms_per_step"], r["ms_per_step_torch_ref"],
                 r["ms_per_step"] / r["ms_per_step_torch_ref"], r["peak_rss_mb"])
        print(" ".join(f"{_fmt(c, 3 if i in (7, 10) else 2):>9}" for i, c in enumerate(cells)))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tasks", nargs="*", default=["copy", "addition", "parser"], choices=sorted(PRESETS))
    parser.add_argument("--gpt", nargs="*", default=[], choices=("en", "es"),
                        help="lesson 14's task in these languages")
    parser.add_argument("--gpt-seconds", type=float, default=60.0)
    parser.add_argument("--gpt-clock", choices=("wall", "cpu"), default="wall",
                        help="count the GPT's training time on the wall clock or as this process's CPU time")
    parser.add_argument("--finetune", nargs="*", default=[], choices=("en", "es"),
                        help="lesson 15's three runs in these languages")
    parser.add_argument("--preset", default="fast", choices=("fast", "course"))
    parser.add_argument("--seeds", nargs="+", type=int, default=[0])
    parser.add_argument("--every", type=int, default=25, help="evaluate every this many steps (at most 50)")
    parser.add_argument("--n-eval", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; torch {torch.__version__}, "
          f"{args.threads} thread(s), preset {args.preset}")
    rows = []
    for task in args.tasks:
        for seed in args.seeds:
            rows.append(run_isolated(task, args.preset, seed, args.every, args.n_eval, args.threads))
            print(f"  {task} seed {seed}: {rows[-1]['seconds_to_99']} s to 99%", flush=True)
    if rows:
        print_table(rows)
    gpt_rows = [run_isolated(lang, seed, args.gpt_seconds, args.threads, args.gpt_clock, target=_gpt_child)
                for lang in args.gpt for seed in args.seeds]
    print_gpt(gpt_rows)
    rows += gpt_rows
    finetune_rows = [row for lang in args.finetune
                     for row in run_isolated(lang, args.threads, target=_finetune_child)]
    if finetune_rows:
        print_finetune(finetune_rows)
    rows += finetune_rows
    print(f"benchmark took {time.perf_counter() - started:.0f} s; load average after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
