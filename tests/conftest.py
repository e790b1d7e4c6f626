"""Shared test set-up: the project root on sys.path and one torch thread (see README, "Threads")."""
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

torch.set_num_threads(1)


def widget(at, kind: str, key: str):
    """The AppTest widget of `kind` ("selectbox", "slider", ...) whose key is `key` (a setting's name)."""
    found = [w for w in getattr(at, kind) if w.key == key]
    assert len(found) == 1, f"expected one {kind} bound to {key!r}, found {[w.key for w in found]}"
    return found[0]


def table_editor(at, key: str):
    """The grid of `ui.panels.matrix_editor` `key`, after switching on its "Edit the table" (it opens as a plain
    table); the page runs again if the switch was off."""
    switch = widget(at, "toggle", f"{key}_editing")
    if not switch.value:
        switch.set_value(True).run()
    found = [e for e in at.data_editor if e.key.startswith(f"{key}_editor_")]
    assert len(found) == 1, [e.key for e in at.data_editor]
    return found[0]


APP = ROOT / "app.py"


def start_page(path, *, lang: str = "en", numbers: bool = True, state: dict | None = None,
               query: dict | None = None, lesson: str | None = None, sentence: str | None = None,
               clean: bool = False, first: tuple[str, ...] | None = None, **settings):
    """Run `path` (app.py or one page) through AppTest with the given settings and session state.

    With `query`, the settings come from the URL instead of `lang`. With `lesson` (a page file relative to the
    project root), app.py runs first and then switches to it, as the sidebar link does (a switch before the
    first run would run the page without the frame). `settings` are session-state values by name, a shared
    setting by its sidebar name (``d_model=16`` sets ``cfg_d_model``); `state` takes any keys as they are;
    `sentence` is the text typed in the sentence box. With `first` (keys), only those values go into the first
    run; the others are set on the open page, which runs again, as a learner sets them after a choice that fills
    the other controls (lesson 9's task and preset). With `clean`, the run must end without an exception or an
    error message.
    """
    from streamlit.testing.v1 import AppTest

    from ui.sidebar import SETTINGS_OPEN
    from ui.state import DEFAULTS, key

    at = AppTest.from_file(str(path), default_timeout=60)
    at.session_state[key("show_numbers")] = numbers
    at.session_state[SETTINGS_OPEN] = True  # the sidebar's lesson settings drawn, as after a click on them
    if query is None:
        at.session_state[key("lang")] = lang
    else:
        at.query_params.update(query)
    if sentence is not None:
        settings["sentence_text"] = sentence
    named = {key(name) if name in DEFAULTS or name == "sentence_text" else name: value for name, value in settings.items()}
    values = {**(state or {}), **named}
    later = {} if first is None else {name: values.pop(name) for name in list(values) if name not in first}
    for name, value in values.items():
        at.session_state[name] = value
    at.run()
    if lesson is not None:
        at.switch_page(lesson).run()
    if later:
        for name, value in later.items():
            at.session_state[name] = value
        at.run()
    if clean:
        assert not at.exception, [e.value for e in at.exception]
        assert not at.error, [e.value for e in at.error]
    return at


def lesson_opener(lesson: str, **defaults):
    """`start(path=None, **options)` for one lesson's tests: `start_page` of the lesson alone, or through the
    whole app (as the sidebar link opens it) when `path` is app.py; `defaults` are `start_page`'s options for
    this lesson, and a call's own options win."""
    def start(path: Path | None = None, **options):
        through_app = path is not None and Path(path) == APP
        return start_page(APP if through_app else ROOT / lesson, lesson=lesson if through_app else None,
                          **{**defaults, **options})
    return start


# ---- browser tests -------------------------------------------------------------------------------------

def browser_missing() -> str | None:
    """Why the browser tests cannot run here (no Debian Chromium, no playwright), or None."""
    from scripts.browser import CHROMIUM

    if not Path(CHROMIUM).exists():
        return f"{CHROMIUM} not found (apt-get install -y chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError as error:
        return f"playwright is not importable ({error}); pip install -r requirements-dev.txt"
    return None


def require_browser(module_level: bool = True) -> None:
    """Skip a browser test (its whole module by default) when the browser is missing; fail instead under
    REQUIRE_BROWSER=1 (CI), where a missing browser must not pass as a skip."""
    import os

    import pytest

    missing = browser_missing()
    if missing is None:
        return
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"REQUIRE_BROWSER=1 but {missing}", pytrace=False)
    pytest.skip(missing, allow_module_level=module_level)


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """`streamlit run app.py` on a free port, one per test module (see scripts/browser.py)."""
    from scripts.browser import running_app

    with running_app(tmp_path_factory.mktemp("streamlit")) as running:
        yield running


@pytest.fixture(scope="module")
def browser(app):
    """Debian's Chromium driven by playwright, one per test module."""
    from playwright.sync_api import sync_playwright

    from scripts.browser import launch_chromium

    with sync_playwright() as playwright:
        chromium = launch_chromium(playwright)
        yield chromium
        chromium.close()


@pytest.fixture(autouse=True)
def free_training_places():
    """Every test starts with the server's training places free (ui/limits.py keeps them per process, and a
    test that ends mid-training never gives its place back; a real server reclaims it after STALE_SECONDS)."""
    from ui import limits

    limits.places.clear()
    yield


@pytest.fixture
def every_number(monkeypatch):
    """Every "show the numbers" table drawn, however wide or large: the app sends a matrix past ui.panels'
    limits to its CSV, which holds the same numbers, and a test reads them back as a table."""
    from ui import panels

    monkeypatch.setattr(panels, "NUMBERS_COLUMNS", 10**6)
    monkeypatch.setattr(panels, "NUMBERS_CELLS", 10**9)


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (`-n 2`), every browser test runs on one worker, one after the other, so two Chromium
    runs never compete for the two cores; the AppTest and core tests share the other worker."""
    for item in items:
        if item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.xdist_group("browser"))
