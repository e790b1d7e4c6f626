"""A measured class (a script, not a test): N learners at once on one server, through Streamlit's own protocol.

    python tests/benchmarks/bench_load.py --sessions 10,20,40,60 [--proxy 2] [--duration 90] [--json PATH]

For each N: starts `streamlit run app.py` on a free local port (scripts/browser.running_app), or with `--proxy K`
K app processes behind nginx (scripts/serve_many.py), and opens N sessions with the light client of
load_client.py (a websocket each, no browser), arriving over --ramp seconds and all active until the end. Each
opens the app with a link of its own (`seed=90000+i`) and behaves like a learner, acting every --think seconds:
- a trainer (--trainers of them) stays on lesson 9: Start, lets the run train (the page reruns its training section
  twice a second, as a browser does), Stop after 10-25 s, Reset, sometimes another task or step count, Start again;
  a refusal because the server's training places are taken is counted, not an error;
- a reader of lesson 13 (--real of them) types a sentence of its own ("... learner017 ..."), then moves the layer
  and head, hides [CLS]/[SEP], and now and then writes the sentence again;
- everyone else wanders: another lesson one time in three, otherwise one of the lesson's main controls (those of
  bench_browser.INTERACTIONS in the main area).
Reported per N: p50/p95/max seconds from a change (a control, a click, another lesson) to the end of the run it
started (`script_finished`: the server has sent all a browser would draw; drawing is not counted), by kind too;
errors (exception boxes, compile errors, lost connections, timeouts, pages not found); whether any session saw
another's state (its link's seed or its sentence's marker in a message to another session, checked in every
message; a session that never saw its own is reported too, so the check cannot pass by seeing nothing); the
server's resident memory (the process tree; all K apps with --proxy) idle, at its peak and at the end; the
server's and this client's CPU; the load average (`uptime`) before and after. Traffic goes to 127.0.0.1 only;
everything stops by itself. Targets at N = 40 on the project's 2-core machine: no error, no cross-session state,
p95 <= 3 s, peak memory <= 1.5 GB. `--sessions` with several values finds where p95 passes 3 s.
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, Path(__file__).resolve().parent):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench_browser import _descendants  # noqa: E402
from load_client import Tab  # noqa: E402
from load_students import Student, Watch, roles  # noqa: E402

from scripts.browser import running_app  # noqa: E402

GOAL_P95, GOAL_MB = 3.0, 1536
MAX_SESSIONS, MAX_DURATION = 300, 900


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


async def sample_memory(pids: list[int], peak: dict, stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak["mb"] = max(peak["mb"], tree_rss_mb(pids))
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)


def tree_rss_mb(pids: list[int]) -> float:
    total = 0
    for root in pids:
        for pid in _descendants(root):
            with contextlib.suppress(OSError):
                fields = Path(f"/proc/{pid}/statm").read_text().split()
                total += int(fields[1]) * os.sysconf("SC_PAGE_SIZE")
    return total / 2**20


def server_cpu(pids: list[int]) -> float:
    return sum(sum(_descendants(pid).values()) for pid in pids)


async def a_class(url: str, n: int, pids: list[int], args) -> dict:
    rng, watch = random.Random(args.seed), Watch(n)
    students = [Student(i, url, role, random.Random(rng.random()), watch, args)
                for i, role in enumerate(roles(n, args))]
    peak, stop = {"mb": tree_rss_mb(pids)}, asyncio.Event()
    sampler = asyncio.create_task(sample_memory(pids, peak, stop))
    until = time.monotonic() + args.ramp + args.duration

    async def arrive(student: Student, delay: float) -> None:
        await asyncio.sleep(delay)
        try:
            await student.run(until)
        except Exception as error:  # the client's own failure: say it, do not hide it among the server's
            student.tab.errors.append(f"client: {type(error).__name__}: {error}")
            await student.tab.close()
    await asyncio.gather(*(arrive(s, args.ramp * i / max(1, n)) for i, s in enumerate(students)))
    stop.set()
    await sampler
    return summary(students, watch, peak["mb"])


def percentiles(values: list[float]) -> dict:
    ok = sorted(v for v in values if not math.isnan(v))
    if not ok:
        return {"count": 0}
    at = lambda q: ok[min(len(ok) - 1, math.ceil(q * len(ok)) - 1)]  # noqa: E731 (nearest rank)
    return {"count": len(ok), "p50": statistics.median(ok), "p95": at(0.95), "max": ok[-1]}


def summary(students: list[Student], watch: Watch, peak_mb: float) -> dict:
    times = [(kind, s) for student in students for kind, s in student.times]
    errors = Counter(re.sub(r"\d+(\.\d+)?", "#", e)[:160] for s in students for e in s.tab.errors)
    kinds = sorted({kind for kind, _ in times})
    return {"changes": percentiles([s for kind, s in times if kind != "open"]),
            "by_kind": {kind: percentiles([s for k, s in times if k == kind]) for kind in kinds},
            "errors": sum(errors.values()), "error_kinds": dict(errors.most_common(8)), "cross_session": watch.leaks,
            "own_state_never_seen": [i for i, seen in enumerate(watch.own_seen) if not seen],
            "peak_mb": peak_mb, "starts": sum(s.starts for s in students), "busy": sum(s.busy for s in students),
            "training_reruns": sum(s.tab.fragment_runs for s in students if s.role == "trainer"),
            "received_mb": sum(s.tab.bytes_in for s in students) / 2**20,
            "warnings": dict(Counter(a[:70] for s in students for a in s.tab.alerts).most_common(5))}


@contextlib.contextmanager
def server(args):
    """(url, app pids, nginx access log or None): one app, or K behind nginx with --proxy K."""
    if args.proxy:
        from scripts.serve_many import serving
        with serving(args.proxy) as served:
            yield served.url, served.app_pids(), served.workdir / "access.log"
    else:
        with running_app() as app:
            yield app.url, [app.process.pid], None


def sessions_per_app(access_log: Path | None) -> dict[str, int]:
    """From nginx's log: how many websockets (distinct sticky cookies) each app process got."""
    if access_log is None or not access_log.exists():
        return {}
    seen = set()
    for line in access_log.read_text().splitlines():
        parts = line.split(" ", 4)
        if len(parts) == 5 and "/_stcore/stream" in parts[4]:
            seen.add((parts[2], parts[3]))
    return dict(Counter(upstream for upstream, _ in seen))


