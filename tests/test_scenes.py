"""Scenes (ui/scenes.py): every scene of every lesson opens from its pill and from its link, with the same view.

A lesson's scenes are the literal ``SCENES`` dict in its page file. For each scene: a click on its pill sets every
value it names and lights that pill; the link then carries ``scene=<name>``; a new session opened with only
``?scene=<name>`` shows the same lesson (text, tables, charts); moving a control afterwards unlights the pill and
drops the scene from the link. Every scene has a title and a note in both languages.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest
from conftest import start_page
from widgets import KINDS, LESSONS, apply, extremes, find, view

from ui.i18n import lookup

ROOT = Path(__file__).resolve().parents[1]
WITHOUT_SCENES = {"lessons/00_welcome.py", "lessons/11_exercises.py"}  # a map of the app; graded exercises


def page_scenes(lesson: str) -> dict | None:
    """The literal SCENES dict of a page file, or None."""
    for node in ast.parse((ROOT / lesson).read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == "SCENES" for target in node.targets):
            return ast.literal_eval(node.value)
    return None


def section(lesson: str) -> str:
    """The lesson's catalog section, as the page passes it to scenes.picker."""
    for node in ast.walk(ast.parse((ROOT / lesson).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call) and ast.unparse(node.func) == "scenes.picker":
            return ast.literal_eval(node.args[0])
    raise AssertionError(f"{lesson} has SCENES but never calls scenes.picker")


SCENE_CASES = [(lesson, name) for lesson in LESSONS for name in (page_scenes(lesson) or {})]


def pills(at):
    found = [w for w in at.main.get("button_group") if w.key and "_scene_" in w.key]
    assert len(found) == 1, [w.key for w in at.main.get("button_group")]
    return found[0]


@pytest.mark.parametrize("lesson", [lesson for lesson in LESSONS if lesson not in WITHOUT_SCENES])
def test_every_lesson_offers_scenes_with_titles_and_notes_in_both_languages(lesson):
    scenes = page_scenes(lesson)
    assert scenes and len(scenes) >= 2, f"{lesson}: at least two scenes"
    for name, values in scenes.items():
        assert values, name
        for lang in ("en", "es"):
            for part in ("scene_of", "scene_note"):
                assert lookup(f"{section(lesson)}.{part}.{name}", lang), (lang, part, name)


@pytest.mark.parametrize("lesson, name", SCENE_CASES)
def test_a_scene_opens_from_its_pill_and_from_its_link(lesson, name):
    values = page_scenes(lesson)[name]
    at = start_page(ROOT / lesson)
    pills(at).set_value(name).run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    for key, value in values.items():
        assert at.session_state[key] == value, key  # the lesson kept every value of the scene
    assert pills(at).value == name
    assert at.query_params["scene"] == name

    opened = start_page(ROOT / lesson, query={"scene": name})
    assert not opened.exception and not opened.error
    assert pills(opened).value == name
    assert view(opened.main) == view(at.main)


@pytest.mark.parametrize("lesson", sorted({lesson for lesson, _ in SCENE_CASES}))
def test_each_click_lights_its_own_scene_whatever_came_before(lesson):
    """Scenes clicked one after another, twice round: the pill lit and the link's scene are always the last click
    (a scene that names fewer settings must not stay lit because an earlier click left its values in place)."""
    names = list(page_scenes(lesson))
    at = start_page(ROOT / lesson)
    for name in names + names[::-1]:
        pills(at).set_value(name).run()
        assert not at.exception
        assert pills(at).value == name and at.query_params["scene"] == name


@pytest.mark.parametrize("lesson", sorted({lesson for lesson, _ in SCENE_CASES}))
def test_moving_a_control_after_a_scene_unlights_it(lesson):
    name, values = next(iter(page_scenes(lesson).items()))
    at = start_page(ROOT / lesson, state=dict(values))
    assert pills(at).value == name and at.query_params["scene"] == name
    controls = [(kind, key) for key in values for kind in KINDS if find(at, kind, key) is not None]
    assert controls, f"the first scene of {lesson} names none of the lesson's own controls"
    kind, widget_key = controls[0]
    w = find(at, kind, widget_key)
    apply(w, kind, extremes(w, kind)[-1][1])
    at.run()
    assert pills(at).value is None and "scene" not in at.query_params


def test_an_unknown_scene_in_a_link_is_reported():
    at = start_page(ROOT / "lessons/02_attention.py", query={"lang": "es", "scene": "nope"})
    assert not at.exception and not at.error
    assert any("scene" in w.value and "nope" in w.value and "saturation" in w.value for w in at.warning)
    assert pills(at).value is None
