"""Lesson 12 (the encoder classifier and its depth experiment) through AppTest.

Training is driven the way the browser drives it: Start flips a flag, and every run of the page (here
`at.run()`, in the browser the fragment's timer) trains one chunk. The numbers shown are checked against
independent references: the parameter formula written out here and the test accuracy recomputed from the model.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from conftest import lesson_opener, widget
from widgets import table
from streamlit.testing.v1 import AppTest

from ui.i18n import number, t

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "12_classifier.py"
LESSON = str(PAGE.relative_to(ROOT))
QUICK = {"clf_steps": 10, "clf_epochs": 2, "clf_depths": [1], "clf_norms": ["pre"]}  # 20 steps of N = 1


start = lesson_opener(LESSON)


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def runs(at: AppTest) -> dict:
    return at.session_state["clf_runs"]


def steps(at: AppTest) -> list[int]:
    return [run.step for run in runs(at).values()]


def train_until_done(at: AppTest, limit: int = 80) -> AppTest:
    for _ in range(limit):
        if not at.session_state["clf_running"]:
            return at
        at.run()
        assert_clean(at)
    raise AssertionError("training did not finish")


def reference_parameters(n_layers: int, pre: bool, vocab=200, d=32, d_ff=128) -> int:
    layer = 4 * (d * d + d) + (2 * d * d_ff + d_ff + d) + 2 * 2 * d
    return vocab * d + n_layers * layer + (2 * d if pre else 0) + 2 * d + 2


def summary(at: AppTest, lang: str = "en"):
    """The runs' summary table (key "clf_table"), its columns in `lang`."""
    frame = table(at, "clf_table")
    assert t("clf.col_run", lang=lang) in frame.columns
    return frame


@pytest.mark.parametrize("lang", ["en", "es"])
def test_defaults_render_without_errors_and_nothing_trains_until_start(lang):
    at = start(lang=lang)
    assert_clean(at)
    assert at.title[0].value == t("clf.title", lang=lang)
    assert any(i.value == t("clf.no_runs", lang=lang) for i in at.info)
    assert runs(at) == {} and not at.session_state["clf_running"]
    assert at.button(key="clf_stop").disabled and at.button(key="clf_reset").disabled
    assert not at.button(key="clf_start").disabled
    layer = 4 * (32 * 32 + 32) + 2 * 32 * 128 + 128 + 32 + 4 * 32  # one layer of the d = 32, d_ff = 128 encoder
    formula = next(m.value for m in at.latex if "P(N)" in m.value)
    assert number(200 * 32, ",", lang, tex=True) in formula
    assert number(layer, ",", lang, tex=True) in formula
    assert any(number(6000, ",", lang) in c.value for c in at.caption)  # the caps: 30 epochs of 200 steps
    assert "10⁻³" in widget(at, "select_slider", "clf_lr").options  # the same label in both languages


EXTREMES = [{"clf_minority": 0, "clf_epochs": 1, "clf_steps": 10, "clf_lr": 1e-4},
            {"clf_minority": 9, "clf_epochs": 30, "clf_steps": 200, "clf_lr": 3e-2},
            {"clf_depths": [1, 2, 3, 4, 6], "clf_norms": ["pre", "post"]},
            {"clf_depths": [6], "clf_norms": ["post"]}]


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("state", EXTREMES, ids=["low", "high", "all_runs", "deepest_post"])
def test_control_extremes_render_and_train_a_chunk(state, lang):
    at = start(lang=lang, state=state)
    assert_clean(at)
    at.button(key="clf_start").click().run()
    assert_clean(at)
    depths, norms = state.get("clf_depths", [1, 2, 4]), state.get("clf_norms", ["pre"])
    assert len(runs(at)) == len(depths) * len(norms) and min(steps(at)) >= 1
    with_an_epoch = [run for run in runs(at).values() if run.history]
    if with_an_epoch:  # the table lists the runs that have finished an epoch
        assert len(summary(at, lang)) == len(with_an_epoch)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("empty", ["clf_depths", "clf_norms"])
def test_an_empty_selection_warns_and_cannot_start(empty, lang):
    at = start(lang=lang, state={empty: []})
    assert_clean(at)
    assert [w.value for w in at.warning] == [t("clf.pick_one", lang=lang)]
    assert at.button(key="clf_start").disabled


def example_rows(at: AppTest) -> list[str]:
    prefix = t("clf.example", c=0, tokens="")[:-4]  # "Class " without the number
    return [m.value for m in at.markdown if m.value.startswith(prefix)]


