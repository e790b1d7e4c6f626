"""Lesson 10 (decoding strategies) through AppTest.

Numbers are checked against references written here: the toy distributions by numpy and plain-Python sorting,
the model's next-token logits and sequence log-probabilities by teacher-forced forward passes of the same
checkpoints, greedy answers by core.decoding.greedy_decode (the page itself decodes with core.sampling).
"""
from __future__ import annotations

import copy
import inspect
import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import lesson_opener, table_editor, widget
from streamlit.testing.v1 import AppTest
from widgets import bar_charts

from core.checkpoints import load_checkpoint
from core.decoding import beam_paths, beam_search, greedy_decode, next_token_logits
from core.sampling import (apply_temperature, decode_steps, decode_strategies, filter_logits, filter_stages, sample,
                           sequence_log_prob, top_k_filter, top_p_filter)
from core.tasks import BOS_ID, EOS_ID, PAD_ID
from core.train import CHECKPOINT_DIR
from ui import charts
from ui.i18n import lookup, t

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "10_decoding.py"
TOY = np.array([3.0, 2.2, 1.9, 1.0, 0.2, -0.5])
SHIPPED = ("copy", "addition", "parser")
SVG = "{http://www.w3.org/2000/svg}"
ALL_CODE = (apply_temperature, top_k_filter, top_p_filter, filter_logits, sample, next_token_logits, decode_steps,
            beam_search)


@pytest.fixture(scope="module")
def ckpt():
    return {name: load_checkpoint(CHECKPOINT_DIR / f"{name}.pt") for name in SHIPPED}


start = lesson_opener("lessons/10_decoding.py", dec_part="toy")  # the toy distribution unless told


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


TABLE_COLUMNS = {"dec_toy_numbers": "dec.col_draws", "dec_compare": "dec.col_tokens", "dec_samples": "dec.col_count",
                 "dec_step_numbers": "dec.col_after", "dec_candidates": "dec.col_status", "dec_final": "dec.col_score"}


def frames(at: AppTest, key: str, lang: str) -> list[pd.DataFrame]:
    """The read-only tables with the column that only table `key` has (AppTest does not expose their keys)."""
    column = t(TABLE_COLUMNS[key], lang=lang)
    return [d.value for d in at.table if column in d.value.columns]


def frame(at: AppTest, key: str, lang: str = "en") -> pd.DataFrame:
    found = frames(at, key, lang)
    assert len(found) == 1, (key, [list(d.value.columns) for d in at.table])
    return found[0]


def has_frame(at: AppTest, key: str, lang: str = "en") -> bool:
    return bool(frames(at, key, lang))


def np_softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z[np.isfinite(z)].max())
    return e / e.sum()


def reference_toy(z: np.ndarray, T: float, k: int, p: float) -> dict[str, np.ndarray]:
    """The page's five distributions, from sorting in plain Python (ties towards the first row)."""
    def keep_k(v, k):
        order = sorted(range(len(v)), key=lambda i: (-v[i], i))
        return np.array([-math.inf if i not in order[:k] else x for i, x in enumerate(v)])

    def keep_p(v, p):
        probs = np_softmax(v)
        kept, total = [], 0.0
        for i in sorted(range(len(v)), key=lambda i: (-probs[i], i)):
            if probs[i] == 0 or total >= p:
                break
            kept.append(i)
            total += probs[i]
        return np.array([x if i in kept else -math.inf for i, x in enumerate(v)])

    zt = z / T
    return {"softmax(z)": np_softmax(z), f"T = {T:g}": np_softmax(zt), f"top-k (k = {k})": np_softmax(keep_k(zt, k)),
            f"top-p (p = {p:g})": np_softmax(keep_p(zt, p)), "final": np_softmax(keep_p(keep_k(zt, k), p))}


