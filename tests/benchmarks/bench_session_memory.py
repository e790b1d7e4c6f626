"""What a training session costs the server, and what it gives back when its tab closes.

Starts `streamlit run app.py` on a free local port, opens lesson 9 in Debian's Chromium with a large model
the budget allows (d_model 128, 4 layers, d_ff 512, batch 32, copy of length 20), trains it for
--train-seconds, stops, then closes the tab and reads the server's resident memory (VmRSS, and its anonymous part)
until --wait seconds have passed; --rounds repeats that with a new tab each time, to tell what stays once (code
and pools the first training brings in) from what each session would leave behind. The default wait outlasts
Streamlit's reconnect window (`server.disconnectedSessionTTL`, 120 s) plus ui/limits.py's margin, after which the
closed session's state is emptied. Prints the figures; asserts nothing. Sends traffic to 127.0.0.1 only and stops
by itself.

    python tests/benchmarks/bench_session_memory.py [--train-seconds 20] [--wait 150] [--rounds 1]
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from scripts.browser import launch_chromium, running_app, wait_for_app  # noqa: E402

LINK = ("/train-a-transformer?train_task=copy&train_preset=fast&train_d_model=128&train_heads=4&train_layers=4"
        "&train_d_ff=512&train_batch=32&train_steps=5000")


def rss_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def memory(pid: int) -> str:
    return f"{rss_mb(pid):.0f} MB (anonymous {rss_mb(pid, 'RssAnon'):.0f})"


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def one_tab(browser, url: str, pid: int, args) -> None:
    """Open lesson 9 in a new tab, train, stop, close the tab, then watch the server's memory for args.wait s."""
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    page.set_default_timeout(120_000)  # a busy shared machine
    page.goto(url + LINK, wait_until="domcontentloaded")
    wait_for_app(page, timeout=600)
    opened = memory(pid)
    page.get_by_role("button", name="Start").click()
    time.sleep(args.train_seconds)
    trained = memory(pid)
    page.get_by_role("button", name="Stop").click()
    wait_for_app(page, timeout=600)  # the sections of a stopped run (error analysis) are slow on a busy machine
    stopped = memory(pid)
    context.close()
    closed_at = time.monotonic()
    print(f"lesson 9 open {opened}; after {args.train_seconds:.0f} s of training {trained}; stopped {stopped}")
    while time.monotonic() - closed_at < args.wait:
        time.sleep(15)
        print(f"  {time.monotonic() - closed_at:5.0f} s after the tab closed: {memory(pid)}  (load {load()})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-seconds", type=float, default=20)
    parser.add_argument("--wait", type=float, default=150)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average at start: {load()}")
    with running_app() as app, sync_playwright() as playwright:
        pid = app.process.pid
        browser = launch_chromium(playwright)
        context = browser.new_context()
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(app.url + "/", wait_until="domcontentloaded")
        wait_for_app(page)
        context.close()
        print(f"server RSS idle: {memory(pid)}")
        for round_ in range(args.rounds):
            print(f"tab {round_ + 1}:")
            one_tab(browser, app.url, pid, args)
        browser.close()
    print(f"load average at the end: {load()}")


if __name__ == "__main__":
    main()