async def warm_up(url: str, apps: int) -> None:
    """One session per app process on the start page, then closed: the app's modules are loaded (idle memory)."""
    tabs = [Tab(url) for _ in range(4 * apps)]  # with several apps, enough cookies to reach each of them
    await asyncio.gather(*(tab.open() for tab in tabs))
    await asyncio.gather(*(tab.close() for tab in tabs))


def measure(n: int, args) -> dict:
    with server(args) as (url, pids, access_log):
        asyncio.run(warm_up(url, max(1, args.proxy)))
        time.sleep(3)
        idle = tree_rss_mb(pids)
        load_before, cpu0, client0, wall0 = uptime(), server_cpu(pids), time.process_time(), time.monotonic()
        result = asyncio.run(a_class(url, n, pids, args))
        wall, used = time.monotonic() - wall0, server_cpu(pids) - cpu0
        actions = sum(p.get("count", 0) for p in result["by_kind"].values())
        result.update(sessions=n, apps=max(1, args.proxy), idle_mb=idle, end_mb=tree_rss_mb(pids), wall_s=wall,
                      server_cpu_per_s=used / wall, server_cpu_per_action=used / max(1, actions),
                      client_cpu_per_s=(time.process_time() - client0) / wall,
                      uptime_before=load_before, uptime_after=uptime(), per_app=sessions_per_app(access_log))
    return result


def fmt(p: dict) -> str:
    return f"p50 {p['p50']:.2f} s, p95 {p['p95']:.2f} s, max {p['max']:.2f} s ({p['count']})" if p["count"] else "none"


