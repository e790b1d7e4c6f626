"""core.lab.exercise_checks: lesson 11's solutions against plain numpy, and the reading and grading of answers."""
import math

import numpy as np
from course_numbers import B_1, B_2, W_1, W_2

from core.lab import exercise_checks as ec


def layer_norm(x: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    return (x - mean) / (x.std(-1, ddof=1, keepdims=True) + 1e-6)  # unbiased std, as the course's LayerNorm


def test_embedding_is_sqrt2_x_plus_sin_cos():
    got = ec.solve_embedding()
    pos = np.arange(3.0)
    np.testing.assert_allclose(got["pe"], np.stack([np.sin(pos), np.cos(pos)], 1), atol=1e-12)
    np.testing.assert_allclose(got["out"], math.sqrt(2) * got["X"] + got["pe"], atol=1e-12)
    np.testing.assert_allclose(got["out"], ec.COURSE_EX1, atol=1e-4)


def test_ffn_steps_before_and_after_the_relu_match_numpy():
    z, a = ec.course_chain()
    got = ec.solve_ffn(ec.COURSE_EX1, tuple(map(tuple, a)))
    u = layer_norm(np.array(ec.COURSE_EX1) + a)  # (3, 2)
    pre = u @ np.array(W_1).T + np.array(B_1)  # (3, 8)
    np.testing.assert_allclose(got["normalized"], u, atol=1e-9)
    np.testing.assert_allclose(got["pre"], pre, atol=1e-9)
    np.testing.assert_allclose(got["hidden"], np.maximum(pre, 0), atol=1e-9)
    np.testing.assert_allclose(got["out"], np.maximum(pre, 0) @ np.array(W_2).T + np.array(B_2), atol=1e-9)
    assert (got["pre"] < 0).sum() == 9  # the negative entries the ReLU removes, with the course's inputs
    np.testing.assert_allclose(z, np.round(layer_norm(np.array(ec.COURSE_EX1)), 4))


def test_dropout_keeps_the_expected_value_scale():
    got = ec.solve_dropout(ec.COURSE_EX1)
    x = np.array(ec.COURSE_EX1)
    np.testing.assert_allclose(got["p01"], x / 0.9)
    np.testing.assert_allclose(got["p05"], x * np.array(ec.KEEP_05) * 2)


def test_parse_cells_reads_numbers_and_names_the_rest():
    cells = np.array([["0.5", "0,25", ""], [None, "abc", float("nan")], ["inf", 3, " -1 "]], dtype=object)
    values, bad = ec.parse_cells(cells)
    assert bad == [(1, 1, "abc"), (2, 0, "inf")]
    np.testing.assert_array_equal(values[0, :2], [0.5, 0.25])
    assert values[2, 1] == 3 and values[2, 2] == -1
    assert np.isnan(values[0, 2]) and np.isnan(values[1, 0]) and np.isnan(values[1, 2])


def test_grade_reports_empty_and_wrong_cells_without_the_answer():
    expected = np.array([[1.0, 2.0], [3.0, 4.0]])
    values = np.array([[1.0005, np.nan], [3.01, 3.99]])
    report = ec.grade(values, expected, 0.001)
    assert report["empty"] == [(0, 1)]
    assert [(i, j, v) for i, j, v, _ in report["wrong"]] == [(1, 0, 3.01), (1, 1, 3.99)]
    assert report["wrong"][0][3] > 0 > report["wrong"][1][3]
    assert ec.grade(expected + 0.001, expected, 0.001) == {"empty": [], "wrong": []}  # exactly tol away is right
