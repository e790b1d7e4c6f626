"""Numbers in the charts as the reader writes them, in the browser: the axes, legends and cell text that Vega draws
(from each chart's ``config.locale``) and the tooltips, with a decimal comma in Spanish and a point in English."""
from __future__ import annotations

import re

import pytest

from conftest import require_browser
from scripts.browser import launch_chromium, page_errors, running_app, wait_for_app

pytestmark = pytest.mark.browser
require_browser()

DECIMAL = {"es": re.compile(r"^-?\d+,\d+$"), "en": re.compile(r"^-?\d+\.\d+$")}
CHARTS = '[data-testid="stMain"] svg.marks'


def test_chart_numbers_follow_the_language(tmp_path):
    from playwright.sync_api import sync_playwright

    with running_app(tmp_path) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        for lang, other in (("es", "en"), ("en", "es")):
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(f"{app.url}/similarity-to-attention?lang={lang}", wait_until="domcontentloaded")
            wait_for_app(page)
            page.wait_for_selector(CHARTS, timeout=60_000)
            page.wait_for_function(f"document.querySelectorAll('{CHARTS}').length >= 6", timeout=60_000)
            assert not page_errors(page), page_errors(page)
            texts = page.eval_on_selector_all(f"{CHARTS} text", "nodes => nodes.map(n => n.textContent)")
            decimals = [s for s in texts if DECIMAL[lang].match(s)]
            assert len(decimals) >= 20 and not [s for s in texts if DECIMAL[other].match(s)], texts
            legend = page.eval_on_selector_all(f"{CHARTS} .role-legend text", "nodes => nodes.map(n => n.textContent)")
            assert any(DECIMAL[lang].match(s) for s in legend), legend  # formatted by Vega, not by us
            page.locator(f"{CHARTS} g.mark-text text").first.hover()
            tooltip = page.locator("#vg-tooltip-element")
            tooltip.wait_for(state="visible", timeout=10_000)
            assert re.search(r"\d+" + ("," if lang == "es" else r"\.") + r"\d{4}", tooltip.inner_text())
            page.close()
        browser.close()
