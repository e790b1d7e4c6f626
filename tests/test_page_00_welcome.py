"""The welcome page through AppTest: both languages, a working link to every lesson, the summaries, the view link.

A link works when Streamlit can route it: its target is the url path of a page that app.py registers (from
ui.lessons.PAGES) and its page hash is the one Streamlit derives from that url path (streamlit.util.calc_hash).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl

import pytest
from conftest import lesson_opener
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from ui.i18n import LANGUAGES, lookup, t
from ui.lessons import PAGES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "00_welcome.py"
HERE = "lessons/00_welcome.py"
URL = {path: url for _section, path, _title, _icon, url in PAGES}
TITLE_KEY = {path: title_key for _section, path, title_key, _icon, _url in PAGES}
LESSONS = [(path, title_key, url) for _section, path, title_key, _icon, url in PAGES if path != HERE]
DIAGRAM_LESSONS = {f"lessons/{name}.py" for name in (
    "01_similarity", "02_attention", "03_masks", "04_multi_head", "05_positional_encoding", "06_layer_norm",
    "07_blocks", "08_architecture", "09_training", "10_decoding", "11_exercises", "12_classifier", "13_real_model")}


start = lesson_opener(HERE, numbers=False, clean=True)


def links(at: AppTest) -> list:
    return [link.proto for link in at.get("page_link")]


def target(link) -> str:
    """The page file a link opens: the PAGES entry whose url path and Streamlit hash it carries."""
    found = [path for path, url in URL.items() if link.page == url and link.page_script_hash == calc_hash(url)]
    assert len(found) == 1, (link.label, link.page, link.page_script_hash)
    return found[0]


def text_of(at: AppTest) -> str:
    return "\n".join(m.value for m in at.markdown)


def query_of(code: str) -> dict[str, str]:
    assert code.startswith("?"), code  # AppTest sends no browser URL, so the link is the query alone
    return dict(parse_qsl(code[1:]))


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_app_opens_on_the_welcome_page(lang):
    at = start(APP, lang=lang)
    assert at.title[0].value == t("welcome.title", lang=lang)
    assert not at.info  # every lesson is registered: no "running on its own" note
    assert not at.warning
    assert t("welcome.intro", lang=lang) in text_of(at)
    assert [s.value for s in at.subheader][-1] == t("welcome.howto_header", lang=lang)
    assert at.sidebar.toggle[0].label == t("sidebar.show_numbers", lang=lang)
    howto = t("welcome.howto_points", lang=lang, show_numbers=at.sidebar.toggle[0].label,  # the real controls
              lesson_settings=at.sidebar.expander[0].label, show_code=t("common.show_code", lang=lang))
    assert howto in text_of(at)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_lesson_is_in_the_map_with_its_summary_and_a_working_link(lang):
    at = start(APP, lang=lang)
    by_label = {}
    for link in links(at):
        by_label.setdefault(link.label, []).append(link)
    text = text_of(at)
    for path, title_key, url in LESSONS:
        title = t(title_key, lang=lang)
        assert title in by_label, f"no link labelled {title!r} for {path}"
        assert [target(link) for link in by_label[title]] == [path]
        assert (ROOT / path).is_file()
        assert lookup(f"{title_key.split('.')[0]}.summary", lang) in text
    sections = [s.value for s in at.subheader][:-1]  # the last one is "how to use this app"
    assert sections == [t(f"nav.{s}", lang=lang) for s in SECTIONS
                        if any(section == s and path != HERE for section, path, *_ in PAGES)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_diagram_box_opens_a_lesson_and_every_lesson_has_a_box(lang):
    at = start(APP, lang=lang)
    titles = {t(title_key, lang=lang) for _, title_key, _ in LESSONS}
    boxes = [link for link in links(at) if link.label not in titles]
    assert len(boxes) == 22  # encoder 6, decoder 10 (with the generator and decoding), 2 inside, 4 around
    opened = {target(box) for box in boxes}
    assert opened == DIAGRAM_LESSONS
    for box in boxes:  # "name · lesson number", the number matching the lesson it opens
        _name, number = box.label.rsplit(" · ", 1)
        assert int(number) == int(Path(target(box)).name[:2])
        assert box.help == t("welcome.open", lang=lang, title=t(TITLE_KEY[target(box)], lang=lang))
    labels = [box.label.rsplit(" · ", 1)[0] for box in boxes]
    for key in ("box_embed", "box_self_attn", "box_masked_attn", "box_cross_attn", "box_add_norm", "box_ff",
                "box_generator", "box_decoding", "box_similarity", "box_qkv"):
        assert t(f"welcome.{key}", lang=lang) in labels
    assert labels.count(t("welcome.box_add_norm", lang=lang)) == 5  # 2 per encoder layer, 3 per decoder layer
    assert labels.count(t("welcome.box_embed", lang=lang)) == 2


def test_a_link_leads_to_its_lesson_and_back():
    at = start(APP)
    masked = next(link for link in links(at) if link.label.startswith(t("welcome.box_masked_attn")))
    at.switch_page(target(masked)).run()  # what the click does: open the page the link names
    assert not at.exception
    assert at.title[0].value == t("masks.title")
    at.switch_page(HERE).run()
    assert not at.exception and at.title[0].value == t("welcome.title")
    assert len(links(at)) == 22 + len(LESSONS)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_on_its_own_the_page_names_every_lesson_without_links(lang):
    at = start(lang=lang)  # the page alone
    assert at.title[0].value == t("welcome.title", lang=lang)
    assert not links(at)
    assert [i.value for i in at.info] == [t("welcome.standalone", lang=lang)]
    text = text_of(at)
    for _path, title_key, _url in LESSONS:
        assert f"**{t(title_key, lang=lang)}**" in text


def test_the_view_link_carries_the_shared_settings_and_follows_them():
    at = start(APP)
    shown = query_of(at.main.code[0].value)
    assert shown == {name: at.query_params[name] for name in shown}
    assert shown == {"lang": "en", "seed": "0", "d_model": "64", "heads": "4", "seq_len": "8", "mask": "none",
                     "show_numbers": "0", "present": "0"}
    at.number_input(key="cfg_seed").set_value(7).run()
    at.number_input(key="cfg_d_model").set_value(96).run()
    at.sidebar.radio[0].set_value("es").run()
    assert not at.exception
    shown = query_of(at.main.code[0].value)
    assert shown["seed"] == "7" and shown["d_model"] == "96" and shown["lang"] == "es"
    assert shown == {name: at.query_params[name] for name in shown}  # the same as the address bar
    assert at.title[0].value == t("welcome.title", lang="es")


def test_a_shared_link_opens_the_welcome_page_with_its_settings():
    at = start(APP, query={"lang": "es", "seed": "3", "mask": "causal"})
    assert at.title[0].value == t("welcome.title", lang="es")
    shown = query_of(at.main.code[0].value)
    assert shown["lang"] == "es" and shown["seed"] == "3" and shown["mask"] == "causal"


# ---- ui.lessons: the data the navigation, this page and the tests share ------------------------------------

def test_summary_and_title_keys_exist_for_every_page_in_both_languages():
    for lang in LANGUAGES:
        for section, _path, title_key, _icon, _url in PAGES:
            assert lookup(title_key, lang).strip()
            assert lookup(f"{title_key.split('.')[0]}.summary", lang).strip()
            assert section in SECTIONS and lookup(f"nav.{section}", lang).strip()
    assert lookup("nav.start", "en") == "Start" and lookup("nav.start", "es") == "Inicio"


def test_the_welcome_page_is_first_and_the_only_default():
    assert PAGES[0][:3] == ("start", HERE, "welcome.nav_title") and SECTIONS[0] == "start"
    assert [p[1] for p in PAGES if p[4] == ""] == [HERE]
    urls = [p[4] for p in PAGES]
    assert len(set(urls)) == len(urls)
    for _section, path, _title, icon, url in PAGES:
        assert (ROOT / path).is_file() and icon.startswith(":material/")
    assert not (ROOT / "pages").exists()  # Streamlit's old multipage folder: "Page not found" on a fresh server


def test_app_py_takes_its_pages_from_ui_lessons():
    source = APP.read_text("utf-8")
    assert "from ui.lessons import PAGES, SECTIONS" in source
    assert "PAGES = (" not in source and "SECTIONS = (" not in source  # one list of lessons, not two
