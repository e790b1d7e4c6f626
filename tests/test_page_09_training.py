"""Lesson 9 (training) through AppTest, ui.training.Run, and the model access in ui.models.

References are independent of the page: a greedy decoder written here that re-runs the whole model at
every step, softmax of the model's own forward pass, a Trainer advanced in one go, and numel sums.
"""
from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from core.checkpoints import load_checkpoint
from core.tasks import BOS_ID, EOS_ID, TaskInputError, make_task
from core.train import PRESETS, Trainer
from ui import models
from ui.i18n import lookup, md_escape, number, t
from ui.training import EVAL_EXAMPLES, LEARNED, Run
from conftest import lesson_opener, widget
from widgets import heatmaps, line_chart_of, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "09_training.py"
LESSON = str(PAGE.relative_to(ROOT))
SMALL = {"train_steps": 20}  # a run short enough to finish in a few page runs


# The task and the preset first (their first run fills every control from the preset), then the other settings
# on top, as a learner sets them.
start = lesson_opener(LESSON, first=("train_task", "train_preset", "cfg_seed"))


def assert_clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def button(at, key: str):
    label = lookup(key, at.session_state["cfg_lang"]).split("{")[0].strip()
    found = [b for b in at.button if b.label.startswith(label)]
    assert len(found) == 1, (key, [b.label for b in at.button])
    return found[0]


def run_of(at) -> Run:
    return at.session_state[models.RUN_KEY]


def reference_greedy(model, task, text: str) -> tuple[list[int], list[torch.Tensor]]:
    """Greedy decoding by re-running the full model on the growing prefix (no cached encoder)."""
    src = task.encode_source(text)  # (1, n)
    prefix, probabilities = [BOS_ID], []
    with torch.no_grad():
        for _ in range(task.max_tgt_len + 1):
            logits = model(src, torch.tensor([prefix]))[0, -1]  # (tgt_vocab,)
            probabilities.append(torch.softmax(logits, dim=-1))
            prefix.append(int(logits.argmax()))
            if prefix[-1] == EOS_ID:
                break
    return prefix[1:], probabilities


@pytest.mark.parametrize("lang", ["en", "es"])
def test_defaults_without_a_run(lang):
    at = start(lang=lang)
    assert_clean(at)
    assert at.title[0].value == t("train.title", lang)
    assert [i.value for i in at.info] == [t("train.no_run", lang)]
    metric = next(m for m in at.metric if m.label == t("train.parameters", lang))
    model = Trainer.from_preset("copy", "fast").model
    count = f"{sum(p.numel() for p in model.parameters()):,}"
    assert metric.value == (count if lang == "en" else count.replace(",", "."))  # a point for thousands in Spanish
    lr = f"{at.session_state['train_lr']:g}"
    assert (lr if lang == "en" else lr.replace(".", ",")) in " ".join(c.value for c in at.caption)


def test_spanish_numbers_have_a_decimal_comma():
    at = start(lang="es", train_task="parser")
    button(at, "train.pretrained").click().run()
    assert_clean(at)
    shown = {m.label: m.value for m in at.metric}
    run = run_of(at)
    for key, share in (("train.greedy_em", run.evaluations[-1].exact_match),
                       ("train.forced_em", run.evaluations[-1].teacher_forced_exact_match)):
        assert shown[t(key, "es")] == number(share, ".1%", "es")
    assert f"({run.trainer.elapsed:.1f} s".replace(".", ",") in " ".join(c.value for c in at.caption)


def test_start_advances_stop_keeps_continue_resumes_reset_clears():
    at = start(train_task="parser", train_steps=150)
    button(at, "train.start").click().run()
    assert_clean(at)
    first = run_of(at).trainer.step
    assert first > 0 and run_of(at).running
    at.run()
    assert run_of(at).trainer.step > first
    button(at, "train.stop").click().run()
    stopped = run_of(at).trainer.step
    assert not run_of(at).running
    at.run()
    assert run_of(at).trainer.step == stopped  # stopped means stopped: reruns do not train
    button(at, "train.continue").click().run()
    for _ in range(40):
        if not run_of(at).running:
            break
        at.run()
    run = run_of(at)
    assert run.trainer.done and run.trainer.step == 150 and not run.running
    assert_clean(at)
    assert run.evaluations[-1].step == 150 and run.evaluations[0].step == 0
    button(at, "train.reset").click().run()
    assert models.RUN_KEY not in at.session_state


