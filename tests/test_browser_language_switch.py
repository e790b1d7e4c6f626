"""The language switches in Chromium between control changes, on every lesson (issue: a switch followed by any
click showed a traceback on five lessons, because the browser sent back the old language's labels).

On every lesson: switch the language in the sidebar, flip "show the numbers", pick another mask in the lesson
settings, move up to two of the lesson's own selection controls (radios, selectboxes), then switch back and
flip again. After every step: no exception box, no traceback in the server log; and a language switch alone
leaves every value of the link (the learner's settings, as codes) as it was.
"""
from __future__ import annotations

import re
import time
import urllib.parse

import pytest

from conftest import require_browser
from scripts.browser import QUIET_JS, open_app, page_errors, settle_after
from ui.lessons import PAGES

pytestmark = pytest.mark.browser
LESSON_CONTROLS = 2  # the lesson's own selection controls moved per lesson
BUDGET_SECONDS = 12 * 60
LANGUAGE_OPTION = {"en": "English", "es": "Español"}
SHOW_NUMBERS = re.compile(r"^(Show the numbers|Mostrar los números)$")
LESSON_SETTINGS = re.compile(r"Lesson settings|Ajustes de las lecciones")
MASK = re.compile(r"^(Mask|Máscara)$")

require_browser()


def link(page) -> dict[str, str]:
    """The view's parameters (the language and the lit scene aside: a switch changes the first, the second
    follows the settings)."""
    query = urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query)
    return {name: values[-1] for name, values in query.items() if name not in ("lang", "scene")}


def settle(page, problems: list[str], step: str, action) -> None:
    """Do `action`, then wait for the run it starts to end and the page to go quiet."""
    try:
        settle_after(page, action)
    except TimeoutError as error:
        problems.append(f"{step}: did not finish ({error})")
    problems.extend(f"{step}: {found}" for found in page_errors(page))


def sidebar(page):
    return page.locator('[data-testid="stSidebarUserContent"]')


def switch_language(page, lang: str) -> None:
    sidebar(page).locator('[data-testid="stRadio"] label').filter(has_text=LANGUAGE_OPTION[lang]).first.click()


def flip_show_numbers(page) -> None:
    sidebar(page).locator("label").filter(has_text=SHOW_NUMBERS).first.click()


def pick_other(page, selectbox) -> None:
    """Pick another option of a selectbox with the keyboard, as a person using it would (paced: the list takes a
    moment to open, and a key pressed before it has is lost)."""
    combobox = selectbox.locator('[role="combobox"]').first
    shown = combobox.input_value()
    for keys in (("ArrowDown", "ArrowDown", "Enter"), ("ArrowDown", "ArrowUp", "Enter")):  # the last option: go up
        combobox.click()
        page.wait_for_timeout(300)
        for key in keys:
            page.keyboard.press(key)
            page.wait_for_timeout(150)
        if combobox.input_value() != shown:
            return


def pick_mask(page) -> None:
    expander = sidebar(page).locator('[data-testid="stExpander"]').filter(has_text=LESSON_SETTINGS).first
    mask = expander.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]').filter(has_text=MASK)).first
    if not mask.is_visible():
        expander.locator("summary").first.click()
        mask.wait_for(state="visible", timeout=10_000)
    pick_other(page, mask)


def lesson_controls(page) -> list:
    """Up to LESSON_CONTROLS visible radios and selectboxes of the main area (not the scene pills)."""
    main = page.locator('[data-testid="stMain"]')
    found = []
    for selector in ('[data-testid="stRadio"]', '[data-testid="stSelectbox"]'):
        group = main.locator(selector)
        found += [group.nth(i) for i in range(group.count()) if group.nth(i).is_visible()]
    return found[:LESSON_CONTROLS]


def move(page, control) -> None:
    if control.get_attribute("data-testid") == "stRadio":
        unchecked = control.locator('label:has(input[type="radio"]:not(:checked))')
        if unchecked.count():
            unchecked.last.click()
    else:
        pick_other(page, control)


@pytest.fixture
def page(app, browser):
    page = open_app(browser, app.url)  # through "/" first, then a fresh session per lesson
    page.add_init_script(QUIET_JS)  # each lesson's page knows when a run has ended and the drawing with it
    yield page
    page.close()


def test_switching_the_language_between_changes_keeps_every_lesson_whole(app, page):
    deadline, problems = time.monotonic() + BUDGET_SECONDS, []
    for _, _, _, _, url_path in PAGES:
        if time.monotonic() > deadline:
            problems.append(f"out of time ({BUDGET_SECONDS} s) before /{url_path}")
            break
        settle(page, problems, f"/{url_path} opened",
               lambda: page.goto(f"{app.url}/{url_path}", wait_until="domcontentloaded"))
        for lang in ("es", "en"):
            before = link(page)
            settle(page, problems, f"/{url_path} switched to {lang}", lambda: switch_language(page, lang))
            if link(page) != before:
                problems.append(f"/{url_path}: switching to {lang} changed the link: {before} -> {link(page)}")
            settle(page, problems, f"/{url_path} ({lang}) show the numbers", lambda: flip_show_numbers(page))
            if lang == "es":  # the first pass also moves the mask and the lesson's own choices
                settle(page, problems, f"/{url_path} ({lang}) mask", lambda: pick_mask(page))
                for k in range(len(lesson_controls(page))):
                    controls = lesson_controls(page)
                    if k < len(controls):
                        settle(page, problems, f"/{url_path} ({lang}) lesson control {k + 1}",
                               lambda: move(page, controls[k]))
    log = app.log_path.read_text(errors="replace")
    if "Traceback" in log:
        problems.append(f"the server log has a traceback:\n{log[-3000:]}")
    assert not problems, "\n".join(problems)
