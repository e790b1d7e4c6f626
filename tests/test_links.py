"""Every control of every lesson round-trips through the link (ui/links.py), and bad links are reported.

The round trip: a session changes every control of a lesson (sliders and number inputs to their maximum,
option widgets to their last option, toggles flipped, multiselects filled, text replaced), then a new session
opens with the query parameters the first one wrote. Both must hold the same value for every setting in the
link and show the same lesson: the same text, tables and charts (specs and data). The data editors' tables are
not in the link (see README, "Sharing a view").
"""
from __future__ import annotations

import html

import math
from pathlib import Path

import pytest
from conftest import start_page
from widgets import KINDS, LESSONS, apply, extremes, find, keyed_widgets, view

from ui import links, scenes, state

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"


# ---- reading a link value: what each kind of widget allows ----------------------------------------------

@pytest.mark.parametrize("text, kind, spec, expected", [
    ("512", "slider", {"min_value": 1, "max_value": 1024}, 512),
    ("0.25", "slider", {"min_value": 0.0, "max_value": 0.5, "step": 0.05}, 0.25),
    ("130", "slider", {"min_value": 20, "max_value": 5000, "step": 10}, 130),
    ("-3.5", "number_input", {"min_value": -10.0, "max_value": 10.0}, -3.5),
    ("reversed", "radio", {"options": ("none", "reversed")}, "reversed"),
    ("3", "selectbox", {"options": range(8)}, 3),
    ("0", "radio", {"options": [True, False]}, False),
    ("0.003", "select_slider", {"options": [0.001, 0.003, 0.01]}, 0.003),
    ("2,0", "multiselect", {"options": [0, 1, 2]}, [2, 0]),
    ("", "multiselect", {"options": [0, 1, 2]}, []),
    ("1", "toggle", {}, True),
    ("false", "checkbox", {}, False),
    ("la vida es bella", "text_input", {"max_chars": 100}, "la vida es bella"),
])
def test_from_url_accepts_what_the_widget_allows(text, kind, spec, expected):
    value = links.from_url(text, kind, spec)
    assert value == expected and type(value) is type(expected)


@pytest.mark.parametrize("text, kind, spec, allowed", [
    ("2048", "slider", {"min_value": 1, "max_value": 1024}, "state.allowed_int"),
    ("0", "slider", {"min_value": 1, "max_value": 1024}, "state.allowed_int"),
    ("12.5", "slider", {"min_value": 1, "max_value": 1024}, "state.allowed_int"),
    ("abc", "number_input", {"min_value": -10.0, "max_value": 10.0}, "state.allowed_number"),
    ("nan", "number_input", {"min_value": -10.0, "max_value": 10.0}, "state.allowed_number"),
    ("inf", "number_input", {"min_value": None, "max_value": None}, "state.allowed_number"),
    ("5010", "slider", {"min_value": 20, "max_value": 5000, "step": 10}, "state.allowed_int"),
    ("sideways", "radio", {"options": ("none", "reversed")}, "state.allowed_choice"),
    ("8", "selectbox", {"options": range(8)}, "state.allowed_choice"),
    ("0,0", "multiselect", {"options": [0, 1, 2]}, "state.allowed_subset"),
    ("0,5", "multiselect", {"options": [0, 1, 2]}, "state.allowed_subset"),
    ("0,1,2", "multiselect", {"options": [0, 1, 2], "max_selections": 2}, "state.allowed_subset"),
    ("yes", "toggle", {}, "state.allowed_choice"),
    ("x" * 101, "text_area", {"max_chars": 100}, "state.allowed_text"),
])
def test_from_url_rejects_anything_else(text, kind, spec, allowed):
    with pytest.raises(links.Rejected) as rejected:
        links.from_url(text, kind, spec)
    assert rejected.value.allowed == allowed


@pytest.mark.parametrize("value, kind, spec", [
    (7, "slider", {"min_value": 1, "max_value": 9}),
    (0.1, "slider", {"min_value": 0.0, "max_value": 0.5}),
    (1 / 3, "number_input", {"min_value": 0.0, "max_value": 1.0}),
    ([3, 1], "multiselect", {"options": range(4)}),
    (True, "toggle", {}),
    ("ñandú, 注意 & x=1?#", "text_area", {"max_chars": 50}),
])
def test_a_written_value_reads_back_the_same(value, kind, spec):
    assert links.from_url(links.to_url(value), kind, spec) == value


def test_the_list_of_allowed_values_in_a_warning_is_short():
    with pytest.raises(links.Rejected) as rejected:
        links.from_url("99", "selectbox", {"options": range(64)})
    shown = rejected.value.allowed_kw["choices"]
    assert shown.endswith(", …") and shown.count(",") == links.SHOWN_CHOICES


# ---- the round trip, lesson by lesson -------------------------------------------------------------------

