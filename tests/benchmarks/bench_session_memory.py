"""What a training session costs the server, and what it gives back when its tab closes.

Starts `streamlit run app.py` on a free local port, opens lesson 9 in Debian's Chromium with a large model
the budget allows (d_model 128, 4 layers, d_ff 512, batch 32, copy of length 20), trains it for
--train-seconds, stops, then closes the tab and reads the server's resident memory (VmRSS) until --wait
seconds have passed. Prints the figures; asserts nothing. Sends traffic to 127.0.0.1 only and stops by itself.

    python tests/benchmarks/bench_session_memory.py [--train-seconds 20] [--wait 150]
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


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train-seconds", type=float, default=20)
    parser.add_argument("--wait", type=float, default=150)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    with running_app() as app, sync_playwright() as playwright:
        pid = app.process.pid
        browser = launch_chromium(playwright)
        context = browser.new_context(viewport={"width": 1366, "height": 768})
        page = context.new_page()
        page.goto(app.url + "/", wait_until="domcontentloaded")
        wait_for_app(page)
        idle = rss_mb(pid)
        page.goto(app.url + LINK, wait_until="domcontentloaded")
        wait_for_app(page)
        opened = rss_mb(pid)
        page.get_by_role("button", name="Start").click()
        time.sleep(args.train_seconds)
        trained = rss_mb(pid)
        page.get_by_role("button", name="Stop").click()
        wait_for_app(page)
        stopped = rss_mb(pid)
        context.close()
        closed_at = time.monotonic()
        print(f"server RSS: idle {idle:.0f} MB, lesson 9 open {opened:.0f} MB, after {args.train_seconds:.0f} s of "
              f"training {trained:.0f} MB, stopped {stopped:.0f} MB")
        while time.monotonic() - closed_at < args.wait:
            time.sleep(15)
            print(f"  {time.monotonic() - closed_at:5.0f} s after the tab closed: {rss_mb(pid):.0f} MB")
        browser.close()
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
