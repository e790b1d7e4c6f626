"""The sweep: every lesson in PAGES x both languages x every control at its extremes renders cleanly.

Each lesson runs through app.py (so the frame and its sidebar run too). After a first run the test discovers the
keyed widgets on screen and changes them one at a time from the defaults, resetting each before the next:
sliders and number inputs to their minimum and maximum, option widgets (selectbox, radio, select_slider) to their
first and last option, toggles and checkboxes flipped, multiselects emptied and filled, text inputs empty, very
long, non-Latin and full of markup characters. Widgets that a change reveals (a toggle that opens a panel) are swept
too, one level deep. The sidebar's settings are swept once per lesson, in the English run (the language switch is
one of them). Then free text and data editors get hypothesis-generated input (NaN, infinities, huge numbers, text,
empty rows), with a fixed derandomized seed and few examples so the run time stays bounded.

After every change: no exception, no error box, and no NaN or +inf in any shown table (read-only dataframes and
st.table), chart dataset (the Arrow data Streamlit sends to Vega-Lite) or heatmap drawn on the server (the values
its SVG carries, ui/charts/svg.py). Two things are allowed by design:
-inf (a masked score, drawn grey and labelled "-inf"), and the NaN row of lesson 3 that shows what torch.softmax
does to a fully masked row. Bad free-form input may raise a translated error box (panels.problems_box says which
cell is wrong and that the last valid values are shown), never a traceback.

Last, every enabled button is pressed once (they cannot be undone), except the ones that start training (lesson 9's
and the classifier's Start/Continue): their setup controls are swept, the training is not run here. From the first
press on, error boxes are allowed too: a button may grade the user's input (lesson 11's Check shows a wrong or empty
answer in an error box, by design).
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from conftest import start_page
from widgets import (KINDS, LESSONS, _pages_literal, apply, extremes, find, heatmaps, keyed_widgets, page_file,
                     snapshot)
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as hs
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from ui.i18n import lookup

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
LANGS = ("en", "es")
FREE_TEXT = ("text_input", "text_area")
INTENTIONAL_NAN_ROWS = {"lessons/03_masks.py": {"torch.softmax"}}  # the demo of torch.softmax on a fully masked row
NEVER_PRESSED = ("train.start", "train.continue", "clf.start", "clf.continue")  # they start a long training run
EDITOR_EXAMPLES, TEXT_EXAMPLES = 6, 4  # hypothesis examples per data editor / text input (derandomized) ...
MAX_EXAMPLES = 24  # ... and at most this many per lesson and language (lesson 11 has eleven answer grids)


# ---- what must hold after every run ------------------------------------------------------------------------

Problem = tuple[str, str]  # (what is wrong, the same for every change that causes it; details of this case)


def _frame_problems(df: pd.DataFrame, where: str, allowed_rows: set[str], row_column: str | None) -> list[Problem]:
    """NaN or +inf in any numeric column of `df`. Heatmap data (ui.charts) keeps a non-finite cell's value as
    None and spells it in "exact" ("-inf", "nan", "inf"): there "nan" and "inf" count, "-inf" (masked) does not."""
    heatmap = {"value", "finite", "exact"} <= set(df.columns)
    numeric = df.select_dtypes(include="number").drop(columns=["value"] if heatmap else [], errors="ignore")
    bad = pd.DataFrame(np.isnan(numeric.to_numpy(dtype=float)) | (numeric.to_numpy(dtype=float) == np.inf),
                       columns=numeric.columns, index=df.index)
    if heatmap:
        bad["value"] = df["exact"].isin(["nan", "inf"]).to_numpy()
    labels = df[row_column] if row_column else df.index.to_series()
    bad = bad[~labels.astype(str).isin(allowed_rows).to_numpy()]
    columns = [str(c) for c in bad.columns if bad[c].any()]
    if not columns:
        return []
    rows = bad.index[bad.any(axis=1)]
    return [(f"{where}: NaN or +inf in column(s) {columns}",
             f"{len(rows)} of {len(df)} rows, e.g. {df.loc[rows[:2]].to_dict('records')}"[:600])]


def problems(at: AppTest, lesson: str, *, free_form: bool) -> list[Problem]:
    """Everything wrong with the last run: exceptions, error boxes (not for free-form input), NaN/+inf shown."""
    found = [(f"exception: {e.value}", "\n".join(e.stack_trace)) for e in at.exception]
    if not free_form:
        found += [(f"error box: {e.value[:300]}", "") for e in at.error]
    allowed = INTENTIONAL_NAN_ROWS.get(lesson, set())
    for frame in at.dataframe:
        if frame.editing_mode == "read_only":
            df = frame.value
            found += _frame_problems(df, f"the table with columns {list(df.columns)[:4]}", allowed, None)
    for table in at.table:
        found += _frame_problems(table.value, f"the st.table with columns {list(table.value.columns)[:4]}",
                                 allowed, None)
    for k, chart in enumerate(at.get("vega_lite_chart")):
        for ds in chart.proto.datasets:
            df = dataframe_util.convert_arrow_bytes_to_pandas_df(ds.data.data)
            found += _frame_problems(df, f"chart {k + 1}", allowed, "row" if "row" in df.columns else None)
        inline = json.loads(chart.proto.spec).get("data", {}).get("values")
        if inline:
            found += _frame_problems(pd.DataFrame(inline), f"chart {k + 1} (inline data)", allowed, None)
    for k, heatmap in enumerate(heatmaps(at)):  # an image: its values as computed, by row
        rows, cols = heatmap.matrix.shape
        labels = [row for row, _, _ in heatmap.cells] or [str(i) for i in range(rows) for _ in range(cols)]
        cells = pd.DataFrame({"row": labels, "value": heatmap.matrix.ravel()})  # cells under 12 px have no labels
        found += _frame_problems(cells, f"heatmap {k + 1}", allowed, "row")
    return found


def run_and_check(at: AppTest, lesson: str, *, free_form: bool = False) -> list[Problem]:
    try:
        at.run()
    except RuntimeError as error:  # a run that times out
        return [(f"the run failed: {type(error).__name__}: {error}", "")]
    return problems(at, lesson, free_form=free_form)


# ---- the sweep ---------------------------------------------------------------------------------------------

class Sweep:
    """One AppTest for one lesson in one language, changed one control at a time and reset in between."""

    def __init__(self, lesson: str, lang: str):
        self.lesson, self.lang = lesson, lang
        self.at = start_page(APP, lang=lang, lesson=lesson)
        self.failures: dict[str, list[tuple[str, str]]] = {}  # problem: [(the change that showed it, details)]
        self.record("defaults", problems(self.at, lesson, free_form=False))
        self.sidebar = set(keyed_widgets(self.at.sidebar))
        self.seen = keyed_widgets(self.at)
        self.changes = 0
        self.context = ""  # says which change revealed the widget being swept
        self.judged = False  # True once a button may have graded the user's input (then error boxes are allowed)

    def record(self, what: str, found: list[Problem]) -> None:
        for problem, detail in found:
            self.failures.setdefault(problem, []).append((what, detail))

    def check(self, what: str, *, free_form: bool = False) -> None:
        free_form = free_form or self.judged
        self.record(self.context + what, run_and_check(self.at, self.lesson, free_form=free_form))

    def report(self) -> str:
        """Each distinct problem once: the first change that showed it, its details, how often it came back."""
        parts = []
        for problem, seen in self.failures.items():
            (first, detail), more = seen[0], [what for what, _ in seen[1:]]
            text = f"- {problem}\n  first after: {first}"
            if detail:
                text += "\n  " + detail.replace("\n", "\n  ")
            if more:
                text += f"\n  also after {len(more)} other change(s), e.g. {'; '.join(more[:3])}"
            parts.append(text)
        return f"{self.lesson} [{self.lang}]: {len(parts)} distinct problem(s) in {self.changes} changes\n\n" + \
            "\n\n".join(parts)

    def targets(self, kinds: tuple[str, ...]) -> list[tuple[str, str]]:
        own = [(name, kind) for name, kind in self.seen.items() if name not in self.sidebar]
        frame = [(name, kind) for name, kind in self.seen.items() if name in self.sidebar]
        chosen = own + (frame if self.lang == "en" else [])  # the frame's controls: once per lesson
        return [(name, kind) for name, kind in chosen if kind in kinds]

    def sweep(self, name: str, kind: str, *, reveal: bool = True) -> None:
        w = find(self.at, kind, name)
        if w is None:  # hidden by the defaults of another control since discovery
            return
        before = snapshot(w, kind)
        for label, value in extremes(w, kind):
            w = find(self.at, kind, name)
            if w is None:
                self.record(f"{kind} {name!r}", [("the widget disappeared while it was being swept", "")])
                return
            apply(w, kind, value)
            what = f"{kind} {name!r} {label}"
            self.check(what, free_form=kind in FREE_TEXT)
            self.changes += 1
            if reveal and kind not in FREE_TEXT:
                self.sweep_revealed(what)
        self.reset(name, kind, before)

    def sweep_revealed(self, cause: str) -> None:
        """Sweep the widgets this change brought on screen (one level deep), then put them back."""
        new = {n: k for n, k in keyed_widgets(self.at).items() if n not in self.seen and n not in self.sidebar}
        for name, kind in new.items():
            self.context = f"(after {cause}) "
            self.sweep(name, kind, reveal=False)
            self.context = ""

    def press_buttons(self) -> None:
        """Press every enabled button once (not the ones that start training), checking after each and sweeping
        what it reveals. Buttons cannot be undone, so this comes last."""
        never = set()
        for key in NEVER_PRESSED:
            try:
                never.add(lookup(key, self.lang))
            except KeyError:  # that lesson is gone or renamed; its key check below still applies
                pass

        def pressable(b) -> bool:
            return not b.proto.disabled and b.label not in never and "start" not in (b.key or "")

        for key, label in [(b.key, b.label) for b in self.at.button if pressable(b)]:
            button = next((b for b in self.at.button if pressable(b) and (b.key == key if key else b.label == label)),
                          None)
            if button is None:  # an earlier press removed or disabled it
                continue
            button.click()
            self.judged = True  # lesson 11's Check grades the (empty) answers: a wrong one is shown in an error box
            what = f"button {key or label!r} pressed"
            self.check(what)
            self.changes += 1
            self.sweep_revealed(what)

    def reset(self, name: str, kind: str, value: Any) -> None:
        w = find(self.at, kind, name)
        if w is None:
            return
        if snapshot(w, kind) != value:
            apply(w, kind, value)
            self.check(f"{kind} {name!r} back to its default")


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("lesson", LESSONS, ids=[Path(p).stem for p in LESSONS])
def test_every_control_at_its_extremes(lesson, lang, record_property):
    sweep = Sweep(lesson, lang)
    assert sweep.seen, f"{lesson}: no keyed widget found"
    for name, kind in sweep.targets(KINDS):
        sweep.sweep(name, kind)
    sweep_generated_input(sweep)
    sweep.press_buttons()
    record_property("changes", sweep.changes)  # how many changes were checked (in --junitxml reports)
    assert not sweep.failures, sweep.report()


# ---- generated input: data editors and free text -------------------------------------------------------------

NUMBERS = hs.one_of(hs.floats(allow_nan=True, allow_infinity=True), hs.sampled_from([1e308, -1e308, 1e16, -0.0]),
                    hs.integers(-10**6, 10**6))
CELLS = hs.one_of(NUMBERS, hs.text(max_size=12), hs.just(""), hs.none())
LABELS = hs.one_of(hs.text(max_size=30), hs.just(""), hs.none(), NUMBERS)


def editor_edits(df: pd.DataFrame, dynamic: bool) -> hs.SearchStrategy[dict]:
    """The delta a browser's data editor reports: edited cells, added rows (possibly empty), deleted rows."""
    n, columns = len(df), list(df.columns)
    text_columns = {c for c in columns if not pd.api.types.is_numeric_dtype(df[c])}

    def cell(column: str) -> hs.SearchStrategy:
        return LABELS if column in text_columns else CELLS

    row = hs.fixed_dictionaries({}, optional={c: cell(c) for c in columns})
    edited = hs.dictionaries(hs.integers(0, max(n - 1, 0)), row.filter(bool), max_size=3) if n else hs.just({})
    return hs.fixed_dictionaries({
        "edited_rows": edited,
        "added_rows": hs.lists(row, max_size=3) if dynamic else hs.just([]),
        "deleted_rows": hs.lists(hs.integers(0, n - 1), max_size=n, unique=True) if dynamic and n else hs.just([]),
    })


