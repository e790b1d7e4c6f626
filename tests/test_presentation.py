"""Presentation mode (ui/presentation.py): the setting and its link, the larger style, the folded explanations,
Previous / Next between the lessons, in both languages and on every lesson of ui/lessons.py.

What the browser shows (sizes, overflow, the arrow keys) is checked by driving Chromium; see the report of this
work. Here everything goes through Streamlit's AppTest and app.py, the frame that draws the style and the buttons.
"""
from __future__ import annotations

import types
from pathlib import Path

import pytest
from conftest import require_browser, start_page
from streamlit.testing.v1 import AppTest

from ui import links, parts, presentation, state
from ui.i18n import LANGUAGES, lookup, t
from ui.lessons import PAGES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
# The lessons in the sidebar's order (sections in SECTIONS order), as the frame builds them: (file, title key).
ORDER = [(path, key.split(".")[0] + ".title", key)
         for section in SECTIONS for page_section, path, key, _, _ in PAGES if page_section == section]
LN = "lessons/06_layer_norm.py"
LN_PROSE = ("ln.intro", "ln.pair_text")  # lesson 6's second part (ui/parts.py): the two styles, γ and β
LN_VISIBLE = ("ln.notice_points", "ln.pictures_text")  # "what to notice" and a short figure guide stay on screen


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def styled(at: AppTest) -> bool:
    """Whether this run added the presentation stylesheet."""
    return any(presentation.CSS in h.proto.body for h in at.get("html"))


def folded(at: AppTest) -> list[str]:
    """The markdown inside "Read the explanation" expanders, in page order."""
    return [m.value for e in at.expander if e.label == t("present.read", lang=lang_of(at)) for m in e.markdown]


def lang_of(at: AppTest) -> str:
    return at.session_state["cfg_lang"]


def nav_buttons(at: AppTest) -> dict[str, object]:
    return {b.key: b for b in at.button
            if b.key in ("present_previous", "present_next", "present_previous_part", "present_next_part")}


def toggle(at: AppTest):
    return at.sidebar.toggle(key="cfg_present")


# ---- the setting and its link ---------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, value", [("1", True), ("true", True), ("TRUE", True), (" 1 ", True), ("0", False),
                                        ("false", False), ("False", False)])
def test_a_link_turns_it_on_and_off(raw, value):
    assert links.from_url(raw, "toggle", {}) is value


@pytest.mark.parametrize("raw", ["yes", "2", "", "on", "1.0", "-1"])
def test_a_link_says_nothing_else(raw):
    with pytest.raises(links.Rejected):
        links.from_url(raw, "toggle", {})
    assert state.url_text(True) == "1" and state.url_text(False) == "0" and state.url_text(64) == "64"


@pytest.mark.parametrize("lang", LANGUAGES)
def test_present_1_in_the_link_turns_it_on_and_comes_back_out(lang):
    at = start_page(APP, query={"present": "1", "lang": lang, "seed": "3"}, lesson=LN)
    assert_clean(at)
    assert not at.warning
    assert at.query_params["present"] == "1" and at.query_params["seed"] == "3"
    assert at.session_state["cfg_present"] is True and toggle(at).value is True
    assert toggle(at).label == t("present.toggle", lang=lang)
    assert at.title[0].value == t("ln.title", lang=lang) and styled(at)


def test_without_the_link_it_is_off_and_the_link_says_0():
    at = start_page(APP, lesson=LN)
    assert_clean(at)
    assert at.query_params["present"] == "0" and toggle(at).value is False
    assert not styled(at) and not folded(at) and not nav_buttons(at)


@pytest.mark.parametrize("raw, lang", [("yes", "en"), ("2", "es")])
def test_a_bad_value_warns_falls_back_and_clears_when_the_toggle_is_used(raw, lang):
    at = start_page(APP, query={"present": raw, "lang": lang}, lesson=LN)
    assert_clean(at)
    assert len(at.warning) == 1
    warning = at.warning[0].value
    assert warning == t("state.bad_url_value", lang=lang, name="present", value=raw, fallback="0",
                        allowed=t("state.allowed_choice", lang=lang, choices="1, true, 0, false"))
    assert at.query_params["present"] == "0" and not styled(at)
    toggle(at).set_value(True).run()
    assert_clean(at)
    assert not at.warning and at.query_params["present"] == "1" and styled(at)


