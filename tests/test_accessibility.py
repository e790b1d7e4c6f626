"""Accessibility of the charts: colours that stay apart under colour blindness, and text alternatives.

Colour vision is simulated with the matrices of Machado, Oliveira & Fernandes (2009), "A physiologically-based
model for simulation of color vision deficiency" (IEEE TVCG 15(6)), at severity 1.0 (protanopia, deuteranopia,
tritanopia: the dichromacies, the strongest case of each), applied to linear RGB. Colours are compared with the
CIEDE2000 difference (Sharma, Wu & Dalal 2005 give the formula and the test pairs checked below).

Thresholds:
- `DISTINCT` = 10 ΔE00 for colours that must be told apart at a glance (series, roles, masked cells). One ΔE00
  is about a just-noticeable difference between two large patches side by side; a learner has to match a thin
  line or a small legend swatch with its series across the chart, and colour differences shrink with the size of
  the mark, so the margin is several times the threshold of seeing any difference at all.
- A sequential ramp must get monotonically darker (or lighter) by at least `STEP_L` = 1 L* per 1/20 of its
  range, in every simulation: order is then carried by lightness, which colour blindness leaves intact.
- A diverging ramp: lightest in the middle, L* rising to it and falling after it, and the two sides apart
  (ΔE00 >= `DISTINCT` between f and 1 - f for |f - 0.5| >= 0.1) in every simulation.
"""
from __future__ import annotations

import functools
import html
import itertools
import json
import re
from pathlib import Path

import numpy as np
import pytest
from chart_examples import value_texts
from conftest import start_page
from streamlit import dataframe_util
from widgets import bar_charts, heatmaps, line_charts, pictures

from ui import charts
from ui.charts.palette import RAMP_STEPS, cell_colours, ramp_domain
from ui.charts.svg_bars import REMOVED_INK
from ui.i18n import lookup, t
from ui.lessons import PAGES

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"

DISTINCT = 10.0  # ΔE00, see the module docstring
STEP_L = 1.0  # L* per 1/20 of a sequential ramp
VISIONS = ("normal", "protanopia", "deuteranopia", "tritanopia")

# ---- colour science, written from the papers ---------------------------------------------------------------

# Machado et al. (2009), severity 1.0: linear RGB in, simulated linear RGB out.
MACHADO = {
    "protanopia": np.array([[0.152286, 1.052583, -0.204868],
                            [0.114503, 0.786281, 0.099216],
                            [-0.003882, -0.048116, 1.051998]]),
    "deuteranopia": np.array([[0.367322, 0.860646, -0.227968],
                              [0.280085, 0.672501, 0.047413],
                              [-0.011820, 0.042940, 0.968881]]),
    "tritanopia": np.array([[1.255528, -0.076749, -0.178779],
                            [-0.078411, 0.930809, 0.147602],
                            [0.004733, 0.691367, 0.303900]]),
}
# IEC 61966-2-1 (sRGB): linear RGB to XYZ, D65 white.
SRGB_TO_XYZ = np.array([[0.4124564, 0.3575761, 0.1804375],
                        [0.2126729, 0.7151522, 0.0721750],
                        [0.0193339, 0.1191920, 0.9503041]])
WHITE_XYZ = SRGB_TO_XYZ.sum(axis=1)  # (3,): XYZ of RGB = (1, 1, 1)


def rgb(colour: str) -> np.ndarray:
    """"#RRGGBB" -> sRGB in 0..1, shape (3,)."""
    return np.array([int(colour[k:k + 2], 16) for k in (1, 3, 5)]) / 255.0


def decode(srgb: np.ndarray) -> np.ndarray:
    """sRGB (gamma-encoded) -> linear RGB."""
    s = np.asarray(srgb, dtype=float)
    return np.where(s <= 0.04045, s / 12.92, ((s + 0.055) / 1.055) ** 2.4)


def encode(linear: np.ndarray) -> np.ndarray:
    """Linear RGB -> sRGB, clipped to the display's gamut first."""
    v = np.clip(np.asarray(linear, dtype=float), 0.0, 1.0)
    return np.where(v <= 0.0031308, 12.92 * v, 1.055 * v ** (1 / 2.4) - 0.055)


def simulate(srgb: np.ndarray, vision: str) -> np.ndarray:
    """What a dichromat sees, as sRGB (normal vision: the colour itself)."""
    if vision == "normal":
        return np.asarray(srgb, dtype=float)
    return encode(MACHADO[vision] @ decode(srgb))