def sweep_generated_input(sweep: Sweep) -> None:
    """Hypothesis-generated edits for every data editor and text for every text input, one at a time."""
    at = sweep.at
    closed = [w for w in at.toggle if w.key and w.key.endswith("_editing") and not w.value]
    for switch in closed:  # a table to edit (ui.panels.matrix_editor) opens plain: "Edit the table" shows the grid
        switch.set_value(True)
    if closed:
        at.run()
    editors = [e.key for e in at.data_editor if e.key]
    texts = [(name, kind) for name, kind in sweep.targets(FREE_TEXT)]
    if not editors and not texts:
        return
    choices = [("editor", key) for key in editors] + [(kind, name) for name, kind in texts]
    budget = min(EDITOR_EXAMPLES * len(editors) + TEXT_EXAMPLES * len(texts), MAX_EXAMPLES)

    @settings(max_examples=budget, derandomize=True, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(data=hs.data())
    def one_input(data):
        kind, name = data.draw(hs.sampled_from(choices), label="control")
        if kind == "editor":
            editor = next((e for e in at.data_editor if e.key == name), None)
            if editor is None:
                return
            edit = data.draw(editor_edits(editor.value, editor.editing_mode == "dynamic"), label="edit")
            at.session_state[name] = edit
            found = run_and_check(at, sweep.lesson, free_form=True)
            at.session_state[name] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []}
        else:
            w = find(at, kind, name)
            if w is None:
                return
            before = w.value
            limit = w.proto.max_chars or None
            text = data.draw(hs.text(max_size=300).map(lambda s: s[:limit]), label="text")
            w.set_value(text)
            found = run_and_check(at, sweep.lesson, free_form=True)
            find(at, kind, name).set_value(before)
        found += run_and_check(at, sweep.lesson)
        sweep.changes += 1
        new = [(problem, detail) for problem, detail in found if problem not in sweep.failures]  # not seen before
        assert not new, "\n\n".join(f"{problem}\n{detail}" for problem, detail in new)

    try:
        one_input()
    except AssertionError as error:  # the first failing example (hypothesis adds the drawn values to the note)
        notes = "\n".join(getattr(error, "__notes__", []))
        sweep.record("generated input", [(f"generated input: {str(error).splitlines()[0]}", f"{error}\n{notes}")])