def check_toy(at: AppTest, z: np.ndarray, T: float, k: int, p: float, draws: int) -> None:
    got = frame(at, "dec_toy_numbers")
    want = reference_toy(z, T, k, p)
    final = got[t("dec.col_all")].to_numpy(float)
    for name, values in want.items():
        column = final if name == "final" else got[name].to_numpy(float)
        np.testing.assert_allclose(column, values, atol=1e-12, err_msg=name)
    counts = got[t("dec.col_draws")].to_numpy(float)
    assert counts.sum() == draws and counts[want["final"] == 0].sum() == 0
    np.testing.assert_allclose(got[t("dec.col_expected")].to_numpy(float), draws * want["final"], atol=1e-9)
    shown = bar_charts(at)  # the five distributions, then the draws against what they expect
    assert len(shown) == 6 and all(chart.labels == list(got.index) for chart in shown)
    for chart, (name, values) in zip(shown, want.items()):
        np.testing.assert_allclose(chart.values, values, atol=1e-12, err_msg=name)
    for chart in shown[2:5]:  # the filters: what they removed is grey, written as removed
        removed = chart.values == 0
        assert [fill == charts.PALETTE["masked"] for fill in chart.fills] == removed.tolist()
        assert [text == t("dec.removed") for text in chart.written] == removed.tolist()
        np.testing.assert_allclose(chart.ghosts, want[f"T = {T:g}"], atol=1e-12)
    np.testing.assert_array_equal(shown[5].values, counts)
    np.testing.assert_allclose(shown[5].ghosts, draws * want["final"], atol=1e-9)
    assert shown[0].marked == [int(np.argmax(z))]


def teacher_forced(model, src: torch.Tensor, tokens: list[int]) -> tuple[torch.Tensor, float]:
    """Logits (k, V) of every position and the summed log-probability of `tokens`, in one forward pass."""
    with torch.no_grad():
        logits = model(src, torch.tensor([[BOS_ID, *tokens[:-1]]]))[0]  # (k, V)
    lp = torch.log_softmax(logits, -1).gather(-1, torch.tensor(tokens)[:, None]).sum()
    return logits, float(lp)


def model_id(task: str) -> str:
    return f"shipped:{task}"


# ---- the page at its defaults ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False, show_code=True)  # "show the code" open
    assert_clean(at)
    assert at.title[0].value == t("dec.title", lang=lang)
    assert not at.warning
    assert [c.value.strip() for c in at.main.code] == [inspect.getsource(f).strip() for f in ALL_CODE[:5]]
    assert "dec_model" not in [w.key for w in at.selectbox]  # the model part is neither run nor drawn
    assert any(m.value.startswith(lookup("dec.notice_points", lang)[:30]) for m in at.markdown)
    widget(at, "radio", "dec_part").set_value("model").run()  # the second part: the toy one is gone
    assert_clean(at)
    assert not at.warning and "dec_temp" not in [w.key for w in at.slider]
    assert [c.value.strip() for c in at.main.code] == [inspect.getsource(f).strip() for f in ALL_CODE]  # shown = run
    assert widget(at, "selectbox", "dec_model").value == "early:copy"  # where the strategies differ
    assert any(m.value.startswith(lookup("dec.notice_points", lang)[:30]) for m in at.markdown)


def test_toy_defaults_match_the_references():
    at = start()
    assert_clean(at)
    check_toy(at, TOY, 1.0, 3, 0.9, 20)
    got = frame(at, "dec_toy_numbers")
    assert list(got.index) == ["mat", "sofa", "floor", "roof", "moon", "cloud"]
    summary = next(m.value for m in at.markdown if m.value.startswith("Greedy decoding takes"))
    assert "**mat**, **sofa**, **floor**, **roof**, which together hold 0.9547" in summary  # 4 tokens reach 0.9
    np.testing.assert_allclose(np_softmax(TOY)[:4].sum(), 0.9547, atol=5e-5)


def test_toy_numbers_in_spanish_have_a_decimal_comma():
    at = start(lang="es", state={"dec_temp": 0.7})
    assert_clean(at)
    got = frame(at, "dec_toy_numbers", "es")
    assert {"T = 0,7", "top-p (p = 0,9)"} <= set(got.columns)
    kept = reference_toy(TOY, 0.7, 3, 0.9)["T = 0.7"]  # the tempered probabilities: top-p keeps the first to 0.9
    mass = np.sort(kept)[::-1].cumsum()
    mass = mass[np.argmax(mass >= 0.9)]
    summary = next(m.value for m in at.markdown if m.value.startswith(lookup("dec.toy_summary", "es")[:20]))
    assert f"{mass:.4f}".replace(".", ",") in summary and "p = 0,9 " in summary


@pytest.mark.parametrize("name,value", [("dec_temp", 0.1), ("dec_temp", 3.0), ("dec_top_k", 1), ("dec_top_k", 6),
                                        ("dec_top_p", 0.05), ("dec_top_p", 1.0), ("dec_draws", 10000)])
