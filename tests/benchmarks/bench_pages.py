"""Page speed benchmark (a script, not a test): how long the server works on a rerun of every lesson.

    python tests/benchmarks/bench_pages.py [--reruns 10] [--pages 02 04] [--json PATH] [--server]

For every page in the app's `PAGES` (imported from ui/lessons.py, so new lessons are picked up), at its
defaults and at its largest settings (`LARGEST` below; a page not listed there is measured at its defaults only,
and the table says so; a lesson in parts, `ui/parts.py`, is measured at its largest settings once per part, as
only the part on screen is computed and drawn): the median over `--reruns` reruns of the server-side time of one rerun after a control
change, the payload of that rerun, and the ratio to the floor.

The largest settings of lessons 9, 10 and 12 need trained models: they are trained here, before the page is
measured and outside the timed reruns (lesson 9's model, shared with lesson 10: ~40 s; lesson 12's ten runs:
~70 s on one thread), and put into session_state where the pages keep them.

How it is measured
- Through Streamlit's AppTest, in this process, set up like tests/conftest.py (project root on sys.path, one
  torch thread): app.py runs, then switches to the lesson, so the frame (navigation, sidebar) runs too.
  AppTest runs the script on the same `ScriptRunner` code a server uses, on its own thread; a real server would
  add the websocket round trip and the browser's drawing, which are not the server's work.
- The control change is the sidebar's seed (`cfg_seed`): it exists on every page and changes what every
  lesson shows. `median_ms` alternates it between two values, so after the untimed warm-up reruns the pages'
  `st.cache_data` computations are cached, as when a learner moves a control back and forth: this is the cost of
  drawing the page. `new_seed_ms` (printed, and in the JSON) gives every rerun a seed never seen, so every
  computation keyed on the seed runs again: the cost of computing and drawing.
- Time of a rerun = from the runner's SCRIPT_STARTED event (before the widget callbacks) to its
  SCRIPT_STOPPED event (after the script and the session-state clean-up), both taken on the script thread, plus
  the time to serialize that run's ForwardMsgs (a server does this before sending them). AppTest's own overhead
  (its runner thread, rebuilding the element tree for queries) is left out; `apptest ms`, the wall time of
  `AppTest.run()`, is printed beside it for comparison. AppTest makes a new script cache on every run (so it
  parses and compiles app.py and the page again, ~10-20 ms); a server keeps one per process, and so does this
  benchmark.
- Payload = the serialized size of the ForwardMsgs the rerun leaves in the runner's queue (the deltas of every
  element, with their Arrow data and chart specs, as a server would send them: uncompressed, before Streamlit's
  message cache replaces an element the browser already has by its hash). So it is an upper bound per rerun.
- Floor = the same measurement of the frame with an empty lesson: app.py's own source with the `PAGES` it imports
  replaced by one empty page (so the sidebar and navigation run as in the app, with a navigation of one page). It
  is measured before and after the pages and its median is used. A bare script with no element at all is printed
  for reference.
- Goal (issue #7): every page at defaults within 3x the floor, under 300 ms at its largest settings, payload
  under 1 MB.

`--server` also starts `streamlit run app.py` and measures, with Debian's Chromium driven by Playwright
(scripts/browser.py): the cold start, from process start to the first page rendered in the browser (the health
endpoint answering, and the first page idle with its elements drawn); and memory per idle session: the server's
resident memory with 1 and with 9 open sessions (browser contexts on the app's default page), (RSS9 - RSS1) / 8.

Run it when the machine is quiet (`uptime`): it reports the load average at the start and at the end.
"""
from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

import numpy as np
import pandas as pd
from conftest import start_page  # the tests' set-up, also torch.set_num_threads(1)
from widgets import sub_lessons
from streamlit.runtime.scriptrunner import ScriptRunnerEvent
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.testing.v1 import AppTest, app_test, local_script_runner

APP = ROOT / "app.py"
SEED_WIDGET = "cfg_seed"
GOAL_RATIO, GOAL_LARGEST_MS, GOAL_PAYLOAD_KB = 3.0, 300.0, 1024.0
SHARED_LARGEST = {"cfg_d_model": 512, "cfg_heads": 16, "cfg_seq_len": 64, "cfg_mask": "both", "cfg_show_numbers": True}


