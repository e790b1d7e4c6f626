"""Lesson 4 (multi-head attention) through AppTest, checked against torch's nn.MultiheadAttention.

The reference copies the page's weights into `nn.MultiheadAttention` and feeds it the X the page shows, so the
page's output and per-head weights are compared with torch's own implementation, not with `core`.
"""
from __future__ import annotations

import re
import string
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest
from conftest import lesson_opener, widget
from torch import nn

import core
import widgets
from ui import charts
from ui.i18n import lookup, t

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "04_multi_head.py"
LONG = " ".join(f"w{k}" for k in range(64))


start = lesson_opener("lessons/04_multi_head.py")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]


PARTS = ("heads", "inside")  # the lesson's parts (ui/parts.py: one part is drawn at a time)
TABLES = ("mha_summary", "mha_params")  # the two tables that are not a matrix panel's numbers


def table(at: AppTest, key: str):
    """One table by its panel key: the panel's numbers (key "<panel key>_numbers"), or one of TABLES."""
    return widgets.table(at, key if key in TABLES else f"{key}_numbers")


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick the lesson's part ("heads" or "inside") as a learner does, and run."""
    widget(at, "radio", "mha_part").set_value(part).run()
    assert_clean(at)
    return at


def matrix(at: AppTest, key: str) -> np.ndarray:
    return table(at, key).to_numpy(dtype=float)


def facet_weights(at: AppTest) -> dict[str, np.ndarray]:
    """The small multiples' matrices by panel title, as computed (the values their SVG carries)."""
    return {name: m for h in widgets.heatmaps(at) for name, m in h.panel_matrices().items()}


def heads_control(at: AppTest):
    """The sidebar's heads selectbox."""
    return widget(at, "selectbox", "cfg_heads")


def fixed_words(key: str, lang: str) -> str:
    return max((literal for literal, *_ in string.Formatter().parse(lookup(key, lang))), key=len)


def torch_reference(x: np.ndarray, d_model: int, heads: int, seed: int, mask: str, n_real: int):
    """(output (n, d), per-head weights (h, n, n)) from nn.MultiheadAttention with the page's weights.

    The page's weights: core.init_parameters (Xavier from the seed), then biases from U(-0.5, 0.5) drawn in
    parameter order with a generator seeded with seed + 1 (as the page says)."""
    ours = core.init_parameters(core.MultiHeadAttention(d_model, heads), seed)
    g = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in ours.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-0.5, 0.5, generator=g)
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.weight.copy_(ours.out_proj.weight)
        ref.out_proj.bias.copy_(ours.out_proj.bias)
    n = x.shape[0]
    attn_mask = ~torch.ones(n, n, dtype=torch.bool).tril() if mask in ("causal", "both") else None  # True = block
    pad = torch.arange(n)[None] >= n_real if mask in ("padding", "both") else None  # True = PAD
    xt = torch.tensor(x, dtype=torch.float32)[None]
    with torch.no_grad():
        out, weights = ref(xt, xt, xt, attn_mask=attn_mask, key_padding_mask=pad, need_weights=True,
                           average_attn_weights=False)
    return out[0].double().numpy(), weights[0].double().numpy()


@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False)
    assert_clean(at)
    assert at.title[0].value == t("mha.title", lang=lang)
    assert not at.error and not at.warning
    count = f"{4 * 64**2 + 4 * 64:,}"  # the real module's count at d_model = 64
    assert at.metric[0].value == (count if lang == "en" else count.replace(",", "."))
    assert len(at.table) == 2 and not at.dataframe  # the summary and the parameters, plain: no grid on the first view
    assert set(facet_weights(at)) == {t("mha.head", lang=lang, k=k) for k in (1, 2, 3, 4)}


CASES = [  # (d_model, heads, seq_len, mask, seed, sentence, head shown in detail)
    (64, 4, 8, "none", 0, None, 2),
    (24, 3, 8, "both", 5, "el niño comió ☕ y 🍰", 1),
    (16, 16, 6, "causal", 3, "a b c d e f g", 15),
    (8, 1, 4, "padding", 2**31 - 1, "solo", 0),
]


@pytest.mark.parametrize("d_model, heads, seq_len, mask, seed, sentence, head", CASES,
                         ids=["default", "both_emoji", "16_heads_causal", "1_head_padding"])
