"""End to end: the real app in headless Chromium, every page of its sidebar, in English and in Spanish.

Needs Debian's Chromium at /usr/bin/chromium (`apt-get install -y chromium`) and the playwright package
(no browser download). Skipped without them, unless REQUIRE_BROWSER=1 (CI), where their absence fails.
On a failure the page is saved as a full-page screenshot; the message gives its path and the server log.
"""
from __future__ import annotations

import contextlib
import re
import time
from pathlib import Path

import pytest

from scripts.browser import (NAV_LINKS, choose_spanish, language_control, main_language,
                             nav_pages, page_errors, page_slug, wait_for_app, with_query)
from conftest import require_browser
from ui.i18n import t
from ui.lessons import SECTIONS as SECTIONS_IN_ORDER

pytestmark = pytest.mark.browser
ENGLISH_SECTIONS = tuple(t(f"nav.{section}", lang="en") for section in SECTIONS_IN_ORDER)
SECTIONS = {"en": "Start", "es": "Inicio"}  # the first section, in each language
SECTIONS_OTHER = {"en": ("Atención",), "es": ENGLISH_SECTIONS}  # must not appear in that language
TEST_BUDGET_SECONDS = 15 * 60  # one walk through every page; a hang must not eat the CI budget

require_browser()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, locale="en-US")
    page = context.new_page()
    page.set_default_timeout(30_000)
    page.set_default_navigation_timeout(60_000)
    yield page
    context.close()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("browser-shots")


@pytest.fixture
def evidence(page, shots, request):
    """On any failure inside the block, save the page as it was and print where."""
    @contextlib.contextmanager
    def guard():
        try:
            yield
        except BaseException:
            shot = shots / f"{request.node.name}.png"
            with contextlib.suppress(Exception):
                page.screenshot(path=str(shot), full_page=True, timeout=15_000)
                print(f"screenshot of the failing page ({page.url}): {shot}")
            raise
    return guard


class Report:
    """Collects every problem of a walk through the pages, so one failure does not hide the next."""

    def __init__(self, app, page, shots: Path):
        self.app, self.page, self.shots, self.problems = app, page, shots, []
        self.deadline = time.monotonic() + TEST_BUDGET_SECONDS

    def check(self, name: str, lang: str) -> None:
        """The page finished, shows no error, has a title and speaks `lang` (its text and its navigation)."""
        if time.monotonic() > self.deadline:
            self.problems.append(f"out of time ({TEST_BUDGET_SECONDS} s) before {name}")
            self.assert_clean()
        found = []
        try:
            wait_for_app(self.page)
        except Exception as error:  # a timeout is a finding, and the page is still worth a screenshot
            found.append(f"did not finish: {error}")
        found += page_errors(self.page)
        if not self.page.locator('[data-testid="stMain"] h1').count():
            found.append("no title (h1) in the main area")
        spoken, counts = main_language(self.page)
        if spoken != lang:
            found.append(f"the page reads as {spoken!r}, expected {lang!r} (common words: {counts})")
        headers = section_headers(self.page)
        if headers and (SECTIONS[lang] not in headers or not set(headers).isdisjoint(SECTIONS_OTHER[lang])):
            found.append(f"navigation sections {headers} are not in {lang!r}")
        if found:
            shot = self.shots / f"{len(self.problems):02d}-{re.sub(r'[^A-Za-z0-9_-]+', '_', name)}.png"
            self.page.screenshot(path=str(shot), full_page=True)
            print(f"screenshot of {name}: {shot}")
            self.problems.append(f"{name} ({self.page.url}), screenshot {shot}:\n  " + "\n  ".join(found))

    def assert_clean(self) -> None:
        log = self.app.log_path.read_text(errors="replace")
        if "Traceback" in log:
            self.problems.append(f"the server log has a traceback ({self.app.log_path}):\n{log[-4000:]}")
        if self.problems:
            pytest.fail("\n\n".join(self.problems) + f"\n\nserver log tail:\n{self.app.log_tail()}", pytrace=False)


def section_headers(page) -> list[str]:
    """The navigation's section titles (a collapsible section's header also holds its icon's name: dropped)."""
    headers = page.locator('[data-testid="stNavSectionHeader"]').all_inner_texts()
    return [text.strip().split("\n")[0].strip() for text in headers]


def open_page(page, url: str) -> None:
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page)


def go_to(page, index: int, href: str) -> None:
    """Switch page the way a person does, by the sidebar inside one session (session state survives).

    An app of one page has no navigation to click: it is already on that page.
    """
    links = page.locator(NAV_LINKS)
    if not links.count():
        return
    links.nth(index).click()
    path = "/" + page_slug(href) if page_slug(href) else ""
    page.wait_for_function("path => location.pathname.replace(/\\/+$/, '') === path", arg=path, timeout=30_000)


def test_every_page_in_english_through_the_sidebar(app, page, shots, evidence):
    with evidence():
        open_page(page, app.url)
        pages = nav_pages(page)
        assert pages, "the app shows no page"
        assert any(re.search("similarity", title, re.I) for title, _ in pages), f"no lesson 1 in {pages}"
        headers = section_headers(page)
        if headers:
            assert headers[0] == "Start" and set(headers) <= set(ENGLISH_SECTIONS), headers
        report = Report(app, page, shots)
        for index, (title, href) in enumerate(pages):
            go_to(page, index, href)
            report.check(f"en-{index:02d}-{title}", "en")
        report.assert_clean()


def test_every_page_in_spanish_by_url(app, page, shots, evidence):
    with evidence():
        open_page(page, app.url)
        english_pages = nav_pages(page)
        open_page(page, with_query(app.url, "lang=es"))
        pages = nav_pages(page)
        assert [page_slug(href) for _, href in pages] == [page_slug(href) for _, href in english_pages]
        assert [title for title, _ in pages] != [title for title, _ in english_pages], "titles not translated"
        report = Report(app, page, shots)
        for index, (title, href) in enumerate(pages):
            page.goto(with_query(href, "lang=es"), wait_until="domcontentloaded")  # a fresh session per page
            report.check(f"es-{index:02d}-{title}", "es")
        report.assert_clean()


def test_sidebar_language_control_switches_to_spanish_and_stays(app, page, shots, evidence):
    with evidence():
        open_page(page, app.url)
        english_title = page.locator('[data-testid="stMain"] h1').first.inner_text()
        control = language_control(page)
        assert control is not None, "no sidebar widget labelled language/idioma"
        choose_spanish(page, control)
        page.wait_for_function("t => { const h = document.querySelector('[data-testid=\"stMain\"] h1');"
                               " return h !== null && h.innerText !== t; }", arg=english_title, timeout=30_000)
        report = Report(app, page, shots)
        report.check("es-after-switch", "es")
        if "lang=es" not in page.url:
            report.problems.append(f"the language is not mirrored to the URL: {page.url}")
        pages = nav_pages(page)
        if len(pages) > 1:  # another page, reached by a click: the choice must survive the page switch
            go_to(page, len(pages) - 1, pages[-1][1])
            report.check(f"es-after-switch-{pages[-1][0]}", "es")
        report.assert_clean()
