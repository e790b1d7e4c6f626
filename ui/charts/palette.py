"""Colours: the fixed roles, the series colours, and one declared colour scale per kind of matrix.

Scale kinds (`Scale`), each with its legend title when the caller gives none (`legend_title`):
- "weights": attention weights, a fixed sequential 0..1 ramp (two heatmaps of weights are comparable);
- "diverging": signed values, a diverging ramp centred at 0 with a symmetric domain;
- "scores": attention scores (S = Q Kᵀ, S/√d_k, masked scores): the diverging ramp, the legend titled "Score";
- "sequential": other non-negative values, a sequential ramp over the data's range;
- the masks, two categories (kept, blocked) and never a ramp, one kind per convention of writing them:
  "mask" (1 / True = keep: the Annotated Transformer's and core's), "mask_blocked" (1 / True = block:
  nn.MultiheadAttention's, TensorFlow's tutorial), "mask_additive" (0 = keep, −∞ or a large negative = block).
Non-finite cells of a ramp (a masked score is −∞) are drawn grey, the colour of "blocked".
`PALETTE` fixes the colours of Q, K, V and the output on every page (Okabe-Ito: colour-blind safe);
tests/test_accessibility.py checks every colour here under simulated colour blindness.
"""
from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType
from typing import Literal

import numpy as np

from ..i18n import LANGUAGES, lookup, t
from . import numbers

Scale = Literal["diverging", "scores", "weights", "sequential", "mask", "mask_blocked", "mask_additive"]
MASK_SCALES = ("mask", "mask_blocked", "mask_additive")
RAMP_OF = MappingProxyType({"scores": "diverging"})  # a kind drawn on another kind's ramp, titled its own way

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
PALETTE = MappingProxyType({
    "query": "#0072B2",  # blue
    "key": "#D55E00",  # vermillion
    "value": "#009E73",  # bluish green
    "output": "#CC79A7",  # reddish purple
    "input": "#56B4E9",  # sky blue
    "highlight": "#E69F00",  # orange
    "masked": "#BDBDBD",  # grey, for -inf / blocked cells
    "ink": "#1A1A1A",
})
# Categorical colours for up to 12 series (words, heads): Okabe-Ito first, then Paul Tol's "muted".
CATEGORICAL = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#332288",
               "#882255", "#44AA99", "#999933", "#AA4499")
# One colour per head, up to 16 heads: CATEGORICAL, then the four remaining colours of Paul Tol's "muted".
HEAD_COLORS = CATEGORICAL + ("#CC6677", "#DDCC77", "#117733", "#88CCEE")
# The ramps of the heatmaps: Vega's schemes of these names (tests/test_accessibility.py checks their colours), drawn
# on the server from SCHEME_STOPS.
_SCHEMES = MappingProxyType({"diverging": "blueorange", "weights": "blues", "sequential": "viridis"})
# The same schemes as stops (Vega's colours at even steps, read with vl-convert): Vega's "blues" and "blueorange"
# are linear between 11 such stops, "viridis" within a shade between 21 (tests/test_accessibility.py checks them).
SCHEME_STOPS = MappingProxyType({
    "weights": tuple(zip(np.linspace(0, 1, 11).tolist(), (
        "#CFE1F2", "#BED8EC", "#A8CEE5", "#8FC1DE", "#74B2D7", "#5BA3CF", "#4592C6", "#3181BD", "#206FB2", "#125CA4",
        "#0A4A90"))),
    "diverging": tuple(zip(np.linspace(0, 1, 11).tolist(), (
        "#134B85", "#2F78B3", "#5DA2CB", "#9DCAE1", "#D2E5EF", "#F2F0EB", "#FCE0BA", "#FBBF74", "#E8932F", "#C5690D",
        "#994A07"))),
    "sequential": tuple(zip(np.linspace(0, 1, 21).tolist(), (
        "#440154", "#481467", "#482575", "#463580", "#414487", "#3B528B", "#35608D", "#2F6C8E", "#2A788E", "#25858E",
        "#21918D", "#1F9C8A", "#22A884", "#30B47C", "#43BF71", "#5DC963", "#7AD151", "#9AD93D", "#BCDF27", "#DEE41A",
        "#FDE725")))})
