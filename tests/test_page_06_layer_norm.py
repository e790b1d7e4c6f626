"""Lesson 6 (layer normalization) through AppTest, plus core.lab.gradients and charts.value_strips.

Every number is checked against an independent reference: torch.nn.LayerNorm (torch style), the formula in
numpy (annotated style), torch.nn.BatchNorm1d (the batch axis) and a gradient computation written here.
"""
from __future__ import annotations

import inspect
import string
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from streamlit.testing.v1 import AppTest

import core
from core.lab.gradients import gradient_norms_at_init, parameter_gradient_norm
from core.hooks import trace
from core.lab.norms import both_styles, traced_layer_norm
from core.layers import _Block
from ui.i18n import lookup, t
from conftest import lesson_opener, table_editor, widget
from widgets import line_charts, table

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
PAGE = ROOT / "lessons" / "06_layer_norm.py"
X0 = np.array([[0.4513, -0.1872], [1.2927, -0.6469], [0.9508, 0.8249]])  # exercise 1's result
COURSE_MEANS, COURSE_STDS = (0.1320, 0.3229, 0.8879), (0.4515, 1.3715, 0.0890)  # exercise 3
TABLES = {"stats": "ln_stats", "X": "ln_X_numbers", "centered": "ln_centered_numbers",  # part 1, statistics
          "norm_annotated": "ln_norm_annotated_numbers", "out_annotated": "ln_out_annotated_numbers",  # part 2
          "norm_torch": "ln_norm_torch_numbers", "out_torch": "ln_out_torch_numbers", "pair": "ln_pair_table",
          "axis_layer": "ln_axis_layer_numbers", "axis_batch": "ln_axis_batch_numbers",  # part 3, batch
          "grads": "ln_grad_numbers"}  # part 4, placement; a name -> the key of its table


start = lesson_opener("lessons/06_layer_norm.py")


def tables(at: AppTest) -> dict[str, pd.DataFrame]:
    """The read-only tables of the part on screen, by name (found by key; the annotated ones are missing when
    d = 1)."""
    got = {}
    for name, key in TABLES.items():
        try:
            got[name] = table(at, key)
        except KeyError:
            continue
    return got


def open_part(at: AppTest, part: str) -> AppTest:
    """Pick one of the lesson's parts (ui/parts.py) with its selector."""
    widget(at, "radio", "ln_part").set_value(part).run()
    assert at.session_state["ln_part"] == part
    return at


def edit(at: AppTest, **change) -> AppTest:
    editor = table_editor(at, "ln_x")
    at.session_state[editor.key] = {"edited_rows": change.get("edited_rows", {}),
                                    "added_rows": change.get("added_rows", []),
                                    "deleted_rows": change.get("deleted_rows", [])}
    return at.run()