@pytest.mark.parametrize("m", [0, 4, 9])
def test_the_examples_follow_the_minority_slider(m):
    at = start()
    widget(at, "slider", "clf_minority").set_value(m).run()
    assert_clean(at)
    rows = example_rows(at)
    assert len(rows) == 2
    for c, row in enumerate(rows):
        tokens = [int(v) for v in re.findall(r"\d+", row.split(":", 1)[1])]
        bold = [int(v) for v in re.findall(r"\*\*(\d+)\*\*", row)]
        assert len(tokens) == 20 and len(bold) == m
        other = range(100, 200) if c == 0 else range(1, 100)
        assert [v for v in tokens if v in other] == bold  # exactly the other class's tokens are in bold
    caption = t("clf.task_easy") if m == 0 else t("clf.task_hard", m=m, majority=20 - m, length=20)
    assert any(c.value == caption for c in at.caption)


def test_start_trains_in_chunks_until_done_and_the_table_is_right():
    at = start(state=QUICK | {"clf_steps": 100})  # 200 steps: more than one 0.25 s chunk on any CPU
    at.button(key="clf_start").click().run()
    assert_clean(at)
    assert at.session_state["clf_running"] and steps(at)[0] >= 1
    first = steps(at)[0]
    at.run()
    assert steps(at)[0] > first  # every run of the page trains one more chunk
    train_until_done(at)
    assert steps(at) == [200] and at.button(key="clf_start").disabled
    assert [s.value for s in at.success] == [t("clf.finished", epochs=2)]
    run = next(iter(runs(at).values()))
    table = summary(at)
    assert table[t("clf.col_params")].tolist() == [reference_parameters(1, True)]
    assert table[t("clf.col_epochs")].tolist() == [2]
    tokens, labels = run.task.test_set()
    with torch.no_grad():
        accuracy = (run.model.eval()(tokens).argmax(-1) == labels).double().mean().item()
    assert table[t("clf.col_final")].iloc[0] == pytest.approx(accuracy)
    assert len(tokens) == 1000


def test_raising_the_epochs_continues_the_finished_runs():
    at = train_until_done(start(state=QUICK | {"clf_epochs": 1}).button(key="clf_start").click().run())
    assert steps(at) == [10] and [i.value for i in at.info] == [t("clf.more_epochs", cap=30)]
    widget(at, "slider", "clf_epochs").set_value(2).run()
    assert not at.button(key="clf_start").disabled and at.button(key="clf_start").label == t("clf.continue")
    train_until_done(at.button(key="clf_start").click().run())
    assert steps(at) == [20] and len(next(iter(runs(at).values())).history) == 2


def test_the_cap_is_stated_when_the_runs_reach_it():
    at = train_until_done(start(state=QUICK | {"clf_epochs": 30}).button(key="clf_start").click().run(), limit=200)
    assert steps(at) == [300]
    assert t("clf.cap_hit", cap=30) in [i.value for i in at.info]


def test_stop_keeps_the_history_and_reset_clears_it():
    at = start(state=QUICK | {"clf_steps": 200})
    at.button(key="clf_start").click().run()
    at.run()
    at.button(key="clf_stop").click().run()
    assert_clean(at)
    assert not at.session_state["clf_running"]
    kept = steps(at)
    at.run()
    assert steps(at) == kept and kept[0] > 0  # stopped: no more training, nothing lost
    assert at.button(key="clf_start").label == t("clf.continue")
    at.button(key="clf_reset").click().run()
    assert_clean(at)
    assert runs(at) == {} and any(i.value == t("clf.no_runs") for i in at.info)


def test_the_same_seed_gives_the_same_curves():
    histories = []
    for _ in range(2):
        at = train_until_done(start(state=QUICK | {"clf_minority": 6}).button(key="clf_start").click().run())
        histories.append([(e.test_accuracy, e.train_loss) for e in next(iter(runs(at).values())).history])
    assert histories[0] == histories[1] and len(histories[0]) == 2


def test_a_language_switch_mid_training_loses_nothing():
    at = start(APP, state=QUICK | {"clf_steps": 200})
    at.button(key="clf_start").click().run()
    before = steps(at)
    at.sidebar.radio[0].set_value("es").run()
    assert_clean(at)
    assert at.title[0].value == t("clf.title", lang="es")
    assert at.session_state["clf_running"] and steps(at)[0] > before[0]


