"""Every lesson readable on the screens lecturers project: at 1366x768 and 1280x720, nothing in the main area runs
past it or is clipped by its own box, and no chart lies over another. Wide tables and long equations may scroll
inside their own frame (that is how they are meant to fit). The welcome page shows, above the fold, what the app is
and the button that starts lesson 1. Needs Debian's Chromium.

Each lesson is opened twice, in two configurations that together cover both sizes, both languages and both
presentation modes (all eight combinations for all 14 lessons would take about 8 minutes of the suite)."""
from __future__ import annotations

import pytest

from conftest import require_browser
from scripts.browser import page_errors, wait_for_app
from ui.lessons import PAGES

pytestmark = pytest.mark.browser
require_browser()

CONFIGS = [((1366, 768), "en", "0"), ((1280, 720), "es", "1")]  # (viewport, language, presentation mode)
# Scroll frames a wide thing is allowed to scroll in; a chart or text past them is still found (its own box).
SCROLLERS = ('.katex-display, [data-testid="stDataFrame"], [data-testid="stDataFrame"] *, [data-testid="stCode"] *, '
             '[data-testid="stTable"] *, [data-baseweb="select"] *, [data-baseweb="input"] *, '
             '[data-testid="stTextArea"] *, textarea, input, [data-testid="stSidebar"] *')

_PROBLEMS_JS = """(scrollers) => {
  const main = document.querySelector('[data-testid="stMainBlockContainer"]');
  const edge = main.getBoundingClientRect().right + 1;
  const name = (el) => {
    const box = el.getBoundingClientRect(), holder = el.closest('[data-testid="stElementContainer"]');
    return [el.getAttribute('data-testid') || el.tagName, String(el.className.baseVal ?? el.className).slice(0, 40),
            Math.round(box.right) + ' > ' + Math.round(edge) + ' or ' + el.scrollWidth + ' > ' + el.clientWidth,
            (holder.innerText || holder.querySelector('[aria-label]')?.getAttribute('aria-label') || '')
              .trim().slice(0, 60)].join(' | ');
  };
  const found = [];
  for (const el of main.querySelectorAll('[data-testid="stElementContainer"] *')) {
    if (el.closest(scrollers) || el.closest('.katex *') || el.getClientRects().length === 0) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && box.right > edge) found.push('past the main area: ' + name(el));
    const style = getComputedStyle(el);
    const hides = ['hidden', 'clip'].includes(style.overflowX);
    if (hides && el.clientWidth > 4 && el.scrollWidth > el.clientWidth + 2) found.push('clipped: ' + name(el));
  }
  const charts = [...main.querySelectorAll('[data-testid="stVegaLiteChart"]')].map((el) => el.getBoundingClientRect());
  for (let i = 0; i < charts.length; i++) {
    for (let j = i + 1; j < charts.length; j++) {
      const a = charts[i], b = charts[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > 2) found.push('charts ' + i + ' and ' + j + ' overlap');
    }
  }
  return [...new Set(found)];
}"""


@pytest.fixture(scope="module")
def pages(browser):
    opened = {size: browser.new_page(viewport={"width": size[0], "height": size[1]}) for size, _, _ in CONFIGS}
    yield opened
    for page in opened.values():
        page.close()


@pytest.mark.parametrize("size, lang, present", CONFIGS, ids=["1366x768-en", "1280x720-es-present"])
@pytest.mark.parametrize("url", [url for *_, url in PAGES], ids=[path.split("/")[-1][:2] for _, path, *_ in PAGES])
def test_nothing_runs_past_or_is_clipped(app, pages, url, size, lang, present):
    page = pages[size]
    page.goto(f"{app.url}/{url}?lang={lang}&present={present}", wait_until="domcontentloaded")
    wait_for_app(page)
    page.wait_for_timeout(500)  # charts are laid out after the script ends
    assert not page_errors(page), page_errors(page)
    problems = page.evaluate(_PROBLEMS_JS, SCROLLERS)
    assert not problems, problems


@pytest.mark.parametrize("size, lang", [((1366, 768), "en"), ((1280, 720), "es")])
def test_the_welcome_page_starts_lesson_1_above_the_fold(app, pages, size, lang):
    page = pages[size]
    page.goto(f"{app.url}/?lang={lang}&present=0", wait_until="domcontentloaded")
    wait_for_app(page)
    title = page.locator('[data-testid="stMain"] h1').first
    start = page.locator(".st-key-welcome_start button")
    assert title.bounding_box()["y"] >= 0 and start.bounding_box()["y"] + start.bounding_box()["height"] <= size[1]
    start.click()
    page.wait_for_function("() => location.pathname.endsWith('/similarity-to-attention')")
    wait_for_app(page)
    assert not page_errors(page)