def lab(srgb: np.ndarray) -> np.ndarray:
    """sRGB -> CIELAB (D65): (L*, a*, b*)."""
    x, y, z = SRGB_TO_XYZ @ decode(srgb) / WHITE_XYZ
    edge = (6 / 29) ** 3
    fx, fy, fz = (np.cbrt(v) if v > edge else v / (3 * (6 / 29) ** 2) + 4 / 29 for v in (x, y, z))
    return np.array([116 * fy - 16, 500 * (fx - fy), 200 * (fy - fz)])


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> float:
    """CIEDE2000 colour difference with kL = kC = kH = 1 (Sharma, Wu & Dalal 2005, eqs. 1-22)."""
    (l1, a1, b1), (l2, a2, b2) = lab1, lab2
    c_mean = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_mean ** 7 / (c_mean ** 7 + 25.0 ** 7)))
    a1, a2 = (1 + g) * a1, (1 + g) * a2
    c1, c2 = np.hypot(a1, b1), np.hypot(a2, b2)
    h1 = np.degrees(np.arctan2(b1, a1)) % 360 if c1 else 0.0
    h2 = np.degrees(np.arctan2(b2, a2)) % 360 if c2 else 0.0
    dh = 0.0 if c1 * c2 == 0 else (h2 - h1 + 180) % 360 - 180  # the hue step, in (-180, 180]
    d_l, d_c, d_h = l2 - l1, c2 - c1, 2 * np.sqrt(c1 * c2) * np.sin(np.radians(dh / 2))
    l_bar, c_bar = (l1 + l2) / 2, (c1 + c2) / 2
    if c1 * c2 == 0:
        h_bar = h1 + h2
    elif abs(h1 - h2) <= 180:
        h_bar = (h1 + h2) / 2
    else:
        h_bar = (h1 + h2 + 360) / 2 if h1 + h2 < 360 else (h1 + h2 - 360) / 2
    tt = (1 - 0.17 * np.cos(np.radians(h_bar - 30)) + 0.24 * np.cos(np.radians(2 * h_bar))
          + 0.32 * np.cos(np.radians(3 * h_bar + 6)) - 0.20 * np.cos(np.radians(4 * h_bar - 63)))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c, s_h = 1 + 0.045 * c_bar, 1 + 0.015 * c_bar * tt
    r_t = (-2 * np.sqrt(c_bar ** 7 / (c_bar ** 7 + 25.0 ** 7))
           * np.sin(np.radians(60 * np.exp(-(((h_bar - 275) / 25) ** 2)))))
    return float(np.sqrt((d_l / s_l) ** 2 + (d_c / s_c) ** 2 + (d_h / s_h) ** 2 + r_t * (d_c / s_c) * (d_h / s_h)))


def difference(c1, c2, vision: str) -> float:
    """ΔE00 between two colours ("#RRGGBB" or sRGB arrays) as seen with `vision`."""
    c1, c2 = (rgb(c) if isinstance(c, str) else c for c in (c1, c2))
    return ciede2000(lab(simulate(c1, vision)), lab(simulate(c2, vision)))


def closest_pairs(colours: dict[str, str]) -> list[tuple[float, str, str, str]]:
    """Every pair of named colours under every vision, (ΔE00, vision, name, name), closest first."""
    return sorted((difference(colours[a], colours[b], v), v, a, b)
                  for a, b in itertools.combinations(colours, 2) for v in VISIONS)


def luminance(srgb: np.ndarray) -> float:
    """WCAG 2 relative luminance."""
    return float(np.array([0.2126, 0.7152, 0.0722]) @ decode(srgb))


def contrast(c1: np.ndarray, c2: np.ndarray) -> float:
    """WCAG 2 contrast ratio, 1 to 21."""
    lo, hi = sorted((luminance(c1), luminance(c2)))
    return (hi + 0.05) / (lo + 0.05)


# Sharma, Wu & Dalal (2005), table 1: pairs 1-4, 17-23 (L, a, b, L, a, b, ΔE00).
SHARMA = [(50.0, 2.6772, -79.7751, 50.0, 0.0, -82.7485, 2.0425), (50.0, 3.1571, -77.2803, 50.0, 0.0, -82.7485, 2.8615),
          (50.0, 2.8361, -74.0200, 50.0, 0.0, -82.7485, 3.4412), (50.0, -1.3802, -84.2814, 50.0, 0.0, -82.7485, 1.0),
          (50.0, 2.5, 0.0, 73.0, 25.0, -18.0, 27.1492), (50.0, 2.5, 0.0, 61.0, -5.0, 29.0, 22.8977),
          (50.0, 2.5, 0.0, 56.0, -27.0, -3.0, 31.9030), (50.0, 2.5, 0.0, 58.0, 24.0, 15.0, 19.4535),
          (84.25, 5.74, 96.0, 84.46, 8.88, 96.49, 1.6743), (84.25, 5.74, 96.0, 84.52, 5.75, 93.09, 0.5887),
          (84.25, 5.74, 96.0, 84.37, 5.86, 99.42, 0.6395)]


