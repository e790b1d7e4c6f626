"""Lesson 11 (the worked exercises and the conceptual questions) through AppTest.

The revealed solutions are checked against an independent computation written here in plain torch (sin/cos PE,
LayerNorm with the unbiased std, softmax(Q Kᵀ/√d) V, linear layers as x Wᵀ + b) and against the course's numbers.
"""
from __future__ import annotations

import inspect
import math
import string
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import lesson_opener, widget
from widgets import table
from streamlit.testing.v1 import AppTest
from course_numbers import B_1, B_2, B_K, B_O, B_Q, B_V, W_1, W_2, W_K, W_O, W_Q, W_V, X

import core
from core.lab.exercises import course_model, dropout_with_mask, wrong_entries
from core.hooks import trace
from core.layers import _Block
from ui.i18n import lookup, number, t

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "11_exercises.py"
COURSE_EX1 = [[0.4513, -0.1872], [1.2927, -0.6469], [0.9508, 0.8249]]  # exercise 1's result as the course prints it
COURSE_PE = ((0.0, 1.0), (0.8415, 0.5403), (0.9093, -0.4161))
COURSE_MEANS, COURSE_STDS = (0.1320, 0.3229, 0.8879), ("0.4515", "1.3715", "0.0890")
SOLUTION_TABLES = ("e1_scaled", "e1_pe", "e1_out", "e2_p01", "e2_keep", "e2_p05", "e3_stats", "e3_normalized",
                   "e4_scores", "e4_weights", "e4_out", "e5_q", "e5_k", "e5_v", "e5_scores", "e5_weights",
                   "e5_heads", "e5_out", "e6_resid", "e6_stats", "e6_normalized", "e6_out", "e6_pre", "e6_hidden")
N_SCORE = 6 + 7
QUESTION_IDS = ("residuals", "prenorm", "decoder", "training", "padding", "inference", "recipe")
EXERCISE_PARTS = {"embedding": (1, 2, 3), "attention": (4, 5, 6)}  # the lesson's parts (ui/parts.py) and their exercises


def d(values) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64)


def lin(x: torch.Tensor, w, b) -> torch.Tensor:
    return x @ d(w).T + d(b)