def change_every_control(at):
    """Set every keyed widget of the main area to its last extreme (max, last option, flipped, filled, text)."""
    changed = {}
    for name, kind in keyed_widgets(at.main).items():
        w = find(at, kind, name)
        if w is None:  # an earlier change hid it
            continue
        options = [(label, v) for label, v in extremes(w, kind) if not label.startswith(("min", "first", "none"))]
        if kind in ("text_input", "text_area"):
            options = [(label, v) for label, v in options if label.startswith("non-Latin")]
        if options:
            apply(w, kind, options[-1][1])
            at.run()
            assert not at.exception, (name, [e.value for e in at.exception])
            changed[name] = kind
    return changed


def canonical(at, name: str) -> str:
    return name if name in at.session_state else f"cfg_{name}"


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=0, abs_tol=1e-12)
    return a == b


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS if not lesson.endswith("00_welcome.py")])
def test_every_control_round_trips_through_the_link(lesson):
    at = start_page(APP, numbers=True, lesson=lesson)  # through the frame, whose `finish` tidies the link
    changed = change_every_control(at)
    assert changed, "no control of the lesson was found"
    link = dict(at.query_params)
    for name, kind in changed.items():
        # a lesson's own setting still drawn (not a scene's pills): a control a later change hid (another part of
        # the lesson, ui/parts.py) leaves the link with what it showed
        if scenes.SCENE not in name and find(at, kind, name) is not None:
            assert links.url_name(name) in link, (name, sorted(link))

    # The lesson alone: each link value is applied as its control is drawn. The sidebar's settings, which the
    # frame's sidebar takes from a link (tests/test_pages.py), are given to it as they were.
    shared = {name: at.session_state[state.key(name)] for name in state.DEFAULTS}
    own = {name: text for name, text in link.items() if state.key(name) not in state.SHARED}
    opened = start_page(ROOT / lesson, query=own, state={state.key(name): v for name, v in shared.items()})
    assert not opened.exception, [e.value for e in opened.exception]
    if opened.session_state[links.APPLIED]:  # app.py's `finish` then runs the page once more, so that what was
        opened.run()                         # drawn above a control (e.g. the lit scene) agrees with it
    for name in set(own) - {scenes.SCENE}:  # the scene is checked in test_scenes.py
        key = canonical(at, name)
        assert same(opened.session_state[key], at.session_state[key]), name
    assert view(opened.main) == view(at.main)
    assert dict(opened.query_params) == own


# ---- bad links ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_bad_value_is_reported_beside_its_control_and_the_page_keeps_its_own(lang):
    page = ROOT / "lessons/02_attention.py"
    at = start_page(page, query={"lang": lang, "qkv_part": "scaling", "qkv_dk": "100", "qkv_tied": "maybe"})
    assert not at.exception and not at.error
    assert at.session_state["qkv_dk"] == 64 and at.session_state["qkv_tied"] is False
    warnings = [w.value for w in at.warning]
    assert any("qkv_dk" in w and "100" in w and "512" in w for w in warnings), warnings  # lists allowed d_k
    assert any("qkv_tied" in w and "maybe" in w for w in warnings), warnings
    assert ("Using" if lang == "en" else "Se usa") in " ".join(warnings)
    assert at.query_params["qkv_dk"] == "64"  # the link now says what is shown
    at.run()  # the warning stays until the learner sets the value ...
    assert any("qkv_dk" in w.value for w in at.warning)
    toggle = at.toggle(key="qkv_tied")
    toggle.set_value(True).run()  # ... and goes once they do
    assert not any("qkv_tied" in w.value for w in at.warning)
    assert any("qkv_dk" in w.value for w in at.warning)


def test_the_app_drops_parameters_of_other_lessons_and_says_so():
    at = start_page(APP, query={"lang": "es", "qkv_dk": "128", "nonsense": "1"})
    assert not at.exception
    assert "qkv_dk" not in at.query_params and "nonsense" not in at.query_params
    toasts = [toast.value for toast in at.toast]
    assert any("nonsense" in text and "qkv_dk" in text and "ignorado" in text for text in toasts), toasts
    assert at.query_params["lang"] == "es"


def test_the_share_box_holds_the_link_of_the_view():
    at = start_page(APP, lesson="lessons/02_attention.py")
    toggle = at.toggle(key="qkv_tied")
    toggle.set_value(True).run()
    box = [h.proto.body for h in at.get("html") if "share-url" in h.proto.body][0]  # filled from the address bar,
    link = html.unescape(box.split('value="')[1].split('"')[0])  # the server's address until the script runs
    assert "qkv_tied=1" in link and "qkv_part=projections" in link and "lang=en" in link and "d_model=64" in link
    assert "qkv_dk" not in link  # the d_k slider is in the scaling part, not on screen


