"""The crash guard lives in code, not in `.streamlit/config.toml`: with `runner.fastReruns = true` (what
Streamlit Community Cloud forces) every click during training starts a second script thread of the session while
the first may still be stepping the model. Lesson 9's `Run.stepping` and lesson 12's `clf_stepping` locks make
the second thread skip its chunk. Here a real browser clicks, switches the language and the page mid-run on both
lessons, and the server must survive with the run intact: the process alive, no traceback on the page or in the
server's log, and a step count that only goes forward and goes on after the clicks. Needs Debian's Chromium,
like tests/test_browser.py.
"""
from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, urlsplit

import pytest

from scripts.browser import page_errors, running_app, wait_for_app
from conftest import require_browser

pytestmark = pytest.mark.browser
require_browser()

TRAINING = "/train-a-transformer?train_task=copy&train_preset=fast&train_steps=5000"  # lasts past the clicks
CLASSIFIER = "/depth-experiment"
CLICKS = 6  # reruns fired while a chunk trains
WAIT_SECONDS = 120  # for training to show progress on a 2-core machine busy with the rest of the suite
CRASH_TEXT = re.compile(r"Traceback|Segmentation fault|Fatal Python error")


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """The app with fast reruns on, overriding the project's config (as Community Cloud does)."""
    with running_app(tmp_path_factory.mktemp("streamlit"), options={"runner.fastReruns": "true"}) as running:
        yield running


def steps_done(page) -> int:
    """The furthest step count on the page's progress bars, in either language (0 while none is drawn):
    "Step 12 of 5000" / "Paso 12 de 5000" on lesson 9, "1,200 of 6,000 steps" / "1 200 de 6 000" on lesson 12."""
    found = [re.match(r"\D*([\d,  ]+)", text) for text in page.locator('[data-testid="stProgress"]').all_inner_texts()]
    return max((int(re.sub(r"\D", "", m.group(1))) for m in found if m and re.search(r"\d", m.group(1))), default=0)


class Steps:
    """Reads the step count and checks that it never goes backwards."""

    def __init__(self, page):
        self.page, self.highest = page, 0

    def read(self) -> int:
        now = steps_done(self.page)
        if now:  # 0: no bar drawn (another page, or a redraw in progress)
            assert now >= self.highest, f"the step count went back from {self.highest} to {now}"
            self.highest = now
        return now

    def wait_beyond(self, step: int, what: str) -> int:
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            if self.read() > step:
                return self.highest
            time.sleep(0.3)
        alerts = self.page.locator('[data-testid="stAlert"]').all_inner_texts()  # why it stopped, if it says
        raise TimeoutError(f"{what}: still at step {self.highest} after {WAIT_SECONDS} s; alerts: {alerts}")


def assert_survived(app, page) -> None:
    assert app.process.poll() is None, f"the server died:\n{app.log_tail()}"
    assert page_errors(page) == []
    assert not CRASH_TEXT.search(page.locator('[data-testid="stMain"]').inner_text())
    assert not CRASH_TEXT.search(app.log_path.read_text(errors="replace")), app.log_tail()


def switch_language_and_back(page, steps: Steps) -> None:
    page.get_by_text("Español", exact=True).click()
    page.wait_for_timeout(400)
    steps.read()
    page.get_by_text("English", exact=True).click()
    page.wait_for_timeout(400)
    steps.read()


def leave_and_come_back(page, path: str) -> None:
    """Another lesson (the first one in the navigation), then back through the sidebar link."""
    page.locator('[data-testid="stSidebarNavLink"]').first.click()
    page.wait_for_timeout(600)
    page.locator(f'[data-testid="stSidebarNavLink"][href$="{path}"]').click()


def open_lesson(page, url: str, link: str) -> None:
    page.goto(url + link, wait_until="domcontentloaded")
    wait_for_app(page)


def test_training_survives_clicks_language_and_page_switches_with_fast_reruns(app, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        open_lesson(page, app.url, TRAINING)
        page.get_by_role("button", name="Start").click()
        steps = Steps(page)
        started = steps.wait_beyond(0, "training started")
        main = page.locator('[data-testid="stMain"]')
        main.get_by_text("Attention", exact=True).first.click()  # the tools' picker (ui/parts.py) reruns its section
        main.get_by_text("Training is running.", exact=False).first.wait_for()  # the tools wait for the run
        numbers = page.locator('[data-testid="stSidebar"] label').filter(has_text="Show the numbers").first
        for _ in range(CLICKS):  # a sidebar setting: each click is a full rerun
            numbers.click()
            page.wait_for_timeout(150)
            steps.read()
        switch_language_and_back(page, steps)
        leave_and_come_back(page, "/train-a-transformer")
        steps.wait_beyond(max(started, steps.highest), "training went on after the clicks")
        page.get_by_role("button", name="Stop").click()
        wait_for_app(page)
        assert steps.read() >= steps.highest > started
        assert_survived(app, page)
    finally:
        context.close()


def test_classifier_experiment_survives_clicks_language_and_page_switches_with_fast_reruns(app, browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        open_lesson(page, app.url, CLASSIFIER)
        page.get_by_role("button", name="Start").click()
        steps = Steps(page)
        started = steps.wait_beyond(0, "the experiment started")
        epochs = page.get_by_role("slider", name=re.compile("Epochs", re.I))
        for i in range(CLICKS):  # one more or one fewer epoch: a full rerun each, the runs stay the same
            epochs.press("ArrowRight" if i % 2 == 0 else "ArrowLeft")
            page.wait_for_timeout(150)
            steps.read()
        switch_language_and_back(page, steps)
        leave_and_come_back(page, CLASSIFIER)
        steps.wait_beyond(max(started, steps.highest), "the experiment went on after the clicks")
        # The runs are the same ones: a Spanish label of the learning rate, sent back after the switch, once
        # became the slider's first option (10⁻⁴): new runs started and the count went back (63 -> 6 in CI).
        assert parse_qs(urlsplit(page.url).query)["clf_lr"] == ["0.001"]
        page.get_by_role("button", name="Stop").click()
        wait_for_app(page)
        assert_survived(app, page)
    finally:
        context.close()