def ln(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    mean, std = x.mean(-1, keepdim=True), x.std(-1, keepdim=True)  # torch's std is unbiased by default
    return mean, std, (x - mean) / (std + 1e-6)


def reference(x1=COURSE_EX1, own_z=None, own_a=None) -> dict[str, np.ndarray]:
    """Every exercise by the plain formulas; later steps start from the 4-decimal result of the earlier ones."""
    pos = torch.arange(3, dtype=torch.float64)
    pe = torch.stack([torch.sin(pos), torch.cos(pos)], dim=1)  # d_model = 2: one frequency
    x, r = d(x1), {"e1_scaled": math.sqrt(2) * X.double(), "e1_pe": pe}
    r["e1_out"] = r["e1_scaled"] + pe
    keep = d([[0, 1], [0, 1], [0, 0]])
    r |= {"e2_p01": x / 0.9, "e2_keep": keep, "e2_p05": x * keep * 2}
    mean, std, z = ln(x)
    r |= {"e3_stats": torch.cat([mean, std], 1), "e3_normalized": z}
    zc = torch.round(z, decimals=4) if own_z is None else d(own_z)
    scores = zc @ zc.T / math.sqrt(2)
    r |= {"e4_scores": scores, "e4_weights": torch.softmax(scores, -1), "e4_out": torch.softmax(scores, -1) @ zc}
    q, k, v = lin(zc, W_Q, B_Q), lin(zc, W_K, B_K), lin(zc, W_V, B_V)
    scores = q @ k.T / math.sqrt(2)
    weights = torch.softmax(scores, -1)
    r |= {"e5_q": q, "e5_k": k, "e5_v": v, "e5_scores": scores, "e5_weights": weights, "e5_heads": weights @ v,
          "e5_out": lin(weights @ v, W_O, B_O)}
    a = torch.round(r["e5_out"], decimals=4) if own_a is None else d(own_a)
    resid = x + a
    mean, std, u = ln(resid)
    pre = lin(u, W_1, B_1)
    hidden = torch.where(pre > 0, pre, torch.zeros_like(pre))  # ReLU written out
    r |= {"e6_resid": resid, "e6_stats": torch.cat([mean, std], 1), "e6_normalized": u, "e6_out": lin(hidden, W_2, B_2),
          "e6_pre": pre, "e6_hidden": hidden}
    return {name: v.numpy() for name, v in r.items()}


REF = reference()


start = lesson_opener("lessons/11_exercises.py")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick one of the lesson's parts (ui/parts.py) with its selector."""
    widget(at, "radio", "ex_part").set_value(part).run()
    assert at.session_state["ex_part"] == part
    return at


def solutions(at: AppTest) -> dict[str, np.ndarray]:
    """The revealed solution tables of the part on screen, by name (each found by its key)."""
    got = {}
    for name in SOLUTION_TABLES:
        try:
            got[name] = table(at, f"ex_{name}_numbers").to_numpy(dtype=float)
        except KeyError:
            continue
    return got


def reveal_all(at: AppTest) -> AppTest:
    """Reveal the six solutions, part by part (the second part of exercises stays open)."""
    for part, numbers in EXERCISE_PARTS.items():
        open_part(at, part)
        for n in numbers:
            at.button(key=f"ex_reveal_{n}").click()
        at.run()
    return at


def every_solution(at: AppTest) -> dict[str, np.ndarray]:
    """The revealed solutions of both parts of exercises (the second part stays open)."""
    got = solutions(open_part(at, "embedding")) | solutions(open_part(at, "attention"))
    assert list(got) == list(SOLUTION_TABLES)
    return got


def type_answer(at: AppTest, part: str, values, lang: str = "en") -> AppTest:
    editor = next(e for e in at.data_editor if e.key == f"ex_ans_{part}_editor_{lang}")
    cols = list(editor.value.columns)
    rows = {i: {cols[j]: v for j, v in enumerate(row)} for i, row in enumerate(values)}
    at.session_state[editor.key] = {"edited_rows": rows, "added_rows": [], "deleted_rows": []}
    return at.run()


def score(at: AppTest) -> int:
    lang = at.session_state["cfg_lang"]
    head = lookup("ex.score", lang).split("{score}")[0]
    text = next(m.value for m in at.markdown if m.value.startswith(head))
    return int(text[len(head):].split("/")[0])


def fixed_words(key: str, lang: str) -> str:
    return max((literal for literal, *_ in string.Formatter().parse(lookup(key, lang))), key=len)


# ---- the page at its defaults ------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, show_code=True)  # "show the code" open
    assert_clean(at)
    assert at.title[0].value == t("ex.title", lang=lang)
    assert at.session_state["ex_part"] == "embedding"  # the first part, alone: exercises 1 to 3
    assert len(at.data_editor) == 5 and not [r for r in at.radio if r.key.startswith("ex_q_")]
    assert score(at) == 0 and any(m.value.startswith(t("ex.score", lang=lang, score=0, total=N_SCORE, ex=0, n_ex=6,
                                                         q=0, n_q=7)) for m in at.markdown)
    assert sum(c.value == t("ex.from_course", lang=lang, n=1) for c in at.caption) == 2  # exercises 2 and 3
    functions = (course_model, core.Embeddings.forward, dropout_with_mask, core.LayerNorm.forward,
                 core.scaled_dot_product_attention, core.MultiHeadAttention.forward, core.EncoderLayer.forward,
                 _Block.residual, core.FeedForward.forward, trace, wrong_entries)
    assert [c.value.strip() for c in at.main.code] == [inspect.getsource(f).strip() for f in functions]
    assert len(open_part(at, "attention").data_editor) == 6  # exercises 4 to 6, two tables each
    open_part(at, "questions")
    radios = [r for r in at.radio if r.key.startswith("ex_q_")]
    assert not at.data_editor and len(radios) == 7 and all(r.value is None for r in radios)
    at = reveal_all(at)
    assert_clean(at)
    assert len(at.info) == 3 and at.info[0].value == t("ex.e4_note", lang=lang)  # exercises 4 to 6's notes
    open_part(at, "embedding")
    assert len(at.info) == 3 and at.info[2].value == t("ex.e3_note", lang=lang)


def test_inputs_show_the_course_numbers():
    at = start()
    text = " ".join(x.value for x in at.latex)
    text += " ".join(x.value for x in open_part(at, "attention").latex)
    for value in ("0.3191", "-0.8395", "0.0293", "0.8776", "0.4513", "-0.1872", "0.9508", "0.8249", "0.7071",
                  "0.8635", "-0.5157", "0.4008", "-0.2173", "-0.6624", "-0.2395"):
        assert value in text, value


def test_revealed_solutions_match_the_formulas_and_the_course():
    at = reveal_all(start())
    assert_clean(at)
    got = every_solution(at)
    open_part(at, "embedding")  # the notes below are exercises 1 and 3's
    for name, want in REF.items():
        np.testing.assert_allclose(got[name], want, atol=1e-9, err_msg=name)
    assert [[f"{v:.4f}" for v in row] for row in got["e1_pe"]] == [[f"{v:.4f}" for v in row] for row in COURSE_PE]
    np.testing.assert_allclose(got["e1_out"], np.array(COURSE_EX1), atol=1e-4)  # t2: 0.9507 / 0.9508, see the note
    assert [f"{v:.4f}" for v in got["e1_out"][:2].ravel()] == ["0.4513", "-0.1872", "1.2927", "-0.6469"]
    means, stds = got["e3_stats"][:, 0], got["e3_stats"][:, 1]
    np.testing.assert_allclose(means, COURSE_MEANS, atol=5e-5 + 1e-9)  # t0: 0.13205, halfway at 4 decimals
    assert [f"{v:.4f}" for v in means[1:]] == ["0.3229", "0.8879"] and f"{means[0]:.5f}" == "0.13205"
    assert [f"{v:.4f}" for v in stds] == list(COURSE_STDS)
    assert "0.13205" in at.info[2].value and "0.1320" in at.info[2].value  # the discrepancy is explained
    assert "0.9507" in at.info[0].value and "0.9508" in at.info[0].value
    np.testing.assert_allclose(got["e4_weights"], np.full((3, 3), 1 / 3), atol=1e-6)
    # the step-by-step chain agrees with the whole model run once from the tokens, to the rounding of 4 decimals
    _, cache = core.run_with_trace(course_model(), torch.tensor([[2, 2, 1]]), torch.tensor([[1]]))
    np.testing.assert_allclose(got["e6_out"], cache["encoder.layers.0.ff.hook_out"][0].numpy(), atol=1e-3)
    np.testing.assert_allclose(got["e6_resid"], cache["encoder.layers.0.hook_resid_mid"][0].numpy(), atol=1e-3)


# ---- checking answers ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang", ["en", "es"])
def test_check_marks_a_right_answer_right_and_names_a_wrong_entry(lang):
    at = start(lang=lang)
    right = np.round(REF["e1_out"], 4)
    at = type_answer(at, "1_out", right.tolist(), lang)
    at.button(key="ex_check_1").click().run()
    assert_clean(at)
    assert at.success[0].value == t("ex.all_right", lang=lang, tol="±" + number(0.001, "g", lang)) and score(at) == 1
    wrong = right.copy()
    wrong[1, 0] += 0.01
    at = type_answer(at, "1_out", wrong.tolist(), lang)
    at.button(key="ex_check_1").click().run()
    assert not at.exception and len(at.error) == 1
    message = at.error[0].value
    where = t("ex.cell", lang=lang, row=2, label="t1", col=1, clabel="d1")
    assert t("ex.cell_high", lang=lang, part="√2 · X + PE", where=where, value=number(wrong[1, 0], ".4f", lang)) in message
    assert message.count("- ") == 1 and number(right[1, 0], ".4f", lang) not in message  # the answer is not given away
    assert score(at) == 0  # the latest check counts


def test_two_part_answer_and_too_low():
    at = start()
    at = type_answer(at, "2_p01", np.round(REF["e2_p01"], 4).tolist())
    low = np.round(REF["e2_p05"], 4)
    low[2, 1] -= 0.5
    at = type_answer(at, "2_p05", low.tolist())
    at.button(key="ex_check_2").click().run()
    where = t("ex.cell", row=3, label="t2", col=2, clabel="d2")
    assert t("ex.cell_low", part=t("ex.part_p05"), where=where, value=f"{low[2, 1]:.4f}") in at.error[0].value
    assert t("ex.part_p01") not in at.error[0].value


@pytest.mark.parametrize("lang", ["en", "es"])
def test_text_and_nan_cells_give_messages_not_exceptions(lang):
    at = start(lang=lang)
    at = type_answer(at, "1_out", [[0.4513, "abc"], ["NaN", -0.6469], [None, 0.825]], lang)  # None: a cleared cell
    assert not at.exception
    bad = [(t("ex.cell", lang=lang, row=1, label="t0", col=2, clabel="d2"), "abc"),
           (t("ex.cell", lang=lang, row=2, label="t1", col=1, clabel="d1"), "NaN")]
    assert [w.value for w in at.warning] == [t("ex.not_a_number", lang=lang, where=w, text=x) for w, x in bad]
    kept = at.session_state["ex_ans_1_out_table"]  # nothing typed is lost
    assert float(kept.iat[0, 0]) == 0.4513 and kept.iat[0, 1] == "abc" and float(kept.iat[2, 1]) == 0.825
    at.button(key="ex_check_1").click().run()
    assert not at.exception and score(at) == 0
    message = at.error[0].value
    assert message.count("\n- ") == 3
    for row, label, col in ((1, "t0", 2), (2, "t1", 1), (3, "t2", 1)):
        where = t("ex.cell", lang=lang, row=row, label=label, col=col, clabel=f"d{col}")
        assert t("ex.cell_empty", lang=lang, part="√2 · X + PE", where=where) in message
    at = type_answer(at, "1_out", [[0.4513, "-0,1872"], [1.2927, -0.6469], [0.9507, 0.825]], lang)  # comma decimal
    at.button(key="ex_check_1").click().run()
    assert not at.warning and at.success and score(at) == 1


def test_tolerance_control_decides_and_its_extremes_run():
    at = start()
    off = np.round(REF["e1_out"], 4) + 0.003
    at = type_answer(at, "1_out", off.tolist())
    at.button(key="ex_check_1").click().run()
    assert at.error and fixed_words("ex.some_wrong", "en") in at.error[0].value and "±0.001" in at.error[0].value
    widget(at, "select_slider", "ex_tol").set_value(0.005).run()
    at.button(key="ex_check_1").click().run()
    assert at.success[0].value == t("ex.all_right", tol="±0.005") and score(at) == 1
    for tol in (0.0005, 0.01):
        widget(at, "select_slider", "ex_tol").set_value(tol).run()
        assert_clean(at)
    for lang in ("en", "es"):  # powers of ten, the same in both languages (no decimal mark to translate)
        at.session_state["cfg_lang"] = lang
        assert widget(at.run(), "select_slider", "ex_tol").options == ["±5×10⁻⁴", "±10⁻³", "±5×10⁻³", "±10⁻²"]


def test_reveal_before_a_right_check_does_not_score():
    at = start(ex_part="attention")
    at.button(key="ex_reveal_4").click().run()
    at = type_answer(at, "4_weights", np.round(REF["e4_weights"], 4).tolist())
    at = type_answer(at, "4_out", np.round(REF["e4_out"], 4).tolist())
    at.button(key="ex_check_4").click().run()
    assert at.success and score(at) == 0
    assert any(c.value == t("ex.after_reveal") for c in at.caption)


def test_exercise_6_checks_against_the_normalized_residual_sum():
    at = start(ex_part="attention")
    at = type_answer(at, "6_normalized", np.round(REF["e6_normalized"], 4).tolist())
    at = type_answer(at, "6_out", np.round(REF["e6_out"], 4).tolist())
    at.button(key="ex_check_6").click().run()
    assert at.success and score(at) == 1
    unnormalized = lin(torch.relu(lin(d(REF["e6_resid"]), W_1, B_1)), W_2, B_2).numpy()  # FFN(x₁): LN₂ forgotten
    at = type_answer(at, "6_out", np.round(unnormalized, 4).tolist())
    at.button(key="ex_check_6").click().run()
    assert at.error and score(at) == 0


# ---- carrying answers forward --------------------------------------------------------------------------------

def test_own_answers_are_carried_forward_when_complete():
    at = start()
    at.toggle(key="ex_own").set_value(True).run()
    assert sum(c.value == t("ex.own_missing", n=1) for c in at.caption) == 2  # nothing typed yet: course values
    mine = [[0.5, -0.2], [1.3, -0.6], [0.9, 0.8]]
    at = type_answer(at, "1_out", mine)
    at = open_part(reveal_all(at), "embedding")
    assert_clean(at)
    assert sum(c.value == t("ex.from_you", n=1) for c in at.caption) == 2
    got, want = solutions(at), reference(x1=mine)
    for name in ("e2_p01", "e2_p05", "e3_stats", "e3_normalized"):
        np.testing.assert_allclose(got[name], want[name], atol=1e-9, err_msg=name)
    own_a = [[0.4, 0.3], [0.2, 0.1], [0.0, -0.1]]
    at = type_answer(open_part(at, "attention"), "5_out", own_a)  # the answer typed in part 1 still counts here
    want = reference(x1=mine, own_a=own_a)
    assert sum(c.value.startswith(t("ex.from_you", n=1)) for c in at.caption) == 1  # exercise 6 starts from it too
    np.testing.assert_allclose(solutions(at)["e6_out"], want["e6_out"], atol=1e-9)
    at.toggle(key="ex_own").set_value(False).run()
    np.testing.assert_allclose(solutions(open_part(at, "embedding"))["e2_p01"], REF["e2_p01"], atol=1e-9)  # the course's


# ---- the conceptual questions and the score ---------------------------------------------------------------------

def question(at: AppTest, q: str):
    return widget(at, "radio", f"ex_q_{q}")


@pytest.mark.parametrize("lang", ["en", "es"])
def test_questions_explain_every_option_and_update_the_score(lang):
    at = start(lang=lang, ex_part="questions")
    at.button(key="ex_qcheck_residuals").click().run()
    assert [w.value for w in at.warning] == [t("ex.choose_first", lang=lang)] and score(at) == 0
    question(at, "residuals").set_value(1).run()
    at.button(key="ex_qcheck_residuals").click().run()
    assert_clean(at)
    assert at.success[0].value == t("ex.mcq_right", lang=lang, answer=t("ex.q_residuals_o1", lang=lang))
    shown = " ".join(m.value for m in at.markdown)
    assert all(t(f"ex.q_residuals_e{k}", lang=lang) in shown for k in range(4))
    assert score(at) == 1
    question(at, "recipe").set_value(2).run()  # wrong: that is the 2017 recipe
    at.button(key="ex_qcheck_recipe").click().run()
    assert at.error[0].value == t("ex.mcq_wrong", lang=lang, answer=t("ex.q_recipe_o2", lang=lang))
    assert score(at) == 1
    question(at, "recipe").set_value(0).run()  # right on the second try: only the first checked answer counts
    at.button(key="ex_qcheck_recipe").click().run()
    assert at.success and score(at) == 1


def test_reset_score_and_the_score_survives_a_page_switch():
    at = open_part(start(APP), "questions")
    question(at, "decoder").set_value(0).run()
    at.button(key="ex_qcheck_decoder").click().run()
    at = type_answer(open_part(at, "embedding"), "1_out", np.round(REF["e1_out"], 4).tolist())
    at.button(key="ex_check_1").click().run()
    assert score(at) == 2
    at.switch_page("lessons/06_layer_norm.py").run()
    assert_clean(at)
    at.switch_page(str(PAGE.relative_to(ROOT))).run()
    assert_clean(at)
    assert score(at) == 2 and at.session_state["ex_part"] == "embedding"  # the part left open is open again
    assert question(open_part(at, "questions"), "decoder").value == 0
    at.sidebar.radio[0].set_value("es").run()  # the language switch keeps the score and the typed answer
    assert score(at) == 2 and float(at.session_state["ex_ans_1_out_table"].iat[0, 0]) == pytest.approx(0.4513)
    next(b for b in at.button if b.label == t("ex.reset_score", lang="es")).click().run()
    assert_clean(at)
    assert score(at) == 0 and not at.success
    assert float(at.session_state["ex_ans_1_out_table"].iat[0, 0]) == pytest.approx(0.4513)  # answers are kept


def test_every_question_has_exactly_one_right_option():
    page = PAGE.read_text("utf-8")
    for q, right in (("residuals", 1), ("prenorm", 2), ("decoder", 0), ("training", 3), ("padding", 1),
                     ("inference", 2), ("recipe", 0)):
        assert f'("{q}", {right})' in page
        for lang in ("en", "es"):
            assert lookup(f"ex.q_{q}_e{right}", lang).startswith(("Right", "Correcto"))
            assert not any(lookup(f"ex.q_{q}_e{k}", lang).startswith(("Right", "Correcto"))
                           for k in range(4) if k != right)


# ---- exercise 6 step by step, and the options' lengths ----------------------------------------------------------

def test_exercise_6_shows_the_hidden_layer_before_and_after_the_relu():
    at = reveal_all(start())
    got = solutions(at)
    pre, hidden = got["e6_pre"], got["e6_hidden"]
    # before the ReLU some entries are negative (9 of the 24 with the course's inputs), after it they are 0
    assert (pre < 0).sum() == 9 and (hidden >= 0).all()
    np.testing.assert_array_equal(hidden, np.maximum(pre, 0))
    negative = int((REF["e6_pre"] < 0).sum())
    assert t("ex.e6_relu", negative=negative, cells=24) in [c.value for c in at.caption]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_right_option_is_not_given_away_by_its_length(lang):
    """Length gives nothing away: the right option is the strictly longest (or the strictly shortest) in at most a
    fair share of the questions, one in four options."""
    page = PAGE.read_text("utf-8")
    right = {q: int(page.split(f'("{q}", ')[1][0]) for q in QUESTION_IDS}
    longest = shortest = 0
    for q, r in right.items():
        lengths = [len(lookup(f"ex.q_{q}_o{k}", lang)) for k in range(4)]
        others = lengths[:r] + lengths[r + 1:]
        longest += lengths[r] > max(others)
        shortest += lengths[r] < min(others)
    fair = math.ceil(len(right) / 4)
    assert longest <= fair and shortest <= fair, (longest, shortest)