def test_toy_controls_at_their_extremes(name, value):
    at = start()
    before = frame(at, "dec_toy_numbers")
    kind = "select_slider" if name == "dec_draws" else "slider"
    widget(at, kind, f"{name}").set_value(value).run()
    assert_clean(at)
    settings = {"dec_temp": 1.0, "dec_top_k": 3, "dec_top_p": 0.9, "dec_draws": 20} | {name: value}
    check_toy(at, TOY, settings["dec_temp"], settings["dec_top_k"], settings["dec_top_p"], settings["dec_draws"])
    assert not frame(at, "dec_toy_numbers").equals(before)  # the change shows


def test_toy_extremes_reach_greedy_and_the_tail():
    at = start()
    widget(at, "slider", "dec_top_k").set_value(6).run()
    widget(at, "slider", "dec_top_p").set_value(1.0).run()
    widget(at, "slider", "dec_temp").set_value(3.0).run()
    final = frame(at, "dec_toy_numbers")[t("dec.col_all")].to_numpy(float)
    assert (final > 0).all() and final.max() < 0.3  # flat: every token possible
    widget(at, "slider", "dec_top_p").set_value(0.05).run()
    final = frame(at, "dec_toy_numbers")[t("dec.col_all")].to_numpy(float)
    assert final.tolist() == [1.0, 0, 0, 0, 0, 0]  # only the argmax survives: greedy


def test_many_draws_approach_the_distribution_and_follow_the_seed():
    at = start(state={"dec_draws": 10000})
    first = frame(at, "dec_toy_numbers")
    counts, want = first[t("dec.col_draws")].to_numpy(float), first[t("dec.col_all")].to_numpy(float)
    assert np.abs(counts / 10000 - want).max() < 5 * np.sqrt(0.25 / 10000)  # 0.025: five standard errors at most
    at.run()
    assert frame(at, "dec_toy_numbers")[t("dec.col_draws")].equals(first[t("dec.col_draws")])  # seeded
    other = start(state={"dec_draws": 10000, "cfg_seed": 1})
    assert not frame(other, "dec_toy_numbers")[t("dec.col_draws")].equals(first[t("dec.col_draws")])


def test_editing_the_toy_table():
    at = start()
    editor = table_editor(at, "dec_toy")
    at.session_state[editor.key] = {"edited_rows": {0: {"logit": 0.0}, 5: {"token": "rug"}}, "added_rows": [],
                                    "deleted_rows": []}
    at.run()
    assert_clean(at)
    z = np.array([0.0, 2.2, 1.9, 1.0, 0.2, -0.5])
    check_toy(at, z, 1.0, 3, 0.9, 20)
    assert list(frame(at, "dec_toy_numbers").index)[-1] == "rug"


@pytest.mark.parametrize("change,problem", [
    ({"edited_rows": {1: {"logit": "abc"}}}, "editor.not_a_number"),
    ({"edited_rows": {1: {"token": "mat"}}}, "editor.duplicate"),
    ({"edited_rows": {1: {"logit": 1e6}}}, "editor.too_large"),
    ({"deleted_rows": [0, 1, 2, 3, 4]}, "editor.too_few")])
def test_bad_toy_cells_give_a_message_and_keep_the_last_valid_table(change, problem):
    at = start()
    editor = table_editor(at, "dec_toy")
    at.session_state[editor.key] = {"edited_rows": {}, "added_rows": [], "deleted_rows": []} | change
    at.run()
    assert not at.exception
    assert len(at.error) == 1 and t("editor.invalid") in at.error[0].value
    fixed = re.split(r"\{[a-z]+(?::[^{}]*)?\}", lookup(problem, "en"))
    assert all(piece in at.error[0].value for piece in fixed if piece.strip())
    check_toy(at, TOY, 1.0, 3, 0.9, 20)  # still the last valid numbers