def test_page_equals_torch_multihead_attention(d_model, heads, seq_len, mask, seed, sentence, head):
    at = start(d_model=d_model, heads=heads, seq_len=seq_len, mask=mask, seed=seed, sentence=sentence,
               state={"mha_view_heads": list(range(heads)), "mha_head": head})
    assert_clean(at)
    words = (sentence or "time flies like an arrow").split()[:seq_len]
    n = seq_len if mask in ("padding", "both") else len(words)
    x = matrix(at, "mha_X")
    assert x.shape == (n, d_model)
    assert list(table(at, "mha_X").index[:len(words)]) == charts.unique_labels(words)
    out, weights = torch_reference(x, d_model, heads, seed, mask, len(words))
    facets = facet_weights(at)
    shown = [k for k in range(heads) if t("mha.head", k=k + 1) in facets]
    assert shown == list(range(len(shown))) and len(shown) >= min(heads, 4)
    for k in shown:
        np.testing.assert_allclose(facets[t("mha.head", k=k + 1)], weights[k], atol=2e-6)
    if mask in ("padding", "both") and n > len(words):
        assert np.all(weights[:, :, len(words):] == 0) and at.info
    summary = table(at, "mha_summary")
    assert len(summary) == heads
    np.testing.assert_allclose(summary.iloc[:, 1], [  # entropy over the real tokens' queries, by numpy
        -(np.where(w > 0, w * np.log(np.where(w > 0, w, 1)), 0)).sum(-1)[:len(words)].mean() for w in weights],
        atol=1e-5)
    open_part(at, "inside")
    np.testing.assert_allclose(matrix(at, "mha_X"), x)
    np.testing.assert_allclose(matrix(at, "mha_out"), out, atol=2e-5)
    np.testing.assert_allclose(matrix(at, "mha_weights"), weights[head], atol=2e-6)
    params = table(at, "mha_params")
    assert params.iloc[:, 2].sum() == 4 * d_model**2 + 4 * d_model
    assert at.metric[0].value == f"{4 * d_model**2 + 4 * d_model:,}"
    assert f"{4 * d_model**2 + 4 * d_model:,}".replace(",", "{,}") + r"\ \checkmark" in at.latex[-1].value


def test_spanish_numbers_have_a_decimal_comma():
    at = start(lang="es", state={"mha_view_heads": [0]})  # d_model 64, 4 heads: d_k = 16
    assert_clean(at)
    text = " ".join(m.value for m in [*at.markdown, *at.caption])
    assert f"log n = {np.log(5):.4f}".replace(".", ",") in text  # 5 real tokens
    assert re.search(r"entropía media de \d,\d{4} nats", text) and re.search(r"media de \d,\d{4} posiciones", text)
    text = " ".join(m.value for m in [*open_part(at, "inside").markdown, *at.caption])
    assert "√16 ≈ 4,0000" in text and re.search(r"error máximo aquí: \d,\de[-+]\d\d\)", text)
    assert at.metric[0].value == "16.640" and r"= 16.640\ \checkmark" in at.latex[-1].value


def test_largest_settings_stay_right_and_capped(request):
    at = start(d_model=512, heads=16, seq_len=64, mask="both", sentence=LONG,
               state={"mha_view_heads": list(range(16))})
    assert_clean(at)
    assert not widgets.has_table(at, "mha_X_numbers")  # 64 x 512 numbers: in the CSV, a caption says so
    assert any(fixed_words("panel.numbers_in_csv", "en") in c.value for c in at.caption)
    facets = facet_weights(at)
    assert 1 <= len(facets) < 16 and any(fixed_words("mha.facet_capped", "en") in c.value for c in at.caption)
    assert any(t("panel.as_picture", "en") in c.value for c in at.caption)  # X (64 x 512) is one picture, whole
    for part in PARTS:
        open_part(at, part)
        for chart in at.get("vega_lite_chart"):  # no chart carries more than the caps allow
            for ds in chart.proto.datasets:
                assert len(dataframe_util.convert_arrow_bytes_to_pandas_df(ds.data.data)) <= 4096
        assert all(h.matrix.size <= 4096 for h in widgets.heatmaps(at))
    request.getfixturevalue("every_number")  # from here on, the CSV's numbers are read back as tables
    open_part(at, "inside")
    x = matrix(at, "mha_X")
    assert x.shape == (64, 512)
    out, weights = torch_reference(x, 512, 16, 0, "both", 64)
    np.testing.assert_allclose(matrix(at, "mha_out"), out, atol=5e-5)


@pytest.mark.parametrize("lang, sentence, seq_len, mask", [
    ("es", "¿qué?", 2, "padding"),
    ("en", "   ", 64, "causal"),
    ("es", "x" * 1200, 8, "none"),
])
def test_odd_sentences_and_smallest_settings(lang, sentence, seq_len, mask):
    long = len(sentence) > 1000  # the box keeps to 1000 characters: a longer sentence can only come by a link
    at = start(d_model=8, heads=8, seq_len=seq_len, mask=mask, mha_part="inside",
               **({"query": {"lang": lang, "sentence_text": sentence}} if long else {"lang": lang, "sentence": sentence}))
    assert_clean(at)
    x = matrix(at, "mha_X")
    if sentence.strip() and not long:
        assert x.shape == (2, 8) and list(table(at, "mha_X").index) == ["¿qué?", "[PAD]"]
    else:  # empty, or a too-long link value: a message, and the example stays
        assert at.warning and x.shape[0] == 5
    out, _ = torch_reference(x, 8, 8, 0, mask, 1 if mask == "padding" else x.shape[0])
    np.testing.assert_allclose(matrix(at, "mha_out"), out, atol=2e-5)


