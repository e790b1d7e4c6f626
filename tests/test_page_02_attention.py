"""Lesson 2 (queries, keys, values) through AppTest, and core.lab.saturation.

Every matrix the page shows is rebuilt here from the same seed with plain torch (the seeded draws) and numpy
(everything else), independently of `core`, and compared with the page's "show the numbers" tables.
"""
from __future__ import annotations

import ast
import inspect
import math
import zlib
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from streamlit.testing.v1 import AppTest
from conftest import lesson_opener, widget
from widgets import bar_charts, has_table, heatmaps, line_charts, pictures, table

from ui.i18n import t

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "02_attention.py"
PARTS = next(ast.literal_eval(node.value) for node in ast.parse(PAGE.read_text(encoding="utf-8")).body
             if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "PARTS")  # the lesson's
EXAMPLE = ["time", "flies", "like", "an", "arrow"]
LONG = " ".join(["🙂", "café", "niño", "Ünïcödé", "*bold*", "$x$", "a_b", "#tag"] * 8)  # 64 tokens


start = lesson_opener("lessons/02_attention.py")


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def chart_matrices(at: AppTest) -> list[np.ndarray]:
    """Every matrix panel's matrix, as computed (the values its SVG carries, ui/charts/svg.py)."""
    return [h.matrix for h in heatmaps(at)]