@pytest.mark.parametrize("pair", SHARMA)
def test_ciede2000_matches_the_published_test_pairs(pair):
    one, two, expected = np.array(pair[:3]), np.array(pair[3:6]), pair[6]
    assert ciede2000(one, two) == pytest.approx(expected, abs=1e-4)
    assert ciede2000(two, one) == pytest.approx(expected, abs=1e-4)  # symmetric


def test_lab_and_the_simulation_behave():
    np.testing.assert_allclose(lab(rgb("#FFFFFF")), [100.0, 0.0, 0.0], atol=1e-6)
    np.testing.assert_allclose(lab(rgb("#FF0000")), [53.2408, 80.0925, 67.2032], atol=2e-3)  # sRGB red, D65
    np.testing.assert_allclose(encode(decode(np.linspace(0, 1, 11))), np.linspace(0, 1, 11), atol=1e-12)
    for vision, matrix in MACHADO.items():
        np.testing.assert_allclose(matrix.sum(axis=1), 1.0, atol=2e-6)  # grey stays grey
        np.testing.assert_allclose(simulate(rgb("#808080"), vision), rgb("#808080"), atol=1e-6)
    # Matplotlib's "tab10" (not designed for colour blindness): the check must flag its known confusions
    green, orange, red, pink = "#2CA02C", "#FF7F0E", "#D62728", "#E377C2"
    for (a, b), lost in (((green, orange), "protanopia"), ((red, green), "deuteranopia"), ((orange, pink), "tritanopia")):
        assert difference(a, b, "normal") > 40 and difference(a, b, lost) < DISTINCT, (a, b, lost)
        assert all(difference(a, b, v) >= DISTINCT for v in VISIONS if v != lost), (a, b)  # the others see them


# ---- (a) the fixed role colours ------------------------------------------------------------------------

# The roles a page shows side by side: Q, K, V, output and input in the welcome diagram and the architecture;
# query/key/value as the series of one line chart (lessons 2, 7, 9); highlight next to query and key (bars of
# lesson 2, cost curves of lesson 8); masked next to any of them (a removed token's bar, a masked cell, the
# grey series of lesson 2); ink is the text, the axes and the marker lines drawn over all of them.
ROLES_TOGETHER = ("query", "key", "value", "output", "input", "highlight", "masked", "ink")


def test_role_colours_stay_apart_in_every_simulation():
    roles = {name: charts.PALETTE[name] for name in ROLES_TOGETHER}
    assert set(charts.PALETTE) <= set(roles), "a new role: decide which roles it is shown with"
    closest = closest_pairs(roles)
    assert closest[0][0] >= DISTINCT, [c for c in closest if c[0] < DISTINCT]


def test_role_colours_stand_out_from_the_white_page():
    for name, colour in charts.PALETTE.items():
        assert min(difference(colour, "#FFFFFF", v) for v in VISIONS) >= DISTINCT, name


# ---- (b) series and heads ------------------------------------------------------------------------------

ALL_DISTINCT = 9  # the first 9 series colours are all pairwise apart; the pages use at most 5 at once by default


def test_first_categorical_colours_are_all_pairwise_apart():
    """The series of one chart take CATEGORICAL in order (lines, growth and cost curves, the words of the
    contributions, the depths of lesson 12, the default 4 heads): the first `ALL_DISTINCT` are all apart, in every
    simulation. test_every_chart_uses_checked_colours checks the colours each chart of each page draws together."""
    first = {c: c for c in charts.CATEGORICAL[:ALL_DISTINCT]}
    closest = closest_pairs(first)
    assert closest[0][0] >= DISTINCT, [c for c in closest if c[0] < DISTINCT]
    assert charts.HEAD_COLORS[:len(charts.CATEGORICAL)] == charts.CATEGORICAL


def test_sixteen_head_colours_neighbours_apart_and_legend_names_them():
    """Sixteen colours cannot all stay pairwise apart for a dichromat (whose colour space is two-dimensional;
    the best palettes for them hold about eight). What holds instead: every head differs from the heads next to
    it (heads are chosen as a range, so neighbours are the ones most often drawn together), the first
    `ALL_DISTINCT` are all apart (above), and the head view names every head in its legend and tooltip, so
    identity never rests on colour alone."""
    heads = charts.HEAD_COLORS
    assert len(heads) == 16 and len(set(heads)) == 16
    for a, b in itertools.pairwise(heads):
        for vision in VISIONS:
            assert difference(a, b, vision) >= DISTINCT, (a, b, vision)
    spec = charts.head_view(np.full((16, 3, 3), 1 / 3), "abc", range(16), [f"h{k}" for k in range(16)]).to_dict()
    colour = spec["layer"][0]["encoding"]["color"]
    assert colour["legend"] is not None and colour["scale"]["domain"] == [f"h{k}" for k in range(16)]
    assert any(tip["field"] == "name" for tip in spec["layer"][0]["encoding"]["tooltip"])


