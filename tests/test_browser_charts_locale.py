"""Numbers in the charts as the reader writes them, in the browser: in a Spanish session the axes, legends and cell
text that Vega draws (from each chart's ``config.locale``) and the tooltips have a decimal comma, and no number a
decimal point. (English, Vega's default, is checked on the specs in tests/test_charts_scales.py.) The "show the
numbers" tables too: the grid draws on a canvas the text ui/tables.py wrote (a Styler's display values), which the
test reads from the canvas's own calls (AppTest sees what the server sends, not what the grid draws)."""
from __future__ import annotations

import re

import pytest

from conftest import require_browser
from scripts.browser import launch_chromium, page_errors, running_app, wait_for_app

pytestmark = pytest.mark.browser
require_browser()

COMMA, POINT = re.compile(r"^-?\d+,\d+$"), re.compile(r"^-?\d+\.\d+$")
CHARTS = '[data-testid="stMain"] svg.marks'
GRID_TEXT_JS = """(() => {  // every text a canvas draws (the dataframe grid's cells), kept for the test to read
  window.__gridText = [];
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    window.__gridText.push(String(text));
    return fillText.call(this, text, ...rest);
  };
})();"""


def test_spanish_chart_numbers_have_a_decimal_comma(tmp_path):
    from playwright.sync_api import sync_playwright

    with running_app(tmp_path) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.add_init_script(GRID_TEXT_JS)
        page.goto(f"{app.url}/similarity-to-attention?lang=es&show_numbers=1", wait_until="domcontentloaded")
        wait_for_app(page)
        page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length >= 6", timeout=60_000)
        assert not page_errors(page), page_errors(page)
        texts = page.eval_on_selector_all(f"{CHARTS} text", "nodes => nodes.map(n => n.textContent)")
        assert len([s for s in texts if COMMA.match(s)]) >= 20 and not [s for s in texts if POINT.match(s)], texts
        legend = page.eval_on_selector_all(f"{CHARTS} .role-legend text", "nodes => nodes.map(n => n.textContent)")
        assert any(COMMA.match(s) for s in legend), legend  # written by Vega from the locale, not by us
        page.locator(f"{CHARTS} g.mark-text text").first.hover()
        tooltip = page.locator("#vg-tooltip-element")
        tooltip.wait_for(state="visible", timeout=10_000)
        assert re.search(r"\d+,\d{4}", tooltip.inner_text()), tooltip.inner_text()
        page.wait_for_function("window.__gridText.filter(s => /^-?\\d+,\\d{4}$/.test(s)).length >= 20", timeout=30_000)
        drawn = page.evaluate("window.__gridText")
        assert not [s for s in drawn if POINT.match(s)], drawn  # the tables' cells: 0,7700, never 0.7700
        browser.close()
