"""Drive the running app in headless Chromium. Used by tests/test_browser.py and scripts/screenshots.py.

The app runs as a real `streamlit run app.py` subprocess on a free loopback port; the browser is Debian's
`chromium` (`apt-get install -y chromium`) driven by Playwright, which never downloads a browser of its own.
Playwright is imported by the caller, so this module loads without it. Every wait here is bounded.
"""
from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = "/usr/bin/chromium"
# Without the background-networking flags Chromium keeps calling home on a machine with no network.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SERVER_START_SECONDS = 90  # `import torch` plus Streamlit's start-up on a busy 2-core machine
PAGE_RUN_SECONDS = 120  # one run of one page's script
IDLE_CHECKS = 4  # consecutive idle polls, 250 ms apart, before a page counts as finished

NAV_LINKS = '[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]'
NAV_VIEW_MORE = '[data-testid="stSidebarNavViewButton"]'
LANGUAGE_LABEL = re.compile(r"language|idioma|lengua", re.I)
SPANISH_OPTION = re.compile(r"español|espanol|spanish|^\W*es\W*$", re.I)
TRACEBACK_TEXT = re.compile(r"Traceback|\b\w+(Error|Exception)\b\s*:")

_APP_STATE_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  return {
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    script: app ? app.getAttribute('data-test-script-state') : null,
    running: document.querySelector('[data-testid="stStatusWidget"]') !== null,
    elements: document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length,
  };
}"""


@dataclass
class App:
    url: str  # e.g. http://127.0.0.1:PORT
    process: subprocess.Popen
    log_path: Path

    def log_tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_health(url: str, process: subprocess.Popen, log_path: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"streamlit exited with {process.returncode}:\n{log_path.read_text(errors='replace')}")
        with contextlib.suppress(OSError):
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as response:
                if response.status == 200:
                    return
        time.sleep(0.5)
    raise TimeoutError(f"no answer from {url}/_stcore/health after {timeout:.0f} s:\n"
                       f"{log_path.read_text(errors='replace')[-4000:]}")


def _stop(process: subprocess.Popen) -> None:
    """End the server and anything it started (its own process group), politely first."""
    if process.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=wait)
            return


@contextlib.contextmanager
def running_app(log_dir: Path | None = None, timeout: float = SERVER_START_SECONDS, options: dict | None = None,
                script: Path | str = "app.py"):
    """`streamlit run app.py` (or `script`) on a free port, from the project root (so its .streamlit/config.toml
    applies); yields an `App` once the health endpoint answers; always stops it. `options` are more Streamlit
    config options, e.g. ``{"runner.fastReruns": "true"}``."""
    port = free_port()
    log_dir = Path(log_dir or tempfile.mkdtemp(prefix="streamlit-app-"))
    log_path = log_dir / "streamlit.log"
    command = [sys.executable, "-m", "streamlit", "run", str(script), "--server.headless", "true",
               "--server.address", "127.0.0.1", "--server.port", str(port), "--server.fileWatcherType", "none",
               "--browser.gatherUsageStats", "false"]
    for name, value in (options or {}).items():
        command += [f"--{name}", str(value)]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        app = App(f"http://127.0.0.1:{port}", process, log_path)
        _wait_for_health(app.url, process, log_path, timeout)
        yield app
    finally:
        _stop(process)


def launch_chromium(playwright):
    return playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, timeout=60_000)


def open_app(browser, url: str):
    """A new 1400 x 1000 English page on the app's start page, run to the end."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page.set_default_timeout(60_000)
    page.goto(url + "/", wait_until="domcontentloaded")
    wait_for_app(page)
    return page


def wait_for_app(page, timeout: float = PAGE_RUN_SECONDS) -> dict:
    """Wait until the page's script has run to the end: connected, not running, something on the page.

    The script state starts as "notRunning" before the first run, so an empty main area does not count,
    and the idle state must hold for several polls in a row (a click's rerun starts a moment later).
    """
    page.wait_for_selector('[data-testid="stApp"][data-test-connection-state="CONNECTED"]',
                           timeout=timeout * 1000)
    deadline, idle_polls = time.monotonic() + timeout, 0
    while True:
        state = page.evaluate(_APP_STATE_JS)
        idle = state["script"] == "notRunning" and not state["running"] and state["elements"] > 0
        idle_polls = idle_polls + 1 if idle else 0
        if idle_polls >= IDLE_CHECKS:
            return state
        if time.monotonic() > deadline:
            raise TimeoutError(f"the app was still running after {timeout:.0f} s: {state}")
        page.wait_for_timeout(250)