# ---- (c) colour ramps ----------------------------------------------------------------------------------

SAMPLES = np.linspace(0.0, 1.0, 21)  # (21,): positions along a ramp


@functools.cache
def scheme_colours(name: str) -> tuple[tuple[float, float, float], ...]:
    """The colours Vega draws for a named scheme at `SAMPLES` (rendered to SVG by vl-convert, read back)."""
    import vl_convert

    spec = {"data": {"values": [{"k": k, "v": float(v)} for k, v in enumerate(SAMPLES)]}, "mark": "rect",
            "encoding": {"x": {"field": "k", "type": "ordinal"},
                         "color": {"field": "v", "type": "quantitative", "legend": None,
                                   "scale": {"scheme": name, "domain": [0, 1]}}}}
    fills = re.findall(r'fill="rgb\((\d+), (\d+), (\d+)\)"', vl_convert.vegalite_to_svg(spec))
    assert len(fills) == len(SAMPLES), fills
    return tuple(tuple(int(c) / 255 for c in f) for f in fills)


def stop_colours(stops) -> np.ndarray:
    """The colours a stops ramp of ui.charts gives at `SAMPLES` (its own interpolation, as drawn): (21, 3)."""
    return charts.ramp_image(SAMPLES[None, :], stops, (0.0, 1.0))[0] / 255.0


SEQUENTIAL = {"scheme weights": lambda: scheme_colours(charts._SCHEMES["weights"]),
              "scheme sequential": lambda: scheme_colours(charts._SCHEMES["sequential"]),
              "WEIGHT_STOPS": lambda: stop_colours(charts.WEIGHT_STOPS)}
DIVERGING = {"scheme diverging": lambda: scheme_colours(charts._SCHEMES["diverging"]),
             "IMAGE_STOPS": lambda: stop_colours(charts.IMAGE_STOPS)}


def test_every_ramp_is_checked():
    assert set(charts._SCHEMES) == {"weights", "sequential", "diverging"} == set(charts.SCHEME_STOPS)
    np.testing.assert_array_equal(charts.colour_image(SAMPLES[None, :], (0.0, 1.0))[0],
                                  charts.ramp_image(SAMPLES[None, :], charts.IMAGE_STOPS, (0.0, 1.0))[0])


@pytest.mark.parametrize("kind", list(charts.SCHEME_STOPS))
def test_scheme_stops_reproduce_vegas_schemes(kind):
    """The SVG heatmaps colour their cells on SCHEME_STOPS: the colours Vega draws for the same scheme (so the
    checks of the schemes here hold for them), within 3 of 255 in every channel ("viridis" is not linear between
    its stops; "blues" and "blueorange" are, within rounding)."""
    ours = charts.ramp_image(SAMPLES[None, :], charts.SCHEME_STOPS[kind], (0.0, 1.0))[0].astype(float)  # (21, 3)
    vega = np.array(scheme_colours(charts._SCHEMES[kind])) * 255  # (21, 3)
    assert np.abs(ours - vega).max() <= 3, np.abs(ours - vega).max(axis=1)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("name", list(SEQUENTIAL))
def test_sequential_ramps_change_lightness_monotonically(name, vision):
    lightness = np.array([lab(simulate(np.array(c), vision))[0] for c in SEQUENTIAL[name]()])  # (21,)
    steps = np.diff(lightness) * np.sign(lightness[-1] - lightness[0])
    assert steps.min() >= STEP_L, np.round(lightness, 1)


@pytest.mark.parametrize("vision", VISIONS)
@pytest.mark.parametrize("name", list(DIVERGING))
def test_diverging_ramps_are_lightest_in_the_middle_and_keep_their_sides_apart(name, vision):
    colours = [np.array(c) for c in DIVERGING[name]()]
    lightness = np.array([lab(simulate(c, vision))[0] for c in colours])  # (21,)
    mid = len(SAMPLES) // 2
    assert lightness.argmax() == mid, np.round(lightness, 1)
    assert np.diff(lightness[:mid + 1]).min() > 0 and np.diff(lightness[mid:]).max() < 0, np.round(lightness, 1)
    for k in range(mid - 1):  # |f - 0.5| >= 0.1: f and 1 - f, the same size with opposite signs
        assert difference(colours[k], colours[-1 - k], vision) >= DISTINCT, (SAMPLES[k], vision)


