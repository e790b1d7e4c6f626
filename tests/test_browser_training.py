"""The training page in a real browser: sessions that train at the same time stay apart, and leaving the page
or switching the language mid-training loses nothing.

Training is deterministic for a seed (no dropout in the fast presets), so each session's final held-out
accuracy must equal that of the same run trained here in-process: any leak between sessions, or a lost or
repeated chunk, would change it. Needs Debian's Chromium, like tests/test_browser.py.
"""
from __future__ import annotations

import re
import time

import pytest

from core.evaluation import evaluate
from core.train import PRESETS, Trainer
from scripts.browser import page_errors, wait_for_app
from ui.i18n import number
from ui.training import CHUNK_SECONDS, EVAL_EXAMPLES, EVAL_SEED
from conftest import require_browser

pytestmark = pytest.mark.browser
URL_PATH = "/train-a-transformer"
TRAINING_BUDGET_SECONDS = 240  # a fast preset finishes in well under a minute even with two sessions at once
require_browser()


def new_page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    return context, page


def open_training(page, app, task: str | None = None) -> None:
    """Enter through "/" and the sidebar link: a fresh server's first deep link shows Streamlit's "page not
    found" dialog over the right page (streamlit/streamlit#9992), which would make the page inert."""
    page.goto(app.url + "/", wait_until="domcontentloaded")
    wait_for_app(page)
    nav_link(page).click()
    page.get_by_role("heading", level=1, name=re.compile("Train a small Transformer")).wait_for()
    wait_for_app(page)
    if task:
        page.get_by_role("combobox", name="Task").click()
        page.get_by_role("option", name=task, exact=True).click()
        wait_for_app(page)


def nav_link(page):
    return page.locator(f'[data-testid="stSidebarNavLink"][href$="{URL_PATH}"]')


def progress(page) -> tuple[int, int]:
    """(step, steps) from the progress bar's text, in either language ("Step 12 of 400", "Paso 12 de 400");
    (0, 0) while none is drawn. Of several bars (an outdated one may linger while a rerun draws its
    replacement) the one furthest on counts."""
    found = [re.search(r"(\d+)\D+(\d+)", text) for text in
             page.locator('[data-testid="stProgress"]').all_inner_texts()]
    return max(((int(m.group(1)), int(m.group(2))) for m in found if m), default=(0, 0))


def wait_until(condition, what: str, timeout: float = TRAINING_BUDGET_SECONDS):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.5)
    raise TimeoutError(f"{what} after {timeout:.0f} s")


def finished(page) -> bool:
    step, steps = progress(page)
    return steps > 0 and step == steps


def greedy_metric(page) -> str:
    """The "Greedy exact match" metric's value as shown (e.g. "97.5%")."""
    metric = page.locator('[data-testid="stMetric"]').filter(
        has_text=re.compile(r"Greedy exact match|Coincidencia exacta \(decodificación voraz\)"))
    return metric.locator('[data-testid="stMetricValue"]').inner_text()


def reference_accuracy(task: str, lang: str = "en") -> str:
    """The same run, trained here in one go with the page's defaults (seed 0), formatted as the page does in
    `lang`."""
    preset = PRESETS[task]["fast"].train
    trainer = Trainer.from_preset(task, "fast", seed=0, warmup=min(preset.warmup, preset.steps // 4))
    for _ in trainer.steps():
        pass
    return number(evaluate(trainer.model, trainer.task, n=EVAL_EXAMPLES, seed=EVAL_SEED).exact_match, ".1%", lang)


def test_two_sessions_training_at_once_do_not_affect_each_other(app, browser):
    (context_a, parser_page), (context_b, copy_page) = new_page(browser), new_page(browser)
    try:
        open_training(parser_page, app, task="parser")
        open_training(copy_page, app)
        for page in (parser_page, copy_page):
            page.get_by_role("button", name="Start").click()
        wait_until(lambda: progress(parser_page)[0] > 0 and progress(copy_page)[0] > 0, "both sessions started")
        assert progress(parser_page)[1] == PRESETS["parser"]["fast"].train.steps
        assert progress(copy_page)[1] == PRESETS["copy"]["fast"].train.steps
        wait_until(lambda: finished(parser_page) and finished(copy_page), "both runs finished")
        for page in (parser_page, copy_page):
            wait_for_app(page)
            assert page_errors(page) == []
        assert greedy_metric(parser_page) == reference_accuracy("parser")
        assert greedy_metric(copy_page) == reference_accuracy("copy")
        parser_input = parser_page.get_by_role("textbox", name="Your input").input_value()
        copy_input = copy_page.get_by_role("textbox", name="Your input").input_value()
        assert re.fullmatch(r"[xyz]=\d[-+*/]\d", parser_input), parser_input
        assert re.fullmatch(r"\d+( \d+){19}", copy_input), copy_input
    finally:
        context_a.close()
        context_b.close()
    assert "Traceback" not in app.log_path.read_text(errors="replace")


def test_page_switch_and_language_change_mid_training_lose_nothing(app, browser):
    context, page = new_page(browser)
    try:
        open_training(page, app)
        page.get_by_role("button", name="Start").click()
        before = wait_until(lambda: progress(page)[0] >= 20 and progress(page)[0], "20 steps")
        page.locator('[data-testid="stSidebarNavLink"]').first.click()  # lesson 1
        page.get_by_role("heading", level=1).first.wait_for()
        wait_for_app(page)
        assert page.locator('[data-testid="stProgress"]').count() == 0
        nav_link(page).click()
        resumed = wait_until(lambda: progress(page)[0] > before and progress(page)[0], "training resumed")
        assert resumed > before
        page.get_by_text("Español", exact=True).click()
        page.get_by_role("heading", name="Entrena un Transformer pequeño y ábrelo por dentro").wait_for()
        spanish = page.locator('[data-testid="stProgress"]').filter(has_text=re.compile(r"Paso \d+ de \d+"))
        wait_until(lambda: spanish.count() > 0, "a progress bar in Spanish")
        assert progress(page)[0] >= resumed
        wait_until(lambda: finished(page), "the run finished")
        wait_for_app(page)
        assert page_errors(page) == []
        assert greedy_metric(page) == reference_accuracy("copy", "es")
    finally:
        context.close()


def test_the_live_section_redraws_while_it_trains(app, browser):
    """Each chunk's progress reaches the browser while the next chunk trains. (When the live section trained
    first and drew after, Streamlit dropped most redraws: the next run, asked for by the section's timer while
    the chunk trained, started before the drawing was sent, and lesson 9 stood still for seconds at a time.)
    A chunk trains CHUNK_SECONDS whatever the machine's speed, so a run of T seconds has about T / CHUNK_SECONDS
    of them; most must be seen."""
    context, page = new_page(browser)
    try:
        open_training(page, app)
        page.get_by_role("button", name="Start").click()
        wait_until(lambda: progress(page)[1] > 0, "a progress bar")
        began, seen = time.monotonic(), set()
        while not finished(page) and time.monotonic() < began + TRAINING_BUDGET_SECONDS:
            seen.add(progress(page)[0])
            time.sleep(0.05)
        chunks = (time.monotonic() - began) / CHUNK_SECONDS
        assert finished(page)
        shown = sorted(seen - {PRESETS["copy"]["fast"].train.steps})
        assert len(shown) >= 0.7 * chunks, (len(shown), round(chunks, 1), shown)
    finally:
        context.close()