def _words(n: int, seed: int) -> list[str]:
    vocab = ["the", "cat", "sat", "on", "a", "mat", "while", "attention", "heads", "read", "every", "word"]
    rng = np.random.default_rng(seed)
    return [vocab[i] for i in rng.integers(0, len(vocab), n)]


def _table(label: str, rows: int, dims: int) -> pd.DataFrame:
    """A full editor table: `rows` labelled rows of `dims` numbers in [-3, 3]."""
    rng = np.random.default_rng(rows * 100 + dims)
    table = {label: [f"w{i + 1}" for i in range(rows)]}
    table.update({f"d{k + 1}": np.round(rng.uniform(-3, 3, rows), 2) for k in range(dims)})
    return pd.DataFrame(table)


def _target() -> str:
    return " ".join(_words(45, 9))[:300]  # the decoder's words: up to the page's 300 characters


def _batch_text() -> str:
    return "\n".join(" ".join(_words(64, s)) for s in range(4))  # 4 sentences of 64 words, ~1100 characters


def _short_words(n: int, seed: int) -> str:
    """`n` words of one WordPiece each (two to five letters): n + 2 tokens for lesson 13 in under 600 characters."""
    vocab = ["the", "cat", "sat", "on", "a", "mat", "and", "it", "was", "warm", "dog", "ran", "home", "fast"]
    rng = np.random.default_rng(seed)
    return " ".join(vocab[i] for i in rng.integers(0, len(vocab), n))


# Lesson 9's largest model as drawn: the copy task at its longest (32 symbols of 64) with the most heads (8) and
# layers (4), so every attention map it shows is 8 heads of ~33 x 33. d_model and d_ff stay small: they change no
# figure, and a d_model of 256 would take minutes to train and evaluate here (its greedy evaluation of 200
# held-out examples alone takes ~15 s). Trained for a short schedule, so the loss curve, the accuracy curves,
# the snapshots and the error analysis all exist.
TRAIN_TASK = {"length": 32, "vocab_size": 64}
TRAIN_MODEL = {"d_model": 32, "n_heads": 8, "n_layers": 4, "d_ff": 64, "dropout": 0.0, "norm_first": True,
               "positional": "sinusoidal"}
TRAIN_SCHEDULE = {"steps": 120, "warmup": 30, "lr": 1e-2, "batch_size": 64, "seed": 0}


@functools.cache
def _training_run():
    """Lesson 9's run (ui.training.Run) with TRAIN_* above, trained to the end of its schedule (once)."""
    from ui.training import Run

    run = Run.new("copy", "fast", "cpu", TRAIN_TASK, TRAIN_MODEL, **TRAIN_SCHEDULE)
    while not run.trainer.done:
        run.advance(1.0)
    return run


def _training_state() -> dict:
    """Lesson 9 with that run loaded, its controls set to the settings it was built from (so the page's preset
    does not replace them), show-numbers on, the last layer and head picked."""
    m, tr = TRAIN_MODEL, TRAIN_SCHEDULE
    controls = {"train_task": "copy", "train_preset": "fast",
                "train_length": TRAIN_TASK["length"], "train_vocab": TRAIN_TASK["vocab_size"],
                "train_d_model": m["d_model"], "train_heads": m["n_heads"], "train_layers": m["n_layers"],
                "train_d_ff": m["d_ff"], "train_dropout": m["dropout"], "train_norm": "pre",
                "train_positional": m["positional"], "train_lr": tr["lr"], "train_batch": tr["batch_size"],
                "train_steps": tr["steps"]}
    views = {"train_kind": "cross", "train_layer": m["n_layers"] - 1, "train_snap_kind": "cross",
             "train_snap_layer": m["n_layers"] - 1, "train_snap_head": m["n_heads"] - 1}
    return {**SHARED_LARGEST, **controls, **views, "train_run": _training_run()}


