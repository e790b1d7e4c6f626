"""Language switches between control changes, on every lesson, sent as a browser sends them.

Streamlit keeps a selection widget's value as the label it shows. After a language switch the browser still
holds the labels of the old language, and its next message (any click) sends them back, except for a widget
whose value the server set again in that run (``ui.links.control`` does, when a widget's labels change): the
browser takes the value it is sent. AppTest sends fresh values instead, so `browser_run` sends what Chromium
would: for every other widget that was on screen before the switch, the value it held then. Each step below switches the language and then changes one selection control
(the sidebar's and the lesson's own, in turn, alternating English and Spanish); after every step there is no
exception, every setting in the link is a code (never a label of either language), and a switch alone changes
no setting.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import start_page
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from streamlit.testing.v1 import AppTest

from ui.i18n import LANGUAGES, catalog
from ui.lessons import PAGES

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
KINDS = ("selectbox", "radio", "multiselect", "select_slider")
MAX_CONTROLS = 8  # selection controls changed per lesson (sidebar first), to keep the run short
UNLINKED = ("lang", "scene")  # a switch changes the language; the lit scene is derived from the settings


def _strings(node) -> set[str]:
    out: set[str] = set()
    for value in node.values():
        out |= _strings(value) if hasattr(value, "values") else {value}
    return out


# Labels a stale widget could send: catalog strings that cannot be codes (codes are lower-case identifiers, and
# a few labels such as "copy" are spelt like their code; those are not told apart here).
LABELS = {text for lang in LANGUAGES for text in _strings(catalog(lang))
          if "{" not in text and not re.fullmatch(r"[a-z0-9_.]+", text)}


def states(at: AppTest) -> dict[str, object]:
    """{widget id: the state the browser holds for it} after this run."""
    return {state.id: state for state in at._tree.get_widget_states().widgets}


def browser_run(at: AppTest, held: dict[str, WidgetState], changed: WidgetState | None = None) -> AppTest:
    """Run with the widget states a browser sends: the `changed` state of the widget the user moved, and
    for the other choice widgets still on screen, what the browser held before."""
    sent = WidgetStates()
    for state in at._tree.get_widget_states().widgets:
        if changed is not None and state.id == changed.id:
            state = changed
        elif state.WhichOneof("value") in ("string_value", "string_array_value"):
            state = held.get(state.id, state)
        sent.widgets.append(state)
    return at._run(sent)


def link(at: AppTest) -> dict[str, str]:
    return {name: value for name, value in at.query_params.items() if name not in UNLINKED}


def assert_clean(at: AppTest, step: str) -> None:
    assert not at.exception, f"{step}: {[e.value for e in at.exception]}"
    assert not [e for e in at.error if "Error" in e.value], f"{step}: {[e.value for e in at.error]}"
    for name, values in at.query_params.items():
        for value in (values if isinstance(values, list) else [values]):
            items = str(value).split(",")
            labels = [item for item in items if item in LABELS]
            assert not labels, f"{step}: the link holds labels {labels} for {name}={value!r}"


def selection_controls(at: AppTest) -> list[tuple[str, str]]:
    """(kind, key) of the keyed, enabled selection widgets with more than one option: sidebar first."""
    found = [(kind, w.key) for container in (at.sidebar, at.main) for kind in KINDS
             for w in getattr(container, kind)
             if w.key and len(w.options) > 1 and not getattr(w.proto, "disabled", False)
             and "lang" not in w.key]
    return list(dict.fromkeys(found))[:MAX_CONTROLS]


def switch_language(at: AppTest, lang: str) -> dict[str, WidgetState]:
    """Click `lang` in the sidebar; returns what the browser held before the click."""
    held = states(at)
    radio = next(w for w in at.sidebar.radio if w.key and w.key == "cfg_lang")
    browser_run(at, held, WidgetState(id=radio.id, string_value=catalog(at.session_state["cfg_lang"])["lang"][lang]))
    assert at.session_state["cfg_lang"] == lang, f"the click on {lang} did not switch the language"
    for kind in KINDS:  # a value the server set again is the one the browser holds now
        for w in getattr(at, kind):
            if w.proto.set_value:
                held.pop(w.id, None)
    return held


def change(at: AppTest, kind: str, key: str) -> WidgetState | None:
    """What the browser sends when the user moves the selection widget `key` to another option: its labels, as
    Chromium sends them. None if the widget is gone."""
    match = [w for w in getattr(at, kind) if w.key == key]
    if not match:
        return None
    w = match[0]
    state = WidgetState(id=w.id)
    if kind in ("selectbox", "radio"):
        state.string_value = w.options[-1 if w.index == 0 else 0]
    else:
        shown = list(w._widget_state.string_array_value.data)
        if kind == "multiselect":
            shown = shown[:-1] if len(shown) > 1 else [w.options[-1]]
        else:  # a select_slider: one value or a range
            shown = [w.options[-1] if shown[0] == w.options[0] else w.options[0]] if len(shown) == 1 \
                else [w.options[0], w.options[-1]]
        state.string_array_value.data.extend(shown)
    return state


@pytest.mark.parametrize("lesson", [path for _, path, *_ in PAGES])
def test_switch_language_between_changes(lesson):
    at = start_page(APP, lesson=lesson, numbers=False)
    assert_clean(at, "opened")
    controls = selection_controls(at)
    languages = ["es", "en"] * (len(controls) + 2)
    steps = [("toggle", "cfg_show_numbers"), *controls, ("toggle", "cfg_show_numbers")]
    for lang, (kind, key) in zip(languages, steps):
        before = link(at)
        held = switch_language(at, lang)
        assert_clean(at, f"switch to {lang}")
        assert link(at) == before, f"switching to {lang} changed the link"
        if kind == "toggle":
            toggle = next(w for w in at.sidebar.toggle if w.key == key)
            changed = WidgetState(id=toggle.id, bool_value=not toggle.value)
        else:
            changed = change(at, kind, key)
            if changed is None:
                continue  # a control an earlier step hid
        browser_run(at, held, changed)  # the browser still holds the old language's labels
        assert_clean(at, f"{kind} {key} after the switch to {lang}")


@pytest.mark.parametrize("lesson", [path for _, path, *_ in PAGES])
def test_old_labels_sent_after_the_switch_back_change_nothing(lesson):
    """With fast reruns (Community Cloud) the runs that set a widget's value again after a switch can be cut short,
    and the browser goes on sending the other language's labels. Every setting must come through unchanged: a
    select_slider takes its first option for a label it does not show, so its labels never depend on the
    language (the learning rates are written as powers of ten)."""
    at = start_page(APP, lesson=lesson, numbers=False)
    before = link(at)
    switch_language(at, "es")
    spanish = states(at)  # every label the browser holds in Spanish
    switch_language(at, "en")
    browser_run(at, spanish)  # the next message still carries them all
    assert_clean(at, "old labels after the switch back")
    assert link(at) == before


def test_old_labels_sent_after_a_new_d_model_change_nothing():
    """The same for labels that follow a setting: lesson 7's d_ff slider writes d_ff in its label, not in its
    options (which once read "256 (4×)" and came back as 1× after a new d_model)."""
    at = start_page(APP, lesson="lessons/07_blocks.py", numbers=False)
    held = states(at)
    at.number_input(key="cfg_d_model").set_value(128).run()
    browser_run(at, held)  # the browser still holds the labels drawn at d_model 64
    assert_clean(at, "old labels after a new d_model")
    assert at.session_state["blk_ff_ratio"] == 4
    slider = next(w for w in at.select_slider if w.key == "blk_ff_ratio")
    assert slider.label == "Hidden width d_ff = 4 × d_model = 512"
    assert slider.options == [f"{k}×" for k in range(1, 9)]