@pytest.mark.parametrize("name", list(SEQUENTIAL) + list(DIVERGING))
def test_masked_grey_differs_from_every_colour_of_a_ramp(name):
    """A masked (-inf) cell is grey among the cells of a heatmap, whatever their value."""
    colours = (SEQUENTIAL | DIVERGING)[name]()
    for vision in VISIONS:
        closest = min(difference(charts.PALETTE["masked"], np.array(c), vision) for c in colours)
        assert closest >= DISTINCT, (vision, closest)


def test_cell_text_contrasts_with_its_cell():
    """Value text is ink on light cells and white on dark ones (charts._dark): at least 4:1 on every colour
    (the best two text colours can reach on these schemes is about 4.2:1, where they cross)."""
    ink, white = rgb(charts.PALETTE["ink"]), np.ones(3)
    worst = {}
    for kind in ("diverging", "weights", "sequential"):
        values = SAMPLES if kind != "diverging" else 2 * SAMPLES - 1
        domain = (-1.0, 1.0) if kind == "diverging" else (0.0, 1.0)
        dark = charts._dark(values, kind, domain)
        colours = [np.array(c) for c in scheme_colours(charts._SCHEMES[kind])]
        worst[kind] = min(contrast(c, white if d else ink) for c, d in zip(colours, dark))
    assert min(worst.values()) >= 4.0, worst


@pytest.mark.parametrize("kind", ["weights", "diverging", "scores", "sequential", "mask", "mask_additive"])
def test_svg_cell_text_is_white_on_dark_cells(kind):
    """A heatmap drawn as SVG writes its values as the test above checks them: white where charts._dark says the
    cell is dark, ink elsewhere (a grey −∞ cell too)."""
    if kind.startswith("mask"):
        values = np.tril(np.ones((3, 3))) if kind == "mask" else np.triu(np.full((3, 3), -np.inf), 1)
    else:
        values = np.linspace(-1.0 if kind in ("diverging", "scores") else 0.0, 1.0, 9).reshape(3, 3)
        values[0, 1] = -np.inf
    dark = charts._dark(values.ravel(), kind, ramp_domain(kind, values))
    assert dark.any() and not dark.all()
    written = [colour for colour, _ in value_texts(charts.heatmap_svg(values, "abc", "abc", scale=kind).svg)]
    assert written == ["#FFFFFF" if d else charts.PALETTE["ink"] for d in dark]


# ---- (d) every colour of every chart every page draws ----------------------------------------------------

ROLE_COLOURS = {c.upper() for c in (*charts.PALETTE.values(), *charts.HEAD_COLORS)}
RAMP_COLOURS = {c.upper() for _, c in (*charts.IMAGE_STOPS, *charts.WEIGHT_STOPS)}
NEUTRAL = {  # colours outside the palettes, and why they are fine
    "#FFFFFF": "white: the lines between heatmap cells and the text on dark cells (test_cell_text_contrasts...)",
}
CHANNELS = ("color", "fill", "stroke")


def colour_literals(node, found: list[str], schemes: list[str], fields: list[str]) -> None:
    """Collect from a Vega-Lite spec (its datasets left out) every literal colour (mark and axis colours,
    encoding values and conditions, scale ranges), every scheme name, and the fields whose values are drawn
    as colours as they are (a colour channel with ``scale: null``)."""
    if isinstance(node, list):
        for item in node:
            colour_literals(item, found, schemes, fields)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "datasets":
            continue
        if isinstance(value, str) and (key in CHANNELS or key.endswith("Color") or key == "background"):
            found.append(value)
        elif key in CHANNELS and isinstance(value, dict):  # an encoding channel
            if isinstance(value.get("value"), str):
                found.append(value["value"])
            conditions = value.get("condition", [])
            for condition in conditions if isinstance(conditions, list) else [conditions]:
                if isinstance(condition.get("value"), str):
                    found.append(condition["value"])
            if "scale" in value and value["scale"] is None and "field" in value:
                fields.append(value["field"])
            scale = value.get("scale") or {}
            found.extend(c for c in scale.get("range", []) if isinstance(c, str))
            if "scheme" in scale:
                schemes.append(scale["scheme"] if isinstance(scale["scheme"], str) else scale["scheme"]["name"])
        if isinstance(value, str) and re.fullmatch(r"#[0-9A-Fa-f]{3,8}|(rgb|hsl)a?\(.*\)", value):
            found.append(value)  # a colour anywhere else: it must be a known one too
        colour_literals(value, found, schemes, fields)


def chart_colours(chart) -> tuple[list[str], list[str]]:
    """(literal colours, scheme names) of one chart element of an AppTest run, upper case."""
    spec = json.loads(chart.proto.spec)
    found, schemes, fields = [], [], []
    colour_literals(spec, found, schemes, fields)
    for dataset in chart.proto.datasets:
        df = dataframe_util.convert_arrow_bytes_to_pandas_df(dataset.data.data)
        for field in fields:
            if field in df.columns:
                found.extend(str(c) for c in df[field])
    return [c.upper() for c in found], schemes