def _decoding_state() -> dict:
    """Lesson 10: 12 toy logits, 10,000 draws, top-k off; lesson 9's model (33 steps over 67 symbols) decoding
    its own example with the widest beam, on the beam view at its last step (the tree and, with show-numbers
    on, every candidate: 8 x 67 rows)."""
    toy = pd.DataFrame({"token": [f"w{i + 1}" for i in range(12)],
                        "logit": np.round(np.random.default_rng(10).uniform(-3, 3, 12), 2)})
    return {**SHARED_LARGEST, "dec_toy_table": toy, "dec_draws": 10_000, "dec_top_k": 12, "dec_top_p": 1.0,
            "train_run": _training_run(), "dec_model": "session:copy", "dec_width": 8, "dec_view": "beam",
            "dec_step": 10_000}  # the page clamps the step to the last one


CLF_DEPTHS, CLF_NORMS, CLF_EPOCHS, CLF_STEPS, CLF_LR, CLF_MINORITY = [1, 2, 3, 4, 6], ["pre", "post"], 30, 10, 1e-3, 9


@functools.cache
def _classifier_runs() -> dict:
    """Lesson 12's ten runs (every depth, both placements) trained for all 30 epochs, 10 steps each (once)."""
    from core.lab.classifier import ClassifierConfig, ClassifierRun, RangeTask, RunConfig

    runs = {}
    for norm in CLF_NORMS:
        for n in CLF_DEPTHS:
            run = ClassifierRun(RangeTask(minority=CLF_MINORITY), ClassifierConfig(n_layers=n, norm_first=norm == "pre"),
                                RunConfig(epochs=CLF_EPOCHS, steps_per_epoch=CLF_STEPS, batch_size=64, lr=CLF_LR,
                                          seed=0))
            while not run.done(CLF_EPOCHS):
                run.train_step()
            runs[n, norm] = run
    return runs


def _classifier_state() -> dict:
    """Lesson 12 with the biggest grid (10 runs x 30 epochs: the two charts, the table and, with show-numbers on,
    the two 30 x 10 tables). The page keys a run by (depth, placement, steps, lr, minority, seed) and the
    benchmark alternates the seed between 1000 and 1001, so the same trained runs are stored under both seeds."""
    runs = {(n, norm, CLF_STEPS, CLF_LR, CLF_MINORITY, seed): run
            for (n, norm), run in _classifier_runs().items() for seed in (1000, 1001)}
    return {**SHARED_LARGEST, "clf_depths": CLF_DEPTHS, "clf_norms": CLF_NORMS, "clf_epochs": CLF_EPOCHS,
            "clf_steps": CLF_STEPS, "clf_lr": CLF_LR, "clf_minority": CLF_MINORITY, "clf_runs": runs,
            "clf_running": False}


def _exercises_state() -> dict:
    """Lesson 11 with all six worked solutions revealed and all seven questions answered and checked (a checked
    question explains every one of its four options)."""
    questions = ("residuals", "prenorm", "decoder", "training", "padding", "inference", "recipe")  # the page's ids
    return {**SHARED_LARGEST, "ex_revealed": {1, 2, 3, 4, 5, 6},
            "ex_mcq": {q: {"first": False, "last": 3} for q in questions}, **{f"ex_q_{q}": 3 for q in questions}}


def _real_model_state() -> dict:
    """Lesson 13 with a 128-token sentence (126 words + [CLS] and [SEP]), every head in the head view, the
    last layer and head, and eight sentences to compare."""
    text = _short_words(126, 13)
    sentences = "\n".join(_short_words(40, 100 + k) for k in range(8))
    return {**SHARED_LARGEST, "real_text_a": text, "real_text_b": "", "real_valid": (text, ""),
            "real_view_heads": list(range(12)), "real_view_layer": 5, "real_layer": 5, "real_head": 11,
            "real_list": sentences}


