"""Lesson 13 (a real pretrained model) through AppTest.

The numbers on the page are checked against transformers' BertModel loading the same packaged files (attention
weights, Q, the layer inputs), the slow pure-Python BertTokenizer on the package's vocab.txt (the tokens), and
formulas written here (head patterns, cosine similarity).
"""
from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np
import pytest
import torch
from conftest import lesson_opener, widget
from widgets import table
from streamlit.testing.v1 import AppTest

import core
from core import pretrained
from core.lab import probing
from ui import links, state
from ui.i18n import t

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "13_real_model.py"
DEFAULT = "The animal didn't cross the street because it was too tired"
TABLES = {"tokens": "real_tokens", "patterns": "real_patterns"} | {  # the read-only tables by name: their keys
    name: f"real_{name}_numbers" for name in ("special", "q", "k", "scores", "weights", "cosine")}
PART_TABLES = {"model": ["tokens", "patterns", "special"], "head": ["q", "k", "scores", "weights"],
               "similarity": ["cosine"]}  # the sub-lessons (ui/parts.py) and the tables each shows
INPUTS = {"empty": "", "one_word": "hello", "tokens_128": " ".join(["a"] * 126),
          "chinese": "我喜欢学习自然语言处理", "arabic": "القطة تنام على الأريكة", "emoji": "😀🎉🚀 ok 👍🏽",
          "mixed": "naïve café — Ελληνικά, русский, हिन्दी"}


@pytest.fixture(scope="module")
def bert():
    from transformers import BertModel, BertTokenizer
    directory = pretrained.model_dir()
    model = BertModel.from_pretrained(str(directory), attn_implementation="eager", local_files_only=True).eval()
    return model, BertTokenizer(str(directory / "vocab.txt"), do_lower_case=True)


def reference(bert, text_a: str, text_b: str | None = None) -> dict:
    model, tokenizer = bert
    inputs = tokenizer(text_a, text_b, return_tensors="pt")
    with torch.no_grad():
        out = model(**inputs, output_attentions=True, output_hidden_states=True)
    return {"tokens": tokenizer.convert_ids_to_tokens(inputs["input_ids"][0]), "ids": inputs["input_ids"][0].tolist(),
            "types": inputs["token_type_ids"][0].tolist(),
            "weights": torch.stack([a[0] for a in out.attentions]).numpy(),  # (L, h, n, n)
            "hidden": [h[0] for h in out.hidden_states], "model": model}


start = lesson_opener("lessons/13_real_model.py")


NUMBERS = [key for key in TABLES.values() if key != "real_tokens"]  # each behind its own expander


def open_numbers(at: AppTest, *keys: str) -> AppTest:
    """Open the expanders of these numbers tables (all by default), as a click on each would."""
    for key in keys or NUMBERS:
        at.session_state[f"{key}_open"] = True
    return at.run()


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick one of the lesson's parts (ui/parts.py) with its selector."""
    widget(at, "radio", "real_part").set_value(part).run()
    assert at.session_state["real_part"] == part
    return at


def tables(at: AppTest) -> dict:
    """The read-only tables of the part on screen by name (found by key), the numbers' expanders opened first."""
    open_numbers(at)
    names = PART_TABLES[at.session_state["real_part"]]
    assert len(at.dataframe) + len(at.table) == len(names), [d.value.shape for d in [*at.dataframe, *at.table]]
    return {name: table(at, TABLES[name]) for name in names}


def head_view_chart(at: AppTest) -> bytes:
    """The first chart of the head part (the head view's lines), as sent to the browser."""
    return at.get("vega_lite_chart")[0].proto.SerializeToString()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def set_text(at: AppTest, text: str, key: str = "real_text_a") -> AppTest:
    at.text_input(key=key).set_value(text)
    return at.run()


def word_indices(tokens: list[str]) -> list[int | None]:
    """Word index of each WordPiece token ('##' continues the previous word), restarting after each [SEP]."""
    out, word = [], -1
    for tok in tokens:
        if tok in ("[CLS]", "[SEP]"):
            out.append(None)
            word = -1 if tok == "[SEP]" else word
            continue
        word += 0 if tok.startswith("##") else 1
        out.append(word)
    return out


