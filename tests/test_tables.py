"""Read-only tables of numbers in the reader's language (ui/tables.py): what each cell is written as, that the
numbers stay numbers underneath, and a Spanish lesson whose "show the numbers" cells have a decimal comma."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit as st
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from conftest import start_page
from ui import tables
from ui.i18n import number

ROOT = Path(__file__).resolve().parents[1]
COMMA_4 = re.compile(r"^-?\d+,\d{4}$")


@pytest.mark.parametrize("value, spec, lang, text", [
    (0.25, None, "en", "0.2500"), (0.25, None, "es", "0,2500"), (-1234.56789, None, "es", "-1234,5679"),
    (1234567, ",d", "en", "1,234,567"), (1234567, ",d", "es", "1.234.567"), (1234567, None, "es", "1234567"),
    (np.int64(40960), ",d", "es", "40.960"), (np.float32(0.5), ".1f", "es", "0,5"), (0.125, ".2%", "es", "12,50\u00a0%"),
    (-math.inf, None, "es", "−∞"), (math.inf, ".2f", "en", "+∞"), (math.nan, None, "es", ""),
    (None, None, "es", ""),
    (True, None, "es", "True"), ("a.b", ".4f", "es", "a.b"),
])
def test_cell_text(value, spec, lang, text):
    assert tables.cell_text(value, spec, lang) == text


def display(element) -> pd.DataFrame:
    """What the grid shows of an st.dataframe element: its Styler's display values."""
    return dataframe_util.convert_arrow_bytes_to_pandas_df(element.proto.arrow_data.styler.display_values)


PROBE = """
import numpy as np, pandas as pd, streamlit as st
from ui import tables
st.session_state["cfg_lang"] = "es"
df = pd.DataFrame({"x": [1234.5, -0.25, -np.inf], "n": [1000, 2, 3], "word": ["a", "b", "c"]}, index=["r0", "r1", "r2"])
tables.dataframe(df, formats={"n": ",d"}, column_config={"x": st.column_config.NumberColumn(width=120)})
"""


def test_numbers_stay_numbers_and_show_in_the_language():
    at = AppTest.from_string(PROBE, default_timeout=30).run()
    assert not at.exception
    (element,) = at.dataframe
    assert element.value["x"].dtype == float and element.value["n"].tolist() == [1000, 2, 3]  # sorts by value
    shown = display(element)
    assert shown.to_dict("list") == {"x": ["1234,5000", "-0,2500", "−∞"], "n": ["1000", "2", "3"],
                                     "word": ["a", "b", "c"]}


PLAIN = """
import pandas as pd, streamlit as st
from ui import tables
st.session_state["cfg_lang"] = "es"
df = pd.DataFrame({"+ token": ["*x*", "- item", "1. one", "<bos>"], "n": [12345, 2, 3, 4]},
                  index=["_a_", "b", "c", "d"])
tables.table(df, formats={"n": ",d"}, key="plain")
"""


def test_a_plain_table_shows_its_text_as_text():
    """st.table reads every cell and header as Markdown: the display is escaped, the data is not."""
    at = AppTest.from_string(PLAIN, default_timeout=30).run()
    assert not at.exception
    (element,) = at.table
    assert element.value[r"\+ token"].tolist() == ["*x*", "- item", "1. one", "<bos>"]  # the data as it was
    assert element.value["n"].tolist() == [12345, 2, 3, 4] and list(element.value.index) == [r"\_a\_", "b", "c", "d"]
    shown = display(element)
    assert shown[r"\+ token"].tolist() == [r"\*x\*", r"\- item", r"1\. one", r"\<bos\>"]
    assert shown["n"].tolist() == ["12\\.345", "2", "3", "4"]  # Spanish thousands, the point escaped


def test_a_column_format_is_refused_and_a_format_for_no_column_too():
    with pytest.raises(ValueError, match="format"):
        tables.dataframe(pd.DataFrame({"x": [1.0]}), column_config={"x": st.column_config.NumberColumn(format="%.4f")})
    with pytest.raises(KeyError, match="nope"):
        tables.styled(pd.DataFrame({"x": [1.0]}), {"nope": ".1f"}, "en")


def test_a_spanish_lesson_writes_its_numbers_with_a_decimal_comma():
    at = start_page(ROOT / "lessons" / "01_similarity.py", lang="es")
    assert not at.exception
    words = ["time", "flies", "like", "an", "arrow"]
    (similarity,) = [d for d in at.dataframe if d.editing_mode == "read_only" and list(d.value.index) == words
                     and list(d.value.columns) == words and np.allclose(d.value.to_numpy(), d.value.to_numpy().T)]
    shown = display(similarity)
    assert shown.shape == (5, 5) and all(COMMA_4.match(s) for s in shown.to_numpy().ravel()), shown
    assert shown.to_numpy().tolist() == [[number(v, ".4f", "es") for v in row]
                                         for row in similarity.value.to_numpy().tolist()]


def test_an_unchanged_table_is_the_same_element_on_the_next_run():
    from streamlit.testing.v1 import AppTest

    at = start_page(ROOT / "lessons" / "04_multi_head.py", lang="es")
    before = {d.proto.SerializeToString() for d in at.dataframe}
    at.run()  # nothing changed: Streamlit resends (and the browser redraws) only elements that differ
    assert before and {d.proto.SerializeToString() for d in at.dataframe} == before


def _numbers_tables(shapes: list[tuple[int, int]]) -> None:
    """A script: "show the numbers" tables of zero matrices of `shapes` (AppTest.from_function runs it alone)."""
    import numpy as np

    from ui import panels

    for rows, cols in shapes:
        panels.numbers_table(np.zeros((rows, cols)), range(rows), range(cols), key=f"m{rows}x{cols}")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_a_matrix_past_the_table_limits_sends_the_reader_to_its_csv(lang):
    from ui import panels
    from ui.i18n import LANG_KEY, t

    cols, cells = panels.NUMBERS_COLUMNS, panels.NUMBERS_CELLS
    shapes = [(cells // cols, cols), (1, cols + 1), (cells // cols + 1, cols), (64, 64)]
    at = AppTest.from_function(_numbers_tables, args=(shapes,), default_timeout=30)
    at.session_state[LANG_KEY] = lang
    at.run()
    assert not at.exception
    assert [d.value.shape for d in at.dataframe] == [(cells // cols, cols), (64, 64)]  # at the limits: tables
    with_lang = {"max_cols": cols, "max_cells": number(cells, ",", lang)}
    assert [c.value for c in at.caption] == [t("panel.numbers_in_csv", lang, rows=r, cols=c, **with_lang)
                                            for r, c in shapes[1:3]]