def test_a_page_switch_mid_training_keeps_the_runs_and_training_resumes_on_return():
    at = start(APP, state=QUICK | {"clf_steps": 200})
    at.button(key="clf_start").click().run()
    at.switch_page("lessons/06_layer_norm.py").run()
    assert_clean(at)
    away = steps(at)
    at.run()
    assert steps(at) == away  # nothing trains while the lesson is not shown
    at.switch_page(LESSON).run()
    assert_clean(at)
    assert at.session_state["clf_running"] and steps(at)[0] > away[0]
    assert widget(at, "slider", "clf_steps").value == 200  # the controls come back as they were


def test_a_preset_sets_the_controls():
    at = start(state={"clf_depths": [6], "clf_steps": 200, "clf_epochs": 3})
    at.button(key="clf_preset_fast_lr").click().run()
    assert_clean(at)
    assert widget(at, "select_slider", "clf_lr").value == 1e-2
    assert widget(at, "slider", "clf_minority").value == 8
    assert widget(at, "multiselect", "clf_norms").value == ["pre", "post"]
    assert widget(at, "multiselect", "clf_depths").value == [1, 2, 4]
    assert widget(at, "slider", "clf_steps").value == 50 and widget(at, "slider", "clf_epochs").value == 10


def test_the_numbers_follow_the_sidebar_toggle():
    state = QUICK | {"clf_epochs": 1}
    shown = train_until_done(start(state=state).button(key="clf_start").click().run())
    hidden = train_until_done(start(state=state, numbers=False).button(key="clf_start").click().run())
    assert len(shown.dataframe) == 3 and len(hidden.dataframe) == 1  # the summary, then the two numbers tables
    accuracy = table(shown, "clf_numbers_test_accuracy")
    assert accuracy.iloc[0, 0] == pytest.approx(next(iter(runs(shown).values())).history[0].test_accuracy)


def test_run_lines_carries_every_value_with_its_colour_and_dash_groups():
    from ui import charts
    runs_ = [("N = 1", "pre", [0.5, 0.9, 1.0]), ("N = 4", "post", [0.5, float("nan"), 0.75])]
    spec = charts.run_lines(runs_, x_title="epoch", y_title="acc", color_title="N", dash_title="norm",
                            colors={"N = 4": "#123456"}).to_dict()
    rows = next(iter(spec["datasets"].values()))
    assert [(r["color"], r["dash"], r["x"], r["y"]) for r in rows] == [
        ("N = 1", "pre", 1, 0.5), ("N = 1", "pre", 2, 0.9), ("N = 1", "pre", 3, 1.0),
        ("N = 4", "post", 1, 0.5), ("N = 4", "post", 2, None), ("N = 4", "post", 3, 0.75)]
    line = spec["layer"][0]["encoding"]
    assert line["color"]["scale"] == {"domain": ["N = 1", "N = 4"], "range": [charts.CATEGORICAL[0], "#123456"]}
    assert line["strokeDash"]["scale"] == {"domain": ["pre", "post"], "range": [[1, 0], [7, 4]]}
    logged = charts.run_lines([("a", "b", [1.0, 0.0, 0.01])], x_title="x", y_title="y", color_title="c",
                              dash_title="d", log_y=True).to_dict()
    assert [r["y"] for r in next(iter(logged["datasets"].values()))] == [1.0, None, 0.01]  # no 0 on a log axis


def test_results_charts_are_rebuilt_only_when_an_epoch_ends():
    """Between epochs a redraw sends the same charts (the browser leaves them as they are). A run draws before
    it trains its chunk: it shows the epochs that had ended when it began (none right after Start, whose chunk
    builds the runs)."""
    at = start(state=QUICK | {"clf_steps": 30})
    at.button(key="clf_start").click().run()
    seen, before = {}, None  # the epochs when the next run begins
    for _ in range(80):
        now = tuple(len(run.history) for run in runs(at).values())
        shown = before if at.session_state["clf_running"] else now  # a run that ended reruns the page after it
        if shown is not None:
            charts = at.session_state["clf_charts"]
            assert seen.setdefault(shown, charts) is charts
            assert at.session_state["clf_charts_for"][1] == shown
        if not at.session_state["clf_running"]:
            break
        before = now
        at.run()
        assert_clean(at)
    assert not at.session_state["clf_running"] and (2,) in seen
    accuracy = at.session_state["clf_charts"][0]
    assert len(accuracy.data) == 2  # one point per epoch of the one run
