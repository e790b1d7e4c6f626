"""Keyboard access in headless Chromium: every control of a lesson is reached with Tab, the charts have an
accessible name, and presentation mode's arrow keys never steal a key from a control that uses it.

Lessons checked: the welcome page (links), 2 (text input, toggle, pills, select box, select slider, popovers),
9 (sliders, radios, select boxes, toggles, buttons, an expander) and 10 (sliders, a number input, a data editor,
radios). Needs Debian's Chromium and playwright (see tests/test_browser.py); without them the module is skipped,
unless REQUIRE_BROWSER=1 (CI), where their absence fails.
"""
from __future__ import annotations

import time

import pytest
from conftest import require_browser

from scripts.browser import NAV_LINKS, nav_pages, page_slug, wait_for_app, with_query

pytestmark = pytest.mark.browser
LESSONS = ("", "queries-keys-values", "train-a-transformer", "decoding-strategies")  # url paths; "" = welcome
EXTRA_PRESSES = 80  # Tab stops outside the lesson: skip link, sidebar, its settings, the header
SETTLE_MS = 1500  # how long a key press has to show an effect (a page switch starts within ~0.2 s)

require_browser()

# Every element of the lesson area a keyboard user must be able to reach, marked with data-kbd-target; radios
# share one Tab stop per group (the arrow keys move inside a group), so a group counts as one target. Buttons
# shown only on hover (a chart's toolbar) count too: they are in the page and take focus.
MARK_TARGETS = """() => {
  const main = document.querySelector('[data-testid="stMain"]');
  const selector = 'a[href], button, input, select, textarea, summary, [role="slider"], [tabindex="0"]';
  const targets = [...main.querySelectorAll(selector)].filter((el) => {
    if (el.disabled || el.getAttribute('aria-disabled') === 'true' || el.getAttribute('tabindex') === '-1') return false;
    if (el.type === 'hidden') return false;
    const box = el.getBoundingClientRect();  // checkVisibility: false inside a closed expander, display: none...
    return box.width > 0 && box.height > 0 && el.checkVisibility({visibilityProperty: true});
  });
  const groups = new Map();
  targets.forEach((el, i) => {
    let group = String(i);
    if (el.type === 'radio' && el.name) group = 'radio:' + el.name;
    const set = el.getAttribute('role') === 'radio' && el.closest('[role="radiogroup"]');
    if (set) { set.dataset.kbdGroup = set.dataset.kbdGroup || 'g' + i; group = 'group:' + set.dataset.kbdGroup; }
    el.dataset.kbdTarget = group;
    groups.set(group, (el.getAttribute('aria-label') || el.innerText || el.value || el.tagName).trim().slice(0, 60));
  });
  window.__kbdReached = new Set();
  if (!window.__kbdListening) {
    window.__kbdListening = true;
    document.addEventListener('focusin', (event) => {
      const el = event.composedPath()[0];
      if (el instanceof Element && el.dataset.kbdTarget) window.__kbdReached.add(el.dataset.kbdTarget);
    }, true);
  }
  return Object.fromEntries(groups);
}"""
UNREACHED = "() => [...document.querySelectorAll('[data-kbd-target]')].map((el) => el.dataset.kbdTarget)" \
            ".filter((g) => !window.__kbdReached.has(g))"


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    yield page
    context.close()


def path(page) -> str:
    return page.evaluate("location.pathname").strip("/")


def open_lesson(page, base_url: str, slug: str, query: str = "") -> None:
    """Enter through "/" (with `query`), then click the lesson's sidebar link, as a person does."""
    page.goto(with_query(base_url, query) if query else base_url, wait_until="domcontentloaded")
    wait_for_app(page)
    if slug:
        hrefs = [page_slug(href) for _, href in nav_pages(page)]
        page.locator(NAV_LINKS).nth(hrefs.index(slug)).click()
        page.wait_for_function("s => location.pathname.replace(/^\\/+|\\/+$/g, '') === s", arg=slug)
    wait_for_app(page)