def pretrained(at):
    """Lesson 9 draws its charts once there is a model: press "use the pretrained model"."""
    label = lookup("train.pretrained", at.session_state["cfg_lang"]).split("{")[0].strip()
    (button,) = [b for b in at.button if b.label.startswith(label)]
    return button.click().run()


def trained(at):
    """Lesson 12 draws its curves once there are runs: two epochs of the one-layer model, trained to the end."""
    at.button(key="clf_start").click().run()
    for _ in range(80):
        if not at.session_state["clf_running"]:
            return at
        at.run()
    raise AssertionError("lesson 12: training did not finish")


# Pages that draw more charts after one action; the state makes the action quick.
AFTER = {"lessons/09_training.py": ({}, pretrained),
         "lessons/12_classifier.py": ({"clf_steps": 10, "clf_epochs": 2, "clf_depths": [1], "clf_norms": ["pre"]},
                                    trained)}
CASES = [(page, False) for _, page, *_ in PAGES] + [(page, True) for page in AFTER]


@functools.cache
def drawn(page: str, after: bool, lang: str):
    """The page's run with "show the numbers" on (one run per page, language and case for every test here)."""
    state, action = AFTER[page] if after else ({}, None)
    at = start_page(APP, lesson=page, numbers=True, lang=lang, state=state)
    if action is not None:
        at = action(at)
    assert not at.exception, [e.value for e in at.exception]
    return at


def case_id(case) -> str:
    return Path(case[0]).stem + (" after action" if case[1] else "")


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_chart_uses_checked_colours(case):
    """Every colour of every chart is a role, series or ramp colour checked above, a scheme of charts._SCHEMES,
    or one of the `NEUTRAL` ones; and the role and series colours of one chart stay apart in every simulation."""
    at = drawn(*case, "en")
    for k, chart in enumerate(at.get("vega_lite_chart")):
        colours, schemes = chart_colours(chart)
        unknown = set(colours) - ROLE_COLOURS - RAMP_COLOURS - set(NEUTRAL)
        assert not unknown, (k, unknown)
        assert set(schemes) <= set(charts._SCHEMES.values()), (k, schemes)
        together = {c: c for c in set(colours) & ROLE_COLOURS}
        closest = closest_pairs(together)
        assert not closest or closest[0][0] >= DISTINCT, (k, [c for c in closest if c[0] < DISTINCT])
        if set(colours) & (RAMP_COLOURS - set(NEUTRAL)):  # a stops ramp is drawn whole, not a pick of its colours
            assert any(set(colours) >= {c.upper() for _, c in stops}
                       for stops in (charts.IMAGE_STOPS, charts.WEIGHT_STOPS)), k


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_svg_picture_uses_checked_colours(case):
    """A big matrix's picture drawn on the server: its legend is one of the pictures' ramps drawn whole, and
    everything else is white, ink or the masked grey (its frame)."""
    at = drawn(*case, "en")
    for k, picture in enumerate(pictures(at)):
        colours = {c.upper() for c in re.findall(r'(?:fill|stroke)="([^"]+)"', picture.svg)} - {"NONE", "URL(#RAMP)"}
        assert colours <= SVG_FIXED, (k, colours - SVG_FIXED)
        stops = re.findall(r'stop-color="(#[0-9A-F]{6})"', picture.svg)
        assert stops in ([c for _, c in reversed(charts.IMAGE_STOPS)], [c for _, c in reversed(charts.WEIGHT_STOPS)])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_svg_line_chart_uses_checked_colours(case):
    """A line chart drawn on the server uses role and series colours only (white behind, ink axes and text, the
    masked grey's grid), and the series of one chart stay apart in every simulation."""
    at = drawn(*case, "en")
    for k, chart in enumerate(line_charts(at)):
        colours = {c.upper() for c in re.findall(r'(?:fill|stroke)="([^"]+)"', chart.svg)} - {"NONE"}
        assert colours <= ROLE_COLOURS | {"#FFFFFF"}, (k, colours - ROLE_COLOURS)
        series = {c.upper(): c for c in re.findall(r'<g class="series" [^>]*fill="([^"]+)"', chart.svg)}
        assert len(series) == len(chart.series), k  # one colour a series
        closest = closest_pairs(series)
        assert not closest or closest[0][0] >= DISTINCT, (k, [c for c in closest if c[0] < DISTINCT])


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_svg_bar_chart_uses_checked_colours(case):
    """A bar chart drawn on the server (bars, a distribution, a weighted average's parts) uses role and series
    colours only (white behind, ink axes and text, the masked grey of a removed token's bar and of the bars behind,
    the removed token's grey text), and its bar colours stay apart in every simulation."""
    at = drawn(*case, "en")
    for k, chart in enumerate([*bar_charts(at), *bar_charts(at, "stacked")]):
        colours = {c.upper() for c in re.findall(r'(?:fill|stroke)="([^"]+)"', chart.svg)} - {"NONE"}
        assert colours <= ROLE_COLOURS | {"#FFFFFF", REMOVED_INK}, (k, colours - ROLE_COLOURS)
        fills = re.findall(r'<rect class="(?:bar|part)" [^>]*fill="([^"]+)"', chart.svg)  # the bars' or words' colours
        closest = closest_pairs({c.upper(): c for c in fills})
        assert not closest or closest[0][0] >= DISTINCT, (k, [c for c in closest if c[0] < DISTINCT])