def pattern_scores(weights: np.ndarray, tokens: list[str], types: list[int]) -> np.ndarray:
    """(L, h, 4) scores: previous, next, same word, [CLS]/[SEP] (mean over ordinary queries), by loops."""
    special = [tok in ("[CLS]", "[SEP]") for tok in tokens]
    words, n = word_indices(tokens), len(tokens)
    L, H = weights.shape[:2]
    out = np.full((L, H, 4), np.nan)
    for layer in range(L):
        for head in range(H):
            w, picks = weights[layer, head], ([], [], [], [])
            for i in range(n):
                if special[i]:
                    continue
                if i > 0 and not special[i - 1]:
                    picks[0].append(w[i, i - 1])
                if i + 1 < n and not special[i + 1]:
                    picks[1].append(w[i, i + 1])
                mates = [j for j in range(n) if j != i and words[j] is not None and words[j] == words[i]
                         and types[j] == types[i]]
                if mates:
                    picks[2].append(w[i, mates].sum())
                picks[3].append(w[i, special].sum())
            out[layer, head] = [np.mean(p) if p else np.nan for p in picks]
    return out


@pytest.mark.parametrize("lang", ["en", "es"])
def test_defaults_render_and_tokens_match_the_reference_tokenizer(bert, lang):
    at = start(lang=lang)
    assert_clean(at)
    assert not at.warning
    ref = reference(bert, DEFAULT)
    found = tables(at)["tokens"]
    assert list(found.iloc[0]) == ref["tokens"]
    assert [int(v) for v in found.iloc[1]] == ref["ids"]
    assert [int(v) for v in found.iloc[2]] == ref["types"]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_numbers_are_built_only_behind_their_open_expander(lang):
    """With "show the numbers" on, each grid's numbers wait behind an expander of their own (six grids drawn at
    once cost the browser about 0.4 s per change); opening one builds that table only, and the part's other
    expanders stay closed. With the setting off there are none."""
    titles = {"model": [t("real.special_title", lang=lang)],
              "head": [t("real.q_title", lang=lang, layer=1, head=1), t("real.k_title", lang=lang, layer=1, head=1),
                       t("real.scores_title", lang=lang), t("real.weights_title", lang=lang)],
              "similarity": [t("real.cosine_title", lang=lang)]}
    numbers = {part: {t("real.numbers_of", lang=lang, title=title) for title in names}
               for part, names in titles.items()}
    at = start(lang=lang)
    for part in PART_TABLES:
        open_part(at, part)
        assert_clean(at)
        assert len(at.table) == (part == "model") and not at.dataframe  # the tokens; every head's row behind a click
        assert (t("real.patterns_all", lang=lang, n=72) in {e.label for e in at.expander}) == (part == "model")
        shown = {e.label for e in at.expander}
        assert numbers[part] <= shown and not (set().union(*numbers.values()) - numbers[part]) & shown, part
    open_numbers(open_part(at, "head"), "real_weights_numbers")
    assert_clean(at)
    assert len(at.dataframe) == 1 and table(at, "real_weights_numbers").shape == (15, 15)  # n = 15 tokens
    off = start(lang=lang, numbers=False, real_part="head")
    assert not [e for e in off.expander if e.label in numbers["head"]]


@pytest.mark.parametrize("lang", ["en", "es"])
def test_each_part_draws_its_own_sections_alone(lang):
    """One part on screen at a time: the sentences and their tokens with the whole model, the sentences again with
    the head view and one head, the list of sentences alone with the similarity; the title, the scenes and "what
    to notice" with every part."""
    headers = {"model": ["input_header", "tokens_header", "model_view_header", "special_header", "patterns_header"],
               "head": ["input_header", "head_view_header", "one_head_header"], "similarity": ["similarity_header"]}
    at = start(lang=lang)
    assert at.session_state["real_part"] == "model"  # the first part until the learner picks
    for part, keys in headers.items():
        open_part(at, part)
        assert_clean(at)
        assert at.title[0].value == t("real.title", lang=lang)
        assert [h.value for h in at.subheader] == [t(f"real.{key}", lang=lang) for key in keys + ["notice_header"]]
        assert len(at.text_input) == 2 * (part != "similarity") and len(at.text_area) == (part == "similarity")
        said = "Your input is" if lang == "en" else "Tu entrada tiene"  # what the browser test reads, on part 1
        assert any(said in m.value for m in at.markdown) == (part == "model"), part
        assert any(w.key == "real_hide_special" for w in at.toggle) == (part != "similarity"), part


