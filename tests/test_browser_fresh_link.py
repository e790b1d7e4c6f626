"""A shared link opened first on a freshly started server (a Cloud app that just woke up, a classroom server after a
restart) shows its lesson, with no "Page not found" dialog (the lessons are in lessons/, not Streamlit's old pages/),
and the navigation lists every lesson."""
from __future__ import annotations

import pytest

from conftest import require_browser
from scripts.browser import NAV_LINKS, NAV_VIEW_MORE, launch_chromium, page_errors, running_app, wait_for_app
from ui.lessons import PAGES

pytestmark = pytest.mark.browser
require_browser()


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_lessons_link_opened_first_on_a_fresh_server_shows_the_lesson(tmp_path, lang):
    from playwright.sync_api import sync_playwright

    with running_app(tmp_path) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(f"{app.url}/attention-masks?lang={lang}&mask=causal", wait_until="domcontentloaded")
        wait_for_app(page)
        page.wait_for_timeout(1000)  # the dialog came a moment after the page
        assert not page_errors(page), page_errors(page)
        assert not page.locator('[role="dialog"]').count(), page.locator('[role="dialog"]').all_inner_texts()
        title = page.locator('[data-testid="stMain"] h1').first.inner_text()
        assert title.startswith("Masks" if lang == "en" else "Máscaras"), title
        assert "mask=causal" in page.url
        links = page.locator(NAV_LINKS)  # every lesson in the navigation, without a "View more" click
        assert links.count() == len(PAGES) and not page.locator(NAV_VIEW_MORE).count()
        assert all(links.nth(i).is_visible() for i in range(links.count()))
        browser.close()
