"""The app and lesson 1 through Streamlit's AppTest: defaults, edits, extremes, links, languages, page switches.

Numbers are checked against numpy computed here, independently of `core`.
"""
from __future__ import annotations

import io
import os
import string
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ui.i18n import lookup, t
from conftest import lesson_opener, table_editor, widget
from widgets import heatmaps, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "01_similarity.py"
WORDS = ["time", "flies", "like", "an", "arrow"]
X0 = np.array([[0.2, 0.8, 0.3], [0.7, 0.2, 0.9], [0.3, 0.5, 0.2], [0.1, 0.3, 0.4], [0.8, 0.1, 0.6]])


def reference(x: np.ndarray, scale: bool = False) -> dict[str, np.ndarray]:
    """X, S, A, C by plain numpy."""
    s = x @ x.T / (np.sqrt(x.shape[1]) if scale else 1.0)
    e = np.exp(s - s.max(axis=1, keepdims=True))
    a = e / e.sum(axis=1, keepdims=True)
    return {"X": x, "S": s, "A": a, "C": a @ x}


start = lesson_opener(str(PAGE.relative_to(ROOT)))


def tables(at: AppTest) -> dict[str, np.ndarray]:
    """The "show the numbers" tables X, S, A and C, found by their keys."""
    assert len([d for d in at.dataframe if d.editing_mode == "read_only"]) == 4  # these four, no other read-only one
    return {name: table(at, f"sim_{name}_numbers").to_numpy(dtype=float) for name in "XSAC"}


def chart_matrices(at: AppTest) -> list[np.ndarray]:
    """Every matrix panel's matrix, as computed (the values its SVG carries, ui/charts/svg.py)."""
    return [h.matrix for h in heatmaps(at)]


def edit(at: AppTest, edited_rows=None, added_rows=None, deleted_rows=None) -> AppTest:
    """Apply cell edits the way the browser reports them (AppTest cannot type into a data_editor)."""
    editor = table_editor(at, "sim_vectors")
    at.session_state[editor.key] = {"edited_rows": edited_rows or {}, "added_rows": added_rows or [],
                                    "deleted_rows": deleted_rows or []}
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False)
    assert_clean(at)
    assert at.title[0].value == t("sim.title", lang=lang)
    assert not at.error and not at.warning
    assert not at.data_editor  # the vectors open as a plain table ...
    assert widget(at, "toggle", "sim_vectors_editing").label == t("editor.edit", lang=lang)  # ... with a switch
    assert not [d for d in at.dataframe if d.editing_mode == "read_only"]  # no numbers table: "show the numbers" is off
    if path == APP:  # the sidebar is translated too
        assert at.sidebar.toggle[0].label == t("sidebar.show_numbers", lang=lang)


def test_defaults_show_the_course_matrices():
    at = start(show_code=True)  # "show the code" open
    assert_clean(at)
    got, want = tables(at), reference(X0)
    for name in "XSAC":
        np.testing.assert_allclose(got[name], want[name], atol=1e-12, err_msg=name)
    assert got["S"][0, 0] == pytest.approx(0.77) and got["S"][1, 4] == pytest.approx(1.12)
    np.testing.assert_allclose(got["A"].sum(axis=1), 1.0, atol=1e-12)
    S = table(at, "sim_S_numbers")
    assert list(S.index) == WORDS and list(S.columns) == WORDS
    import inspect

    import core
    shown = [c.value.strip() for c in at.main.code]  # "show the code" shows the functions that ran
    assert [inspect.getsource(f).strip() for f in (core.similarity, core.softmax, core.contextualize)] == shown


def test_charts_carry_the_same_numbers():
    at = start(numbers=False)
    heatmaps, want = chart_matrices(at), reference(X0)
    assert len(heatmaps) == 4
    for m, name in zip(heatmaps, "XSAC"):
        np.testing.assert_allclose(m, want[name], atol=1e-12, err_msg=name)


def test_editing_a_vector_changes_every_matrix():
    at = edit(start(), edited_rows={0: {"d1": 0.5}, 3: {"d3": -0.7}})
    assert_clean(at)
    x = X0.copy()
    x[0, 0], x[3, 2] = 0.5, -0.7
    got, want, before = tables(at), reference(x), reference(X0)
    for name in "XSAC":
        np.testing.assert_allclose(got[name], want[name], atol=1e-12, err_msg=name)
        assert not np.allclose(got[name], before[name]), name
    assert not at.error


def test_scaling_changes_s_and_a_and_still_matches_numpy():
    at = start()
    at.toggle(key="sim_scale").set_value(True).run()
    assert_clean(at)
    got, want = tables(at), reference(X0, scale=True)
    for name in "XSAC":
        np.testing.assert_allclose(got[name], want[name], atol=1e-12, err_msg=name)
    assert not np.allclose(got["S"], reference(X0)["S"]) and not np.allclose(got["A"], reference(X0)["A"])
    assert at.info and "√3" in at.info[0].value