@pytest.mark.parametrize("query, part", [({"real_layer": "3", "real_head": "1"}, "head"),
                                         ({"real_view_heads": "0,4"}, "head"), ({"real_hide_special": "1"}, "model"),
                                         ({"real_list": "Hello there\nGood morning"}, "similarity"),
                                         ({"real_part": "model", "real_layer": "3"}, "model")])
def test_a_link_without_its_part_opens_the_part_of_its_controls(query, part):
    """A link made before the lesson had parts (or by hand) names no part: the part whose control takes its
    parameters opens (ui/parts.seek, run by app.py), and nothing is left waiting. A link that names its part
    keeps it, and a parameter of another part is then reported unused."""
    at = start(APP)
    at.session_state[state.PENDING] = dict(query)  # the link's parameters, as state.init keeps them
    at.run()
    assert_clean(at)
    assert at.session_state["real_part"] == part
    if "real_part" in query:
        assert at.session_state["real_layer"] == 0 and at.toast
        return
    for name, text in query.items():
        assert links.to_url(at.session_state[name]) == text, name
    assert not at.toast


def test_the_frame_runs_the_page():
    at = start(APP)
    assert_clean(at)
    assert any("MiniLM" in title.value for title in at.title)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("name", sorted(INPUTS))
def test_inputs_render_in_both_languages(bert, lang, name):
    at = set_text(start(lang=lang, numbers=False), INPUTS[name])
    assert_clean(at)
    tokens = list(table(at, "real_tokens").iloc[0])
    if name == "empty":
        assert at.warning and tokens == reference(bert, DEFAULT)["tokens"]  # the last valid sentence stays
        assert at.text_input(key="real_text_a").value == ""  # and the input is not lost
    else:
        assert not at.warning, [w.value for w in at.warning]
        assert tokens == reference(bert, INPUTS[name])["tokens"]
    if name == "tokens_128":
        assert len(tokens) == 128


def test_too_many_tokens_and_characters_are_refused_with_a_message():
    at = set_text(start(numbers=False), "hello")
    at = set_text(at, " ".join(["a"] * 127))  # 129 tokens with [CLS] and [SEP]
    assert_clean(at)
    assert "129" in at.warning[0].value and "128" in at.warning[0].value
    assert list(table(at, "real_tokens").iloc[0]) == ["[CLS]", "hello", "[SEP]"]
    assert at.text_input(key="real_text_a").max_chars == 600  # the box (and a link) takes at most 600 characters
    at = set_text(at, "", key="real_text_a")
    at = set_text(at, "only the second", key="real_text_b")
    assert at.warning and list(table(at, "real_tokens").iloc[0]) == ["[CLS]", "hello", "[SEP]"]
    at = set_text(at, "", key="real_text_b")
    at = set_text(at, "\u200b\u200b")  # invisible characters only: no token
    assert at.warning
    assert_clean(at)


def test_a_sentence_pair_gets_token_types(bert):
    at = start(numbers=False)
    at.text_input(key="real_text_b").set_value("It was raining.")
    at.run()
    assert_clean(at)
    ref = reference(bert, DEFAULT, "It was raining.")
    found = table(at, "real_tokens")
    assert list(found.iloc[0]) == ref["tokens"] and [int(v) for v in found.iloc[2]] == ref["types"]
    assert sum(ref["types"]) > 0


