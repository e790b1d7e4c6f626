"""Eight browser sessions at once against one server: every page still renders and no session sees another's state.

Two sessions train on lesson 9 (parser and copy), two run the depth experiment of lesson 12 with its smallest
settings, and four walk through every page of the sidebar (two in English, two switched to Spanish by the sidebar
control). Each session first sets its own sidebar seed and at the end must still see that seed (and its own task,
totals and language). Training is deterministic for a seed, so the two training sessions' final numbers must equal
those of the same runs trained here in-process: a leak between sessions, or a lost or repeated chunk, changes them.

The sessions are scripts written as generators that yield what they wait for; a driver polls them. The default
driver polls all eight pages round-robin from one thread with one Playwright and one Chromium (eight contexts);
CONCURRENCY_DRIVER=threads runs each session in its own thread with its own Playwright and Chromium instead.
The whole test has a hard budget; every wait is bounded; a failure saves a screenshot per failing session and
prints the server log tail. Needs Debian's Chromium, like tests/test_browser.py.
"""
from __future__ import annotations

import contextlib
import os
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Generator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from core.evaluation import evaluate
from core.train import PRESETS, Trainer
from scripts.browser import NAV_LINKS, NAV_VIEW_MORE, launch_chromium, main_language, page_errors
from ui.i18n import t
from ui.lessons import PAGES
from ui.training import EVAL_EXAMPLES, EVAL_SEED
from conftest import require_browser

pytestmark = pytest.mark.browser
DRIVER = os.environ.get("CONCURRENCY_DRIVER", "round-robin")  # or "threads"
TEST_BUDGET_SECONDS = 6 * 60  # all eight sessions, from the first page load to the last check
WAIT_SECONDS = 150  # any single wait for a page run (seen: up to 30 s with eight sessions on a loaded machine)
TRAINING_SECONDS = 300  # a whole training run or experiment (seen: up to 125 s), within the budget
POLL_SECONDS = 0.1  # pause between two rounds of polls
QUIET_SECONDS = 1.0  # a page run counts as finished once it has stayed idle this long (a rerun starts late)
VIEWPORT = {"width": 1400, "height": 1000}
TITLES = {"train": re.compile("Train a small Transformer"), "clf": re.compile("encoder classifier")}
WORDS = {"en": {"settings": "Lesson settings", "seed": "Random seed"},
         "es": {"settings": "Ajustes de las lecciones", "seed": "Semilla aleatoria"}}
require_browser()


# ---- polling a page without blocking -----------------------------------------------------------------------