# ---- the sweep's own machinery, on a small app --------------------------------------------------------------

CHECKED_APP = """
import numpy as np, pandas as pd, streamlit as st
from ui import charts, panels
st.dataframe(pd.DataFrame({"fine": [1.0, 2.0], "broken": [1.0, float("nan")]}))
st.table(pd.DataFrame({"big": [float("inf")]}))
panels.svg_image(charts.heatmap_svg(np.array([[0.0, -np.inf], [np.nan, 1.0]]), ["r0", "r1"], ["c0", "c1"]))
st.dataframe(pd.DataFrame({"masked": [-np.inf, 0.0]}))
st.error("boom")
raise ValueError("bad input")
"""


def test_the_checks_find_nan_inf_errors_and_exceptions():
    at = AppTest.from_string(CHECKED_APP, default_timeout=30).run()
    found = dict(problems(at, "lessons/x.py", free_form=False))
    assert sorted(found) == sorted([
        "exception: bad input", "error box: boom",
        "the table with columns ['fine', 'broken']: NaN or +inf in column(s) ['broken']",
        "the st.table with columns ['big']: NaN or +inf in column(s) ['big']",
        "heatmap 1: NaN or +inf in column(s) ['value']"])  # -inf (a masked score) is allowed, in a chart or a table
    assert "1 of 4 rows" in found["heatmap 1: NaN or +inf in column(s) ['value']"]
    free = dict(problems(at, "lessons/x.py", free_form=True))
    assert "error box: boom" not in free and "exception: bad input" in free
    INTENTIONAL_NAN_ROWS["lessons/x.py"] = {"r1"}
    try:
        assert not [p for p in problems(at, "lessons/x.py", free_form=False) if p[0].startswith("heatmap")]
    finally:
        del INTENTIONAL_NAN_ROWS["lessons/x.py"]