@pytest.mark.parametrize("text", [DEFAULT, "Tokenization of unaffable words", "hello"])
def test_head_table_agrees_with_a_computation_here(bert, text):
    at = set_text(start(), text)
    assert_clean(at)
    ref = reference(bert, text)
    expected = pattern_scores(ref["weights"], ref["tokens"], ref["types"])  # (L, h, 4)
    table = tables(at)["patterns"]
    assert len(table) == 72
    measurable = np.isfinite(expected).any(axis=(0, 1))  # (4,): a pattern the text cannot show has no column
    names = ["previous token", "next token", "same word", "special tokens ([CLS]/[SEP])"]
    assert list(table.columns[4:]) == [n for n, m in zip(names, measurable) if m]
    lines = " ".join(m.value for m in at.markdown)  # the prose: a pattern with no column is named above it
    assert [f"**{n}**: no such case in this input." in lines for n in names] == [not m for m in measurable]
    scores = table.iloc[:, 4:].to_numpy(dtype=float).reshape(6, 12, int(measurable.sum()))
    np.testing.assert_allclose(scores, expected[..., measurable], atol=1e-4)
    best = np.nan_to_num(expected, nan=-1).argmax(-1)  # (L, h)
    top = np.take_along_axis(np.nan_to_num(expected, nan=-1), best[..., None], -1)[..., 0]
    np.testing.assert_allclose(table.iloc[:, 3].to_numpy(dtype=float), top.ravel(), atol=1e-4)
    labels = [names[b] if s > 0.5 else "mixed" for b, s in zip(best.ravel(), top.ravel())]
    assert list(table.iloc[:, 2]) == labels
    np.testing.assert_allclose(tables(at)["special"].to_numpy(dtype=float), expected[..., 3], atol=1e-4)
    if text == DEFAULT:
        assert "previous token" in labels and names[3] in labels  # a trained model has both kinds


@pytest.mark.parametrize("layer,head", [(0, 0), (2, 7), (5, 11)])
def test_one_head_step_by_step_matches_bert(bert, layer, head):
    at = start(state={"real_layer": layer, "real_head": head, "real_part": "head"})
    assert_clean(at)
    ref = reference(bert, DEFAULT)
    found = tables(at)
    weights = ref["weights"][layer, head]
    np.testing.assert_allclose(found["weights"].to_numpy(dtype=float), weights, atol=1e-5)
    attn = ref["model"].encoder.layer[layer].attention.self
    with torch.no_grad():
        q = attn.query(ref["hidden"][layer])[:, head * 32:(head + 1) * 32].numpy()  # (n, 32)
        k = attn.key(ref["hidden"][layer])[:, head * 32:(head + 1) * 32].numpy()
    np.testing.assert_allclose(found["q"].to_numpy(dtype=float), q, atol=1e-4)
    np.testing.assert_allclose(found["k"].to_numpy(dtype=float), k, atol=1e-4)
    np.testing.assert_allclose(found["scores"].to_numpy(dtype=float), q @ k.T / np.sqrt(32), atol=1e-4)
    s = found["scores"].to_numpy(dtype=float)
    softmax = np.exp(s - s.max(1, keepdims=True))
    np.testing.assert_allclose(softmax / softmax.sum(1, keepdims=True), weights, atol=1e-5)


def test_changing_the_head_and_the_toggle_changes_what_is_shown():
    at = start(real_part="head")
    before = tables(at)["weights"].to_numpy(dtype=float)
    widget(at, "selectbox", "real_head").set_value(5).run()
    assert not np.allclose(tables(at)["weights"].to_numpy(dtype=float), before)
    lines = head_view_chart(at)  # before [CLS] and [SEP] are hidden
    at.toggle(key="real_hide_special").set_value(True).run()
    assert_clean(at)
    assert head_view_chart(at) != lines
    widget(at, "selectbox", "real_view_layer").set_value(5).run()
    assert_clean(at)
    captions = [c.value for c in open_part(at, "model").caption]  # one setting: the model view hides them too
    assert at.toggle(key="real_hide_special").value and any("13 tokens" in c for c in captions)  # 15 less 2
    at.toggle(key="real_hide_special").set_value(False).run()
    assert not any("13 tokens" in c.value for c in at.caption)
    assert not open_part(at, "head").toggle(key="real_hide_special").value