_SNAPSHOT_JS = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  return {
    connection: app ? app.getAttribute('data-test-connection-state') : null,
    script: app ? app.getAttribute('data-test-script-state') : null,
    running: document.querySelector('[data-testid="stStatusWidget"]') !== null,
    elements: document.querySelectorAll('[data-testid="stMain"] [data-testid="stElementContainer"]').length,
    h1: h1 ? h1.innerText.trim() : null,
    path: location.pathname.replace(/\\/+$/, ''),
    progress: Array.from(document.querySelectorAll('[data-testid="stProgress"]')).map(e => e.innerText.trim()),
  };
}"""


@dataclass
class Wait:
    """What a session script waits for: `condition()` returns something truthy once it holds."""
    condition: Callable[[], Any]
    what: str
    seconds: float = WAIT_SECONDS


class Settled:
    """The page's run has finished (connected, not running, something shown) and `also(snapshot)` holds, and both
    have stayed so for QUIET_SECONDS over at least three polls. Returns the snapshot."""

    def __init__(self, page, also: Callable[[dict], bool] = lambda snapshot: True):
        self.page, self.also, self.since, self.polls = page, also, None, 0

    def __call__(self) -> dict | None:
        snap = self.page.evaluate(_SNAPSHOT_JS)
        ok = (snap["connection"] == "CONNECTED" and snap["script"] == "notRunning" and not snap["running"]
              and snap["elements"] > 0 and bool(self.also(snap)))
        now = time.monotonic()
        if not ok:
            self.since, self.polls = None, 0
            return None
        self.since, self.polls = self.since or now, self.polls + 1
        return snap if self.polls >= 3 and now - self.since >= QUIET_SECONDS else None


def settled(page, what: str, also: Callable[[dict], bool] = lambda snapshot: True) -> Wait:
    return Wait(Settled(page, also), what)


def step_counts(text: str) -> tuple[int, int] | None:
    """(done, total) from a progress text: "Step 12 of 400", "1,200 of 6,000 steps", "Paso 3 de 120"..."""
    numbers = [int(n.replace(",", "").replace("\u00a0", "")) for n in re.findall(r"\d[\d,\u00a0]*", text)]
    return (numbers[0], numbers[1]) if len(numbers) >= 2 else None


def progress_at(page, reached: Callable[[int, int], bool]) -> Callable[[], tuple[int, int] | None]:
    def condition():
        shown = page.evaluate(_SNAPSHOT_JS)["progress"]
        counts = step_counts(shown[0]) if shown else None
        return counts if counts and reached(*counts) else None
    return condition


# ---- one session -------------------------------------------------------------------------------------------

@dataclass
class Session:
    name: str
    script: Callable  # script(session, page, app) -> generator of Wait; receives each condition's value
    shots: Path
    page: Any = None
    problems: list[str] = field(default_factory=list)
    results: dict = field(default_factory=dict)
    generator: Generator | None = None
    current: Wait | None = None
    wait_until: float = 0.0
    last_error: str = ""
    finished_after: float | None = None
    slowest_wait: tuple[float, str] = (0.0, "")
    wait_started: float = 0.0

    def problem(self, message: str) -> None:
        """Record a finding with a screenshot of the page as it is now."""
        shot = self.shots / f"{self.name}-{len(self.problems):02d}.png"
        with contextlib.suppress(Exception):
            self.page.screenshot(path=str(shot), full_page=True, timeout=15_000)
            message += f"\n  screenshot: {shot}"
            print(f"[{self.name}] screenshot: {shot}")
        with contextlib.suppress(Exception):
            message += f"\n  url: {self.page.url}"
        self.problems.append(message)

    def _next(self, value: Any) -> None:
        now = time.monotonic()
        if self.current is not None and now - self.wait_started > self.slowest_wait[0]:
            self.slowest_wait = (now - self.wait_started, self.current.what)
        self.current = self.generator.send(value)
        self.wait_started, self.wait_until, self.last_error = now, now + self.current.seconds, ""

    def poll(self, started: float, deadline: float, app) -> bool:
        """Advance the script if what it waits for holds; True once the session is over (done or failed)."""
        from playwright.sync_api import Error as PlaywrightError

        try:
            if self.generator is None:
                self.generator = self.script(self, self.page, app)
                self._next(None)
            try:
                value = self.current.condition()
            except PlaywrightError as error:  # an element replaced by a rerun: not yet
                value, self.last_error = None, str(error).splitlines()[0]
            now = time.monotonic()
            if value:
                self._next(value)
            elif now > deadline:
                self.problem(f"out of the test's budget ({TEST_BUDGET_SECONDS} s) while waiting for: "
                             f"{self.current.what} {self.last_error}")
                return self._close(started)
            elif now > self.wait_until:
                self.problem(f"timed out after {self.current.seconds:.0f} s waiting for: {self.current.what} "
                             f"{self.last_error}")
                return self._close(started)
            return False
        except StopIteration:
            return self._close(started)
        except Exception as error:  # noqa: BLE001 - a failed step is a finding of this session, not of the others
            waiting = f" (at: {self.current.what})" if self.current else ""
            self.problem(f"{type(error).__name__}: {str(error)[:1500]}{waiting}")
            return self._close(started)

    def _close(self, started: float) -> bool:
        self.finished_after = time.monotonic() - started
        if self.generator is not None:
            self.generator.close()
        return True


# ---- steps the scripts share ---------------------------------------------------------------------------------

def enter(page, app, title: re.Pattern | None = None):
    """Open "/" (never a deep link: a fresh server's first deep link shows streamlit#9992's "page not found"
    dialog over the page, which makes it inert) and wait for the first run."""
    page.goto(app.url + "/", wait_until="domcontentloaded", timeout=60_000)
    yield settled(page, "the first page run", lambda s: s["h1"] and (title is None or title.search(s["h1"])))


def nav_link(page, path: str):
    """The sidebar link to `path` ("" is the default page), after expanding "View more" when it hides it."""
    link = page.locator(f'{NAV_LINKS}[href$="/{path}"]')  # the default page's link ends with "/"
    if not link.count():
        more = page.locator(NAV_VIEW_MORE)
        if more.count() and re.search(r"more", more.first.inner_text(), re.IGNORECASE):
            more.first.click()
    return link.first


def go(page, path: str, what: str, title: re.Pattern | None = None):
    """Click the sidebar link to `path` and wait for that page's run to finish. Returns the snapshot."""
    before = page.evaluate(_SNAPSHOT_JS)
    nav_link(page, path).click()
    moved = before["path"] != ("/" + path if path else "")

    def arrived(snap: dict) -> bool:
        return (snap["path"] == ("/" + path if path else "") and bool(snap["h1"])
                and (not moved or snap["h1"] != before["h1"]) and (title is None or title.search(snap["h1"])))
    return (yield settled(page, what, arrived))