# ---- the trained models ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", SHIPPED)
def test_each_model_decodes_like_the_references(ckpt, name):
    at = start(dec_part="model", state={"dec_model": model_id(name)})
    assert_clean(at)
    model, task = ckpt[name].model, ckpt[name].task
    text = task.examples(1)[0][0]
    assert widget(at, "text_input", f"dec_text_shipped_{name}").value == text
    src = task.encode_source(text)
    greedy = greedy_decode(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID)[0].tolist()
    expected = task.format_target(task.answer(task.parse(text)))
    table = frame(at, "dec_compare")
    assert table[t("dec.col_output")].iloc[0] == task.decode_target(greedy)
    assert table[t("dec.col_right")].iloc[0] == ("✓" if task.decode_target(greedy) == expected else "✗")
    assert table[t("dec.col_tokens")].iloc[0] == len(greedy)
    assert table[t("dec.col_logp")].iloc[0] == pytest.approx(teacher_forced(model, src, greedy)[1], abs=1e-4)
    assert any(f"**{expected}**" in m.value for m in at.markdown)
    # step 1 of greedy: the logits the page shows are the model's, after <bos>
    shown = frame(at, "dec_step_numbers")[t("dec.logit")].to_numpy(float)
    np.testing.assert_allclose(shown, teacher_forced(model, src, greedy)[0][0].numpy(), atol=1e-4)


def test_choosing_each_model_in_the_selectbox():
    at = start(dec_part="model")
    box = widget(at, "selectbox", "dec_model")
    early = load_checkpoint(CHECKPOINT_DIR / "copy_early.pt").metrics
    assert box.options == [t("models.shipped", task=t(f"task.{n}")) for n in SHIPPED] + [
        t("dec.model_early", step=early["steps"], total=early["train_config"]["steps"])]
    for name in SHIPPED:
        widget(at, "selectbox", "dec_model").set_value(model_id(name)).run()
        assert_clean(at)
        assert at.text_input[0].key == f"dec_text_shipped_{name}"


@pytest.mark.parametrize("name,text,code", [
    ("addition", "", "empty"), ("addition", "12a+3", "unknown_symbol"), ("addition", "1234+1", "too_long"),
    ("addition", "12+", "bad_format"), ("parser", "w=1+2", "unknown_symbol"), ("parser", "x=4+99", "too_long"),
    ("parser", "x=4+", "bad_format"), ("copy", "0 1", "unknown_symbol"), ("copy", "1 2 3", "too_short"),
    ("copy", " ".join(["1"] * 21), "too_long"), ("copy", "   ", "empty")])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_bad_inputs_give_translated_messages(name, text, code, lang):
    at = start(lang=lang, dec_part="model", state={"dec_model": model_id(name), f"dec_text_shipped_{name}": text})
    assert not at.exception and not at.error
    assert len(at.warning) == 1
    fixed = [piece for piece in re.split(r"\{[a-z]+\}", lookup(f"dec.err_{code}", lang)) if piece.strip()]
    assert all(piece in at.warning[0].value for piece in fixed), at.warning[0].value
    assert not has_frame(at, "dec_compare", lang)  # nothing decoded from an unreadable input
    assert at.text_input[0].value == text  # the input is kept to be fixed
    at.text_input[0].set_value("1 " * 20 if name == "copy" else "12+3" if name == "addition" else "x=1+2").run()
    assert_clean(at)
    assert not at.warning and has_frame(at, "dec_compare", lang)


@pytest.mark.parametrize("name,value", [("dec_m_temp", 0.1), ("dec_m_temp", 3.0), ("dec_m_top_k", 1),
                                        ("dec_m_top_k", 13), ("dec_m_top_p", 0.05), ("dec_m_top_p", 1.0),
                                        ("dec_width", 1), ("dec_width", 8), ("dec_alpha", 0.0), ("dec_alpha", 2.0)])
def test_model_controls_at_their_extremes(name, value):
    at = start(dec_part="model", state={"dec_view": "beam" if name in ("dec_width", "dec_alpha") else "sampling"})
    widget(at, "slider", f"{name}").set_value(value).run()
    assert_clean(at)
    assert widget(at, "slider", f"{name}").value == value
    table = frame(at, "dec_compare")
    if name == "dec_width":
        assert len(frame(at, "dec_final")) == value
    if (name, value) in (("dec_width", 1), ("dec_m_temp", 0.1), ("dec_m_top_k", 1), ("dec_m_top_p", 0.05)):
        row = 2 if name == "dec_width" else 1  # each of these makes that strategy greedy
        assert table[t("dec.col_output")].iloc[row] == table[t("dec.col_output")].iloc[0]