def assert_clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def annotated_reference(x: np.ndarray, gamma: float = 1.0, beta: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(x - mean) / (unbiased std + 1e-6), then gamma and beta: the formula, in numpy."""
    centered = x - x.mean(axis=1, keepdims=True)
    normalized = centered / (x.std(axis=1, ddof=1, keepdims=True) + 1e-6)
    return normalized, gamma * normalized + beta


def torch_reference(x: np.ndarray, gamma: float = 1.0, beta: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """torch.nn.LayerNorm (eps 1e-5), without and with gamma and beta."""
    norm = torch.nn.LayerNorm(x.shape[1], eps=1e-5, dtype=torch.float64)
    xt = torch.tensor(x, dtype=torch.float64)
    plain = norm(xt).detach().numpy()
    with torch.no_grad():
        norm.weight.fill_(gamma)
        norm.bias.fill_(beta)
    return plain, norm(xt).detach().numpy()


def reference_gradient_norms(n_layers: int, d_model: int, n_heads: int, norm_first: bool, seed: int) -> list[float]:
    """The page's experiment redone here: same seeded stack and data, loss and norms computed independently."""
    from core.config import ModelConfig
    from core.layers import Encoder
    from core.model import init_parameters
    cfg = ModelConfig(src_vocab=1, tgt_vocab=1, d_model=d_model, n_heads=n_heads, n_layers=n_layers,
                      d_ff=4 * d_model, dropout=0.0, norm_first=norm_first)
    with torch.random.fork_rng(devices=[]):
        stack = Encoder(cfg)
    init_parameters(stack, seed)
    g = torch.Generator().manual_seed(seed)
    x, target = torch.randn(1, 8, d_model, generator=g), torch.randn(1, 8, d_model, generator=g)
    loss = torch.nn.functional.mse_loss(stack(x), target)
    names, params = zip(*stack.named_parameters())
    grads = dict(zip(names, torch.autograd.grad(loss, params)))
    return [float(torch.linalg.vector_norm(torch.cat([grads[n].flatten() for n in names
                                                      if n.startswith(f"layers.{i}.")])))
            for i in range(n_layers)]


def fixed_words(key: str, lang: str) -> str:
    return max((literal for literal, *_ in string.Formatter().parse(lookup(key, lang))), key=len)


# ---- the page --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [APP, PAGE], ids=["app", "page"])
@pytest.mark.parametrize("lang", ["en", "es"])
def test_runs_in_both_languages(path, lang):
    at = start(path, lang=lang, numbers=False, show_code=True)  # "show the code" open
    assert_clean(at)
    assert at.title[0].value == t("ln.title", lang=lang)
    assert at.session_state["ln_part"] == "statistics"  # the first part, alone
    assert list(tables(at)) == ["stats"]  # the per-token statistics (the matrices' numbers are off)
    assert any(t("ln.course_check", lang=lang) == c.value for c in at.caption)
    if path == APP:
        assert at.sidebar.toggle[0].label == t("sidebar.show_numbers", lang=lang)
    functions = (traced_layer_norm, both_styles, core.LayerNorm, trace, _Block.residual, gradient_norms_at_init,
                 parameter_gradient_norm)
    assert [c.value.strip() for c in at.main.code] == [inspect.getsource(f).strip() for f in functions]  # code shown = run


PART_TABLES = {"statistics": ["stats", "X", "centered"], "styles": ["norm_annotated", "out_annotated", "norm_torch",
               "out_torch", "pair"], "batch": ["axis_layer", "axis_batch"], "placement": ["grads"]}


@pytest.mark.parametrize("lang", ["en", "es"])
def test_each_part_draws_its_own_sections_alone(lang):
    """One part on screen at a time: its tables and only its tables, the editor in the three parts that start
    from the tokens, the diagrams and the experiment in the last."""
    at = start(lang=lang)
    for part, names in PART_TABLES.items():
        open_part(at, part)
        assert_clean(at)
        assert list(tables(at)) == names, part
        assert [w.key for w in at.toggle if w.key == "ln_x_editing"] == ["ln_x_editing"] * (part != "placement"), part
        svgs = [m for m in at.markdown if m.value.startswith("<svg")]
        assert len(svgs) == 2 * (part == "placement"), part
        assert (t("ln.xiong", lang=lang) in [m.value for m in at.markdown]) == (part == "placement"), part


def test_defaults_show_the_course_numbers():
    at = start()
    assert_clean(at)
    got = tables(at)
    stats = got["stats"].to_numpy(dtype=float)
    assert list(got["stats"].index) == ["t0", "t1", "t2"]
    np.testing.assert_allclose(stats[:, 0], X0.mean(axis=1), atol=1e-12)
    np.testing.assert_allclose(stats[:, 0], COURSE_MEANS, atol=5e-5 + 1e-9)  # t0: 0.13205, a tie at 4 decimals
    assert [f"{v:.4f}" for v in stats[1:, 0]] == ["0.3229", "0.8879"]
    assert [f"{v:.4f}" for v in stats[:, 1]] == [f"{v:.4f}" for v in COURSE_STDS]
    np.testing.assert_allclose(stats[:, 2], np.sqrt(X0.var(axis=1) + 1e-5), atol=1e-12)
    np.testing.assert_allclose(got["X"].to_numpy(dtype=float), X0)
    np.testing.assert_allclose(got["centered"].to_numpy(dtype=float), X0 - X0.mean(axis=1, keepdims=True),
                               atol=1e-12)
    widget(at, "selectbox", "ln_token").set_value(2).run()  # the calculation written out for t2
    assert "0.8879" in at.latex[-1].value and "0.0890" in at.latex[-1].value
    got = tables(open_part(at, "styles"))
    np.testing.assert_allclose(got["norm_annotated"].to_numpy(dtype=float), annotated_reference(X0)[0], atol=1e-12)
    np.testing.assert_allclose(got["norm_torch"].to_numpy(dtype=float), torch_reference(X0)[0], atol=1e-12)
    got = tables(open_part(at, "batch"))
    batch = torch.nn.BatchNorm1d(2, eps=1e-5, affine=False, track_running_stats=False, dtype=torch.float64)
    want = batch(torch.tensor(X0)).detach().numpy()  # training-mode statistics over the batch axis
    np.testing.assert_allclose(got["axis_batch"].to_numpy(dtype=float), want, atol=1e-12)
    np.testing.assert_allclose(got["axis_layer"].to_numpy(dtype=float), torch_reference(X0)[0], atol=1e-12)
    assert np.abs(got["axis_batch"].to_numpy(dtype=float).mean(axis=0)).max() < 1e-12
    assert np.abs(got["axis_layer"].to_numpy(dtype=float).mean(axis=1)).max() < 1e-12


def test_gamma_and_beta_match_nn_layernorm_and_the_formula():
    at = start(ln_part="styles")
    before = tables(at)
    at.slider(key="ln_gamma").set_value(2.5)
    at.slider(key="ln_beta").set_value(-0.75).run()
    assert_clean(at)
    got = tables(at)
    for style, reference in (("annotated", annotated_reference), ("torch", torch_reference)):
        normalized, out = reference(X0, 2.5, -0.75)
        np.testing.assert_allclose(got[f"norm_{style}"].to_numpy(dtype=float), normalized, atol=1e-12)
        np.testing.assert_allclose(got[f"out_{style}"].to_numpy(dtype=float), out, atol=1e-12)
        assert not np.allclose(got[f"out_{style}"], before[f"out_{style}"])
    assert "2.5" in at.markdown[-1].value or any("2.5" in m.value for m in at.markdown)


def test_the_two_styles_on_a_and_minus_a():
    at = start(ln_part="styles")
    pair = tables(at)["pair"].to_numpy(dtype=float)  # rows annotated, torch; columns mean, std, x1, x2
    assert [f"{v:.4f}" for v in pair[0, 2:]] == ["0.7071", "-0.7071"]
    assert [f"{v:.4f}" for v in pair[1, 2:]] == ["1.0000", "-1.0000"]
    np.testing.assert_allclose(pair[:, 1], [np.sqrt(2), np.sqrt(1 + 1e-5)], atol=1e-12)
    for a in (0.0, 1000.0, -1000.0):
        at.number_input(key="ln_pair").set_value(a).run()
        assert_clean(at)
        pair = tables(at)["pair"].to_numpy(dtype=float)
        x = np.array([[a, -a]])
        np.testing.assert_allclose(pair[0, 2:], annotated_reference(x)[0][0], atol=1e-12)
        np.testing.assert_allclose(pair[1, 2:], torch_reference(x)[0][0], atol=1e-12)
        assert np.isfinite(pair).all()
    assert pair[0, 2] == pytest.approx(-np.sqrt(0.5), abs=1e-6) and pair[1, 2] == pytest.approx(-1, abs=1e-6)


def test_gradient_norms_match_an_independent_recomputation():
    at = start(ln_part="placement", state={"cfg_seed": 3})
    at.slider(key="ln_layers").set_value(3).run()
    assert_clean(at)
    grads = tables(at)["grads"].to_numpy(dtype=float)  # rows layers, columns pre, post
    assert grads.shape == (3, 2)
    for column, first in ((0, True), (1, False)):
        np.testing.assert_allclose(grads[:, column], reference_gradient_norms(3, 64, 4, first, 3), rtol=1e-6)
    assert not np.allclose(grads[:, 0], grads[:, 1])  # the two wirings really differ
    (chart,) = line_charts(at)
    for column, (x, y) in enumerate(chart.series.values()):  # pre, post
        np.testing.assert_array_equal(x, [1, 2, 3])
        np.testing.assert_allclose(y, grads[:, column], rtol=1e-12)
    text = " ".join(m.value for m in at.markdown)
    assert f"{grads[0, 0]:.4f}" in text and f"{grads[-1, 1]:.4f}" in text


EXTREMES = ["layers_1", "layers_24_largest_shared", "one_dim", "sixteen_dims", "one_row", "twelve_rows",
            "constant_row", "gamma_beta_extremes"]


@pytest.mark.parametrize("case", EXTREMES)
def test_extremes_of_the_controls(case):
    """Each extreme set in the part that holds its control, then the parts that show its effect checked."""
    lang = "es" if EXTREMES.index(case) % 2 else "en"
    state = {"cfg_d_model": 512, "cfg_heads": 16} if "largest" in case else {}
    if case.startswith("layers"):
        n_layers = 1 if case == "layers_1" else 24
        at = start(lang=lang, state=state, ln_part="placement")
        at.slider(key="ln_layers").set_value(n_layers).run()
        assert_clean(at)
        assert tables(at)["grads"].shape == (n_layers, 2) and np.isfinite(tables(at)["grads"].to_numpy()).all()
        if n_layers == 24:
            d_exp = min(512, 64)
            assert any(f"d_model = {d_exp}" in c.value for c in at.caption)
        return
    at = start(lang=lang, state=state, ln_part="styles" if case == "gamma_beta_extremes" else "statistics")
    x, gamma, beta, annotated = X0, 1.0, 0.0, True
    if case == "one_dim":
        at.number_input(key="ln_dims").set_value(1).run()
        x, annotated = X0[:, :1], False
    elif case == "sixteen_dims":
        at.number_input(key="ln_dims").set_value(16).run()
        x = np.hstack([X0, np.zeros((3, 14))])
    elif case == "one_row":
        at = edit(at, deleted_rows=[1, 2])
        x = X0[:1]
    elif case == "twelve_rows":
        extra = [{"token": f"w{k}", "d1": 0.3 * k - 1, "d2": 2.0 - k} for k in range(9)]
        at = edit(at, added_rows=extra)
        x = np.vstack([X0, [[0.3 * k - 1, 2.0 - k] for k in range(9)]])
    elif case == "constant_row":
        at = edit(at, edited_rows={1: {"d1": 0.7, "d2": 0.7}})
        x = X0.copy()
        x[1] = 0.7
    else:
        at.slider(key="ln_gamma").set_value(-2.0)
        at.slider(key="ln_beta").set_value(2.0).run()
        gamma, beta = -2.0, 2.0
    assert_clean(at)
    got = tables(open_part(at, "statistics")) | tables(open_part(at, "styles")) | tables(open_part(at, "batch"))
    assert_clean(at)
    assert all(np.isfinite(v.to_numpy(dtype=float)).all() for v in got.values())  # never a NaN on screen
    assert ("norm_annotated" in got) == annotated
    np.testing.assert_allclose(got["X"].to_numpy(dtype=float), x)
    np.testing.assert_allclose(got["out_torch"].to_numpy(dtype=float), torch_reference(x, gamma, beta)[1], atol=1e-9)
    if annotated:
        np.testing.assert_allclose(got["out_annotated"].to_numpy(dtype=float), annotated_reference(x, gamma, beta)[1],
                                   atol=1e-9)
    if case == "one_dim":
        assert at.info[0].value == t("ln.one_dim", lang=lang)  # in every part that starts from the tokens
        assert got["stats"].shape == (3, 2) and np.all(got["norm_torch"].to_numpy(dtype=float) == 0)
    if case == "constant_row":
        open_part(at, "styles")
        assert "**t1**" in at.info[0].value and fixed_words("ln.constant_rows", lang) in at.info[0].value
        assert np.abs(got["norm_annotated"].to_numpy(dtype=float)[1]).max() < 1e-9
        assert np.abs(got["norm_torch"].to_numpy(dtype=float)[1]).max() < 1e-9
    if case == "one_row":
        assert np.all(got["axis_batch"].to_numpy(dtype=float) == 0)
        assert any(i.value == t("ln.batch_of_one", lang=lang) for i in at.info)


BAD = [({"edited_rows": {1: {"d2": "abc"}}}, "en", "editor.not_a_number"),
       ({"edited_rows": {0: {"d1": 1e9}}}, "es", "editor.too_large"),
       ({"deleted_rows": [0, 1, 2]}, "es", "editor.too_few"),
       ({"added_rows": [{"token": f"w{k}", "d1": 0, "d2": 1} for k in range(10)]}, "en", "editor.too_many")]


@pytest.mark.parametrize("change, lang, message", BAD, ids=["text", "1e9", "no_rows", "13_rows"])
def test_bad_cells_warn_and_keep_the_last_valid_values(change, lang, message):
    at = start(lang=lang)
    first = tables(at)
    at = edit(at, **change)
    assert not at.exception
    assert len(at.error) == 1 and fixed_words(message, lang) in at.error[0].value
    for name in ("stats", "X", "centered"):
        np.testing.assert_array_equal(tables(at)[name], first[name])
    open_part(at, "styles")  # the other parts compute with the last valid values too, and say the table is broken
    assert not at.exception and len(at.error) == 1
    np.testing.assert_allclose(tables(at)["out_torch"].to_numpy(dtype=float), torch_reference(X0)[1], atol=1e-12)


def test_language_switch_keeps_the_edited_matrix():
    at = edit(start(APP), edited_rows={0: {"d1": 2.0}})
    at.sidebar.radio[0].set_value("es").run()
    assert_clean(at)
    assert at.title[0].value == t("ln.title", lang="es")
    assert tables(at)["X"].to_numpy(dtype=float)[0, 0] == 2.0
    open_part(at, "batch")  # the edit is the other parts' input too
    assert tables(at)["axis_layer"].to_numpy(dtype=float)[0, 0] == pytest.approx(torch_reference(
        np.array([[2.0, X0[0, 1]]]))[0][0, 0], abs=1e-12)


# ---- core.lab.gradients and the chart builder ---------------------------------------------------------------

def test_gradient_norms_at_init_is_seeded_and_matches_a_recomputation():
    before = torch.random.get_rng_state()
    for first in (True, False):
        got = gradient_norms_at_init(4, 16, 2, first, seed=11)
        np.testing.assert_allclose(got, reference_gradient_norms(4, 16, 2, first, 11), rtol=1e-6)
        assert got == gradient_norms_at_init(4, 16, 2, first, seed=11)
        assert got != gradient_norms_at_init(4, 16, 2, first, seed=12)
        assert all(v > 0 for v in got)
    assert torch.equal(torch.random.get_rng_state(), before)  # the global generator is left alone


def test_value_strips_carries_every_value_and_the_row_means():
    from ui import charts
    a, b = np.array([[1.0, 2.0, 6.0], [0.0, -1.0, 1.0]]), np.array([[0.5, 0.25, -3.0], [4.0, 4.0, 4.0]])
    spec = charts.value_strips({"before": a, "after": b}, ["p", "q"], value_title="v").to_dict()
    assert [c["title"]["text"] for c in spec["hconcat"]] == ["before", "after"]
    datasets = list(spec["datasets"].values())
    values = [d for d in datasets if d and "k" in d[0]]
    means = [d for d in datasets if d and "mean" in d[0]]
    assert [[r["value"] for r in d] for d in values] == [a.ravel().tolist(), b.ravel().tolist()]
    assert [[r["mean"] for r in d] for d in means] == [a.mean(axis=1).tolist(), b.mean(axis=1).tolist()]


def test_spanish_numbers_have_a_decimal_comma():
    at = start(lang="es", numbers=False, state={"ln_token": 2})  # t2's calculation written out
    assert_clean(at)
    mean, std = X0[2].mean(), X0[2].std(ddof=1)
    assert f"= {mean:.4f}".replace(".", "{,}") in at.latex[-1].value  # = 0{,}8879 in LaTeX
    assert f"= {std:.4f}".replace(".", "{,}") in at.latex[-1].value and "}; {" in at.latex[-1].value  # (x̂₀; x̂₁)
    annotated = 1 / (np.sqrt(2) + 1e-6)  # (1, −1): x̂₁ = 1 / (s + ε) with s = √2
    open_part(at, "styles")  # the pair (a, −a)
    assert any(f"Con a = 1: annotated **{annotated:.4f}**".replace(".", ",") in m.value for m in at.markdown)
    assert t("ln.out_title", lang="es", gamma=1.5, sign="−", beta=0.25) == "y = 1,5 · x̂ − 0,25"


@pytest.mark.parametrize("lang", ["en", "es"])
def test_wiring_diagrams_are_drawn_on_the_server(lang):
    """Pre-norm and post-norm as SVG from the server (ui/diagram.py; no Graphviz layout in the browser): the chain
    of each wiring top to bottom, one dashed residual path into the ⊕, in the reader's language, titled and
    described for a screen reader."""
    import re
    at = start(lang=lang, numbers=False, ln_part="placement")
    assert_clean(at)
    assert not at.get("graphviz_chart")
    svgs = [m.value for m in at.markdown if m.value.startswith("<svg")]
    assert len(svgs) == 2
    sub, out = t("ln.dia_sublayer", lang=lang), t("ln.dia_out", lang=lang)
    for svg, pre, chain in zip(svgs, (True, False), (["x", "LayerNorm", sub, "+", out], ["x", sub, "+", "LayerNorm",
                                                                                      out])):
        boxes = re.findall(r'<tspan x="[\d.]+" y="([\d.]+)">([^<]*)</tspan>', svg)
        assert [label for _, label in boxes] == [c for c in chain if c != "+"]  # the boxes' labels, in order
        assert [float(y) for y, _ in boxes] == sorted(float(y) for y, _ in boxes)  # top to bottom
        adds = re.findall(r'<circle cx="[\d.]+" cy="([\d.]+)" r="9"', svg)  # the ⊕, between its neighbours
        above, below = (float(boxes[chain.index("+") + k][0]) for k in (-1, 0))
        assert len(adds) == 1 and above < float(adds[0]) < below
        assert svg.count("stroke-dasharray") == 1  # the one residual path
        title = t("ln.pre_title" if pre else "ln.post_title", lang=lang)
        assert f">{title}</title>" in svg
        assert f">{t('ln.dia_alt', lang=lang, path=' → '.join(chain))}</desc>" in svg


def test_gamma_and_beta_change_the_outputs_alone_and_a_constant_row_gives_beta():
    """γ and β have a section of their own (beside the outputs): moving them changes y = γ x̂ + β and the note on a
    row of equal values (its output is β everywhere), never x̂ beside it or the pair below."""
    at = open_part(edit(start(), edited_rows={1: {"d1": 0.7, "d2": 0.7}}), "styles")
    before = tables(at)
    at.slider(key="ln_gamma").set_value(1.5)
    at.slider(key="ln_beta").set_value(0.5).run()
    assert_clean(at)
    got = tables(at)
    for name in ("norm_annotated", "norm_torch", "pair"):
        np.testing.assert_array_equal(got[name].to_numpy(dtype=float), before[name].to_numpy(dtype=float))
    x = X0.copy()
    x[1] = 0.7
    np.testing.assert_allclose(got["out_torch"].to_numpy(dtype=float), torch_reference(x, 1.5, 0.5)[1], atol=1e-9)
    np.testing.assert_allclose(got["out_torch"].to_numpy(dtype=float)[1], [0.5, 0.5], atol=1e-9)  # β everywhere
    note = next(i.value for i in at.info if "**t1**" in i.value)
    assert "β = 0.5000" in note