def test_every_widget_drawn_through_control_is_a_kind_the_link_reads_and_the_round_trip_changes():
    """links.from_url reads options widgets by their options, toggles and checkboxes as flags, text boxes as text
    and anything else as a number: a new kind of widget (a date input, say) must not fall into that last case
    unnoticed, and the round trip above only changes the kinds the sweep knows."""
    import ast

    drawn = set()
    for path in [*ROOT.glob("lessons/*.py"), *ROOT.glob("ui/*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and ast.unparse(node.func) in ("links.control", "control") and node.args:
                drawn.add(ast.unparse(node.args[0]).rsplit(".", 1)[-1])
    read = {"selectbox", "radio", "select_slider", "multiselect", *links.FLAG_WIDGETS, *links.TEXT_WIDGETS,
            "slider", "number_input"}
    assert len(drawn) >= 8 and drawn <= read and drawn <= set(KINDS), drawn - read


# ---- the tables of the data editors -------------------------------------------------------------------------

EDITORS = [("lessons/01_similarity.py", "sim_vectors", {"sim_dims": "2"}, [["rey", 0.5, -1.25], ["reina", 1 / 3, 2.0]]),
           ("lessons/06_layer_norm.py", "ln_x", {"ln_dims": "3"}, [["a", 1.0, 2.0, 3.5], ["b", -4.0, 0.1, 0.2]]),
           ("lessons/10_decoding.py", "dec_toy", {}, [["sí", 2.5], ["no", -1.0], ["quizá", 0.0]])]


@pytest.mark.parametrize("lesson, key, controls, rows", EDITORS)
def test_an_edited_table_round_trips_through_the_link(lesson, key, controls, rows):
    import json

    text = json.dumps(rows)
    at = start_page(ROOT / lesson, query={"lang": "es", **controls, key: text})
    assert not at.exception and not at.error and not at.warning
    labels, values = at.session_state[f"{key}_valid"]
    assert labels == [row[0] for row in rows]
    assert values.tolist() == [row[1:] for row in rows]  # exactly: floats are written with every digit
    assert json.loads(at.query_params[key]) == rows
    default = start_page(ROOT / lesson, query={"lang": "es", **controls})
    assert key not in default.query_params  # the example table is not written into the link


@pytest.mark.parametrize("bad", ['[["x", 1.0]', '[["x", "uno", 2.0]]', '[["x", NaN, 1.0]]', '[["x", 1e9, 1.0]]',
                                 '[["x", 1.0, 2.0], ["x", 1.0, 2.0]]', '[[1, 1.0, 2.0]]', '{"x": 1}'])
def test_a_broken_table_in_a_link_is_reported_and_the_example_stays(bad):
    at = start_page(ROOT / "lessons/01_similarity.py", query={"lang": "en", "sim_dims": "2", "sim_vectors": bad})
    assert not at.exception and not at.error
    assert any("sim_vectors" in w.value and "2 numbers" in w.value for w in at.warning), [w.value for w in at.warning]
    example = start_page(ROOT / "lessons/01_similarity.py", query={"lang": "en", "sim_dims": "2"})
    labels, values = at.session_state["sim_vectors_valid"]
    assert labels == example.session_state["sim_vectors_valid"][0]
    assert (values == example.session_state["sim_vectors_valid"][1]).all()


def _race_script() -> None:
    """A selection drawn in the language of `test_lang`; `test_stale` is what Streamlit hands the widget's callback
    when the browser sends a label the last run did not show (a language switch racing a rerun)."""
    import streamlit as st

    from ui import links

    ss = st.session_state
    names = {"en": {"a": "Apple", "b": "Banana"}, "es": {"a": "Manzana", "b": "Plátano"}}[ss.get("test_lang", "en")]
    ss.setdefault("fruit", "b")
    ss.setdefault("fruits", ["a"])
    calls = ss.setdefault("test_calls", [])
    for setting, stale in ss.pop("test_stale", {}).items():
        ss[setting] = stale
        links._changed(setting, lambda setting=setting: calls.append((setting, ss[setting])))
    links.control(st.selectbox, "Fruit", ["a", "b"], format_func=names.get, setting="fruit", link=False)
    links.control(st.multiselect, "Fruits", ["a", "b"], format_func=names.get, setting="fruits", link=False)


def test_a_label_from_before_a_language_switch_is_its_option_again():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_race_script, default_timeout=30)
    at.run()
    at.session_state["test_lang"] = "es"
    at.run()
    at.session_state["test_stale"] = {"fruit": "Banana", "fruits": ["Apple", "Banana"]}
    at.run()
    assert not at.exception
    assert at.session_state["fruit"] == "b" and at.session_state["fruits"] == ["a", "b"]
    assert at.session_state["test_calls"] == [("fruits", ["a", "b"])]  # the selectbox did not change: no call
    at.session_state["test_stale"] = {"fruit": "Apple", "fruits": ["Cherry"]}  # a real change; a label never shown
    at.run()
    assert not at.exception and at.session_state["fruit"] == "a" and at.session_state["fruits"] == []
    assert at.session_state["test_calls"][1:] == [("fruit", "a"), ("fruits", [])]
    assert [s.value for s in at.selectbox] == ["a"]