@pytest.mark.parametrize("seed", [0, 2**31 - 1])
def test_sampling_seed_extremes_and_hot_sampling_disagrees(ckpt, seed):
    at = start(dec_part="model", state={"dec_model": model_id("copy"), "dec_m_temp": 3.0, "dec_m_seed": seed})
    assert_clean(at)
    table = frame(at, "dec_compare")
    greedy, sampled = table[t("dec.col_output")].iloc[:2]
    assert sampled != greedy  # at T = 3 over 21 tokens: the chance of reproducing greedy is about 1e-14
    at.run()
    assert frame(at, "dec_compare").equals(table)  # seeded: the same answer on a rerun
    model, task = ckpt["copy"].model, ckpt["copy"].task
    src = task.encode_source(task.examples(1)[0][0])
    trace = decode_steps(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID, temperature=3.0,
                         generator=torch.Generator().manual_seed(seed))
    tokens = trace.tokens[0].tolist()
    assert sampled == task.decode_target(tokens)
    assert table[t("dec.col_logp")].iloc[1] == pytest.approx(teacher_forced(model, src, tokens)[1], abs=1e-3)


def test_stepping_through_greedy_and_sampling(ckpt):
    at = start(dec_part="model", state={"dec_model": model_id("parser")})
    model, task = ckpt["parser"].model, ckpt["parser"].task
    src = task.encode_source(task.examples(1)[0][0])
    greedy = greedy_decode(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID)[0].tolist()
    logits = teacher_forced(model, src, greedy)[0]
    n = len(greedy)
    slider = widget(at, "slider", "dec_step")
    assert (slider.min, slider.max, slider.value) == (1, n, 1)
    for step in (n, 2):
        widget(at, "slider", "dec_step").set_value(step).run()
        assert_clean(at)
        shown = frame(at, "dec_step_numbers")
        np.testing.assert_allclose(shown[t("dec.logit")].to_numpy(float), logits[step - 1].numpy(), atol=1e-4)
        after = shown[t("dec.col_after")].to_numpy(float)
        assert after[greedy[step - 1]] == 1.0 and after.sum() == 1.0
        names = " ".join(f"`{task.tgt_vocab.tokens[i]}`" for i in [BOS_ID, *greedy[:step - 1]])
        assert any(names in m.value for m in at.markdown)  # the decoder input grows
    at.button(key="dec_next").click().run()
    assert widget(at, "slider", "dec_step").value == 3
    at.button(key="dec_previous").click().run()
    at.button(key="dec_previous").click().run()
    at.button(key="dec_previous").click().run()
    assert widget(at, "slider", "dec_step").value == 1  # never below 1
    widget(at, "radio", "dec_view").set_value("sampling").run()
    assert_clean(at)
    after = frame(at, "dec_step_numbers")[t("dec.col_after")].to_numpy(float)
    assert after.sum() == pytest.approx(1.0) and (after > 0).sum() == len(after)  # T = 1, no filter: all kept


def tree_texts(at: AppTest) -> tuple[list[str], str]:
    """The beam tree's SVG (drawn on the server, shown by st.markdown): its box and column texts, its description."""
    svgs = [m.value for m in at.markdown if m.value.startswith("<svg")]
    assert len(svgs) == 1
    root = ET.fromstring(svgs[0])
    return ["".join(s.itertext()) for s in root.iter(f"{SVG}tspan")], root.find(f"{SVG}desc").text


@pytest.mark.parametrize("lang", ["en", "es"])
def test_beam_view_with_its_tree(ckpt, lang):
    at = start(lang=lang, dec_part="model", state={"dec_model": model_id("copy"), "dec_view": "beam", "dec_width": 8})
    assert_clean(at)
    model, task = ckpt["copy"].model, ckpt["copy"].task
    src = task.encode_source(task.examples(1)[0][0])
    final = frame(at, "dec_final", lang)
    assert len(final) == 8
    for tokens_text, lp in zip(final[t("dec.col_tokens_list", lang=lang)], final[t("dec.col_logp", lang=lang)]):
        ids = [task.tgt_vocab.index[s] for s in tokens_text.split()]
        assert lp == pytest.approx(teacher_forced(model, src, ids)[1], abs=1e-3)
    scores = final[t("dec.col_logp", lang=lang)].to_numpy(float)
    assert (np.diff(scores) <= 1e-9).all()  # alpha = 0: ranked by log P
    assert not at.get("graphviz_chart")  # drawn on the server, nothing laid out in the browser
    texts, desc = tree_texts(at)
    assert "<bos>" in texts and not any(x.startswith("…") for x in texts)  # step 1: the root and its children
    n = int(widget(at, "slider", "dec_step").max)
    widget(at, "slider", "dec_step").set_value(n).run()
    assert_clean(at)
    texts, desc = tree_texts(at)
    assert t("dec.tree_step", lang=lang, step=n - 6) not in texts and t("dec.tree_step", lang=lang, step=n - 5) in texts
    assert any(x.startswith("…") for x in texts)  # the last 6 steps drawn, the hypotheses before them summarised
    assert "<eos>" in texts  # finished hypotheses drawn
    best = final[t("dec.col_tokens_list", lang=lang)].iloc[0]
    assert best in desc and t("dec.tree_step", lang=lang, step=n) in texts  # the description names the best answer
    assert any(t("dec.tree_caption", lang=lang, lo=n - 5, hi=n, cap=6, pruned=3, m=0).split("(")[0] in c.value
               for c in at.caption)
    candidates = frame(at, "dec_candidates", lang)
    statuses = set(candidates[t("dec.col_status", lang=lang)])
    assert t("dec.finished", lang=lang) in statuses and t("dec.pruned", lang=lang) in statuses