def test_chunked_page_training_equals_one_go_training():
    """The page trains in 0.25 s chunks across reruns; the result must equal a Trainer run straight through."""
    at = start(train_task="parser", cfg_seed=3, train_steps=30)
    button(at, "train.start").click().run()
    for _ in range(60):
        if not run_of(at).running:
            break
        at.run()
    page_model = run_of(at).trainer.model
    reference = Trainer.from_preset("parser", "fast", steps=30, seed=3, warmup=min(20, 30 // 4))
    for _ in reference.steps():
        pass
    for (name, a), (_, b) in zip(page_model.state_dict().items(), reference.model.state_dict().items()):
        assert torch.equal(a, b), name


@pytest.mark.parametrize("task_name", models.SHIPPED)
def test_pretrained_model_decodes_like_a_reference_greedy_loop(task_name):
    at = start(train_task=task_name)
    button(at, "train.pretrained").click().run()
    assert_clean(at)
    run = run_of(at)
    assert run.pretrained and run.trainer.done
    shipped = load_checkpoint(ROOT / "assets" / "checkpoints" / f"{task_name}.pt")
    text = at.text_input[0].value
    tokens, probabilities = reference_greedy(shipped.model, shipped.task, text)
    answer = shipped.task.decode_target(tokens)
    expected = shipped.task.format_target(shipped.task.answer(shipped.task.parse(text)))
    if answer == expected:
        assert [m.value for m in at.success] == [t("train.answer_right", "en", got=md_escape(answer))]
    else:
        assert t("train.answer_wrong", "en", got=md_escape(answer), expected=md_escape(expected)) in \
            [m.value for m in at.info]
    # The decoding step slider: the next-token probability shown at step 1 and at the last step.
    for step in (1, len(tokens)):
        if len(tokens) > 1:
            at.session_state["train_decode_step"] = step
            at.run()
        line = next(m.value for m in at.markdown if "→" in m.value)
        assert f"{probabilities[step - 1].max().item():.4f}" in line
    numbers = table(at, "train_decode_numbers")  # "show the numbers": every step's chosen token and probability
    assert list(numbers.iloc[:, 1]) == shipped.task.tgt_vocab.decode(tokens)
    assert numbers.iloc[:, 2].tolist() == pytest.approx([p.max().item() for p in probabilities], abs=1e-6)
    # The shipped model in the cache is never the one the page holds (the page could train its own copy).
    assert run.trainer.model is not models.shipped(task_name).model


@pytest.mark.parametrize("task_name, text, code", [
    ("copy", "", "empty"), ("copy", "3 99", "unknown_symbol"), ("copy", " ".join(["1"] * 25), "too_long"),
    ("copy", "1 2", "too_short"), ("addition", "12-3", "unknown_symbol"), ("addition", "12+", "bad_format"),
    ("addition", "1234+1", "too_long"), ("parser", "x=4+", "bad_format"), ("parser", "w=1+2", "unknown_symbol")])
def test_bad_inputs_get_a_message_not_an_exception(task_name, text, code):
    task = make_task(task_name)
    with pytest.raises(TaskInputError) as raised:
        task.parse(text)
    assert raised.value.code == code
    at = start(train_task=task_name)
    button(at, "train.pretrained").click().run()
    at.text_input[0].set_value(text).run()
    assert not at.exception
    expected = t(f"train.input_of.{code}", "en", part=md_escape(raised.value.part), limit=raised.value.limit)
    assert [w.value for w in at.warning] == [expected]
    assert at.text_input[0].value == text  # the learner's input is kept


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("kind", ["encoder", "decoder", "cross"])
def test_attention_maps_of_the_trained_model(lang, kind):
    at = start(lang=lang, train_task="parser", train_kind=kind, train_part="attention")  # the attention tool
    button(at, "train.pretrained").click().run()
    assert_clean(at)
    shipped = models.shipped("parser")
    text = at.text_input[0].value
    src = shipped.task.encode_source(text)
    tokens, _ = reference_greedy(shipped.model, shipped.task, text)
    tgt_in = torch.tensor([[BOS_ID, *tokens[:-1]]])
    from core.trace import run_with_trace
    _, cache = run_with_trace(shipped.model, src, tgt_in)
    name = {"encoder": "encoder.layers.0.self_attn", "decoder": "decoder.layers.0.self_attn",
            "cross": "decoder.layers.0.cross_attn"}[kind]
    expected = cache[f"{name}.hook_weights"][0]  # (h, n_q, n_k)
    facets = [h for h in heatmaps(at) if h.panels]
    assert len(facets) == 1 and facets[0].panels == [t("train.head_n", lang, h=k + 1) for k in range(len(expected))]
    shown = np.stack(list(facets[0].panel_matrices().values()))  # (h, n_q, n_k), head by head
    np.testing.assert_allclose(shown, expected.numpy(), atol=1e-6)


def test_language_change_and_page_switch_mid_training_lose_nothing():
    at = start(APP, numbers=False)
    at.session_state["train_steps"] = 200
    at.run()
    button(at, "train.start").click().run()
    before = run_of(at)
    steps = before.trainer.step
    assert before.running and steps > 0
    at.session_state["cfg_lang"] = "es"
    at.run()
    assert_clean(at)
    assert at.title[0].value == t("train.title", "es")
    assert run_of(at) is before and before.trainer.step > steps and before.running
    steps = before.trainer.step
    at.switch_page("lessons/01_similarity.py").run()
    assert_clean(at)
    assert run_of(at) is before and before.trainer.step == steps  # the run waits while its page is not shown
    at.switch_page(LESSON).run()
    assert_clean(at)
    assert run_of(at) is before and before.trainer.step > steps and before.running
    assert at.session_state["train_steps"] == 200  # the page's settings survived too


def test_settings_changed_after_start_are_flagged():
    at = start(**SMALL)
    button(at, "train.start").click().run()
    changed = t("train.settings_changed", "en")
    assert changed not in [i.value for i in at.info]
    at.session_state["train_d_model"] = 64
    at.run()
    assert changed in [i.value for i in at.info]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_largest_settings_build_and_show_the_exact_parameter_count(lang):
    big = {"train_task": "addition", "train_digits": 6, "train_full_range": True, "train_d_model": 256,
           "train_heads": 8, "train_layers": 4, "train_d_ff": 1024, "train_batch": 256, "train_steps": 5000,
           "train_dropout": 0.5, "train_norm": "post", "train_positional": "rotary", "train_lr": 2e-2}
    at = start(lang=lang, train_preset="course", **big)
    assert_clean(at)
    metric = next(m for m in at.metric if m.label == t("train.parameters", lang))
    model = Trainer.from_preset("addition", "course", task_options={"digits": 6, "full_range": True},
                                model_changes={"d_model": 256, "n_heads": 8, "n_layers": 4, "d_ff": 1024,
                                               "dropout": 0.5, "norm_first": False, "positional": "rotary"}).model
    assert int(re.sub(r"\D", "", metric.value)) == sum(p.numel() for p in model.parameters())
    button(at, "train.start").click().run()  # a step of the largest model costs ~14 s here: refused, politely
    assert_clean(at)
    assert models.RUN_KEY not in at.session_state
    assert t("train.refused_heavy", lang) in [w.value for w in at.warning]


@pytest.mark.parametrize("task_name", ["reverse", "sort"])
def test_extra_tasks_train_and_show_their_sections(task_name):
    at = start(train_task=task_name, train_steps=20, train_length=6, train_vocab=5)
    button(at, "train.start").click().run()
    for _ in range(40):
        if not run_of(at).running:
            break
        at.run()
    assert_clean(at)
    assert run_of(at).trainer.task.length == 6 and run_of(at).trainer.done
    assert button(at, "train.pretrained").disabled  # nothing is shipped for the extra tasks


def test_preset_fills_the_controls():
    at = start(train_task="addition")
    preset = PRESETS["addition"]["fast"]
    assert at.session_state["train_d_model"] == preset.model["d_model"]
    assert at.session_state["train_steps"] == preset.train.steps
    widget(at, "radio", "train_preset").set_value("course").run()  # the learner picks it: its preset loads
    course = PRESETS["addition"]["course"]
    assert at.session_state["train_d_model"] == course.model["d_model"] == 256
    assert at.session_state["train_lr"] == course.train.lr


def test_run_exports_a_loadable_checkpoint_and_a_history():
    run = Run.new("parser", "fast", "cpu", {}, {}, steps=25)
    while not run.trainer.done:
        run.advance(0.05)
    loaded = load_checkpoint(io.BytesIO(run.checkpoint_bytes()))
    for (name, a), (_, b) in zip(loaded.model.state_dict().items(), run.trainer.model.state_dict().items()):
        assert torch.equal(a, b), name
    assert loaded.metrics["steps"] == 25  # and the distinct held-out examples its last evaluation counted:
    assert loaded.metrics["heldout_examples"] == run.evaluations[-1].n <= EVAL_EXAMPLES
    history = run.history_frame()
    assert history["step"].tolist() == list(range(26))  # step 0 holds the untrained model's evaluation
    assert history["loss"].notna().sum() == 25
    evaluated = history.dropna(subset=["exact_match"])
    assert evaluated["step"].tolist() == [e.step for e in run.evaluations]
    assert evaluated["step"].iloc[-1] == 25
    frame = pd.read_csv(io.StringIO(history.to_csv(index=False)))
    assert len(frame) == len(history)


def test_snapshots_are_the_probe_attention_at_each_evaluation():
    run = Run.new("copy", "fast", "cpu", {"length": 5, "vocab_size": 6}, {}, steps=30)
    while not run.trainer.done:
        run.advance(0.05)
    assert [s for s, _ in run.snapshots] == [e.step for e in run.evaluations]
    src, tgt_in = run.probe
    from core.trace import run_with_trace
    run.trainer.model.eval()
    _, cache = run_with_trace(run.trainer.model, src, tgt_in)
    final = run.snapshots[-1][1]
    assert final["cross"][0] == pytest.approx(cache["decoder.layers.0.cross_attn.hook_weights"][0].numpy(), abs=1e-6)
    first = run.snapshots[0][1]["cross"][0]  # step 0: untrained
    assert not (first == final["cross"][0]).all()


def test_the_checkpoint_is_exported_once_the_run_stops():
    """The file is named after the step it holds: while the run trains, the export waits for Stop."""
    at = start(train_task="parser", train_steps=150)
    button(at, "train.start").click().run()
    assert run_of(at).running

    def checkpoint_button(at):
        return next(b.proto for b in at.get("download_button") if b.proto.label == t("train.export_checkpoint", "en"))
    assert checkpoint_button(at).disabled and checkpoint_button(at).help == t("train.export_wait", "en")
    button(at, "train.stop").click().run()
    assert not checkpoint_button(at).disabled and not checkpoint_button(at).help
    run = run_of(at)
    assert load_checkpoint(io.BytesIO(run.checkpoint_bytes())).metrics["steps"] == run.trainer.step


def test_evaluations_land_every_eval_every_steps_whatever_a_chunk_holds():
    """The snapshots text says "every {every} steps": one long chunk still evaluates at each of them."""
    run = Run.new("parser", "fast", "cpu", {}, {}, steps=30)
    assert run.eval_every == 5
    run.advance(60.0)  # one chunk for the whole schedule
    assert run.trainer.done
    assert [e.step for e in run.evaluations] == list(range(0, 31, 5))
    assert [s for s, _ in run.snapshots] == list(range(0, 31, 5))


def test_session_model_and_choices():
    at = start()
    assert models.RUN_KEY not in at.session_state
    names = [c.task_name for c in models.choices()]
    assert names == list(models.SHIPPED)
    choice = models.choices()[0]
    assert choice.label("es") == t("models.shipped", "es", task=t("task.copy", "es"))


def test_every_key_the_page_builds_at_run_time_exists():
    """The page builds some keys from names (f"train.kind_of.{kind}"); every name it can meet has its text."""
    from core.tasks import SPLITS, TASKS
    from ui.i18n import LANGUAGES

    page = PAGE.read_text("utf-8")
    codes = set(re.findall(r'TaskInputError\("(\w+)"', "".join(p.read_text("utf-8") for p in (ROOT / "core" / "tasks").glob("*.py"))))
    assert codes == {"empty", "unknown_symbol", "too_long", "too_short", "bad_format"}
    grouped = [t for t in TASKS if TASKS[t]().categories(TASKS[t]().draw(2, torch.Generator())) is not None]
    built = ([f"task.{n}" for n in TASKS] + [f"train.preset_of.{p}" for p in ("fast", "course")]
             + [f"train.norm_of.{v}" for v in ("pre", "post")]
             + [f"train.pos_of.{v}" for v in ("sinusoidal", "learned", "rotary")]
             + [f"train.{g}.{k}" for g in ("kind_of", "kind_caption") for k in ("encoder", "decoder", "cross")]
             + [f"train.split_of.{s}" for s in SPLITS] + [f"train.input_of.{c}" for c in codes]
             + [f"train.errors_text_of.{n}" for n in TASKS]
             + [f"train.{g}.{n}" for g in ("by_of", "group_of") for n in grouped])
    assert 'POSITIONALS = ("sinusoidal", "learned", "rotary")' in page and sorted(grouped) == ["addition", "parser"]
    for lang in LANGUAGES:
        for key in built:
            assert lookup(key, lang), (lang, key)


def test_a_run_stops_at_the_training_time_cap_and_keeps_its_model():
    at = start(train_task="parser", train_steps=150)
    button(at, "train.start").click().run()
    run = run_of(at)
    run.trainer.elapsed = 10 * 60 + 1  # as if it had trained for just over the cap
    at.run()
    assert not run.running and run_of(at) is run
    assert [w.value for w in at.warning] == [t("train.time_cap", "en", minutes=10)]
    assert button(at, "train.continue").disabled
    assert not at.exception


PART_HEADERS = {"try": "train.try_header", "attention": "train.attention_header",
                "snapshots": "train.snapshots_header", "errors": "train.errors_header", "vocab": "train.vocab_header"}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_inspection_tools_are_drawn_one_at_a_time(lang):
    at = start(lang=lang, train_task="parser")
    button(at, "train.pretrained").click().run()
    for part, header in PART_HEADERS.items():
        at.session_state["train_part"] = part
        at.run()
        assert_clean(at)
        shown = [m.value for m in at.markdown if m.value.startswith("#### ")]
        assert shown == [f"#### {t(header, lang)}"], part
        facets = [h for h in heatmaps(at) if h.panels]
        assert bool(facets) == (part == "attention"), part
        assert (len(at.text_input) == 1) == (part in ("try", "attention")), part
        if part == "vocab":
            task = models.shipped("parser").task
            assert len(at.dataframe) == 2  # the two vocabularies' tables, no other
            assert [len(table(at, f"train_vocab_{side}")) for side in ("src", "tgt")] == [len(task.src_vocab),
                                                                                          len(task.tgt_vocab)]


def test_the_tools_wait_for_training_to_stop():
    at = start(train_task="parser", train_steps=150, train_part="errors")
    button(at, "train.start").click().run()
    assert run_of(at).running
    assert t("train.tools_wait", "en") in [i.value for i in at.info]
    assert "train_errors" not in at.session_state and not at.text_input  # no tool has read the moving model
    button(at, "train.stop").click().run()
    assert_clean(at)
    assert t("train.tools_wait", "en") not in [i.value for i in at.info]
    report = at.session_state["train_errors"]
    assert report.n == 1000 and at.session_state["train_errors_for"] == (run_of(at).token, run_of(at).trainer.step)


def test_live_curves_are_rebuilt_only_when_an_evaluation_lands():
    """Between evaluations a redraw sends the same charts (the browser leaves them as they are). A run draws
    before it trains its chunk: it shows the evaluations that had landed when it began."""
    at = start(train_task="parser", train_steps=300)  # several 0.5 s chunks even on a fast machine
    before = 0  # the last evaluation when the next run begins: Start's, at step 0
    button(at, "train.start").click().run()
    seen = {}
    for _ in range(200):
        run = run_of(at)
        shown = before if run.running else run.evaluations[-1].step  # a run that ended reruns the page after it
        charts = at.session_state["train_curves"]
        assert seen.setdefault(shown, charts) is charts
        assert at.session_state["train_curves_for"] == (run.token, shown, "en")
        if not run.running:
            break
        before = run.evaluations[-1].step
        at.run()
    assert not run_of(at).running and len(seen) > 1
    loss, accuracy = at.session_state["train_curves"]
    curves = line_chart_of(accuracy.svg).series
    assert len(curves) == 3 and all(len(y) == len(run_of(at).evaluations) for _, y in curves.values())
    assert line_chart_of(loss.svg).series[t("train.loss")][0].max() == run_of(at).trainer.step


def test_a_chunk_ends_where_the_task_is_first_learned():
    """The evaluation that first reaches LEARNED ends its chunk (the page draws it at once); later ones do not."""
    run = Run.new("parser", "fast", "cpu", {}, {})
    while not run.learned:
        run.advance(60.0)
        assert not run.trainer.done, "the fast preset learns parser before its schedule ends"
    first = [e.step for e in run.evaluations if e.exact_match >= LEARNED]
    assert first == [run.trainer.step] == [run.evaluations[-1].step]  # stopped right at that evaluation
    run.advance(60.0)  # learned before: the chunk goes on to the end of the schedule
    assert run.trainer.done and run.evaluations[-1].step == run.trainer.train_cfg.steps
