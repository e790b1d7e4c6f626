"""Lesson 13 (MiniLM-L6) in a real browser: empty, one-word, 128-token and non-Latin sentences, in English and
Spanish, render with no error box and the right token count (the AppTest version is test_page_13_real_model.py).
Needs Debian's Chromium, like tests/test_browser.py.
"""
from __future__ import annotations

import re

import pytest

from scripts.browser import (QUIET_JS, choose_spanish, language_control, launch_chromium, nav_pages, open_app,
                             page_errors, running_app, settle_after, wait_for_app)
from conftest import require_browser

pytestmark = pytest.mark.browser
URL_PATH = "/real-pretrained-model"
# (text, tokens with [CLS] and [SEP]; None: refused with a message, the last valid sentence stays)
INPUTS = {"empty": ("", None), "one word": ("hello", 3), "128 tokens": (" ".join(["a"] * 126), 128),
          "Chinese": ("我喜欢学习自然语言处理", None), "Arabic": ("القطة تنام على الأريكة", None),
          "emoji": ("😀🎉🚀 ok 👍🏽", None)}
require_browser()


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    with running_app(tmp_path_factory.mktemp("streamlit-real")) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        page = open_app(browser, app.url)
        page.add_init_script(QUIET_JS)  # the page knows when a run has ended and the drawing with it
        page.reload()
        wait_for_app(page)
        yield page
        browser.close()
        assert "Traceback" not in app.log_path.read_text(errors="replace")


def token_count(page) -> int:
    """The "Your input is N tokens" sentence of the tokens section (either language)."""
    text = page.locator('[data-testid="stMain"]').inner_text()
    return int(re.search(r"(?:Your input is|Tu entrada tiene) (\d+) tokens", text).group(1))


@pytest.mark.parametrize("lang", ["en", "es"])
def test_real_model_page_takes_any_sentence(page, lang):
    if lang == "es":
        choose_spanish(page, language_control(page))
        wait_for_app(page)
    nav_pages(page)  # expands the sidebar's "View more", behind which the last lessons hide
    page.locator(f'[data-testid="stSidebarNavLink"][href$="{URL_PATH}"]').click()
    page.wait_for_function("path => location.pathname.endsWith(path)", arg=URL_PATH)
    wait_for_app(page)
    box = page.get_by_role("textbox").first
    for name, (text, tokens) in INPUTS.items():
        box.fill(text)
        settle_after(page, lambda: box.press("Enter"))
        assert page_errors(page) == [], name
        assert page.locator('[data-testid="stMain"] h1').count(), name
        if tokens is not None:
            assert token_count(page) == tokens, name
        if name == "empty":
            assert page.locator('[data-testid="stAlert"]').count(), "an empty sentence gets a message"