def test_length_normalisation_reranks_by_score():
    at = start(dec_part="model", state={"dec_view": "beam", "dec_width": 8, "dec_alpha": 1.0, "dec_model": model_id("parser"),
                      "dec_text_shipped_parser": "x=4+9"})
    assert_clean(at)
    final = frame(at, "dec_final")
    lp, score = final[t("dec.col_logp")].to_numpy(float), final[t("dec.col_score")].to_numpy(float)
    lengths = np.array([len(s.split()) for s in final[t("dec.col_tokens_list")]])
    np.testing.assert_allclose(score, lp / lengths, atol=1e-9)
    assert (np.diff(score) <= 1e-9).all()


def test_a_model_trained_in_this_session_comes_first(ckpt):
    model = copy.deepcopy(ckpt["addition"].model)
    run = SimpleNamespace(task_name="addition", pretrained=False,
                          trainer=SimpleNamespace(step=10, model=model, task=ckpt["addition"].task))
    at = start(dec_part="model", state={"train_run": run})
    assert_clean(at)
    box = widget(at, "selectbox", "dec_model")
    assert box.value == "session:addition"
    assert box.options[0] == t("models.session", task=t("task.addition"))
    assert has_frame(at, "dec_compare") and not model.training  # eval mode given back (it was eval)
    model.train()
    at.run()
    assert model.training  # a model in training mode gets its mode back


def test_language_switch_keeps_the_choices():
    at = start(dec_part="model", state={"dec_model": model_id("parser"), "dec_m_temp": 2.0, "dec_view": "beam"})
    at.session_state["cfg_lang"] = "es"
    at.run()
    assert_clean(at)
    assert widget(at, "selectbox", "dec_model").value == model_id("parser")
    assert widget(at, "slider", "dec_m_temp").value == 2.0
    assert widget(at, "radio", "dec_view").value == "beam"
    assert at.title[0].value == t("dec.title", lang="es")


# ---- where beam search beats greedy ----------------------------------------------------------------------

def test_the_early_snapshot_is_the_shipped_run_stopped_early():
    """copy_early.pt is the fast copy preset's run (seed 0, like copy.pt) stopped at step 180 of its 400 steps."""
    early, full = (load_checkpoint(CHECKPOINT_DIR / f"{name}.pt") for name in ("copy_early", "copy"))
    assert early.metrics["steps"] == 180 and early.metrics["train_config"] == full.metrics["train_config"]
    assert early.config == full.config and early.metrics["exact_match"] < 0.5 < full.metrics["exact_match"]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_by_default_beam_search_beats_greedy_on_the_early_snapshot(lang):
    """The default model part: greedy copies a symbol wrong, beam search (width 3) copies right with a higher log P
    of the whole answer; all recomputed here by greedy_decode, beam_search and teacher-forced passes."""
    at = start(lang=lang, dec_part="model")
    assert_clean(at)
    early = load_checkpoint(CHECKPOINT_DIR / "copy_early.pt")
    model, task = early.model, early.task
    text = at.session_state["dec_text_early_copy"]
    src = task.encode_source(text)
    greedy = greedy_decode(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID)[0].tolist()
    beam = beam_search(model, src, 3, task.max_tgt_len + 1, BOS_ID, EOS_ID).hypotheses[0].tokens
    g_lp, b_lp = teacher_forced(model, src, greedy)[1], teacher_forced(model, src, beam)[1]
    assert task.decode_target(greedy) != text and task.decode_target(beam) == text  # copy: the answer is the input
    assert b_lp > g_lp + 0.1
    table = frame(at, "dec_compare", lang)
    rows = {name: table.loc[t(f"dec.{name}", lang)] for name in ("greedy", "beam")}
    assert rows["greedy"][t("dec.col_right", lang)] == "✗" and rows["beam"][t("dec.col_right", lang)] == "✓"
    assert rows["greedy"][t("dec.col_logp", lang)] == pytest.approx(g_lp, abs=1e-4)
    assert rows["beam"][t("dec.col_logp", lang)] == pytest.approx(b_lp, abs=1e-4)
    mark = "." if lang == "en" else ","
    gain, ratio = f"{b_lp - g_lp:.4f}".replace(".", mark), f"{math.exp(b_lp - g_lp):.2f}".replace(".", mark)
    shown = [s.value for s in at.success]
    assert shown == [t("dec.beam_wins", lang, gain=b_lp - g_lp, ratio=math.exp(b_lp - g_lp))]
    assert f" {gain}" in shown[0] and f" {ratio} " in shown[0]  # in the reader's marks


