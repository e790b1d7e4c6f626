"""Lesson 14 (a small GPT on the course's text) through AppTest, with the shipped checkpoints.

References are independent of the page: the corpus recounted from the prose files here, generation re-run with
core.lab.kvcache on the shipped model, the shipped models' held-out loss recomputed where their corpus is today's.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch

from core.lab.charlm import baselines
from core.lab.gpt import heldout_cross_entropy, load_char_model
from core.lab.kvcache import generate
from ui import gpt_run, limits
from ui.i18n import lookup, number, t
from conftest import lesson_opener

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "lessons" / "14_gpt.py"
MARKER = re.compile(r"^<!--\s*[\w.-]+\s*-->\s*$", re.MULTILINE)


start = lesson_opener("lessons/14_gpt.py", clean=True)


def assert_clean(at) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def metric(at, key: str, lang: str) -> str:
    return next(m.value for m in at.metric if m.label == t(key, lang))


def button(at, key: str):
    return next(b for b in at.button if b.label == lookup(key, at.session_state["cfg_lang"]))


@pytest.mark.parametrize("lang", ["en", "es"])
def test_defaults_show_the_corpus_and_the_baselines(lang):
    at = start(lang=lang)
    assert at.title[0].value == t("gpt.title", lang)
    files = sorted((ROOT / "lessons" / "text").glob(f"*.{lang}.md"))
    sections = sum(len(MARKER.findall(p.read_text("utf-8"))) for p in files)  # every marker, empty sections too
    corpus = gpt_run.corpus(lang)
    assert corpus.sections <= sections and corpus.heldout_sections == -(-corpus.sections // 10)
    shown = "".join(m.value for m in at.markdown)
    assert f"{number(len(corpus.train), ',', lang)} " in shown and f"{number(len(corpus.heldout), ',', lang)} " in shown
    found = baselines(corpus)
    assert metric(at, "gpt.bigram", lang) == number(found.bigram, ".3f", lang)
    assert metric(at, "gpt.unigram", lang) == number(found.unigram, ".3f", lang)
    if lang == "es":  # the reader's marks: a decimal comma, a point between thousands
        assert f"{found.bigram:.3f}".replace(".", ",") == metric(at, "gpt.bigram", lang)
        assert f"{len(corpus.train):,} ".replace(",", ".") in shown
    assert [i.value for i in at.info] == [t("gpt.no_run", lang)]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_generation_is_the_shipped_models(lang):
    at = start(lang=lang, gpt_prompt="The model", gpt_new=10, gpt_temp=0.7, gpt_top_k=12, gpt_top_p=0.9, cfg_seed=3)
    shipped = load_char_model(gpt_run.checkpoint_path(lang))
    found = generate(shipped.model, shipped.vocab.encode("The model"), 10, temperature=0.7, top_k=12, top_p=0.9,
                     seed=at.session_state["cfg_seed"])
    assert "The model" + shipped.vocab.decode(found.tokens.tolist()) in [c.value for c in at.code]


def test_bad_prompts_get_a_message():
    at = start(lang="en", gpt_prompt="日本")
    assert any("日" in w.value for w in at.warning)
    at.session_state["gpt_prompt"] = ""
    at.run()
    assert_clean(at)
    assert t("gpt.prompt_empty", "en") in [w.value for w in at.warning]


def test_attention_and_the_kv_cache():
    at = start(lang="en", gpt_part="attention", gpt_prompt="Attention is")
    assert t("gpt.attention_caption", "en", n=12, above=0.0) in [c.value for c in at.caption]
    at.session_state["gpt_part"] = "kvcache"
    at.run()
    assert_clean(at)
    assert at.success and at.success[0].value.startswith(t("gpt.kv_same", "en", gap=0.0).split("(")[0])
    assert float(metric(at, "gpt.speedup", "en").rstrip("×")) > 0


def test_a_run_trains_measures_and_samples():
    at = start(lang="en", gpt_d_model=32, gpt_layers=1, gpt_heads=2, gpt_steps=100)
    button(at, "train.start").click().run()
    assert_clean(at)
    run = at.session_state[gpt_run.RUN_KEY]
    assert run.trainer.step > 0 and run.model.cfg.d_model == 32
    assert run.measures[0].step == 0 and run.measures[0].sample  # the untrained model's sample
    assert run.measures[0].heldout > run.baselines.bigram  # untrained: worse than the bigram table
    button(at, "train.stop").click().run()
    assert_clean(at)
    assert not run.running
    assert at.code[0].value.startswith(t("gpt.sample_prompt", "en"))


def test_a_run_stops_at_the_training_time_cap_and_says_so():
    at = start(lang="en", gpt_d_model=32, gpt_layers=1, gpt_heads=2, gpt_steps=100)
    button(at, "train.start").click().run()
    run = at.session_state[gpt_run.RUN_KEY]
    run.trainer.elapsed = 60 * limits.MAX_RUN_MINUTES + 1  # as if it had trained for just over the cap
    at.run()
    assert_clean(at)
    assert not run.running and at.session_state[gpt_run.RUN_KEY] is run
    assert t("train.time_cap", "en", minutes=limits.MAX_RUN_MINUTES) in [w.value for w in at.warning]
    assert button(at, "train.continue").disabled


@pytest.mark.parametrize("lang", ["en", "es"])
def test_shipped_checkpoints_are_small_and_beat_the_bigram(lang):
    path = gpt_run.checkpoint_path(lang)
    assert path.stat().st_size < 2e6
    shipped = load_char_model(path)
    m = shipped.metrics
    assert m["heldout_cross_entropy"] <= 0.85 * m["bigram_cross_entropy"]
    corpus = gpt_run.corpus(lang)
    if (len(corpus.train), len(corpus.heldout)) == (m["train_chars"], m["heldout_chars"]):  # the same text today
        ids = shipped.vocab.encode(corpus.heldout)
        assert heldout_cross_entropy(shipped.model, ids) == pytest.approx(m["heldout_cross_entropy"], rel=1e-4)
        assert baselines(corpus).bigram == pytest.approx(m["bigram_cross_entropy"], rel=1e-9)
    with torch.no_grad():
        assert shipped.model(torch.zeros(1, 3, dtype=torch.long)).shape == (1, 3, len(shipped.vocab))


def test_changed_settings_are_pointed_out():
    at = start(lang="en", gpt_d_model=32, gpt_layers=1, gpt_heads=2, gpt_steps=100)
    button(at, "train.start").click().run()
    button(at, "train.stop").click().run()
    assert t("train.settings_changed", "en") not in [i.value for i in at.info]
    at.session_state["gpt_layers"] = 2
    at.run()
    assert_clean(at)
    assert t("train.settings_changed", "en") in [i.value for i in at.info]