def report(r: dict) -> None:
    leaks = "; ".join(r["cross_session"]) or "none"
    print(f"\nN = {r['sessions']} sessions, {r['apps']} app process(es), {r['wall_s']:.0f} s")
    print(f"  changes: {fmt(r['changes'])}")
    for kind, p in r["by_kind"].items():
        print(f"    {kind:8s} {fmt(p)}")
    print(f"  errors: {r['errors']} {r['error_kinds'] or ''}")
    print(f"  cross-session state: {leaks}; sessions that never saw their own: {r['own_state_never_seen'] or 'none'}")
    print(f"  server memory (RSS, process tree): idle {r['idle_mb']:.0f} MB, peak {r['peak_mb']:.0f} MB, "
          f"end {r['end_mb']:.0f} MB" + (f"; websockets per app {r['per_app']}" if r["per_app"] else ""))
    print(f"  CPU: server {r['server_cpu_per_s']:.2f} cores ({r['server_cpu_per_action']:.2f} CPU s per change or "
          f"open, training included), this client {r['client_cpu_per_s']:.2f}; "
          f"training: {r['starts']} starts, {r['busy']} refused (places taken), {r['training_reruns']} training "
          f"reruns; received {r['received_mb']:.0f} MB")
    print(f"  the app's own warning boxes (most shown): {r['warnings'] or 'none'}")
    print(f"  uptime before: {r['uptime_before']}\n  uptime after:  {r['uptime_after']}")


def verdict(results: list[dict]) -> None:
    print("\n| N | apps | p50 s | p95 s | max s | changes | errors | cross-session | peak MB | load after |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---:|---|")
    results = sorted(results, key=lambda r: r["sessions"])
    for r in results:
        c, leak = r["changes"], "yes" if r["cross_session"] else "no"
        print(f"| {r['sessions']} | {r['apps']} | {c.get('p50', math.nan):.2f} | {c.get('p95', math.nan):.2f} | "
              f"{c.get('max', math.nan):.2f} | {c['count']} | {r['errors']} | {leak} | {r['peak_mb']:.0f} | "
              f"{r['uptime_after'].split('load average: ')[-1]} |")
    over = [r for r in results if r["changes"].get("p95", math.inf) > GOAL_P95]
    under = [r for r in results if r not in over]
    if over:
        below = max((r["sessions"] for r in under if r["sessions"] < over[0]["sessions"]), default=None)
        print(f"p95 passes {GOAL_P95:.0f} s at N = {over[0]['sessions']}" + (f" (not at N = {below})" if below else ""))
    else:
        print(f"p95 stays within {GOAL_P95:.0f} s up to N = {max(r['sessions'] for r in results)}")
    for r in (r for r in results if r["sessions"] == 40):
        met = (not r["errors"], not r["cross_session"], r["changes"].get("p95", math.inf) <= GOAL_P95,
               r["peak_mb"] <= GOAL_MB)
        names = ("no error", "no cross-session state", f"p95 <= {GOAL_P95:.0f} s", f"peak <= {GOAL_MB} MB")
        print("N = 40 targets: " + ", ".join(f"{name} {'MET' if ok else 'MISSED'}" for name, ok in zip(names, met)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", default="40", help="comma-separated class sizes, e.g. 10,20,40,60")
    parser.add_argument("--proxy", type=int, default=0, help="K app processes behind nginx (scripts/serve_many.py)")
    parser.add_argument("--duration", type=float, default=90, help="seconds every session is active after the ramp")
    parser.add_argument("--ramp", type=float, default=20, help="seconds over which the sessions arrive")
    parser.add_argument("--think", type=float, nargs=2, default=(2.0, 6.0), help="seconds between a learner's actions")
    parser.add_argument("--trainers", type=float, default=0.2, help="share of learners training on lesson 9")
    parser.add_argument("--real", type=float, default=0.3, help="share of learners on lesson 13")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sizes = [int(n) for n in args.sessions.split(",")]
    if not all(1 <= n <= MAX_SESSIONS for n in sizes) or not 0 < args.duration <= MAX_DURATION:
        parser.error(f"--sessions between 1 and {MAX_SESSIONS}; --duration up to {MAX_DURATION} s")
    if not (0 <= args.ramp <= MAX_DURATION and 0 < args.think[0] <= args.think[1] <= 60 and 0 <= args.proxy <= 8):
        parser.error(f"--ramp up to {MAX_DURATION} s; --think MIN MAX with 0 < MIN <= MAX <= 60; --proxy up to 8")
    if not (0 <= args.trainers and 0 <= args.real and args.trainers + args.real <= 1):
        parser.error("--trainers and --real are shares of the class: together at most 1")
    print(f"uptime at start: {uptime()} ({os.cpu_count()} cores)", flush=True)
    results = []
    for n in sizes:
        results.append(measure(n, args))
        report(results[-1])
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    verdict(results)


if __name__ == "__main__":
    main()
