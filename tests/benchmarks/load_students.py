"""The learners of tests/benchmarks/bench_load.py: what each one does, and the watch for another's state.

A `Student` drives one `load_client.Tab` with a role (see bench_load.py's docstring): a trainer on lesson 9, a
reader of lesson 13, or a wanderer through the lessons and their main controls (those bench_browser.py measures,
`INTERACTIONS`, in the main area). Each opens the app with a link of its own (`seed=90000+i`) and a lesson-13
reader types a sentence with its own marker (`learner017`); `Watch` looks for every seed and marker of the class
in every message a session receives.
"""
from __future__ import annotations

import asyncio
import random
import re
import time

from bench_browser import INTERACTIONS
from load_client import Tab, change, text_state

from ui.i18n import lookup
from ui.lessons import PAGES

TRAINING, REAL = "train-a-transformer", "real-pretrained-model"
URLS = {file: url for _, file, _, _, url in PAGES}
MAIN_CONTROLS = {URLS[file]: [entry[1] for entry in entries if entry[0] == "main" and len(entry) == 2]
                 for file, entries in INTERACTIONS.items() if file in URLS}
TRAINER_CONTROLS = ("Task", "Training steps")
SEED0 = 90000
SEED_RE, MARKER_RE = re.compile(rb"seed=(9\d{4})(?!\d)"), re.compile(rb"learner(\d{3})(?!\d)")
BUSY = lookup("train.refused_busy", "en").split("{")[0]  # the sentence before its first number


class Watch:
    """Per session: which seeds and markers of the class its messages carried (own and others')."""

    def __init__(self, n: int) -> None:
        self.own_seen, self.leaks = [False] * n, []

    def for_session(self, i: int):
        own_seed, own_marker = str(SEED0 + i).encode(), f"{i:03d}".encode()

        def watch(data: bytes) -> None:
            for pattern, own in ((SEED_RE, own_seed), (MARKER_RE, own_marker)):
                for found in set(pattern.findall(data)):
                    if found == own:
                        self.own_seen[i] = True
                    elif len(self.leaks) < 20:
                        self.leaks.append(f"session {i} received {pattern.pattern[:7]!r}...{found.decode()}")
        return watch


class Student:
    def __init__(self, i: int, url: str, role: str, rng: random.Random, watch: Watch, args) -> None:
        self.i, self.role, self.rng, self.args = i, role, rng, args
        self.tab = Tab(url, watch.for_session(i))
        self.times: list[tuple[str, float]] = []
        self.busy = self.starts = 0
        self.trained_since: float | None = None
        self.retry_at = 0.0  # after a refusal, the learner tries again in about half a minute

    async def act(self, kind: str, **rerun) -> None:
        self.times.append((kind, await self.tab.rerun(**rerun)))

    async def open_lesson(self, url: str) -> None:
        if url in self.tab.pages:
            await self.act("lesson", page_hash=self.tab.pages[url])

    async def move(self, labels) -> bool:
        present = [self.tab.widgets[label] for label in labels if label in self.tab.widgets]
        present = [w for w in present if not getattr(w.element, "disabled", False)]
        if not present:
            return False
        widget = self.rng.choice(present)
        state = change(widget, self.rng)
        if state is None:
            return False
        await self.act("control", states=[state], fragment=widget.fragment)
        return True

    async def click(self, label: str) -> bool:
        widget = self.tab.widgets.get(label)
        if widget is None or widget.kind != "button" or widget.element.disabled:
            return False
        await self.act("click", states=[change(widget, self.rng)], fragment=widget.fragment)
        return True

    def sentence(self) -> str:
        verb = self.rng.choice(("read", "crossed", "left", "opened"))
        return f"The learner{self.i:03d} {verb} the lesson because it was late"

    async def type_sentence(self) -> None:
        widget = self.tab.widgets.get("Sentence")
        if widget is not None:
            await self.act("type", states=[text_state(widget, self.sentence())], fragment=widget.fragment)

    async def run(self, until: float) -> None:
        first = {"trainer": TRAINING, "real": REAL}.get(self.role) or self.rng.choice(list(MAIN_CONTROLS))
        self.times.append(("open", await self.tab.open(first, f"seed={SEED0 + self.i}")))
        if self.role == "real":
            await self.type_sentence()
        step = {"trainer": self.trainer_step, "real": self.reader_step}.get(self.role, self.wanderer_step)
        while time.monotonic() < until and not self.tab.closed:
            await asyncio.sleep(self.rng.uniform(*self.args.think))
            if time.monotonic() < until:
                await step()
        await self.tab.close()

    async def wanderer_step(self) -> None:
        lesson = next((url for url, h in self.tab.pages.items() if h == self.tab.page_hash), "")
        if self.rng.random() < 1 / 3 or not await self.move(MAIN_CONTROLS.get(lesson, ())):
            await self.open_lesson(self.rng.choice([url for url in MAIN_CONTROLS if url != lesson]))

    async def reader_step(self) -> None:
        if self.rng.random() < 0.1:
            await self.type_sentence()
        else:
            await self.move(MAIN_CONTROLS[REAL])

    async def trainer_step(self) -> None:
        stop = self.tab.widgets.get("Stop")
        if stop is not None and not stop.element.disabled:  # training: watch it for a while, then stop
            if time.monotonic() - (self.trained_since or 0) > self.rng.uniform(10, 25):
                await self.click("Stop")
            return
        if self.rng.random() < 0.3 and await self.click("Reset"):
            return
        if self.rng.random() < 0.3 and await self.move(TRAINER_CONTROLS) or time.monotonic() < self.retry_at:
            return
        alerts = len(self.tab.alerts)
        if await self.click("Start") or await self.click("Continue"):
            self.starts += 1
            self.trained_since = time.monotonic()
            if any(a.startswith(BUSY) for a in self.tab.alerts[alerts:]):
                self.busy += 1
                self.retry_at = time.monotonic() + self.rng.uniform(20, 40)
        else:
            await self.click("Reset")


def roles(n: int, args) -> list[str]:
    trainers, real = round(n * args.trainers), round(n * args.real)
    return ["trainer"] * trainers + ["real"] * real + ["wanderer"] * (n - trainers - real)