def set_seed(page, seed: int, lang: str):
    """The sidebar's lesson settings -> seed; waits until the run after it has finished."""
    sidebar = page.locator('[data-testid="stSidebarUserContent"]')
    box = sidebar.get_by_role("spinbutton", name=WORDS[lang]["seed"])
    if not box.is_visible():
        sidebar.get_by_text(WORDS[lang]["settings"]).click()
    box.fill(str(seed))
    box.press("Enter")
    yield settled(page, f"the run after setting seed {seed}", lambda s: url_seed(page) == str(seed))


def url_seed(page) -> str | None:
    """The seed in the page's address (the app mirrors the shared settings to the URL)."""
    return urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query).get("seed", [None])[0]


def seed_shown(page, lang: str) -> str:
    sidebar = page.locator('[data-testid="stSidebarUserContent"]')
    box = sidebar.get_by_role("spinbutton", name=WORDS[lang]["seed"])
    if not box.is_visible():
        sidebar.get_by_text(WORDS[lang]["settings"]).click()
    return box.input_value(timeout=15_000)


def check_own_seed(session: Session, page, seed: int, lang: str) -> None:
    shown = seed_shown(page, lang)
    if shown != str(seed) or url_seed(page) != str(seed):
        session.problem(f"isolation: the session set seed {seed} but now sees {shown!r} (url {page.url})")


def metric(page, name: str) -> str:
    box = page.locator('[data-testid="stMetric"]').filter(has_text=name)
    return box.locator('[data-testid="stMetricValue"]').inner_text(timeout=15_000).strip()


# ---- the four kinds of session ---------------------------------------------------------------------------

def walker(lang: str, seed: int):
    """Every page of the sidebar in turn, in `lang`; each must finish with a title, no error, in that language."""
    def script(session: Session, page, app):
        yield from enter(page, app)
        if lang == "es":
            english = page.evaluate(_SNAPSHOT_JS)["h1"]
            page.locator('[data-testid="stSidebarUserContent"]').get_by_text("Español", exact=True).click()
            yield settled(page, "the switch to Spanish", lambda s: s["h1"] and s["h1"] != english)
        yield from set_seed(page, seed, lang)
        timings = []
        for _, file, _, _, path in PAGES:
            started = time.monotonic()
            snap = yield from go(page, path, f"the run of {file}")
            timings.append((time.monotonic() - started, file))
            found = page_errors(page)
            spoken, counts = main_language(page)
            if spoken != lang:
                found.append(f"the page reads as {spoken!r}, expected {lang!r} (common words: {counts})")
            if not snap["h1"]:
                found.append("no title (h1)")
            if found:
                session.problem(f"{file}:\n  " + "\n  ".join(found))
        session.results["pages"] = len(timings)
        session.results["slowest_page"] = max(timings)
        check_own_seed(session, page, seed, lang)
    return script