def test_it_survives_page_switches_and_language_changes():
    at = start_page(APP, lang="en", lesson=LN)
    toggle(at).set_value(True).run()
    at.switch_page("lessons/01_similarity.py").run()
    assert_clean(at)
    assert at.title[0].value == t("sim.title", lang="en") and at.query_params["present"] == "1" and styled(at)
    at.sidebar.radio[0].set_value("es").run()
    assert_clean(at)
    assert at.title[0].value == t("sim.title", lang="es") and toggle(at).value is True
    assert folded(at)[0] == t("sim.intro", lang="es")
    assert nav_buttons(at)["present_next"].label == t("present.next", lang="es", title=t("qkv.nav_title", lang="es"))
    toggle(at).set_value(False).run()
    assert at.query_params["present"] == "0" and not styled(at) and not nav_buttons(at)
    assert at.query_params["lang"] == "es"


# ---- what it changes on a lesson ------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_toggle_folds_the_explanations_and_keeps_the_rest(lang):
    at = start_page(APP, lang=lang, lesson=LN, state={"ln_part": "styles"})
    shown = [m.value for m in at.markdown]
    latex = [x.value for x in at.latex]
    for key in LN_PROSE + LN_VISIBLE:
        assert t(key, lang=lang) in shown, key  # off: every paragraph is plain markdown
    assert not [e for e in at.expander if e.label == t("present.read", lang=lang)]

    toggle(at).set_value(True).run()
    assert_clean(at)
    inside = folded(at)
    for key in LN_PROSE:
        assert t(key, lang=lang) in inside, key
    for key in LN_VISIBLE:
        assert t(key, lang=lang) not in inside and t(key, lang=lang) in [m.value for m in at.markdown], key
    assert [x.value for x in at.latex] == latex  # the equations stay
    assert at.title[0].value == t("ln.title", lang=lang) and len(at.subheader) >= 5
    assert all(not e.proto.expanded for e in at.expander if e.label == t("present.read", lang=lang))
    assert styled(at)

    toggle(at).set_value(False).run()
    assert [m.value for m in at.markdown] == shown and not styled(at)


def test_the_stylesheet_scales_the_lesson_area_charts_and_equations():
    css = presentation.CSS
    assert f"zoom: {presentation.ZOOM}" in css and f"zoom: {presentation.ZOOM_WIDE}" in css
    assert presentation.ZOOM_WIDE > presentation.ZOOM > 1
    assert '[data-testid="stMainBlockContainer"]' in css and ".katex-display" in css and "overflow-x: auto" in css
    assert '[data-testid="stVegaLiteChart"]' in css and "max-width: 100%" in css
    assert "ArrowLeft" in presentation.KEY_GUARD and "stopPropagation" in presentation.KEY_GUARD


# ---- Previous / Next ------------------------------------------------------------------------------------------

def test_neighbours_follow_the_order_given():
    pages = [types.SimpleNamespace(url_path=u) for u in ("", "a", "b")]
    assert presentation.neighbours(pages[0], pages) == (None, pages[1])
    assert presentation.neighbours(pages[1], pages) == (pages[0], pages[2])
    assert presentation.neighbours(pages[2], pages) == (pages[1], None)
    assert presentation.neighbours(types.SimpleNamespace(url_path="x"), pages) == (None, None)