OPTIONS_APP = """
import streamlit as st
st.selectbox("s", [10, 20, 30], format_func=lambda v: f"<{v}>", key="s")
st.radio("r", ["a", "b"], format_func=str.upper, key="r", index=None)
st.select_slider("ss", [0.5, 1.5, 2.5], format_func=lambda v: f"{v:.1f} x", key="ss")
st.multiselect("m", [1, 2, 3], format_func=lambda v: f"item {v}", key="m", default=[2])
st.slider("sl", 1, 9, key="sl")
st.write(repr([st.session_state[k] for k in ("s", "r", "ss", "m", "sl")]))
"""


def test_option_widgets_are_set_by_their_labels_and_found_by_key():
    at = AppTest.from_string(OPTIONS_APP, default_timeout=30).run()
    assert keyed_widgets(at) == {"s": "selectbox", "r": "radio", "ss": "select_slider", "m": "multiselect",
                                 "sl": "slider"}
    before = {name: snapshot(find(at, kind, name), kind) for name, kind in keyed_widgets(at).items()}
    assert before == {"s": 0, "r": None, "ss": [0], "m": [1], "sl": 1}
    described = {name: [label for label, _ in extremes(find(at, kind, name), kind)]
                 for name, kind in keyed_widgets(at).items()}
    assert described == {"s": ["last = '<30>'"], "r": ["first = 'A'", "last = 'B'"], "ss": ["last = ['2.5 x']"],
                         "m": ["none = []", "all = ['item 1', 'item 2', 'item 3']"], "sl": ["max = 9.0"]}
    for name, kind in keyed_widgets(at).items():
        w = find(at, kind, name)
        apply(w, kind, extremes(w, kind)[-1][1])
    at.run()
    assert at.markdown[-1].value == "[30, 'b', 2.5, [1, 2, 3], 9]"
    for name, kind in keyed_widgets(at).items():
        apply(find(at, kind, name), kind, before[name])
    at.run()
    assert at.markdown[-1].value == "[10, None, 0.5, [2], 1]"