MASK_COLOURS = MappingProxyType({"kept": PALETTE["query"], "blocked": PALETTE["masked"]})  # white / ink text
# The diverging ramp of pictures (`svg_picture.picture`): dark blue (low), near white (0 when symmetric), orange (high).
IMAGE_STOPS = ((0.0, "#1F4E8C"), (0.25, "#6FA8DC"), (0.5, "#F4F4F4"), (0.75, "#F0A35E"), (1.0, "#A8430A"))
# The weights ramp of pictures (`attention_grid`): 0 white, 1 dark blue ("blues", like the weights heatmaps).
WEIGHT_STOPS = ((0.0, "#FFFFFF"), (0.25, "#C6DBEF"), (0.5, "#6BAED6"), (0.75, "#2171B5"), (1.0, "#08306B"))
GRID_EMPTY = (217, 217, 217)  # light grey: non-finite cells and the gaps of a picture
_LEGEND_KEYS = MappingProxyType({"weights": "chart.weight_legend", "diverging": "chart.signed_legend",
                                 "scores": "chart.score_legend",
                                 "sequential": "chart.entry_legend", **{k: "chart.mask_legend" for k in MASK_SCALES}})


def legend_title(kind: Scale, given: str | None = None) -> str:
    """What a colour legend (and the tooltip line of the same number) is titled: `given` unless it is missing or
    the generic word "value" (in any language), else what the scale kind shows ("Attention weight", "Mask")."""
    generic = {None, "", "value", *(lookup("chart.value", lang) for lang in LANGUAGES)}
    return given if given not in generic else t(_LEGEND_KEYS[kind], lang=numbers.language())


def ramp_domain(kind: Scale, values: np.ndarray) -> tuple[float, float]:
    """The value range a kind's ramp spans for this matrix: weights 0..1, diverging symmetric around 0, sequential
    the finite values' range (a mask has no ramp: 0..1)."""
    kind = RAMP_OF.get(kind, kind)
    finite = np.asarray(values, dtype=float)
    finite = finite[np.isfinite(finite)]
    if kind == "diverging":
        m = float(np.abs(finite).max()) if finite.size else 1.0
        m = m if m > 0 else 1.0
        return -m, m
    if kind == "sequential":
        lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
        return lo, hi if hi > lo else lo + 1.0
    return 0.0, 1.0


def cell_colours(values: np.ndarray, kind: Scale, domain: tuple[float, float]) -> list[str]:
    """Every entry's colour as "#RRGGBB", as Vega draws it for this kind (`SCHEME_STOPS`); a mask's by category,
    non-finite entries of a ramp grey. (n,) -> n colours."""
    v = np.asarray(values, dtype=float).ravel()
    kind = RAMP_OF.get(kind, kind)
    if kind in MASK_SCALES:
        return [MASK_COLOURS["kept"] if k else MASK_COLOURS["blocked"] for k in kept(v, kind)]
    rgb = ramp_image(v[None, :], SCHEME_STOPS[kind], domain)[0]  # (n, 3)
    return [PALETTE["masked"] if not ok else "#%02X%02X%02X" % tuple(c) for c, ok in zip(rgb.tolist(), np.isfinite(v))]


def auto_scale(values: np.ndarray) -> Scale:
    """Diverging if any finite entry is negative, else sequential."""
    v = np.asarray(values, dtype=float)
    return "diverging" if np.any(v[np.isfinite(v)] < 0) else "sequential"


def kept(values: np.ndarray, kind: Scale) -> np.ndarray:
    """Which entries of a mask of this kind let attention through (a NaN entry blocks in every convention)."""
    v = np.asarray(values, dtype=float)
    with np.errstate(invalid="ignore"):
        if kind == "mask_additive":
            return v >= 0  # 0 keeps; −∞ or −1e9 blocks
        if kind == "mask_blocked":
            return v == 0
        return (v != 0) & ~np.isnan(v)