# The colours a heatmap drawn as SVG may use: each kind's ramp as cell_colours computes it (every one of its
# RAMP_STEPS steps), and the fixed ones (masked cells, a mask's two categories, white lines and text, ink text).
SVG_RAMPS = {kind: set(cell_colours(np.linspace(0.0, 1.0, RAMP_STEPS), kind, (0.0, 1.0)))
             for kind in charts.SCHEME_STOPS}
SVG_FIXED = {charts.PALETTE["masked"], charts.PALETTE["ink"], *charts.MASK_COLOURS.values(), "#FFFFFF"}


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_svg_heatmap_uses_checked_colours(case):
    """What test_every_chart_uses_checked_colours checks of Vega's charts, for the heatmaps drawn on the server:
    every colour is a fixed one or of one kind's ramp (its legend drawn whole, from end to end), and the role
    colours of one heatmap stay apart in every simulation."""
    at = drawn(*case, "en")
    for k, heatmap in enumerate(heatmaps(at)):
        colours = {c.upper() for c in re.findall(r'(?:fill|stroke|stop-color)="([^"]+)"', heatmap.svg)}
        colours.discard("URL(#RAMP)")  # the legend's gradient, its stops collected here
        ramp = colours - SVG_FIXED
        kinds = [kind for kind, allowed in SVG_RAMPS.items() if ramp <= allowed]
        assert kinds, (k, sorted(ramp - set().union(*SVG_RAMPS.values())) or "colours of two ramps")
        stops = set(re.findall(r'stop-color="(#[0-9A-F]{6})"', heatmap.svg))
        assert not stops or any(stops >= {charts.SCHEME_STOPS[kind][0][1], charts.SCHEME_STOPS[kind][-1][1]}
                                for kind in kinds), (k, stops)
        together = {c: c for c in colours & ROLE_COLOURS}
        closest = closest_pairs(together)
        assert not closest or closest[0][0] >= DISTINCT, (k, [c for c in closest if c[0] < DISTINCT])


def test_the_grey_of_removed_tokens_reads_on_white():
    assert contrast(rgb(REMOVED_INK), np.ones(3)) >= 4.5  # WCAG AA for text


# ---- text alternatives -----------------------------------------------------------------------------------

KINDS = ("heatmap_kind", "facet_kind", "bars_kind", "stacked_kind", "lines_kind", "loglog_kind", "head_view_kind",
         "strips_kind", "arrows_kind", "grid_kind")


def test_every_builder_describes_its_chart():
    """Each builder's description names its kind and title, and says what the data hold (checked against the
    inputs here)."""
    m = np.array([[-0.5, 0.25, 2.0], [1.5, -np.inf, 0.0]])
    heat = charts.heatmap_svg(m, ["a", "b"], ["x", "y", "z"], title="S").description
    heading = t("a11y.titled", lang="en", kind=t("a11y.heatmap_kind", lang="en"), title="S")
    assert heat.startswith(heading + ": ")
    for part in ("2 × 3", "a, b", "x, y, z", f"{-0.5:.2f}", f"{2.0:.2f}", "1 cells"):
        assert part in heat, part
    bars = charts.bars([0.25, 0.75], ["p", "q"], value_title="w").description
    assert bars.endswith("w: p = 0.25, q = 0.75")
    many = charts.bars(np.arange(20.0), range(20), domain=None).description
    assert "11 = 11.00" in many and "12 = " not in many and many.endswith("…")
    facet = charts.facet_svg([np.eye(2), 0.5 * np.eye(2)], ["h1", "h2"], "ab", "ab").description
    assert "2" in facet and "h1, h2" in facet and "2 × 2" in facet and "0.00" in facet and "1.00" in facet
    arrows = charts.plane_arrows([(1, -0.5)], ["q"], ["#0072B2"], x_title="d0", y_title="d1").to_dict()
    assert arrows["description"].endswith("(d0, d1): q = (1.00, -0.50)")
    from chart_examples import BAR_EXAMPLES, BUILDER_EXAMPLES, LINE_EXAMPLES, PICTURE_EXAMPLES, SVG_EXAMPLES

    for name, build in BUILDER_EXAMPLES.items():
        description = build().to_dict()["description"]
        assert any(description.startswith(t(f"a11y.{kind}", lang="en")) for kind in KINDS), name
    for name, build in (SVG_EXAMPLES | PICTURE_EXAMPLES).items():
        chart = build()
        kind = "a11y.facet_kind" if name.startswith("facet") else "a11y.heatmap_kind"
        assert chart.description.startswith(t(kind, lang="en")), name
        assert f"<title>{html.escape(chart.description)}</title>" in chart.svg, name  # where the SVG is opened
    for name, build in (LINE_EXAMPLES | BAR_EXAMPLES).items():
        chart = build()
        kind = ("a11y.stacked_kind" if name.startswith("contributions") else "a11y.bars_kind" if name in BAR_EXAMPLES
                else "a11y.lines_kind")
        assert chart.description.startswith(t(kind, lang="en")), name
        assert f"<title>{html.escape(chart.description)}</title>" in chart.svg, name