def test_next_walks_every_lesson_in_order_and_previous_walks_back():
    at = start_page(APP, query={"present": "1"})
    for i, (_, title_key, _) in enumerate(ORDER):
        assert_clean(at)
        assert at.title[0].value == t(title_key, lang="en"), i
        while "present_next_part" in nav_buttons(at):  # a lesson's parts come first (ui/parts.py)
            at.button(key="present_next_part").click().run()
            assert at.title[0].value == t(title_key, lang="en"), i
        if i + 1 < len(ORDER):
            at.button(key="present_next").click().run()
    assert "present_next" not in nav_buttons(at)
    for i in range(len(ORDER) - 2, len(ORDER) - 5, -1):  # and a few steps back, through a lesson's parts first
        while "present_previous_part" in nav_buttons(at):
            at.button(key="present_previous_part").click().run()
        at.button(key="present_previous").click().run()
        assert_clean(at)
        assert at.title[0].value == t(ORDER[i][1], lang="en"), i
    assert at.query_params["present"] == "1"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("index", range(len(ORDER)), ids=[Path(p).stem for p, _, _ in ORDER])
def test_every_lesson_in_presentation_mode(index, lang):
    path, title_key, _ = ORDER[index]
    at = start_page(APP, query={"present": "1", "lang": lang}, lesson=path)
    assert_clean(at)
    assert at.title[0].value == t(title_key, lang=lang)
    assert styled(at) and not at.warning
    buttons = nav_buttons(at)
    expected = {}
    if index > 0:
        expected["present_previous"] = t("present.previous", lang=lang, title=t(ORDER[index - 1][2], lang=lang))
    if index + 1 < len(ORDER):
        expected["present_next"] = t("present.next", lang=lang, title=t(ORDER[index + 1][2], lang=lang))
    if parts.CURRENT in at.session_state:  # a lesson with sub-lessons (ui/parts.py) opens on its first: Next walks
        del expected["present_next"]
        expected["present_next_part"] = t("present.next", lang=lang, title=at.session_state[parts.CURRENT][2][1])
    assert {k: b.label for k, b in buttons.items()} == expected
    shortcuts = {"present_previous": "left", "present_next": "right", "present_next_part": "right"}
    assert all(b.proto.shortcut == shortcuts[k] for k, b in buttons.items())
    if path != "lessons/00_welcome.py":  # every lesson folds at least its introduction
        assert folded(at), "no explanation folded"
        assert len(folded(at)[0]) > 200


def test_next_walks_every_part_of_a_lesson_then_the_next_lesson():
    """Lesson 5's parts in order under Next (each drawn alone), Previous back, then Next past the last part leaves."""
    path = "lessons/05_positional_encoding.py"
    index = next(i for i, (p, _, _) in enumerate(ORDER) if p == path)
    at = start_page(APP, query={"present": "1", "lang": "en"}, lesson=path)
    setting, codes, labels, _ = at.session_state[parts.CURRENT]
    assert setting == "pe_part" and at.session_state[setting] == codes[0]
    for code, label in zip(codes[1:], labels[1:]):
        assert nav_buttons(at)["present_next_part"].label == t("present.next", lang="en", title=label)
        nav_buttons(at)["present_next_part"].click().run()
        assert_clean(at)
        assert at.session_state[setting] == code and at.title[0].value == t("pe.title", lang="en")
    assert "present_next" in nav_buttons(at)  # the last part: Next leaves the lesson
    nav_buttons(at)["present_previous_part"].click().run()
    assert at.session_state[setting] == codes[-2] and at.title[0].value == t("pe.title", lang="en")
    nav_buttons(at)["present_next_part"].click().run()
    assert at.session_state[setting] == codes[-1] and at.title[0].value == t("pe.title", lang="en")
    next_title = t(ORDER[index + 1][2], lang="en")
    assert nav_buttons(at)["present_next"].label == t("present.next", lang="en", title=next_title)
    nav_buttons(at)["present_next"].click().run()
    assert_clean(at)
    assert at.title[0].value == t(ORDER[index + 1][1], lang="en")


def test_the_catalog_section_is_complete():
    for key in ("toggle", "toggle_help", "read", "previous", "next", "keys"):
        for lang in LANGUAGES:
            assert lookup(f"present.{key}", lang)
    assert t("present.read", lang="es") == "Leer la explicación"