def test_more_dimensions_pad_with_zeros_and_keep_s():
    at = start()
    at.number_input(key="sim_dims").set_value(4).run()
    got = tables(at)
    assert got["X"].shape == (5, 4) and np.all(got["X"][:, 3] == 0)
    np.testing.assert_allclose(got["S"], reference(X0)["S"], atol=1e-12)


@pytest.mark.parametrize("case", ["one_word", "twelve_words", "one_dim", "sixteen_dims"])
def test_extremes_of_the_controls(case):
    at = start()
    if case == "one_word":
        at = edit(at, deleted_rows=[1, 2, 3, 4])
        x = X0[:1]
    elif case == "twelve_words":
        extra = [{"word": f"w{k}", "d1": 0.1 * k, "d2": -0.2, "d3": 1.0} for k in range(7)]
        at = edit(at, added_rows=extra)
        x = np.vstack([X0, [[0.1 * k, -0.2, 1.0] for k in range(7)]])
    elif case == "one_dim":
        at.number_input(key="sim_dims").set_value(1).run()
        x = X0[:, :1]
    else:
        at.number_input(key="sim_dims").set_value(16).run()
        x = np.hstack([X0, np.zeros((5, 13))])
    assert_clean(at)
    assert not at.error
    got, want = tables(at), reference(x)
    for name in "XSAC":
        np.testing.assert_allclose(got[name], want[name], atol=1e-12, err_msg=name)


def fixed_words(key: str, lang: str) -> str:
    """The longest literal piece of a catalog message (the part that does not depend on its values)."""
    return max((literal for literal, *_ in string.Formatter().parse(lookup(key, lang))), key=len)


BAD_CELLS = [  # (edit, language, the message that must appear)
    ({"edited_rows": {1: {"d2": "abc"}}}, "en", "editor.not_a_number"),
    ({"edited_rows": {1: {"d2": None}}}, "es", "editor.not_a_number"),
    ({"edited_rows": {1: {"d2": float("nan")}}}, "en", "editor.not_a_number"),
    ({"edited_rows": {1: {"d2": float("inf")}}}, "es", "editor.not_finite"),
    ({"edited_rows": {1: {"d2": 1e9}}}, "en", "editor.too_large"),
    ({"edited_rows": {1: {"word": "time"}}}, "es", "editor.duplicate"),
    ({"edited_rows": {1: {"word": ""}}}, "en", "editor.empty_label"),
    ({"deleted_rows": [0, 1, 2, 3, 4]}, "es", "editor.too_few"),
    ({"added_rows": [{"word": f"w{k}", "d1": 0, "d2": 0, "d3": 0} for k in range(8)]}, "en", "editor.too_many"),
]


@pytest.mark.parametrize("change, lang, message", BAD_CELLS,
                         ids=["text", "empty", "nan", "inf", "1e9", "duplicate", "no_word", "no_rows", "13_rows"])
def test_bad_cells_warn_and_keep_the_last_valid_matrices(change, lang, message):
    at = start(lang=lang)
    first = tables(at)
    at = edit(at, **change)
    assert_clean(at)
    assert len(at.error) == 1
    text = at.error[0].value
    assert text.startswith(t("editor.invalid", lang=lang)) and fixed_words(message, lang) in text
    for name in "XSAC":  # the last valid matrices stay on screen
        np.testing.assert_array_equal(tables(at)[name], first[name])
    rows = 5 + len(change.get("added_rows", [])) - len(change.get("deleted_rows", []))
    assert len(at.session_state["sim_vectors_table"]) == rows  # what the user typed is kept, to be fixed


def test_fixing_a_bad_cell_recovers():
    at = edit(start(), edited_rows={1: {"d2": "abc"}})
    assert at.error
    at = edit(at, edited_rows={1: {"d2": 0.25}})
    assert not at.error
    x = X0.copy()
    x[1, 1] = 0.25
    np.testing.assert_allclose(tables(at)["S"], reference(x)["S"], atol=1e-12)


def test_url_parameters_round_trip():
    query = {"lang": "es", "seed": "7", "d_model": "128", "heads": "8", "seq_len": "16", "mask": "causal"}
    at = start(APP, query=query)
    assert_clean(at)
    assert not at.warning
    assert at.title[0].value == t("sim.title", lang="es")
    assert {k: at.query_params[k] for k in query} == query
    assert at.session_state["cfg_d_model"] == 128 and at.session_state["cfg_heads"] == 8
    at.number_input(key="cfg_d_model").set_value(100).run()  # 8 heads do not divide 100: the closest is 5
    assert at.query_params["d_model"] == "100" and at.query_params["heads"] == "5"
    assert widget(at, "selectbox", "cfg_heads").options == ["1", "2", "4", "5", "10"]