def test_a_confident_model_says_beam_and_greedy_agree():
    at = start(dec_part="model", state={"dec_model": model_id("addition")})
    assert_clean(at)
    assert not at.success and [i.value for i in at.info] == [t("dec.beam_ties")]


# ---- the lesson's helpers in core ------------------------------------------------------------------------

def test_filter_stages_match_the_plain_python_reference():
    z, T, k, p = TOY, 1.7, 4, 0.8
    got = filter_stages(torch.tensor(z), T, k, p, torch.Generator().manual_seed(5), 500)
    want = reference_toy(z, T, k, p)
    for stage, name in (("model", "softmax(z)"), ("temp", f"T = {T:g}"), ("topk", f"top-k (k = {k})"),
                        ("topp", f"top-p (p = {p:g})"), ("all", "final")):
        np.testing.assert_allclose(got["P"][stage], want[name], atol=1e-12, err_msg=stage)
        assert list(got["kept"][stage]) == list(want[name] > 0)
    assert got["counts"].sum() == 500 and got["counts"][want["final"] == 0].sum() == 0


def test_sequence_log_prob_and_beam_paths_against_teacher_forcing(ckpt):
    model, task = ckpt["addition"].model, ckpt["addition"].task
    src = task.encode_source(task.examples(1)[0][0])
    trace = decode_steps(model, src, task.max_tgt_len + 1, BOS_ID, EOS_ID, PAD_ID, greedy=True)
    tokens = trace.tokens[0].tolist()
    assert sequence_log_prob(trace) == pytest.approx(teacher_forced(model, src, tokens)[1], abs=1e-5)
    beam = beam_search(model, src, 3, task.max_tgt_len + 1, BOS_ID, EOS_ID)
    finished = {tuple(path) for step in beam_paths(beam) for path in step.values() if path[-1] == EOS_ID}
    assert {tuple(h.tokens) for h in beam.hypotheses if h.finished} <= finished
    for h in beam.hypotheses:
        assert h.log_prob == pytest.approx(teacher_forced(model, src, h.tokens)[1], abs=1e-4)


def test_decode_strategies_are_the_single_strategies(ckpt):
    model, task = ckpt["copy"].model, ckpt["copy"].task
    src = task.encode_source(task.examples(1)[0][0])
    steps, strategy = task.max_tgt_len + 1, {"temperature": 1.5, "top_k": None, "top_p": 0.9}
    runs = decode_strategies(model, src, steps, strategy, 2, 0.0, seed=3, n_samples=4)
    assert runs["greedy"].tokens[0].tolist() == greedy_decode(model, src, steps, BOS_ID, EOS_ID, PAD_ID)[0].tolist()
    again = decode_steps(model, src, steps, BOS_ID, EOS_ID, PAD_ID, **strategy,
                         generator=torch.Generator().manual_seed(3))
    assert torch.equal(runs["sampling"].tokens, again.tokens) and runs["many"].tokens.shape[0] == 4
    assert runs["beam"].hypotheses == beam_search(model, src, 2, steps, BOS_ID, EOS_ID).hypotheses
    assert not model.training