# ---- in the browser: sizes, overflow, the arrow keys ----------------------------------------------------------

SIZES_JS = """() => {
  const q = s => document.querySelector('[data-testid="stMain"] ' + s);
  const h = s => { const e = q(s); return e ? e.getBoundingClientRect().height : null; };
  const main = document.querySelector('[data-testid="stMain"]');
  return {title: h('h1'), equation: h('.katex-display .katex'), chart: h('img[src^="data:image/svg+xml"]'),
          table: h('[data-testid="stTable"]'), sideways: main.scrollWidth - main.clientWidth};
}"""



@pytest.mark.browser
def test_in_the_browser_it_is_larger_fits_and_the_arrow_keys_switch_lessons(tmp_path):
    """Lesson 6 at 1400 x 1000: every kind of content grows, nothing sticks out sideways, and the arrow keys
    switch lessons on the page but move a slider or a table's selection when those have the focus."""
    require_browser(module_level=False)
    from playwright.sync_api import sync_playwright

    from scripts.browser import QUIET_JS, NAV_LINKS, launch_chromium, nav_pages, running_app, settle_after

    lesson = next(i for i, (path, _, _) in enumerate(ORDER) if path == LN)

    def press(page, key: str) -> None:
        settle_after(page, lambda: page.keyboard.press(key))

    def open_lesson(page, url: str) -> None:
        settle_after(page, lambda: page.goto(url, wait_until="domcontentloaded"))
        nav_pages(page)  # expands "View more"
        settle_after(page, page.locator(NAV_LINKS).nth(lesson).click)  # through the sidebar, as a person does

    path = "() => location.pathname"
    with running_app(tmp_path) as app, sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.add_init_script(QUIET_JS)  # the page knows when a run has ended and the drawing with it
            page = context.new_page()
            page.set_default_timeout(60_000)
            open_lesson(page, app.url)
            normal = page.evaluate(SIZES_JS)
            open_lesson(page, app.url + "/?present=1")
            present = page.evaluate(SIZES_JS)
            for name in ("title", "equation", "chart", "table"):
                assert present[name] > 1.15 * normal[name], (name, normal, present)
            assert present["sideways"] == 0
            here = page.evaluate(path)

            presses = 0  # the arrow walks lesson 6's parts (ui/parts.py) before it leaves the lesson
            while page.evaluate(path) == here and presses < 8:
                page.locator('[data-testid="stMain"] h1').click()
                press(page, "ArrowRight")
                presses += 1
            urls = {file: url for _, file, _, _, url in PAGES}
            assert page.evaluate(path) == "/" + urls[ORDER[lesson + 1][0]] and presses > 1
            press(page, "ArrowLeft")
            assert page.evaluate(path) == here

            settle_after(page, page.get_by_text(t("ln.part_of.styles", lang="en"), exact=True).click)  # back from
            # the last part to the one with γ and β's sliders and the editor's grid (behind "Edit the table")
            settle_after(page, page.get_by_text(t("editor.edit", lang="en"), exact=True).click)
            slider = page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first
            before = slider.input_value()
            slider.focus()
            press(page, "ArrowRight")
            assert page.evaluate(path) == here
            assert page.locator('[data-testid="stMain"] [data-testid="stSlider"] input[type="range"]').first.input_value() != before

            grid = page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]').first
            grid.scroll_into_view_if_needed()
            box = grid.bounding_box()
            cell = (box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.25)  # a number in the first rows
            editor = page.locator("#portal input, #portal textarea").first  # a cell's editor, once it opens
            page.mouse.dblclick(*cell)
            first = editor.input_value()
            page.keyboard.press("Escape")
            editor.wait_for(state="detached")
            settle_after(page, lambda: page.keyboard.press("ArrowRight"))  # a lesson switch
            assert page.evaluate(path) == here  # would have come within RERUN_WAIT_SECONDS: the table used the key
            page.keyboard.press("Enter")
            assert editor.input_value() != first  # ... to move on
            page.keyboard.press("Escape")
            context.close()
        finally:
            browser.close()