def schedule_text(task: str, steps: int) -> str:
    """The training page's schedule caption for the fast preset of `task` trained for `steps` steps."""
    preset = PRESETS[task]["fast"].train
    return t("train.schedule", "en", warmup=min(preset.warmup, steps // 4), lr=preset.lr, steps=steps)


def trainer(task: str, seed: int, steps: int):
    """Lesson 9: pick `task` (its fast preset), set the training steps, Start, wait for the end, read the numbers.

    Every action waits for the server's answer to it (the URL's seed, the schedule caption): the page counts as
    idle for a moment after a click, before the run the click asked for starts."""
    def script(session: Session, page, app):
        yield from enter(page, app)
        yield from set_seed(page, seed, "en")
        yield from go(page, "train-a-transformer", "the training page", TITLES["train"])
        main = page.locator('[data-testid="stMain"]')
        main.get_by_role("combobox", name="Task").click()
        page.get_by_role("option", name=task, exact=True).click()
        preset_steps = PRESETS[task]["fast"].train.steps
        yield settled(page, f"{task}'s preset in the controls",
                      lambda s: main.get_by_text(schedule_text(task, preset_steps)).count())
        slider = main.get_by_role("slider", name="Training steps")
        slider.focus()
        slider.press("Home")  # the minimum, 20, then steps of 10
        for _ in range((steps - 20) // 10):
            slider.press("ArrowRight")
        yield settled(page, f"{steps} training steps in the controls",
                      lambda s: main.get_by_text(schedule_text(task, steps)).count())
        main.get_by_role("button", name="Start").click()
        _, total = yield Wait(progress_at(page, lambda done, total: done > 0), "training to start")
        if total != steps:
            session.problem(f"isolation: the progress counts to {total} steps, this session asked for {steps}")
        yield Wait(progress_at(page, lambda done, total: done == total), f"{steps} training steps", TRAINING_SECONDS)
        yield settled(page, "the run after training")
        if errors := page_errors(page):
            session.problem("after training:\n  " + "\n  ".join(errors))
        session.results.update(greedy=metric(page, "Greedy exact match"), loss=metric(page, "Training loss"),
                               forced=metric(page, "Teacher-forced exact match"),
                               input=page.get_by_role("textbox", name="Your input").input_value(timeout=15_000))
        check_own_seed(session, page, seed, "en")
    return script


def depth_experiment(seed: int, remove: tuple[int, ...], epochs: int):
    """Lesson 12 with few runs, 10 steps per epoch: Start, wait until every run is done."""
    depths = [n for n in (1, 2, 4) if n not in remove]  # the page's default depths are 1, 2, 4
    total = len(depths) * epochs * 10

    def script(session: Session, page, app):
        yield from enter(page, app)
        yield from set_seed(page, seed, "en")
        yield from go(page, "depth-experiment", "the depth experiment page", TITLES["clf"])
        main = page.locator('[data-testid="stMain"]')
        left = [1, 2, 4]
        for n in remove:
            main.get_by_role("button", name=f"Remove {n}").click()
            left.remove(n)
            yield Wait(progress_at(page, lambda done, shown: shown == len(left) * 10 * 50),
                       f"the page's answer to removing depth {n}")  # 10 epochs of 50 steps by default
        for name, presses in (("Epochs", epochs - 1), ("Steps per epoch", 0)):
            slider = main.get_by_role("slider", name=name)
            slider.focus()
            slider.press("Home")  # 1 epoch, 10 steps per epoch
            for _ in range(presses):
                slider.press("ArrowRight")
        yield Wait(progress_at(page, lambda done, shown: done == 0 and shown == total),
                   f"the page's answer to the settings: 0 of {total} steps")
        yield settled(page, "the run after the settings")
        main.get_by_role("button", name="Start").click()
        counts = yield Wait(progress_at(page, lambda done, total: done == total > 0), f"{total} classifier steps",
                            TRAINING_SECONDS)
        if counts != (total, total):
            session.problem(f"isolation: the progress counts to {counts[1]} steps, this session asked for {total}")
        yield settled(page, "the run after the experiment")
        if errors := page_errors(page):
            session.problem("after the experiment:\n  " + "\n  ".join(errors))
        if not main.locator('[data-testid="stAlertContentSuccess"]').count():
            session.problem("no 'Done' message after the experiment")
        session.results["progress"] = page.evaluate(_SNAPSHOT_JS)["progress"]
        check_own_seed(session, page, seed, "en")
    return script


# ---- drivers -------------------------------------------------------------------------------------------------

def new_page(browser):
    context = browser.new_context(viewport=VIEWPORT, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)  # one click or read; a page run is waited for by polling
    return context, page


def drive_round_robin(sessions: list[Session], app, started: float, deadline: float) -> None:
    """One thread, one Playwright, one Chromium, a context per session; each round polls every open session."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            contexts = []
            for session in sessions:
                context, session.page = new_page(browser)
                contexts.append(context)
            pending = list(sessions)
            while pending:
                pending = [s for s in pending if not s.poll(started, deadline, app)]
                time.sleep(POLL_SECONDS)
            for context in contexts:
                with contextlib.suppress(Exception):
                    context.close()
        finally:
            browser.close()


def drive_threads(sessions: list[Session], app, started: float, deadline: float) -> None:
    """A thread per session, each with its own Playwright and Chromium (the sync API is not thread-safe)."""
    from playwright.sync_api import sync_playwright

    def run(session: Session) -> None:
        try:
            with sync_playwright() as playwright:
                browser = launch_chromium(playwright)
                try:
                    _, session.page = new_page(browser)
                    while not session.poll(started, deadline, app):
                        time.sleep(POLL_SECONDS)
                finally:
                    browser.close()
        except Exception as error:  # noqa: BLE001 - reported with the session's other findings
            session.problems.append(f"driver thread: {type(error).__name__}: {error}")

    threads = [threading.Thread(target=run, args=(s,), name=s.name, daemon=True) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:  # a thread stuck past the budget is bounded by Playwright's 30 s call timeout
        thread.join(timeout=max(1.0, deadline - time.monotonic()) + 90)
        if thread.is_alive():
            next(s for s in sessions if s.name == thread.name).problems.append("its thread did not end in time")


class PeakRSS:
    """Samples the resident memory of the server process and its children every 0.5 s; `peak` in MiB."""

    def __init__(self, pid: int):
        self.pid, self.peak, self.stop = pid, 0.0, threading.Event()
        self.thread = threading.Thread(target=self._sample, daemon=True)

    def _tree(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
        tree, todo = [], [self.pid]
        while todo:
            pid = todo.pop()
            tree.append(pid)
            todo += children.get(pid, [])
        return tree

    def now(self) -> float:
        total = 0
        for pid in self._tree():
            with contextlib.suppress(OSError):
                match = re.search(r"VmRSS:\s+(\d+) kB", Path(f"/proc/{pid}/status").read_text())
                total += int(match.group(1)) if match else 0
        return total / 1024

    def cpu_seconds(self) -> float:
        """User plus system CPU time of the server process so far."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def _sample(self) -> None:
        while not self.stop.wait(0.5):
            self.peak = max(self.peak, self.now())

    def __enter__(self):
        self.peak = self.now()
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join(timeout=5)
        self.peak = max(self.peak, self.now())


def reference_run(task: str, seed: int, steps: int) -> dict[str, str]:
    """The page's run (fast preset, `steps`, `seed`) trained here in one go, formatted as the page does."""
    preset = PRESETS[task]["fast"].train
    run = Trainer.from_preset(task, "fast", seed=seed, steps=steps, warmup=min(preset.warmup, steps // 4))
    for _ in run.steps():
        pass
    result = evaluate(run.model, run.task, n=EVAL_EXAMPLES, seed=EVAL_SEED)
    return {"greedy": f"{result.exact_match:.1%}", "forced": f"{result.teacher_forced_exact_match:.1%}",
            "loss": f"{np.mean([r.loss for r in run.history[-20:]]):.4f}"}


# ---- the test ------------------------------------------------------------------------------------------------

TRAINERS = {"train-parser": ("parser", 55, 120), "train-copy": ("copy", 66, 200)}  # task, seed, training steps


def test_eight_sessions_at_once_stay_apart_and_every_page_renders(app, tmp_path_factory):
    shots = tmp_path_factory.mktemp("concurrency-shots")
    sessions = [Session(name, script, shots) for name, script in (
        ("walk-en-11", walker("en", 11)), ("walk-en-22", walker("en", 22)),
        ("walk-es-33", walker("es", 33)), ("walk-es-44", walker("es", 44)),
        *((name, trainer(*spec)) for name, spec in TRAINERS.items()),
        ("depth-77", depth_experiment(77, remove=(4,), epochs=2)),
        ("depth-88", depth_experiment(88, remove=(2, 4), epochs=3)))]
    drive = {"round-robin": drive_round_robin, "threads": drive_threads}[DRIVER]
    started = time.monotonic()
    with PeakRSS(app.process.pid) as memory:
        idle_mib, cpu_before = memory.peak, memory.cpu_seconds()
        drive(sessions, app, started, started + TEST_BUDGET_SECONDS)
        server_cpu = memory.cpu_seconds() - cpu_before
    elapsed = time.monotonic() - started

    problems = [f"[{s.name}] {p}" for s in sessions for p in s.problems]
    for name, spec in TRAINERS.items():
        shown = next(s for s in sessions if s.name == name).results
        if "greedy" in shown:
            expected = reference_run(*spec)
            for key, value in expected.items():
                if shown[key] != value:
                    problems.append(f"[{name}] isolation: {key} shows {shown[key]}, the same run in-process gives "
                                    f"{value}")
    pattern = {"train-parser": r"[xyz]=\d[-+*/]\d", "train-copy": r"\d+( \d+){19}"}
    for name, regex in pattern.items():
        shown = next(s for s in sessions if s.name == name).results.get("input")
        if shown is not None and not re.fullmatch(regex, shown):
            problems.append(f"[{name}] isolation: its input {shown!r} is not one of its task's")
    log = app.log_path.read_text(errors="replace")
    if "Traceback" in log:
        problems.append(f"the server log has a traceback ({app.log_path})")

    print(f"\n{DRIVER}: 8 sessions in {elapsed:.1f} s; server RSS {idle_mib:.0f} MiB before, "
          f"peak {memory.peak:.0f} MiB; server CPU {server_cpu:.0f} s")
    for s in sessions:
        after = f"{s.finished_after:.1f} s" if s.finished_after is not None else "-"
        print(f"  {s.name}: ended after {after}, slowest wait {s.slowest_wait[0]:.1f} s ({s.slowest_wait[1]}), "
              f"{ {k: v for k, v in s.results.items() if k != 'input'} }")
    if problems:
        pytest.fail("\n\n".join(problems) + f"\n\nserver log tail ({app.log_path}):\n{app.log_tail()}",
                    pytrace=False)
