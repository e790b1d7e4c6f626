"""Numbers in the charts as the reader writes them, in the browser: in a Spanish session the text of the charts drawn
on the server (SVG images: lesson 1's heatmaps, bars and stacked parts), and the axes and tooltips that Vega draws
from each chart's ``config.locale`` (lesson 6's value strips) have a decimal comma, and no number a decimal point. (English, Vega's default, is
checked on the specs in tests/test_charts_scales.py.) The "show the numbers" tables too: the grid draws on a canvas
the text ui/tables.py wrote (a Styler's display values), which the test reads from the canvas's own calls (AppTest
sees what the server sends, not what the grid draws)."""
from __future__ import annotations

import re

import pytest

from conftest import require_browser
from scripts.browser import launch_chromium, page_errors, running_app, wait_for_app

pytestmark = pytest.mark.browser
require_browser()

COMMA, POINT = re.compile(r"^-?\d+,\d+$"), re.compile(r"^-?\d+\.\d+$")
CHARTS = '[data-testid="stMain"] svg.marks'
IMAGES = '[data-testid="stMain"] img[src^="data:image/svg+xml"]'
# The texts of every heatmap image, read from the SVG the page holds (decoded as UTF-8: "−∞", "…").
IMAGE_TEXT_JS = f"""() => [...document.querySelectorAll('{IMAGES}')].flatMap(img => {{
  const bytes = Uint8Array.from(atob(img.src.split(',')[1]), c => c.charCodeAt(0));
  const svg = new DOMParser().parseFromString(new TextDecoder().decode(bytes), 'image/svg+xml');
  return [...svg.querySelectorAll('text')].map(n => n.textContent);
}})"""
# Every text a canvas draws (the grids' cells), with the classes of its element (a keyed one has st-key-<key>).
GRID_TEXT_JS = """(() => {
  window.__gridText = [];
  const fillText = CanvasRenderingContext2D.prototype.fillText;
  CanvasRenderingContext2D.prototype.fillText = function (text, ...rest) {
    const holder = this.canvas.closest && this.canvas.closest('[data-testid="stElementContainer"]');
    window.__gridText.push([String(text), holder ? String(holder.className) : '']);
    return fillText.call(this, text, ...rest);
  };
})();"""
EDITOR = "st-key-sim_vectors_editor"  # lesson 1's table of vectors is an input: the grid writes what is typed


def test_spanish_chart_numbers_have_a_decimal_comma(tmp_path):
    from playwright.sync_api import sync_playwright

    with running_app(tmp_path) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.add_init_script(GRID_TEXT_JS)
        page.goto(f"{app.url}/similarity-to-attention?lang=es&show_numbers=1", wait_until="domcontentloaded")
        wait_for_app(page)
        page.wait_for_function(f"document.querySelectorAll('{IMAGES}').length >= 6", timeout=60_000)
        assert not page_errors(page), page_errors(page)
        drawn = page.evaluate(IMAGE_TEXT_JS)  # X, S, A and C (cells and legends), the word's weights and parts
        assert len([s for s in drawn if COMMA.match(s)]) >= 20 and not [s for s in drawn if POINT.match(s)], drawn
        page.wait_for_function("window.__gridText.filter(([s, at]) => /^-?\\d+,\\d{4}$/.test(s)).length >= 20",
                               timeout=30_000)
        grids = [text for text, at in page.evaluate("window.__gridText") if EDITOR not in at]  # read-only tables
        assert len([s for s in grids if COMMA.match(s)]) >= 20 and not [s for s in grids if POINT.match(s)], grids
        # A chart Vega draws: lesson 6's value strips, its axes and tooltips.
        page.goto(f"{app.url}/layer-normalization?lang=es&ln_part=styles", wait_until="domcontentloaded")
        wait_for_app(page)
        page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length >= 1", timeout=60_000)
        assert not page_errors(page), page_errors(page)
        texts = page.eval_on_selector_all(f"{CHARTS} text", "nodes => nodes.map(n => n.textContent)")
        assert len([s for s in texts if COMMA.match(s)]) >= 5 and not [s for s in texts if POINT.match(s)], texts
        axes = page.eval_on_selector_all(f"{CHARTS} .role-axis-label text", "nodes => nodes.map(n => n.textContent)")
        assert any(COMMA.match(s) for s in axes), axes  # written by Vega from the locale, not by us
        value = page.locator(f"{CHARTS} g.mark-rect path").first  # one value of a token
        value.hover(force=True)  # Vega finds the mark under the pointer itself (its svg takes the pointer events)
        tooltip = page.locator("#vg-tooltip-element")
        tooltip.wait_for(state="visible", timeout=10_000)
        assert re.search(r"-?\d+,\d{4}", tooltip.inner_text()), tooltip.inner_text()
        browser.close()
