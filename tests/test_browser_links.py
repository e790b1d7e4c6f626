"""Links in a real browser: a shared link opens the same view, a scene opens from its link, leaving a lesson drops
its parameters, and the sidebar's "Link to this view" holds the address of what is on screen (ui/links.py and
ui/scenes.py; the AppTest side is tests/test_links.py and tests/test_scenes.py). Needs Debian's Chromium.
"""
from __future__ import annotations

import re
import urllib.parse

import pytest
from conftest import require_browser

from scripts.browser import open_app, page_errors, wait_for_app

pytestmark = pytest.mark.browser
LESSON = "/queries-keys-values"
require_browser()


@pytest.fixture(scope="module")
def page(app, browser):
    page = open_app(browser, app.url)
    yield page
    page.close()


def open_link(page, url: str) -> dict[str, str]:
    """Open `url` as a new session and return the query the app then shows in the address bar."""
    page.goto(url, wait_until="domcontentloaded")
    wait_for_app(page)
    assert page_errors(page) == []
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))


def main_text(page) -> str:
    return page.locator('[data-testid="stMain"]').inner_text()


def test_a_link_opens_the_view_it_names(app, page):
    query = open_link(page, f"{app.url}{LESSON}?lang=es&d_model=32&heads=2&qkv_dk=512&qkv_tied=1")
    assert query["qkv_dk"] == "512" and query["qkv_tied"] == "1" and query["d_model"] == "32"
    assert query["qkv_part"] == "scaling"  # the link names no part: the one whose control takes d_k (ui/parts.seek)
    text = main_text(page)
    assert "Consultas, claves y valores" in text and "d_k = 512" in text
    assert "d_model = 32" in text  # the lesson's sizes line, from the sidebar's settings


def test_a_bad_value_in_a_link_is_explained(app, page):
    query = open_link(page, f"{app.url}{LESSON}?lang=en&qkv_dk=100")
    assert query["qkv_dk"] == "64" and query["qkv_part"] == "scaling"
    warnings = page.locator('[data-testid="stAlertContentWarning"]').all_inner_texts()
    assert any("qkv_dk" in w and "100" in w for w in warnings), warnings


def test_a_scene_opens_from_its_link(app, page):
    query = open_link(page, f"{app.url}{LESSON}?lang=en&scene=tied")
    assert query["scene"] == "tied" and query["qkv_tied"] == "1"
    lit = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] [role="radio"][aria-checked="true"]')
    assert "One matrix for queries and keys" in lit.first.inner_text()


def test_a_control_inside_a_section_unlights_its_scene(app, page):
    """Lesson 2's d_k slider reruns its section only (st.fragment); moving it off the saturation scene still
    unlights the pill above the lesson and drops the scene from the link."""
    query = open_link(page, f"{app.url}{LESSON}?lang=en&scene=saturation")
    assert query["scene"] == "saturation" and query["qkv_dk"] == "512" and query["qkv_part"] == "scaling"
    lit = page.locator('[data-testid="stMain"] [data-testid="stButtonGroup"] [role="radio"][aria-checked="true"]')
    assert lit.count() == 1
    page.locator('[data-testid="stSlider"]').filter(has_text="d_k, the length of q and k").get_by_role(
        "slider").press("ArrowLeft")
    page.wait_for_function("() => !location.search.includes('scene=')")
    wait_for_app(page)
    assert "qkv_dk=256" in page.url and lit.count() == 0


def test_leaving_a_lesson_drops_its_parameters_and_the_share_box_follows(app, page):
    open_link(page, f"{app.url}{LESSON}?lang=es&qkv_dk=256")
    page.locator('[data-testid="stSidebarNavLink"][href$="/attention-masks"]').click()
    page.wait_for_function("() => location.pathname.endsWith('/attention-masks')")
    wait_for_app(page)
    query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))
    assert "qkv_dk" not in query and query["lang"] == "es"
    link = share_box(page, "Enlace a esta vista")
    assert "/attention-masks?" in link and "lang=es" in link and "qkv_dk" not in link
    page.keyboard.press("Escape")


def share_box(page, label: str) -> str:
    """Open the sidebar's "Link to this view" and return the address its box holds."""
    page.locator('[data-testid="stSidebar"]').get_by_text(label).click()
    return page.locator('input.share-url').first.input_value()


def test_a_section_rerun_updates_the_address_and_the_share_box(app, page):
    """Picking the opened head on lesson 4 reruns that section only (st.fragment), not the sidebar that drew the
    share box: the box reads the address bar when it is shown."""
    open_link(page, f"{app.url}/multi-head-attention?lang=en&heads=4&mha_part=inside")  # the part with the Head picker
    head = page.locator('[data-testid="stSelectbox"]').filter(
        has=page.locator('[data-testid="stWidgetLabel"]', has_text=re.compile(r"^Head$"))).locator("input")
    head.click()
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Enter")
    page.wait_for_function("() => location.search.includes('mha_head=1')")
    wait_for_app(page)
    assert "mha_head=1" in share_box(page, "Link to this view")
    page.keyboard.press("Escape")


def test_an_old_link_opens_the_part_its_settings_belong_to(app, page):
    """A link made before lesson 5 was in parts (or by hand) names no part: the part whose control takes its
    setting opens (ui/parts.seek), and nothing is reported unused."""
    query = open_link(page, f"{app.url}/position-information?lang=en&pe_rope_pair=1")
    assert query["pe_part"] == "rope" and query["pe_rope_pair"] == "1"
    assert not page.locator('[data-testid="stToast"]').count()
    query = open_link(page, f"{app.url}/position-information?lang=en&pe_part=order&pe_rope_pair=1")
    assert query["pe_part"] == "order" and "pe_rope_pair" not in query  # the link's own part wins