# Installed with `context.add_init_script(QUIET_JS)` before a page loads: the page's clock (performance.now(), ms
# since its navigation started) of its last DOM mutation, long task or websocket message, of the first input (key
# or pointer) since `window.__bench.reset()`, and whether the script ran since then (the script state went through
# "running", or the server sent a message: a fast run can go and come back within one React render). Charts are drawn after the script has ended, so
# the script state alone says "finished" too early; a page is settled when it is also quiet (see `wait_until_settled`).
QUIET_JS = """(() => {
  const bench = window.__bench = {last: 0, inputAt: null, sawRunning: false};
  bench.reset = () => { bench.inputAt = null; bench.sawRunning = false; };
  const touch = () => { bench.last = performance.now(); };
  new MutationObserver(records => {
    touch();
    for (const r of records) {
      if (r.attributeName === 'data-test-script-state'
          && (r.oldValue === 'running' || r.target.getAttribute('data-test-script-state') === 'running')) {
        bench.sawRunning = true;
      }
    }
  }).observe(document, {subtree: true, childList: true, attributes: true, characterData: true,
                        attributeOldValue: true});
  new PerformanceObserver(list => {
    for (const e of list.getEntries()) bench.last = Math.max(bench.last, e.startTime + e.duration);
  }).observe({type: 'longtask', buffered: true});
  const NativeWebSocket = window.WebSocket;  // every message from the server is activity, and means a run
  window.WebSocket = class extends NativeWebSocket {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', () => { touch(); bench.sawRunning = true; });
    }
  };
  for (const type of ['keydown', 'pointerdown']) {
    addEventListener(type, () => { if (bench.inputAt === null) bench.inputAt = performance.now(); }, true);
  }
})();"""
_SETTLED_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]'), b = window.__bench;
  return {
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    script: app ? app.getAttribute('data-test-script-state') : null,
    running: document.querySelector('[data-testid="stStatusWidget"]') !== null,
    elements: document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length,
    skeletons: document.querySelectorAll('[data-testid="stMain"] [data-testid="stSkeleton"]').length,
    now: performance.now(), last: b.last, input_at: b.inputAt, saw_running: b.sawRunning,
  };
}"""
QUIET_MS = 300  # no DOM mutation and no long task for this long: the browser has finished drawing
RERUN_WAIT_SECONDS = 10  # after an input, how long to wait for the script to start before calling it "no rerun"


def wait_until_settled(page, expect_run: bool = True, quiet_ms: float = QUIET_MS,
                       timeout: float = PAGE_RUN_SECONDS, loading=lambda: 0) -> dict:
    """Wait until the script has run (when `expect_run`) and ended, the main area is drawn (no skeleton left: a
    widget's code is fetched the first time it is drawn), `loading()` (e.g. requests in flight) is 0 and the page
    has been quiet for `quiet_ms`; needs `QUIET_JS` installed. Returns the last state: `last` is the page-clock time
    (ms) the page went quiet, `input_at` that of the input after `window.__bench.reset()`, and `saw_running`
    False when the input started no run within RERUN_WAIT_SECONDS."""
    start, deadline = time.monotonic(), time.monotonic() + timeout
    while True:
        state = page.evaluate(_SETTLED_JS)
        waited_for_run = expect_run and not state["saw_running"] and time.monotonic() - start < RERUN_WAIT_SECONDS
        idle = (state["connection"] == "CONNECTED" and state["script"] == "notRunning" and not state["running"]
                and state["elements"] > 0 and not state["skeletons"] and not loading())
        if idle and not waited_for_run and state["now"] - state["last"] >= quiet_ms:
            return state
        if time.monotonic() > deadline:
            raise TimeoutError(f"the page did not settle within {timeout:.0f} s: {state}")
        page.wait_for_timeout(50)


def settle_after(page, action: Callable[[], Any], expect_run: bool = True) -> dict:
    """Do `action` (a click, a key, a navigation) and wait until the run it starts has ended and the page is
    quiet (`wait_until_settled`; the page needs `QUIET_JS`). An input that starts no run waits RERUN_WAIT_SECONDS
    for one when `expect_run`: how long an effect that should not come is given to show."""
    page.evaluate("window.__bench && window.__bench.reset()")
    action()
    return wait_until_settled(page, expect_run=expect_run)


def nav_pages(page) -> list[tuple[str, str]]:
    """(title, href) of every page in the sidebar navigation, in order, after expanding "View more".

    Call it once the app has run (`wait_for_app`). Streamlit draws no navigation for an app of one page:
    that page is then the only one, and it is accepted only if lessons/ holds a single lesson file.
    """
    if not page.locator(NAV_LINKS).count():
        lessons = sorted(path.name for path in (ROOT / "lessons").glob("[0-9]*.py"))
        if len(lessons) > 1:
            raise AssertionError(f"no sidebar navigation although lessons/ has {lessons}")
        title = page.locator('[data-testid="stMain"] h1').first.inner_text().strip()
        return [(title, urllib.parse.urlsplit(page.url)._replace(query="", fragment="").geturl())]
    more = page.locator(NAV_VIEW_MORE)
    if more.count() and re.search(r"more", more.first.inner_text(), re.I):
        more.first.click()
        page.wait_for_timeout(300)
    links = page.locator(NAV_LINKS)
    return [(links.nth(i).inner_text().strip(), links.nth(i).get_attribute("href")) for i in range(links.count())]


def nav_text(page) -> str:
    """The navigation's text ("" when Streamlit draws none, for an app of one page)."""
    nav = page.locator('[data-testid="stSidebarNav"]')
    return nav.inner_text() if nav.count() else ""


_WORDS = {"en": {"the", "and", "of", "is", "to", "with", "each", "this", "that", "are", "for", "what", "how"},
          "es": {"el", "la", "los", "las", "del", "y", "que", "es", "con", "cada", "una", "para", "por", "qué",
                 "cómo"}}


def main_language(page) -> tuple[str, dict[str, int]]:
    """"en" or "es": which language's common words the visible text of the main area uses more."""
    text = page.locator('[data-testid="stMain"]').inner_text().lower()
    words = re.findall(r"[a-záéíóúüñ]+", text)
    counts = {lang: sum(word in common for word in words) for lang, common in _WORDS.items()}
    return max(counts, key=counts.get), counts


def page_errors(page) -> list[str]:
    """What a person would see as a failure: exception boxes, traceback-like error alerts, error dialogs."""
    problems = []
    exceptions = page.locator('[data-testid="stException"]')
    for i in range(exceptions.count()):
        problems.append("exception box: " + exceptions.nth(i).inner_text()[:1500])
    alerts = page.locator('[data-testid="stAlertContentError"]')
    for i in range(alerts.count()):
        text = alerts.nth(i).inner_text()
        if TRACEBACK_TEXT.search(text):
            problems.append("error alert: " + text[:1500])
    dialogs = page.locator('[role="dialog"]')
    for i in range(dialogs.count()):
        text = dialogs.nth(i).inner_text()
        if re.search(r"page not found|error", text, re.I):
            problems.append("dialog: " + text[:1500])
    return problems


def page_slug(href: str) -> str:
    """The URL path of a page ("" for the default page)."""
    return urllib.parse.urlsplit(href).path.strip("/")


def with_query(href: str, query: str) -> str:
    return f"{href}{'&' if '?' in href else '?'}{query}"


def language_control(page):
    """The sidebar widget whose label (visible or aria) names the language, or None."""
    sidebar = page.locator('[data-testid="stSidebarUserContent"]')
    containers = sidebar.locator('[data-testid="stElementContainer"]')
    for i in range(containers.count()):
        container = containers.nth(i)
        labels = [container.locator('[data-testid="stWidgetLabel"]').all_inner_texts()]
        labels += [[el.get_attribute("aria-label") or "" for el in container.locator("[aria-label]").all()]]
        if any(LANGUAGE_LABEL.search(text) for group in labels for text in group):
            return container
    return None


def choose_spanish(page, control) -> None:
    """Pick the Spanish option of a radio, segmented control, pills or selectbox language widget."""
    for selector in ('[data-testid="stRadioOption"]', "button", "label"):
        options = control.locator(selector).filter(has_text=SPANISH_OPTION)
        if options.count():
            options.first.click()
            return
    combobox = control.locator('[role="combobox"], input')
    if combobox.count():
        combobox.first.click()
        option = page.locator('[role="option"]').filter(has_text=SPANISH_OPTION)
        option.first.click(timeout=10_000)
        return
    raise AssertionError(f"no Spanish option in the language control: {control.inner_text()!r}")