def test_closed_lesson_settings_still_take_keep_and_share_their_values():
    """The sidebar's lesson settings are drawn only while open (a first visit: closed). Closed, a link still sets
    them, a bad value is still reported at the top, and the link still carries them all."""
    query = {"seed": "7", "d_model": "128", "heads": "8", "seq_len": "16", "mask": "causal"}
    at = start(APP, query=query, state={"settings_open": False})
    assert_clean(at)
    assert not at.sidebar.number_input and not at.sidebar.selectbox and not at.sidebar.slider
    assert {k: at.query_params[k] for k in query} == query and not at.warning
    assert at.session_state["cfg_d_model"] == 128 and at.session_state["cfg_mask"] == "causal"
    at.session_state["settings_box"] = True  # the learner opens them: the controls show the link's values
    at.run()
    assert at.number_input(key="cfg_d_model").value == 128 and at.slider(key="cfg_seq_len").value == 16
    at.number_input(key="cfg_seed").set_value(3).run()
    at.session_state["settings_box"] = False  # and closes them again: the new seed stays, in the link too
    at.run()
    assert not at.sidebar.number_input and at.session_state["cfg_seed"] == 3 and at.query_params["seed"] == "3"
    at = start(APP, query={"d_model": "abc"}, state={"settings_open": False})
    assert at.warning and "**d_model**" in at.warning[0].value and at.query_params["d_model"] == "64"


@pytest.mark.parametrize("query, lang, name, fallback", [
    ({"d_model": "abc"}, "en", "d_model", "64"),
    ({"heads": "7", "d_model": "64", "lang": "es"}, "es", "heads", "4"),
    ({"lang": "fr"}, "en", "lang", "en"),
    ({"seq_len": "1000", "mask": "diagonal"}, "en", "seq_len", "8"),
])
def test_invalid_url_parameters_warn_and_fall_back(query, lang, name, fallback):
    at = start(APP, query=query)
    assert_clean(at)
    assert at.warning, "a bad link value must be reported"
    warning = at.warning[0].value
    assert f"**{name}**" in warning and fixed_words("state.bad_url_value", lang) in warning
    assert at.query_params[name] == fallback
    if "mask" in query:
        assert len(at.warning) == 2 and at.query_params["mask"] == "none"
    at.run()  # the warning stays on screen ...
    assert at.warning and f"**{name}**" in at.warning[0].value
    if name == "d_model":  # ... until the user sets that value
        at.number_input(key="cfg_d_model").set_value(96).run()
        assert not at.warning and at.query_params["d_model"] == "96"


def test_browser_locale_picks_the_language():
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.context["locale"] = "es-AR"
    at.run().switch_page(str(PAGE.relative_to(ROOT))).run()
    assert at.title[0].value == t("sim.title", lang="es") and at.query_params["lang"] == "es"


def test_language_switch_keeps_the_edited_vectors():
    at = edit(start(APP), edited_rows={2: {"d1": 0.9}, 4: {"word": "flecha"}})
    at.sidebar.radio[0].set_value("es").run()
    assert_clean(at)
    assert at.title[0].value == t("sim.title", lang="es")
    assert at.data_editor[0].key.endswith("_es")  # a new editor widget ...
    assert at.data_editor[0].value.iloc[2]["d1"] == 0.9  # ... that starts from the edited table
    assert list(table(at, "sim_X_numbers").index) == ["time", "flies", "like", "an", "flecha"]
    assert at.toggle(key="sim_scale").label == t("sim.scale", lang="es")


def test_page_switch_keeps_the_edited_vectors(tmp_path):
    other = tmp_path / "other.py"
    other.write_text("import streamlit as st\nst.write('another lesson')\n")
    main = tmp_path / "main.py"
    main.write_text(
        "import streamlit as st\n"
        f"pages = [st.Page({str(PAGE)!r}, url_path='similarity'), st.Page({str(other)!r}, url_path='other')]\n"
        "st.navigation(pages).run()\n")
    at = AppTest.from_file(str(main), default_timeout=30)
    at.session_state["cfg_show_numbers"] = True
    at = edit(at.run(), edited_rows={0: {"d2": -0.4}}, added_rows=[{"word": "fruit", "d1": 1, "d2": 0, "d3": 0}])
    editor_key = at.data_editor[0].key
    at.switch_page("other.py").run()
    assert not at.data_editor and editor_key not in at.session_state  # Streamlit dropped the widget's state
    at.switch_page(os.path.relpath(PAGE, tmp_path)).run()
    assert_clean(at)
    x = np.vstack([X0, [[1, 0, 0]]])
    x[0, 1] = -0.4
    np.testing.assert_allclose(tables(at)["X"], x)
    assert at.data_editor[0].value.iloc[5]["word"] == "fruit"  # the switch stayed on, the grid has the edits


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_help_beside_each_table_to_edit_names_its_switch(lang):
    for help_key in ("sim.editor_help", "ln.editor_help", "dec.editor_help"):  # lessons 1, 6 and 10
        assert t("editor.edit", lang=lang) in t(help_key, lang=lang, max=12, bound=1000.0), help_key