def test_the_sidebar_sets_the_sizes_and_the_lesson_draws_them_once():
    at = start(APP)
    assert_clean(at)
    labels = {t("sidebar.d_model"), t("sidebar.heads"), t("sidebar.seq_len")}
    assert not [w.label for w in [*at.main.number_input, *at.main.selectbox, *at.main.slider] if w.label in labels]
    assert t("common.sizes_in_sidebar", section=t("sidebar.lesson_settings")) in [c.value for c in at.caption]
    assert "**d_k = 16**" in " ".join(m.value for m in at.markdown)  # 64 dimensions ÷ 4 heads


def test_controls_change_what_is_shown():
    at = start(APP, mha_part="inside")
    before_x, before_w = matrix(at, "mha_X"), matrix(at, "mha_weights")
    heads_control(at).set_value(8).run()
    assert_clean(at)
    assert matrix(at, "mha_weights").shape == (5, 5) and not np.allclose(matrix(at, "mha_weights"), before_w)
    open_part(at, "heads")
    assert at.session_state["cfg_heads"] == 8 and len(table(at, "mha_summary")) == 8
    assert at.metric[0].value == f"{4 * 64**2 + 4 * 64:,}"  # the count does not depend on h
    at.number_input(key="cfg_d_model").set_value(40).run()  # 8 heads divide 40
    assert at.session_state["cfg_heads"] == 8 and heads_control(at).options == [
        str(k) for k in (1, 2, 4, 5, 8, 10)]
    at.number_input(key="cfg_d_model").set_value(36).run()  # 8 do not divide 36: the closest below is 6
    assert_clean(at)
    assert at.session_state["cfg_heads"] == 6 and matrix(at, "mha_X").shape == (5, 36)
    at.session_state["cfg_seed"] = 1
    at.run()
    assert not np.allclose(matrix(at, "mha_X")[:, :36], before_x[:, :36])
    widget(at, "multiselect", "mha_view_heads").set_value([]).run()
    assert_clean(at)
    assert not facet_weights(at) and at.info[0].value == t("mha.no_heads")


def test_invalid_pair_gets_a_message_not_a_traceback():
    at = start(d_model=64, heads=7)  # impossible through the controls; the page must still explain it
    assert_clean(at)
    assert at.error and fixed_words("mha.invalid_pair", "en") in at.error[0].value
    assert at.session_state["cfg_heads"] == 4 and len(table(at, "mha_summary")) == 4


def test_invalid_pair_in_a_link_through_the_app():
    at = start(APP, query={"d_model": "64", "heads": "7", "lang": "es", "mask": "causal"})
    assert_clean(at)
    assert at.title[0].value == t("mha.title", lang="es")
    assert at.warning and "**heads**" in at.warning[0].value
    assert at.query_params["heads"] == "4" and len(table(at, "mha_summary")) == 4
    assert heads_control(at).options == ["1", "2", "4", "8", "16"]


def test_head_view_lines_are_capped_and_strongest_first():
    w = np.array([[[0.5, 0.3, 0.2, 0.0], [0.01, 0.01, 0.01, 0.97], [0.25, 0.25, 0.25, 0.25], [0.04, 0.9, 0.03, 0.03]],
                  [[1.0, 0.0, 0.0, 0.0]] * 4])
    lines = charts.head_view_lines(w, [0, 1], threshold=0.05, top_k=2)
    assert lines.values.tolist() == [[0, 0, 0, 0.5], [0, 0, 1, 0.3], [0, 1, 3, 0.97], [0, 2, 0, 0.25],
                                     [0, 2, 1, 0.25], [0, 3, 1, 0.9], [1, 0, 0, 1.0], [1, 1, 0, 1.0],
                                     [1, 2, 0, 1.0], [1, 3, 0, 1.0]]
    assert len(charts.head_view_lines(w, [1], threshold=0.05, top_k=5)) == 4
    spec = charts.head_view(w, list("abcd"), [1], ["h1", "h2"]).to_dict()
    assert spec["layer"][0]["encoding"]["color"]["scale"]["range"] == [charts.HEAD_COLORS[1]]
    assert len(set(charts.HEAD_COLORS)) == 16


def test_each_part_draws_its_own_sections_and_both_end_with_the_parameters_and_the_notice():
    """One part is drawn at a time (ui/parts.py): the heads side by side, or one head and the way back to d_model;
    the input, the shapes, the parameter count and what to notice are under both."""
    at = start(numbers=False)
    assert_clean(at)
    headers = [h.value for h in at.subheader]
    assert t("mha.heads_header") in headers and t("mha.one_head_header") not in headers
    assert facet_weights(at) and len(at.table) == 2  # the summary and the parameters
    open_part(at, "inside")
    headers = [h.value for h in at.subheader]
    assert t("mha.one_head_header") in headers and t("mha.concat_header") in headers
    assert t("mha.heads_header") not in headers and not facet_weights(at) and len(at.table) == 1  # the parameters
    for part in PARTS:
        headers = [h.value for h in open_part(at, part).subheader]
        assert headers[-2:] == [t("mha.params_header"), t("mha.notice_header")] and t("mha.steps_header") in headers
        assert at.metric[0].value == f"{4 * 64**2 + 4 * 64:,}"