# Per page: the session_state that makes it do the most work (widest matrices, most heads, layers, curves, tables).
# Keys are the pages' own (their `setdefault`s); shared settings at their maxima unless a page's worst case differs.
LARGEST = {
    "lessons/01_similarity.py": {**SHARED_LARGEST, "sim_dims": 16, "sim_vectors_table": _table("word", 12, 16),
                               "sim_scale": True, "sim_word": 11},
    "lessons/02_attention.py": {**SHARED_LARGEST, "cfg_heads": 1, "qkv_dk": 1024, "qkv_query": 63},  # d_k = 512
    "lessons/03_masks.py": {**SHARED_LARGEST, "masks_batch_text": _batch_text(), "masks_batch": _batch_text(),
                          "masks_sentence": 3, "masks_head": 15, "masks_pattern": "global", "masks_width": 8,
                          "masks_globals": 4},
    "lessons/04_multi_head.py": {**SHARED_LARGEST, "mha_view_heads": list(range(16)), "mha_head": 15},
    "lessons/05_positional_encoding.py": {**SHARED_LARGEST, "cfg_heads": 1, "pe_positions": 512, "pe_offset": 511,
                                        "pe_learned_len": 64},
    "lessons/06_layer_norm.py": {**SHARED_LARGEST, "ln_dims": 16, "ln_x_table": _table("token", 12, 16),
                               "ln_layers": 24},
    "lessons/07_blocks.py": {**SHARED_LARGEST, "blk_ff_ratio": 8, "blk_layers": 12, "blk_trace_kind": "decoder",
                           "blk_target": _target(), "blk_target_text": _target()},
    "lessons/08_architecture.py": {**SHARED_LARGEST, "arch_layers": 48, "arch_ff_auto": False, "arch_d_ff": 16384,
                                 "arch_src_vocab": 262_144, "arch_tgt_vocab": 262_144},
    "lessons/00_welcome.py": {**SHARED_LARGEST, "cfg_present": True},
    # Built when measured (trained models, checked inputs): functions returning the session_state.
    "lessons/09_training.py": _training_state,
    "lessons/10_decoding.py": _decoding_state,
    "lessons/11_exercises.py": _exercises_state,
    "lessons/12_classifier.py": _classifier_state,
    "lessons/13_real_model.py": _real_model_state,
}


def app_pages() -> list[str]:
    """The page files of the app's `PAGES` (ui/lessons.py), in order."""
    from ui.lessons import PAGES

    return [entry[1] for entry in PAGES]


def floor_scripts(directory: Path) -> tuple[Path, str]:
    """(a copy of app.py whose PAGES is one empty lesson, that lesson's path) for the floor.

    The copy is app.py's own code with one statement added after the one that defines `PAGES`."""
    empty = directory / "empty_lesson.py"
    empty.write_text('"""An empty lesson: the floor of the page benchmark."""\n')
    tree = ast.parse(APP.read_text())
    for k, node in enumerate(tree.body):
        targets = [t.id for t in getattr(node, "targets", []) if isinstance(t, ast.Name)]
        targets += [a.asname or a.name for a in getattr(node, "names", [])]
        if "PAGES" in targets:
            entry = ("attention", str(empty), "sim.nav_title", ":material/home:", "")
            override = ast.parse(f"PAGES = {(entry,)!r}\nSECTIONS = ('attention',)").body
            tree.body[k + 1:k + 1] = override
            break
    else:
        raise RuntimeError("app.py no longer defines or imports PAGES")
    frame = directory / "app.py"
    frame.write_text(ast.unparse(tree))
    return frame, str(empty)


# ---- timing the script thread ----------------------------------------------------------------------------

class _TimedRunner(local_script_runner.LocalScriptRunner):
    """AppTest's runner, also recording when each run starts and stops (perf_counter on the script thread)."""
    last: _TimedRunner | None = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.marks: list[tuple[ScriptRunnerEvent, float]] = []
        self.on_event.connect(self._mark, weak=False)
        _TimedRunner.last = self

    def _mark(self, sender, event, **kwargs) -> None:
        if event == ScriptRunnerEvent.SCRIPT_STARTED or event.name.startswith("SCRIPT_STOPPED"):
            self.marks.append((event, time.perf_counter()))


app_test.LocalScriptRunner = _TimedRunner  # AppTest looks the class up in its module on every run
_SCRIPT_CACHE = ScriptCache()  # one per process, as in a server (streamlit.runtime.Runtime)
app_test.ScriptCache = local_script_runner.ScriptCache = lambda: _SCRIPT_CACHE