def test_pages_are_read_from_app_py_or_ui_lessons(tmp_path):
    listed = tmp_path / "app.py"
    listed.write_text('import x\nPAGES = (("a", "lessons/01_a.py", "k", ":i:", "u"),\n         ("b", "lessons/02_b.py", "k2", ":i:", "v"))\n')
    assert [page_file(entry) for entry in _pages_literal(listed)] == ["lessons/01_a.py", "lessons/02_b.py"]
    imported = tmp_path / "imported.py"
    imported.write_text("from ui.lessons import PAGES\n")
    assert _pages_literal(imported) is None and _pages_literal(tmp_path / "missing.py") is None
    built = tmp_path / "built.py"
    built.write_text("PAGES = tuple(make(n) for n in NAMES)\n")
    assert _pages_literal(built) is None

    @dataclasses.dataclass(frozen=True)
    class Lesson:
        section: str
        path: str
        title_key: str

    assert page_file(Lesson("attention", "lessons/03_masks.py", "masks.nav_title")) == "lessons/03_masks.py"
    assert page_file({"file": ROOT / "lessons" / "04_multi_head.py", "icon": ":i:"}) == "lessons/04_multi_head.py"
    assert LESSONS and all(path.startswith("lessons/") and (ROOT / path).is_file() for path in LESSONS), LESSONS