def test_the_vectors_open_as_a_plain_table_and_the_switch_edits_them():
    at = start(APP)
    plain = table(at, "sim_vectors_plain")
    assert list(plain[t("sim.word")]) == WORDS and list(plain.columns[1:]) == [t("sim.dim", k=k) for k in range(3)]
    np.testing.assert_array_equal(plain.iloc[:, 1:].to_numpy(dtype=float), X0)
    edit(at, edited_rows={2: {"d1": 0.9}})  # switches "Edit the table" on, then edits in the grid
    widget(at, "toggle", "sim_vectors_editing").set_value(False).run()
    assert not at.data_editor and table(at, "sim_vectors_plain").iloc[2, 1] == 0.9  # off: the edited table
    assert tables(at)["X"][2, 0] == 0.9
    assert table_editor(at, "sim_vectors").value.iloc[2]["d1"] == 0.9  # on again: the grid starts from it



def test_downloads_are_made_only_when_clicked():
    at = start(numbers=False)
    assert not at.get("download_button")  # a closed menu holds no button (X, S, A and C each have one)
    at.session_state["sim_S_download"] = True  # what opening S's menu sets
    buttons = at.run().get("download_button")
    assert len(buttons) == 3  # CSV, PNG and SVG of S
    assert all(b.proto.deferred_file_id and not b.proto.url for b in buttons)  # callables, not files
    from ui import charts, panels
    drawn = charts.heatmap_svg(X0 @ X0.T, WORDS, WORDS)  # what the panel draws and hands to its menu
    assert panels.png_bytes(drawn.svg)[:4] == b"\x89PNG"
    big = panels.picture(np.ones((40, 40)), "weights", 300)  # a big matrix's picture: a PNG inside the SVG
    png = panels.png_bytes(big.svg)
    assert png[:4] == b"\x89PNG"
    from PIL import Image
    drawn = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))  # drawn at scale 2: the picture is there
    assert (drawn == [int(charts.WEIGHT_STOPS[-1][1][k:k + 2], 16) for k in (1, 3, 5)]).all(axis=-1).sum() > 300 ** 2
    csv = panels.csv_text(panels.numbers_frame(X0 @ X0.T, WORDS, WORDS)).splitlines()
    assert csv[0] == "," + ",".join(WORDS) and csv[1].startswith("time,0.77,0.57")


def test_the_sidebar_reads_every_setting_from_a_link():
    from ui import state
    assert state.language_from_locale("es-ES") == "es" and state.language_from_locale(None) == "en"
    good = {"d_model": "96", "heads": "12", "seq_len": "64", "seed": "3", "mask": "both", "lang": "es"}
    at = start(APP, query=good)
    assert not at.exception and not at.warning
    assert {name: state.url_text(at.session_state[state.key(name)]) for name in good} == good
    bad = {"d_model": "7", "heads": "x", "seq_len": "65", "seed": "-1", "mask": "", "lang": "de"}
    at = start(APP, query=bad)
    assert not at.exception and len(at.warning) == len(bad)  # one warning per value, at the top of the page
    assert all(f"**{name}**" in w.value for name, w in zip(["lang", "d_model", "heads", "seq_len", "mask", "seed"],
                                                           at.warning)), [w.value for w in at.warning]
    assert {name: at.session_state[state.key(name)] for name in bad} == {name: state.DEFAULTS[name] for name in bad}
    assert state.heads_options(64) == [1, 2, 4, 8, 16] and state.closest_heads(100, 8) == 5


def test_url_paths_differ_from_the_pages_folder_names():
    """See ui.lessons.PAGES: a url equal to the file's own name would be run without the app frame."""
    import ast
    import re
    tree = ast.parse((ROOT / "ui" / "lessons.py").read_text("utf-8"))
    pages = next(ast.literal_eval(n.value) for n in ast.walk(tree)
                 if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "PAGES")
    for _, file, _, _, url in pages:
        assert (ROOT / file).is_file()
        assert url != re.sub(r"^\d+_", "", Path(file).stem), file


def test_the_code_is_sent_only_while_show_the_code_is_open():
    import inspect

    import core
    from ui.panels import CODE_KEY

    at = start()
    assert not at.main.code and at.main.expander(key=CODE_KEY).label == t("common.show_code")
    at.session_state[CODE_KEY] = True  # what a click on the expander sets
    at.run()
    assert inspect.getsource(core.softmax).strip() in [c.value.strip() for c in at.main.code]