def timed_run(at: AppTest) -> dict:
    """Run `at` once: server ms (script thread + serialization), payload kB and AppTest's wall ms."""
    wall = time.perf_counter()
    at.run()
    wall = time.perf_counter() - wall
    runner = _TimedRunner.last
    starts = [t for e, t in runner.marks if e == ScriptRunnerEvent.SCRIPT_STARTED]
    stops = [t for e, t in runner.marks if e != ScriptRunnerEvent.SCRIPT_STARTED]
    t0 = time.perf_counter()
    sizes = [len(msg.SerializeToString()) for msg in runner.forward_msgs()]
    serialize = time.perf_counter() - t0
    by_kind: dict[str, int] = {}
    for msg, size in zip(runner.forward_msgs(), sizes):
        element = msg.delta.new_element if msg.HasField("delta") and msg.delta.HasField("new_element") else None
        kind = element.WhichOneof("type") if element is not None else "other"
        by_kind[kind] = by_kind.get(kind, 0) + size
    return {"ms": (stops[-1] - starts[0] + serialize) * 1000, "payload_kb": sum(sizes) / 1024,
            "by_kind": by_kind, "wall_ms": wall * 1000, "exception": [e.value for e in at.exception]}


def measure(main: Path, lesson: str | None, state: dict, reruns: int, seed_widget: bool = True) -> dict:
    """Medians over `reruns` reruns: server ms with the seed alternating between two values (after two untimed
    warm-up reruns) and with a new seed every time; AppTest's wall ms; the largest payload and its parts."""
    at = start_page(main, numbers=bool(state.get("cfg_show_numbers", False)), state=state, lesson=lesson)

    def rerun(seed: int) -> dict:
        if seed_widget:
            at.number_input(key=SEED_WIDGET).set_value(seed)
        return timed_run(at)

    warm = [rerun(1000 + k % 2) for k in range(reruns + 2)][2:]
    fresh = [rerun(2000 + k) for k in range(reruns)]
    errors = sorted({str(e)[:200] for r in warm + fresh for e in r["exception"]})
    biggest = max(warm, key=lambda r: r["payload_kb"])
    return {"median_ms": statistics.median(r["ms"] for r in warm),
            "new_seed_ms": statistics.median(r["ms"] for r in fresh),
            "wall_ms": statistics.median(r["wall_ms"] for r in warm),
            "payload_kb": biggest["payload_kb"], "by_kind": biggest["by_kind"], "errors": errors}


# ---- the real server: cold start and memory per session ----------------------------------------------------