def reference(words: list[str], d_model: int = 64, heads: int = 4, seed: int = 0, causal: bool = False,
              tied: bool = False) -> dict[str, np.ndarray]:
    """Every matrix of the page, from the same seeds, without core."""
    n, d_k = len(words), d_model // heads
    e = np.stack([torch.randn(d_model, generator=torch.Generator().manual_seed(zlib.crc32(f"{seed}:{w}".encode())))
                  .double().numpy() for w in words])
    angle = np.arange(n)[:, None] / 10000.0 ** (np.arange(0, d_model, 2)[None, :] / d_model)
    pe = np.zeros((n, d_model))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angle), np.cos(angle[:, : d_model // 2])
    x = e + pe

    def weight(s: int) -> np.ndarray:
        w = torch.randn(d_model, d_k, generator=torch.Generator().manual_seed(s)) / math.sqrt(d_model)
        return w.double().numpy()

    w_q, w_k, w_v = weight(3 * seed + 1), weight(3 * seed + (1 if tied else 2)), weight(3 * seed + 3)
    q, k, v = x @ w_q, x @ w_k, x @ w_v
    s = q @ k.T
    scaled = s / math.sqrt(d_k)
    masked = np.where(np.tril(np.ones((n, n))) > 0, scaled, -np.inf) if causal else scaled
    a = np.exp(masked - masked.max(axis=1, keepdims=True))
    a /= a.sum(axis=1, keepdims=True)
    out = F.scaled_dot_product_attention(*(torch.tensor(m)[None] for m in (q, k, v)), is_causal=causal)[0].numpy()
    ref = {"X": x, "W_Q": w_q, "W_K": w_k, "W_V": w_v, "Q": q, "K": k, "V": v, "S": s, "S_scaled": scaled,
           "A": a, "O": out, "D": s - s.T}
    if causal:
        ref["S_masked"] = masked
    return ref


PART_TABLES = {  # each part's "show the numbers" tables (ui/parts.py: one part is drawn at a time), in page order
    "projections": ["X", "W_Q", "Q", "W_K", "K", "W_V", "V"],
    "scores": ["S", "S_scaled", "S_masked", "A", "O", "D"],
    "query": ["prod", "row"],  # "row": more than 24 tokens, the one-query numbers as a panel instead of bars
    "scaling": ["exp_scores", "saturation"]}


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick the lesson's part as a learner does, and run."""
    widget(at, "radio", "qkv_part").set_value(part).run()
    return at


def frames(at: AppTest, causal: bool = False, parts=tuple(PART_TABLES)) -> dict:
    """The page's "show the numbers" tables by name (their keys: qkv_<name>_numbers), from each of `parts` in turn
    (then the part open before)."""
    out, was = {}, at.session_state["qkv_part"]
    for part in parts:
        if at.session_state["qkv_part"] != part:
            open_part(at, part)
        names = [n for n in PART_TABLES[part] if n != "S_masked" or causal]
        if part == "query" and not has_table(at, "qkv_row_numbers"):
            names.remove("row")  # 24 keys or fewer: the one query's numbers are bars, not a panel
        assert len(at.dataframe) == len(names), (len(at.dataframe), names)  # the part's tables and nothing else
        out.update({name: table(at, f"qkv_{name}_numbers") for name in names})
    if at.session_state["qkv_part"] != was:
        open_part(at, was)
    return out


def tables(at: AppTest, causal: bool = False, parts=tuple(PART_TABLES)) -> dict[str, np.ndarray]:
    """The tables of `frames` as numbers."""
    return {name: f.to_numpy(dtype=float) for name, f in frames(at, causal, parts).items()}


def assert_matches(got: dict[str, np.ndarray], want: dict[str, np.ndarray], atol: float = 5e-5) -> None:
    for name, m in want.items():
        r, c = got[name].shape  # a big matrix is shown as its top-left slice
        np.testing.assert_allclose(got[name], m[:r, :c], atol=atol, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize("path, lang", [(APP, "en"), (PAGE, "es")], ids=["app-en", "page-es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False)
    assert_clean(at)
    assert at.title[0].value == t("qkv.title", lang=lang)
    assert not at.warning and not at.dataframe  # numbers hidden by default
    assert at.toggle(key="qkv_tied").label == t("qkv.tied", lang=lang)
    assert at.subheader[-1].value == t("qkv.notice_header", lang=lang)


def test_defaults_match_an_independent_computation():
    at = start(show_code=True)  # "show the code" open
    assert_clean(at)
    got, want = tables(at), reference(EXAMPLE)
    assert_matches(got, want)
    assert got["Q"].shape == (5, 16) and got["W_Q"].shape == (64, 16) and got["A"].shape == (5, 5)
    assert not np.allclose(got["D"], 0, atol=1e-3)  # W_Q != W_K: Q Kᵀ is not symmetric
    np.testing.assert_allclose(got["prod"].sum(axis=1), want["S"][0], atol=5e-5)  # q_time ⊙ k_j sums to row 0
    scores = frames(at, parts=("scores",))["S"]
    assert list(scores.index) == EXAMPLE and list(scores.columns) == EXAMPLE
    import core  # "show the code" shows the functions that ran
    shown = [c.value.strip() for c in at.main.code]
    assert inspect.getsource(core.scaled_dot_product_attention).strip() in shown
    assert inspect.getsource(core.sinusoidal_encoding).strip() in shown


def test_charts_carry_the_same_numbers():
    """Every heatmap carries its matrix's numbers (the W's are pictures: their numbers are in the tables)."""
    at = start(numbers=False)
    want = reference(EXAMPLE)
    for part, names in (("projections", ["X", "Q", "K", "V"]), ("scores", ["S", "S_scaled", "A", "O", "D"])):
        heatmaps = chart_matrices(open_part(at, part))
        assert len(heatmaps) == len(names)  # the part's own: the experiment's two rows of scores are in its part
        for m, name in zip(heatmaps, names):
            np.testing.assert_allclose(m, want[name], atol=5e-5, err_msg=name)
    open_part(at, "projections")
    assert len(pictures(at)) == 3 and sum(t("panel.as_picture") in c.value for c in at.caption) == 3


def test_tying_w_k_to_w_q_makes_the_scores_symmetric():
    at = start()
    before = tables(at)
    at.toggle(key="qkv_tied").set_value(True).run()
    assert_clean(at)
    got = tables(at)
    assert_matches(got, reference(EXAMPLE, tied=True))
    np.testing.assert_array_equal(got["W_K"], got["W_Q"])
    np.testing.assert_allclose(got["S"], got["S"].T, atol=1e-9)
    assert np.abs(got["D"]).max() < 1e-9 and not np.allclose(got["S"], before["S"])
    assert any(t("qkv.W_tied") in c.value for c in at.caption)


@pytest.mark.parametrize("mask", ["causal", "padding", "both"])
def test_the_shared_mask_setting(mask):
    at = start(mask=mask, lang="es" if mask == "both" else "en")
    assert_clean(at)
    causal = mask != "padding"
    got = tables(at, causal=causal)
    assert_matches(got, reference(EXAMPLE, causal=causal))
    assert any(t(f"mask.{mask}", lang=at.session_state["cfg_lang"]) in i.value for i in at.info)
    if causal:
        assert np.all(got["A"][np.triu_indices(5, 1)] == 0) and np.all(np.isneginf(got["S_masked"][0, 1:]))
    else:  # one sentence has no padding: the padding mask blocks nothing, and the page says so
        assert np.all(got["A"] > 0)


EXTREMES = [  # (settings, sentence, language)
    ({"d_model": 8, "heads": 8, "seq_len": 2, "seed": 0, "mask": "both"}, "héllo wörld ünïcode", "es"),
    ({"d_model": 512, "heads": 16, "seq_len": 64, "seed": 2**31 - 1, "mask": "causal"}, LONG, "en"),
    ({"d_model": 512, "heads": 1, "seq_len": 64, "seed": 7, "mask": "none"}, "🙂", "es"),
    ({"d_model": 8, "heads": 1, "seq_len": 64, "seed": 3, "mask": "padding"}, LONG, "en"),
]


@pytest.mark.parametrize("settings, sentence, lang", EXTREMES, ids=["smallest", "largest", "one-token", "narrow"])
def test_extremes_of_the_controls(settings, sentence, lang, every_number):
    at = start(lang=lang, sentence=sentence, **settings)
    assert_clean(at)
    words = sentence.split()[: settings["seq_len"]]
    causal = settings["mask"] in ("causal", "both")
    got = tables(at, causal=causal)
    want = reference(words, settings["d_model"], settings["heads"], settings["seed"], causal=causal)
    assert_matches(got, want, atol=2e-4 if settings["d_model"] == 512 else 5e-5)
    n, d_k = len(words), settings["d_model"] // settings["heads"]
    assert got["A"].shape == (n, n) and got["Q"].shape[0] == n
    sliced = n * settings["d_model"] > 4096 or settings["d_model"] > 64  # X or the W's are drawn as a slice ...
    assert all(m.size <= 4096 for m in got.values()) and got["X"].shape[1] == min(settings["d_model"], 4096 // n)
    full = [b for b in at.get("download_button") if b.proto.label == t("qkv.full_csv", lang=lang)]
    assert bool(full) == sliced  # ... and the whole matrix is offered as CSV
    if n > 24:
        np.testing.assert_allclose(got["row"][2], want["A"][0], atol=5e-5)
    assert any(f"d_k = d_model / h = {d_k}" in i.value for i in at.info)


def test_a_64_token_sentence_is_cut_to_seq_len_with_a_message():
    at = start(sentence=LONG, seq_len=10)
    assert_clean(at)
    assert at.info and t("tokens.truncated", n=64, seq_len=10) in [i.value for i in at.info]
    assert tables(at, parts=("scores",))["A"].shape == (10, 10)


def test_an_empty_sentence_warns_and_keeps_the_last_valid_one():
    at = start(lang="es", qkv_part="scores")
    before = tables(at, parts=("scores",))
    at.session_state["cfg_sentence_text"] = "   "
    at.run()
    assert not at.exception and len(at.warning) == 1
    assert at.warning[0].value == t("tokens.empty", lang="es", max=1000, kept=" ".join(EXAMPLE))
    np.testing.assert_array_equal(tables(at, parts=("scores",))["A"], before["A"])


def test_the_sentence_box_keeps_a_text_to_its_limit():
    at = start(lang="es", qkv_part="scores")
    at.session_state["cfg_sentence_text"] = "x " * 600  # more than a browser lets anyone type
    at.run()
    assert not at.exception and not at.warning and len(at.session_state["cfg_sentence_text"]) == 1000


def test_picking_another_query_changes_the_one_query_view():
    at = start(sentence="the cat sat on the mat", qkv_part="query")
    query = at.selectbox(key="qkv_query")
    query.set_value(4).run()  # the second "the"
    assert_clean(at)
    got, want = tables(at), reference("the cat sat on the mat".split())
    np.testing.assert_allclose(got["prod"], want["Q"][4][None, :] * want["K"], atol=5e-5)
    assert not np.allclose(got["prod"], want["Q"][0][None, :] * want["K"], atol=1e-3)  # position changes q
    sums, weights = bar_charts(at)  # the query's sums and weights (the experiment's bars are in its own part)
    np.testing.assert_allclose(sums.values, (want["Q"][4][None, :] * want["K"]).sum(axis=1), atol=5e-5)
    np.testing.assert_allclose(weights.values.sum(), 1.0, atol=1e-6)


def experiment(d_k: int, seed: int = 0, n_keys: int = 10) -> dict[str, float]:
    """The scaling experiment's numbers, rebuilt without core (same draws as core.lab.analysis.scaling_experiment)."""
    g = torch.Generator().manual_seed(seed)
    q, keys = torch.randn(d_k, generator=g), torch.randn(n_keys, d_k, generator=g)
    a, b = torch.randn(2000, d_k, generator=g), torch.randn(2000, d_k, generator=g)
    dots = (a * b).sum(-1)
    out = {"raw_scores": (keys @ q).double(), "raw_variance": dots.var().item(),
           "scaled_variance": (dots / math.sqrt(d_k)).var().item()}
    out["scaled_scores"] = out["raw_scores"] / math.sqrt(d_k)
    for side in ("raw", "scaled"):
        p = torch.softmax(out[f"{side}_scores"], -1)
        out[f"{side}_entropy"] = float(-(p * p.clamp_min(1e-300).log()).sum())
        out[f"{side}_max"] = float(p.max())
        out[f"{side}_jacobian"] = float((torch.diag(p) - torch.outer(p, p)).norm())
    return out


@pytest.mark.parametrize("d_k, lang", [(1, "en"), (64, "es"), (1024, "en")])
def test_scaling_experiment_numbers(d_k, lang):
    at = start(lang=lang, qkv_dk=d_k, qkv_part="scaling")
    assert_clean(at)
    want = experiment(d_k)
    metrics = [m.value for m in at.metric]
    expected = []
    for side in ("raw", "scaled"):
        expected += [f"{want[f'{side}_variance']:.2f}", f"{want[f'{side}_entropy']:.4f}", f"{want[f'{side}_max']:.4f}",
                     f"{want[f'{side}_jacobian']:.2e}"]
    mark = "," if lang == "es" else "."  # Spanish: a decimal comma in every metric, as in the sentences
    assert metrics == [m.replace(".", mark) for m in expected]
    np.testing.assert_allclose(tables(at, parts=("scaling",))["exp_scores"],
                               torch.stack([want["raw_scores"], want["scaled_scores"]]), rtol=1e-6, atol=1e-5)
    if lang == "es":  # and in the one query's check: √d_k of the default d_k = 64 / 4 heads = 16
        assert any("√d_k ≈ 4,0000" in c.value for c in open_part(at, "query").caption)
    if d_k == 1:
        assert metrics[:4] == metrics[4:]  # √1 = 1: nothing changes
    if d_k == 1024:  # saturated without scaling: near one-hot, and almost no gradient
        assert want["raw_max"] > 0.99 and want["raw_jacobian"] < 1e-3 < want["scaled_jacobian"]


def test_saturation_curves_and_their_numbers_are_core_s():
    """The two line charts of the scaling part carry core's entropies and median ‖J‖ at every d_k, and the
    table under them (with "show the numbers") the same values."""
    from core.lab.saturation import entropy_by_d_k, saturation_by_d_k
    from ui.attention_views import D_KS, DRAWS, N_KEYS

    at = start(seed=2, qkv_part="scaling")
    assert_clean(at)
    entropies = entropy_by_d_k(D_KS, N_KEYS, 2)
    C = saturation_by_d_k(D_KS, N_KEYS, 2, DRAWS)
    entropy_chart, jacobian_chart = line_charts(at)
    raw, scaled = t("qkv.curve_raw", lang="en"), t("qkv.curve_scaled", lang="en")
    for chart, (want_raw, want_scaled) in ((entropy_chart, entropies), (jacobian_chart, (C.raw_median,
                                                                                         C.scaled_median))):
        np.testing.assert_allclose(chart.series[raw][0], np.log2(D_KS))
        np.testing.assert_allclose(chart.series[raw][1], want_raw.numpy(), rtol=1e-6)
        np.testing.assert_allclose(chart.series[scaled][1], want_scaled.numpy(), rtol=1e-6)
    assert entropy_chart.series[t("qkv.curve_max", lang="en")][1] == pytest.approx([np.log(N_KEYS)] * len(D_KS))
    numbers = table(at, "qkv_saturation_numbers").to_numpy(dtype=float)  # d_k, then entropy and ‖J‖ both ways
    np.testing.assert_array_equal(numbers[:, 0], D_KS)
    np.testing.assert_allclose(numbers[:, 1:], np.stack([entropies[0].numpy(), entropies[1].numpy(),
                                                         C.raw_median.numpy(), C.scaled_median.numpy()], axis=1),
                               rtol=1e-6)


@pytest.mark.parametrize("lang, seed", [("en", 0), ("es", 3)])
def test_the_saturation_sentence_at_the_default_d_k(lang, seed):
    """The claim of the experiment at the default d_k = 64: over many queries the unscaled softmax is often saturated
    and its Jacobian several times smaller (core's numbers are checked against autograd in test_core_lab_saturation);
    the sentence shows those numbers in the reader's language."""
    from core.lab.saturation import saturation_by_d_k

    at = start(lang=lang, numbers=False, seed=seed, qkv_part="scaling")
    assert_clean(at)
    curve = saturation_by_d_k((64,), seed=seed)
    raw, scaled = float(curve.raw_median[0]), float(curve.scaled_median[0])
    assert scaled > 4 * raw and curve.raw_saturated[0] > 0.25 and curve.scaled_saturated[0] == 0
    mark = "," if lang == "es" else "."
    share = f"{round(100 * float(curve.raw_saturated[0]))}{' %' if lang == 'es' else '%'}"
    text = next(m.value for m in at.markdown if "d_k = 64" in m.value and "256" in m.value)
    for shown in (f"{raw:.3g}".replace(".", mark), f"{scaled:.3g}".replace(".", mark), share):
        assert shown in text, (shown, text)


def test_slider_changes_what_is_shown():
    at = start(numbers=False, qkv_part="scaling")
    before = [m.value for m in at.metric]
    widget(at, "select_slider", "qkv_dk").set_value(512).run()
    assert_clean(at)
    after = [m.value for m in at.metric]
    assert before != after and float(after[0]) > 300 and float(after[4]) < 2
    assert any("d_k = 512" in m.value for m in at.markdown)


def test_language_switch_keeps_the_sentence_and_the_choices():
    at = start(APP, sentence="la gata duerme", mask="causal")
    at.toggle(key="qkv_tied").set_value(True).run()
    at.sidebar.radio[0].set_value("es").run()
    assert_clean(at)
    assert at.title[0].value == t("qkv.title", lang="es") and at.toggle(key="qkv_tied").value is True
    got = tables(at, causal=True)
    assert_matches(got, reference(["la", "gata", "duerme"], causal=True, tied=True))
    widget(open_part(at, "scaling"), "select_slider", "qkv_dk").set_value(256).run()
    at.switch_page("lessons/01_similarity.py").run()  # to lesson 1 and back: nothing is lost
    assert at.title[0].value == t("sim.title", lang="es")
    at.switch_page("lessons/02_attention.py").run()
    assert_clean(at)
    assert at.toggle(key="qkv_tied").value is True and widget(at, "select_slider", "qkv_dk").value == 256
    np.testing.assert_array_equal(tables(at, causal=True)["A"], got["A"])


# ---- core.lab.saturation --------------------------------------------------------------------------------------

def test_softmax_jacobian_matches_the_formula_and_torch():
    from core.lab.saturation import softmax_jacobian, softmax_jacobian_formula
    s = torch.tensor([0.3, -1.2, 2.0, 0.0], dtype=torch.float64)
    reference_jacobian = torch.autograd.functional.jacobian(lambda x: torch.softmax(x, -1), s)
    # (numpy's comparison: torch.testing takes ~3 s to import on this machine)
    np.testing.assert_allclose(softmax_jacobian(s).numpy(), reference_jacobian.numpy(), atol=1e-15)
    np.testing.assert_allclose(softmax_jacobian_formula(torch.softmax(s, -1)).numpy(), reference_jacobian.numpy(),
                               atol=1e-15)
    saturated = softmax_jacobian(torch.tensor([40.0, 0.0, -3.0], dtype=torch.float64))
    assert saturated.abs().max() < 1e-15  # one-hot: no gradient at all


def test_entropy_falls_with_d_k_only_without_scaling():
    from core.lab.saturation import entropy_by_d_k
    raw, scaled = entropy_by_d_k([1, 16, 1024], n_keys=10, seed=0)
    assert raw.shape == scaled.shape == (3,)
    assert raw[0] == scaled[0]  # d_k = 1: identical
    assert raw[0] > raw[1] > raw[2] and raw[2] < 0.5
    assert torch.all(scaled > 1.5) and torch.all(scaled <= math.log(10) + 1e-6)


def test_each_part_draws_its_own_sections_and_a_cold_open_only_the_first():
    """One part is drawn at a time (ui/parts.py): a cold open draws the projections, not the scaling experiment
    (its d_k slider, its eight metrics), which is a part of its own. The tie between W_K and W_Q is under every
    part; d_k is kept while another part is open, and the link holds it only when its part is open."""
    at = start(APP, numbers=False)
    assert at.session_state["qkv_part"] == PARTS[0] == "projections" and not at.metric
    own = {"projections": "qkv.projections_header", "scores": "qkv.scores_header", "query": "qkv.neuron_header",
           "scaling": "qkv.scaling_header"}
    assert list(own) == list(PARTS) == list(PART_TABLES)
    for part in PARTS:
        open_part(at, part)
        assert_clean(at)
        headers = [h.value for h in at.subheader]
        assert [key for key in own.values() if t(key) in headers] == [own[part]]
        assert at.toggle(key="qkv_tied").value is False and at.query_params["qkv_part"] == part
        assert (len(at.metric) == 8) == ("qkv_dk" in at.query_params) == (part == "scaling")
    widget(at, "select_slider", "qkv_dk").set_value(256).run()
    open_part(at, "projections")
    assert at.session_state["qkv_dk"] == 256 and "qkv_dk" not in at.query_params
    assert widget(open_part(at, "scaling"), "select_slider", "qkv_dk").value == 256
    assert at.query_params["qkv_dk"] == "256"


def test_a_link_with_d_k_and_no_part_opens_the_scaling_part():
    """A link made before the scaling experiment was a part (or by hand) says qkv_dk and no part: the part whose
    control takes it opens (ui/parts.seek, run by app.py), and nothing is reported unused. A link that names its
    part keeps it, and reports d_k as unused."""
    from ui.state import PENDING

    at = start(APP)
    at.session_state[PENDING] = {"qkv_dk": "512"}  # what ui/state.init keeps of such a link for its controls
    at.run()
    assert_clean(at)
    assert at.session_state["qkv_part"] == "scaling" and at.session_state["qkv_dk"] == 512 and not at.toast
    assert at.query_params["qkv_part"] == "scaling" and at.query_params["qkv_dk"] == "512"
    assert any("d_k = 512" in m.value for m in at.markdown)

    at = start(APP)
    at.session_state[PENDING] = {"qkv_part": "query", "qkv_dk": "128"}
    at.run()
    assert_clean(at)
    assert at.session_state["qkv_part"] == "query" and at.session_state["qkv_dk"] == 64
    assert any("qkv_dk" in toast.value for toast in at.toast) and "qkv_dk" not in at.query_params
