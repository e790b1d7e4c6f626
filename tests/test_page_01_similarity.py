"""Lesson 1's numbers in the reader's language: a decimal comma in Spanish, in prose, captions and LaTeX.

The expected figures are recomputed here with numpy from the course's vectors, independently of `core`.
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from conftest import start_page, table_editor
from widgets import bar_charts

PAGE = Path(__file__).resolve().parents[1] / "lessons" / "01_similarity.py"
X0 = np.array([[0.2, 0.8, 0.3], [0.7, 0.2, 0.9], [0.3, 0.5, 0.2], [0.1, 0.3, 0.4], [0.8, 0.1, 0.6]])


def weights(x: np.ndarray, scale: bool) -> np.ndarray:
    s = x @ x.T / (np.sqrt(x.shape[1]) if scale else 1.0)  # (n, n)
    e = np.exp(s - s.max(axis=1, keepdims=True))  # (n, n)
    return e / e.sum(axis=1, keepdims=True)  # (n, n)


def test_spanish_numbers_have_a_decimal_comma():
    at = start_page(PAGE, lang="es", state={"sim_scale": True, "sim_word": 4})
    assert not at.exception, [e.value for e in at.exception]
    assert "√3 ≈ 1,7321" in at.info[0].value  # √3 = 1.7320508...
    a = weights(X0, scale=True)
    favourite = a[0].max()  # the first word's largest weight, to two decimals in the notice
    notice = " ".join(m.value for m in at.markdown)
    assert f"({favourite:.2f})".replace(".", ",") in notice and f"({favourite:.2f})" not in notice
    latex = " ".join(m.value for m in at.latex)  # arrow's weighted sum: its weights and its new vector
    first = f"{a[4, 0]:.4f}".replace(".", "{,}")
    assert first in latex and f"{a[4, 0]:.4f}" not in latex
    c = a[4] @ X0  # (d,)
    assert "{" + f"{c[0]:.4f}".replace(".", "{,}") + "}" in latex
    captions = " ".join(c.value for c in at.caption)
    assert re.search(r"error máximo aquí: \d,\de[-+]\d\d\)", captions) and "−1000 y 1000" in captions


def test_a_value_out_of_range_is_named_in_spanish_marks():
    at = start_page(PAGE, lang="es")
    editor = table_editor(at, "sim_vectors")
    at.session_state[editor.key] = {"edited_rows": {1: {"d2": 2.5e9}}, "added_rows": [], "deleted_rows": []}
    at.run()
    assert not at.exception and len(at.error) == 1
    assert "2,5e+09 se sale del rango permitido, de −1000 a 1000" in at.error[0].value


def test_the_words_charts_carry_its_weights_and_its_pieces():
    """The chosen word's bars are its row of A, and its stacked chart is built of a_j x_j with c at the ticks."""
    at = start_page(PAGE, lang="en", state={"sim_scale": True, "sim_word": 4})
    assert not at.exception, [e.value for e in at.exception]
    a = weights(X0, scale=True)
    (bars,) = bar_charts(at)
    np.testing.assert_allclose(bars.values, a[4], rtol=1e-6)
    assert bars.labels == ["time", "flies", "like", "an", "arrow"] and bars.written == [f"{v:.2f}" for v in a[4]]
    (stacked,) = bar_charts(at, "stacked")
    pieces = [float(v) for v in re.findall(r'<rect class="part" [^>]*data-value="([^"]+)"', stacked.svg)]
    np.testing.assert_allclose(np.reshape(pieces, (3, 5)).T, a[4][:, None] * X0, rtol=1e-6)  # dimension by dimension
    totals = [float(v) for v in re.findall(r'<line class="total" [^>]*data-value="([^"]+)"', stacked.svg)]
    np.testing.assert_allclose(totals, a[4] @ X0, rtol=1e-6)