def spoken(description: str, lang: str) -> bool:
    """Whether a description starts with a chart kind in `lang` (and not with one in the other language)."""
    other = "es" if lang == "en" else "en"
    mine = [t(f"a11y.{k}", lang=lang) for k in KINDS]
    theirs = {t(f"a11y.{k}", lang=other) for k in KINDS} - set(mine)
    return any(description.startswith(k) for k in mine) and not any(description.startswith(k) for k in theirs)


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_chart_on_every_page_has_a_description_in_its_language(case, lang):
    at = drawn(*case, lang)
    for k, chart in enumerate(at.get("vega_lite_chart")):
        description = json.loads(chart.proto.spec).get("description", "")
        assert isinstance(description, str) and description.strip(), (k, chart.proto.spec[:300])
        assert spoken(description, lang), (k, description)
        assert len(description) < 1200, (k, len(description))  # a summary, not a dump


@pytest.mark.parametrize("lang", ["en", "es"])
@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_svg_chart_on_every_page_has_a_description_in_its_language(case, lang):
    """The img's alt of every heatmap, line chart and bar chart drawn on the server (and the SVG's own title, read
    where it is opened)."""
    at = drawn(*case, lang)
    for k, chart in enumerate([*heatmaps(at), *pictures(at), *line_charts(at), *bar_charts(at),
                               *bar_charts(at, "stacked")]):
        description = chart.description
        assert description.strip(), (k, chart.svg[:300])
        assert spoken(description, lang), (k, description)
        assert len(description) < 1200, (k, len(description))
        assert f"<title>{html.escape(description)}</title>" in chart.svg, k


def test_named_puts_a_title_in_the_description():
    chart = charts.value_strips({"a": np.eye(2)}, "ab", value_title="v")
    untitled, kind = chart.description, t("a11y.strips_kind", lang="en")
    assert charts.named(chart, "S = X Xᵀ") is chart
    heading = t("a11y.titled", lang="en", kind=kind, title="S = X Xᵀ")
    assert chart.to_dict()["description"] == heading + untitled[len(kind):]
    # a heatmap drawn as SVG takes its title as an argument, and says it the same way
    untitled, kind = charts.heatmap_svg(np.eye(2), "ab", "ab").description, t("a11y.heatmap_kind", lang="en")
    heading = t("a11y.titled", lang="en", kind=kind, title="S = X Xᵀ")
    assert charts.heatmap_svg(np.eye(2), "ab", "ab", title="S = X Xᵀ").description == heading + untitled[len(kind):]


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_no_chart_has_both_an_alt_and_a_description(case):
    at = drawn(*case, "en")
    both = [k for k, chart in enumerate(at.get("vega_lite_chart"))
            if chart.proto.alt and json.loads(chart.proto.spec).get("description")]
    assert not both


def markdown_tables(at) -> int:
    """Markdown tables on the page: a row of cells followed by a |---| separator row."""
    pattern = re.compile(r"^\s*\|.*\|\s*\n\s*\|[\s:|-]*-[\s:|-]*\|\s*$", re.MULTILINE)
    return sum(len(pattern.findall(m.value)) for m in at.markdown)


def number_tables(at) -> int:
    return (sum(d.editing_mode == "read_only" for d in at.dataframe) + len(at.table) + markdown_tables(at))


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_a_page_with_charts_shows_their_numbers(case):
    """With "show the numbers" on, a page that draws charts also shows tables (the text alternative of a chart
    is its numbers)."""
    at = drawn(*case, "en")
    if at.get("vega_lite_chart") or heatmaps(at) or pictures(at) or bar_charts(at) or bar_charts(at, "stacked"):
        assert number_tables(at) >= 1, case