@pytest.mark.parametrize("lang", ["en", "es"])
def test_sentence_similarity_matches_the_formula(bert, lang):
    sentences = ["A man is playing a guitar.", "Someone plays an instrument.", "Stock markets fell today."]
    at = start(lang=lang, real_part="similarity")
    at.text_area(key="real_list").set_value("\n".join(sentences)).run()
    assert_clean(at)
    model, tokenizer = bert
    inputs = tokenizer(sentences, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**inputs).last_hidden_state  # (3, n, d)
    mask = inputs["attention_mask"][..., None].float()
    e = ((hidden * mask).sum(1) / mask.sum(1)).numpy()  # mean pooling
    e /= np.linalg.norm(e, axis=1, keepdims=True)
    cosine = tables(at)["cosine"].to_numpy(dtype=float)
    np.testing.assert_allclose(cosine, e @ e.T, atol=1e-5)
    assert cosine[0, 1] > cosine[0, 2]  # the paraphrase is closer than the unrelated sentence
    at.text_area(key="real_list").set_value("just one").run()
    assert_clean(at)
    assert at.warning and tables(at)["cosine"].shape == (3, 3)  # the last valid list stays



@pytest.mark.parametrize("lang", ["en", "es"])
def test_the_spanish_scene_shows_the_pieces_and_the_top_says_english(lang):
    """Issue 17: the intro says MiniLM was trained on English; the Spanish scene's counts are the page's own."""
    spanish = "El animal no cruzó la calle porque estaba demasiado cansado"
    at = start(lang=lang, state={"real_text_a": spanish, "real_text_b": DEFAULT, "real_valid": (spanish, DEFAULT)})
    assert not at.exception
    intro = next(m.value for m in at.markdown if "MiniLM" in m.value)
    assert ("**in English**" if lang == "en" else "**en inglés**") in intro
    tokenizer = pretrained.load_tokenizer()
    batch = pretrained.encode(tokenizer, [(spanish, DEFAULT)])
    (wa, pa), (wb, pb) = probing.pieces_per_word(batch.tokens[0], batch.words[0], batch.types[0].tolist())
    want = " ".join(t("real.pieces", lang, sentence=s, words=w, pieces=p, ratio=p / w)
                    for s, w, p in (("A", wa, pa), ("B", wb, pb)))
    assert want in [m.value for m in at.markdown]
    assert ("(1.70 per word)" if lang == "en" else "(1,70 por palabra)") in want  # 17 / 10, in the reader's marks
    note = t("real.scene_note.spanish", lang)
    assert f"10 {'words' if lang == 'en' else 'palabras'}" in note and (wa, pa, wb, pb) == (10, 17, 13, 13)


def test_parameters_in_all_leave_out_only_the_unused_pooler():
    """Claim 4: the count shown is the checkpoint's tensors minus the pooler (and a saved index buffer)."""
    from safetensors import safe_open
    with safe_open(str(pretrained.model_dir() / "model.safetensors"), "pt") as weights:
        sizes = {name: weights.get_slice(name).get_shape() for name in weights.keys()}
    total = {name: int(np.prod(shape)) for name, shape in sizes.items()}
    left_out = {name for name in total if name.startswith("pooler") or name.endswith("position_ids")}
    assert left_out == set(pretrained.IGNORED_WEIGHTS) & set(total)
    assert sum(total[n] for n in left_out if n.startswith("pooler")) == 384 * 384 + 384
    shown = core.count_parameters(pretrained.load_model())["total"]
    assert shown == sum(v for n, v in total.items() if n not in left_out)
    at = start()
    card = next(m.value for m in at.markdown if "pooler" in m.value)
    assert f"**{shown:,}**" in card


def test_spanish_writes_a_decimal_comma_and_a_thousands_point():
    """Issue 17: the model card's counts and the scores caption's √d_k in the reader's marks."""
    at = start(lang="es", numbers=False, real_part="head")  # the scores' caption is one head's
    assert_clean(at)
    shown = core.count_parameters(pretrained.load_model())["total"]
    card = next(m.value for m in at.markdown if "pooler" in m.value)
    assert f"**{shown:,}**".replace(",", ".") in card and "de 30.522 piezas" in card
    assert any(f"√32 = {math.sqrt(32):.4f}".replace(".", ",") in c.value for c in at.caption)
