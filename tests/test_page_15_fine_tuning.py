"""Lesson 15 (fine-tuning MiniLM) through AppTest.

Training is driven the way the browser drives it: Start flips a flag, and every run of the page (here `at.run()`,
in the browser the fragment's timer) trains one chunk. The numbers of the verdict are checked against the table and
against runs trained again here with the same seed; the data's numbers against an independent count.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import altair as alt

import pytest
import torch
from conftest import start_page
from widgets import heatmaps
import widgets
from streamlit.testing.v1 import AppTest

from core import pretrained
from core.lab import finetune as ft
from core.lab import finetune_data as fd
from ui.i18n import t

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "lessons" / "15_fine_tuning.py"
QUICK = {"ft_steps": 10, "ft_layers": 1}  # the cheapest runs: 10 steps, one fine-tuned layer


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def train_until_done(at: AppTest, limit: int = 200) -> AppTest:
    for _ in range(limit):
        if not at.session_state["ft_running"]:
            return at
        at.run()
        assert_clean(at)
    raise AssertionError("training did not finish")


def table(at: AppTest, lang: str = "en"):
    """The runs' table (key "ft_table"), its columns in `lang`."""
    found = widgets.table(at, "ft_table")
    assert t("ft.col_run", lang=lang) in found.columns
    return found


@pytest.mark.parametrize("lang", ["en", "es"])
def test_opens_in_both_languages_with_the_data_counted(lang):
    at = start_page(PAGE, lang=lang, numbers=False, state={"ft_lang": lang})
    assert_clean(at)
    tokenizer = pretrained.load_tokenizer()
    train, heldout = fd.load_sentences(lang, "train"), fd.load_sentences(lang, "heldout")
    unseen = round(100 * fd.unseen_share(tokenizer, train, heldout))
    text = next(m.value for m in at.markdown if "assets/finetune/" in m.value)
    assert "80" in text and "48" in text and (f"{unseen}%" if lang == "en" else f"{unseen} %") in text
    tokens = {code: sum(fd.token_counts(tokenizer, code)) / 128 for code in fd.LANGUAGES}  # 128 sentences each
    mark = "." if lang == "en" else ","  # Spanish: a decimal comma (15,8 tokens), where English has a point
    assert f"{tokens[lang]:.1f}".replace(".", mark) in text
    help_text = next(s.help for s in at.slider if s.label == t("ft.steps", lang=lang))
    assert all(f"{tokens[code]:.1f}".replace(".", mark) in help_text for code in fd.LANGUAGES)
    assert at.info and not at.session_state["ft_runs"]  # nothing trains before Start
    assert at.button(key="ft_start").disabled is False


def test_start_trains_the_three_runs_stop_pauses_and_the_verdict_says_their_numbers():
    at = start_page(PAGE, numbers=True, state=QUICK)
    at.button(key="ft_start").click().run()
    assert_clean(at)
    at.button(key="ft_stop").click().run()
    assert not at.session_state["ft_running"] and at.session_state["ft_runs"]  # Stop keeps the runs...
    assert at.button(key="ft_start").disabled is False  # ... and Start goes on from where they stopped
    at.button(key="ft_start").click().run()
    train_until_done(at)
    runs = at.session_state["ft_runs"]
    assert sorted(k[0] for k in runs) == sorted(ft.KINDS) and all(r.step == 10 for r in runs.values())
    shown = table(at)
    finals = dict(zip([k[0] for k in runs], shown[t("ft.col_final", lang="en")]))
    labels = torch.tensor(fd.load_sentences("en", "heldout").labels)
    for kind, run in ((k[0], r) for k, r in runs.items()):  # recounted from the trained models' answers
        assert finals[kind] == pytest.approx((run.predictions() == labels).float().mean().item())
    verdict = next(m.value for m in at.markdown if m.value.startswith(f"**{t('ft.verdict_header', lang='en')}"))
    percents = [int(p) for p in re.findall(r"(\d+)%", verdict)]
    assert percents[:3] == [round(100 * finals[k]) for k in ("frozen", "finetune", "random")]
    assert finals["random"] <= 0.5 < finals["frozen"]  # after 10 steps the random model is still near chance
    assert t("ft.meaning_pretraining", lang="en", gap=round(100 * (max(finals["frozen"], finals["finetune"])
                                                                  - finals["random"]))) in verdict
    assert [s.value for s in at.subheader if s.value == t("ft.heads_header", lang="en")]  # the analysis is shown
    specs = [json.loads(c.proto.spec) for c in at.get("vega_lite_chart")]
    assert len(specs) >= 3 and len(heatmaps(at)) >= 1  # accuracy, PCA before and after; head changes
    for spec in specs:  # what Streamlit sends is valid Vega-Lite and says what it shows
        alt.Root.validate(spec)
        assert spec["description"].strip() and spec["config"]["locale"]["number"]["decimal"] == "."
    shown = [c.proto.spec for c in at.get("vega_lite_chart")] + [h.svg for h in heatmaps(at)]
    sentence = next(w for w in at.selectbox if w.label == t("ft.sentence", lang="en"))
    sentence.select(5).run()  # another held-out sentence: other head changes
    assert_clean(at)
    assert [c.proto.spec for c in at.get("vega_lite_chart")] + [h.svg for h in heatmaps(at)] != shown
    at.button(key="ft_reset").click().run()
    assert not at.session_state["ft_runs"] and at.info  # Reset forgets them


def test_the_verdict_picks_its_words_from_the_numbers():
    from ui.finetune import verdict_text

    text = verdict_text({"frozen": 1.0, "finetune": 1.0, "random": 0.5}, 60, 2)
    assert t("ft.meaning_pretraining", lang="en", gap=50) in text and "100%" in text and "50%" in text
    assert t("ft.meaning_finetune_same", lang="en", k=2) in text
    text = verdict_text({"frozen": 0.56, "finetune": 0.62, "random": 0.5}, 60, 1)
    assert t("ft.meaning_small", lang="en") in text and t("ft.meaning_finetune_better", lang="en", k=1) in text
    text = verdict_text({"frozen": 0.9, "finetune": 0.8, "random": 0.25}, 60, 6)
    assert t("ft.meaning_finetune_worse", lang="en", k=6) in text


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_examples_are_the_first_three_training_sentences_of_each_topic(lang):
    at = start_page(PAGE, lang=lang, numbers=False, state={"ft_lang": lang})
    train = fd.load_sentences(lang, "train")
    header = "| " + " | ".join(t(f"ft.topic_{name}", lang=lang) for name in fd.TOPICS) + " |"
    found = next(m.value for m in at.markdown if m.value.startswith(header))
    rows = found.splitlines()[2:]
    assert len(rows) == 3
    for c, name in enumerate(fd.TOPICS):
        want = [s for s, y in zip(train.texts, train.labels) if y == c][:3]
        cells = [re.sub(r"\\(.)", r"\1", row.strip("| ").split(" | ")[c]) for row in rows]  # Markdown escapes undone
        assert cells == want, name