def _dark(values: np.ndarray, kind: Scale, domain: Sequence[float]) -> np.ndarray:
    """Which cells' colours are dark (their text is then written in white): the dark ends of each scheme, cut
    where white and ink text have about the same contrast on the cell (about 4.2:1; tests/test_accessibility.py).
    "blueorange" darkens sooner on its blue side than on its orange side. Non-finite cells are not dark; of a
    mask, the kept cells are (blue)."""
    v = np.asarray(values, dtype=float)
    kind = RAMP_OF.get(kind, kind)
    if kind in MASK_SCALES:
        return kept(v, kind)
    lo, hi = float(domain[0]), float(domain[-1])
    with np.errstate(invalid="ignore"):  # inf - inf in a non-finite cell; those cells are excluded below
        if kind == "diverging":
            dark = (v < -0.76 * hi) | (v > 0.83 * hi)
        elif kind == "weights":
            dark = v > 0.7
        else:
            dark = (v - lo) / (hi - lo) < 0.47
    return dark & np.isfinite(v)


RAMP_STEPS = 255  # a ramp's colours in a picture (odd: its middle is one); with the empty cells' colour, 256


def ramp_image(values: np.ndarray, stops: Sequence[tuple[float, str]], domain: tuple[float, float],
               empty: Sequence[int] = GRID_EMPTY) -> np.ndarray:
    """Every cell's RGB colour on `stops` over `domain` (linear in RGB, clipped); non-finite cells `empty`.
    (rows, cols) -> (rows, cols, 3) uint8."""
    v = np.asarray(values, dtype=float)
    lo, hi = float(domain[0]), float(domain[1])
    f = np.clip((v - lo) / (hi - lo if hi > lo else 1.0), 0.0, 1.0)
    f = np.rint(f * (RAMP_STEPS - 1)) / (RAMP_STEPS - 1)  # a picture fits a PNG of 256 colours (`png_data_url`)
    where = np.array([s for s, _ in stops])
    rgb = np.array([[int(c[k:k + 2], 16) for k in (1, 3, 5)] for _, c in stops], dtype=float)  # (stops, 3)
    out = np.stack([np.interp(np.nan_to_num(f), where, rgb[:, ch]) for ch in range(3)], axis=-1)  # (rows, cols, 3)
    out[~np.isfinite(f)] = empty
    return np.rint(out).astype(np.uint8)


def colour_image(values: np.ndarray, domain: tuple[float, float]) -> np.ndarray:
    """Every cell's RGB colour on `IMAGE_STOPS` over `domain`: (rows, cols, 3) uint8; non-finite cells get the
    middle colour."""
    middle = [int(IMAGE_STOPS[2][1][k:k + 2], 16) for k in (1, 3, 5)]
    return ramp_image(values, IMAGE_STOPS, domain, empty=middle)


def png_data_url(pixels: np.ndarray, block: tuple[int, int] = (1, 1)) -> str:
    """An (h, w, 3) uint8 array as a ``data:image/png;base64,...`` URL, each pixel drawn as a `block` (rows,
    columns) of whole pixels (no blur): a PNG with a palette when the picture has at most 256 colours (as
    `ramp_image`'s pictures do), a byte per pixel instead of three: lesson 13's 6 x 12 grid of 128 x 128 maps sends
    0.5 MB instead of 1 MB. The colours are found by hashing (pandas' factorize: 4 ms for a picture of 0.5 million
    pixels, where sorting them took 40 ms), and before the blocks are drawn."""
    import base64
    import io

    import pandas as pd
    from PIL import Image
    rgb = pixels.astype(np.uint32)
    packed = rgb[..., 0] << 16 | rgb[..., 1] << 8 | rgb[..., 2]  # (h, w)
    index, colours = pd.factorize(packed.ravel())  # each pixel's colour number, in order of first appearance
    if len(colours) <= 256:
        image = Image.fromarray(index.reshape(packed.shape).astype(np.uint8), mode="P")
        image.putpalette(np.stack([colours >> 16, colours >> 8, colours], axis=-1).astype(np.uint8).ravel().tobytes())
    else:
        image = Image.fromarray(np.ascontiguousarray(pixels))
    rows, cols = block
    if (rows, cols) != (1, 1):
        image = image.resize((image.width * cols, image.height * rows), Image.Resampling.NEAREST)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", compress_level=3)  # fast, small enough
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")