def tab_through(page) -> tuple[dict[str, str], list[str], int]:
    """Press Tab from the top of the page until every target was focused or the bound is reached.
    Returns (targets, the ones never focused, presses)."""
    targets = page.evaluate(MARK_TARGETS)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    bound, presses = 3 * len(targets) + EXTRA_PRESSES, 0
    missing = list(targets)
    while presses < bound and missing:
        for _ in range(20):
            page.keyboard.press("Tab")
        presses += 20
        missing = page.evaluate(UNREACHED)
    return targets, sorted(set(missing)), presses


@pytest.mark.parametrize("slug", LESSONS, ids=lambda s: s or "welcome")
def test_tab_reaches_every_control_and_every_chart_is_named(app, page, slug):
    open_lesson(page, app.url, slug)
    targets, missing, presses = tab_through(page)
    assert len(targets) >= 5, targets  # the lesson has controls: the walk is not vacuous
    assert not missing, f"not reachable with Tab after {presses} presses: {[targets[g] for g in missing]}"
    names = page.locator('[data-testid="stMain"] [data-testid="stVegaLiteChart"]').evaluate_all(
        "els => els.map((el) => el.getAttribute('aria-label') || '')")
    assert all(name.strip() for name in names), names  # the chart's description (or alt) is its accessible name


def settled_path(page) -> str:
    """The path once a lesson switch that should not come has had SETTLE_MS to start (an absence needs a bound)."""
    page.wait_for_timeout(SETTLE_MS)
    wait_for_app(page)
    return path(page)


def test_presentation_arrows_skip_controls_that_use_them(app, page):
    """With presentation mode on, Left/Right press Previous/Next (ui/presentation.py) except in a text field, a
    slider, a radio group or a table, where the key belongs to the control."""
    lesson, after = "queries-keys-values", "attention-masks"
    # The lesson's own link, on its last part: there Next goes on to the next lesson (elsewhere, to the next part).
    open_lesson(page, f"{app.url}/{lesson}", "", "present=1&show_numbers=1&qkv_part=scaling")
    main = page.locator('[data-testid="stMain"]')

    field = main.locator('[data-testid="stTextInputField"] input, [data-testid="stTextInput"] input').first
    field.focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowLeft")
    assert settled_path(page) == lesson, "an arrow key in a text field switched the lesson"

    slider = main.locator('[data-testid="stSlider"] input[type="range"], [data-testid="stSlider"] [role="slider"]')
    before = slider.first.evaluate("el => el.value || el.getAttribute('aria-valuenow')")
    slider.first.focus()
    page.keyboard.press("ArrowRight")
    assert settled_path(page) == lesson, "an arrow key on a slider switched the lesson"
    moved = main.locator('[data-testid="stSlider"] input[type="range"], [data-testid="stSlider"] [role="slider"]')
    assert moved.first.evaluate("el => el.value || el.getAttribute('aria-valuenow')") != before, "slider ignored it"

    pills = main.locator('[role="radiogroup"] [role="radio"]')
    pills.first.focus()
    page.keyboard.press("ArrowRight")
    assert settled_path(page) == lesson, "an arrow key in a radio group switched the lesson"
    assert page.evaluate("() => document.activeElement.getAttribute('role')") == "radio"
    assert page.evaluate("() => document.activeElement.innerText") != pills.first.inner_text()  # moved inside

    grid = main.locator('[data-testid="stDataFrame"]').first
    in_table = "() => document.activeElement.closest('[data-testid=\"stDataFrame\"]') !== null"
    for _ in range(3):  # the page may still move as its charts are drawn: click again where the table is now
        grid.scroll_into_view_if_needed()
        box = grid.bounding_box()
        page.mouse.click(box["x"] + box["width"] / 2, box["y"] + min(box["height"] / 2, 60))  # a cell of the table
        if page.evaluate(in_table):
            break
    assert page.evaluate(in_table), "the click did not put the focus in the table"
    page.keyboard.press("ArrowRight")
    assert settled_path(page) == lesson, "an arrow key in a table switched the lesson"

    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("ArrowRight")  # nothing focused: the shortcut works (the checks above are not vacuous)
    page.wait_for_function("s => location.pathname.replace(/^\\/+|\\/+$/g, '') === s", arg=after)
    wait_for_app(page)
    page.evaluate("() => document.activeElement && document.activeElement.blur()")
    page.keyboard.press("ArrowLeft")
    page.wait_for_function("s => location.pathname.replace(/^\\/+|\\/+$/g, '') === s", arg=lesson)