_IDLE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.getAttribute('data-test-script-state') === 'notRunning'
    && document.querySelector('[data-testid="stStatusWidget"]') === null
    && document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length > 0;
}"""


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def server_numbers(sessions: int = 9) -> dict:
    """Cold start (process start -> health -> first page rendered) and RSS with 1 and `sessions` sessions."""
    from playwright.sync_api import sync_playwright

    from scripts.browser import launch_chromium, running_app, wait_for_app

    out = {}
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)  # started before the server: its own start-up is not counted
        started = time.perf_counter()
        with running_app() as app:
            out["health_s"] = time.perf_counter() - started
            contexts = [browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
                        for _ in range(sessions)]
            first = contexts[0].new_page()
            first.goto(app.url, timeout=120_000)
            first.wait_for_function(_IDLE_JS, polling=50, timeout=120_000)
            out["first_page_s"] = time.perf_counter() - started
            wait_for_app(first)
            time.sleep(3)
            out["rss_1_mb"] = _rss_mb(app.process.pid)
            pages = [first]
            for context in contexts[1:]:
                page = context.new_page()
                page.goto(app.url, timeout=120_000)
                pages.append(page)
            for page in pages:
                wait_for_app(page)
            time.sleep(3)
            out[f"rss_{sessions}_mb"] = _rss_mb(app.process.pid)
            out["mb_per_session"] = (out[f"rss_{sessions}_mb"] - out["rss_1_mb"]) / (sessions - 1)
            for context in contexts:
                context.close()
        browser.close()
    return out


# ---- report --------------------------------------------------------------------------------------------------

def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--reruns", type=int, default=10)
    parser.add_argument("--pages", nargs="*", help="only pages whose file name contains one of these")
    parser.add_argument("--json", type=Path, help="write the records here")
    parser.add_argument("--server", action="store_true", help="also cold start and memory per session")
    parser.add_argument("--server-only", action="store_true", help="only cold start and memory per session")
    args = parser.parse_args()
    print(f"load average at start: {load()}", flush=True)
    if not args.server_only:
        page_table(args)
    if args.server or args.server_only:
        s = server_numbers()
        print(f"\ncold start: health endpoint after {s['health_s']:.1f} s, first page rendered after "
              f"{s['first_page_s']:.1f} s; RSS {s['rss_1_mb']:.0f} MB with 1 session, {s['rss_9_mb']:.0f} MB with 9: "
              f"{s['mb_per_session']:.1f} MB per idle session")
    print(f"load average at end: {load()}")


def largest_settings(page: str) -> list[tuple[str, dict]]:
    """(name, session_state) of the page's largest settings: one per part for a lesson in parts (only the part on
    screen is drawn), built once (some train models)."""
    if page not in LARGEST:
        return []
    state = LARGEST[page]() if callable(LARGEST[page]) else LARGEST[page]
    setting, codes = sub_lessons(page)
    if setting is None:
        return [("largest", state)]
    return [(f"largest, {code}", {**state, setting: code}) for code in codes]


def page_table(args: argparse.Namespace) -> None:
    """Measure every page (and the floor), print the table, write the JSON records."""
    pages = [p for p in app_pages() if not args.pages or any(s in p for s in args.pages)]

    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp:
        frame, empty = floor_scripts(Path(tmp))
        bare = Path(tmp) / "bare.py"
        bare.write_text("")
        floors = [measure(frame, empty, {}, args.reruns)]
        bare_ms = measure(bare, None, {}, args.reruns, seed_widget=False)["median_ms"]
        results = []
        for page in pages:
            for name, state in [("defaults", {})] + largest_settings(page):
                results.append((page, name, measure(APP, page, state, args.reruns)))
                r = results[-1][2]
                print(f"  {page} {name}: {r['median_ms']:.0f} ms (new seed {r['new_seed_ms']:.0f} ms), "
                      f"{r['payload_kb']:.0f} kB", flush=True)
        floors.append(measure(frame, empty, {}, args.reruns))
    floor = statistics.median(f["median_ms"] for f in floors)
    floor_wall = statistics.median(f["wall_ms"] for f in floors)

    records, rows = [], []
    for page, name, r in results:
        ratio = r["median_ms"] / floor
        ok = (r["payload_kb"] < GOAL_PAYLOAD_KB and not r["errors"]
              and (ratio <= GOAL_RATIO if name == "defaults" else r["median_ms"] < GOAL_LARGEST_MS))
        note = "" if page in LARGEST else "no largest settings known: defaults only"
        if r["payload_kb"] >= GOAL_PAYLOAD_KB:
            total = sum(r["by_kind"].values())
            parts = sorted(r["by_kind"].items(), key=lambda kv: -kv[1])[:3]
            note = "payload: " + ", ".join(f"{kind} {size / total:.0%}" for kind, size in parts)
        if r["errors"]:
            note = "EXCEPTION: " + "; ".join(r["errors"])
        records.append({"page": page, "setting": name, "median_ms": round(r["median_ms"], 1),
                        "floor_ms": round(floor, 1), "ratio": round(ratio, 2), "payload_kb": round(r["payload_kb"], 1),
                        "new_seed_ms": round(r["new_seed_ms"], 1)})
        rows.append(f"| {Path(page).stem} | {name} | {r['median_ms']:.0f} | {ratio:.1f} | {r['new_seed_ms']:.0f} | "
                    f"{r['payload_kb']:.0f} | {r['wall_ms']:.0f} | {'yes' if ok else 'NO'} | {note} |")
    print(f"\nfloor (frame + empty lesson): {floor:.1f} ms (before {floors[0]['median_ms']:.1f}, after "
          f"{floors[1]['median_ms']:.1f}; AppTest wall {floor_wall:.0f} ms); bare empty script: {bare_ms:.1f} ms; "
          f"median of {args.reruns} reruns")
    print("| page | setting | median ms | x floor | new seed ms | payload kB | apptest ms | goal met | note |")
    print("|---|---|---:|---:|---:|---:|---:|---|---|")
    print("\n".join(rows))
    print(f"goal: defaults <= {GOAL_RATIO:g}x floor, largest < {GOAL_LARGEST_MS:.0f} ms, payload < 1 MB")
    if args.json:
        args.json.write_text(json.dumps(records, indent=2) + "\n")


if __name__ == "__main__":
    main()
