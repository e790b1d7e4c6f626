"""What the heatmaps drawn on the server as SVG (svg.py: a matrix panel, small multiples) are built from: a matrix in
long form (`matrix_frame`), the cell size, and when value text is written (`SMALL_MATRIX`).

A heatmap's rows run top to bottom in matrix order, columns left to right, column labels on top; the colour scale
is the declared one of its kind (palette.py), its legend titled by what it shows; value text is written in the
cells of small matrices (fonts at least 12 px, for a projector at the back of a room)."""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from . import numbers
from .describe import _t
from .engine import unique_labels
from .numbers import exact, short_number
from .palette import MASK_SCALES, Scale, _dark, kept

SMALL_MATRIX = 12  # value text is written in the cells up to 12 x 12


def matrix_frame(values: np.ndarray, row_labels: Sequence[object], col_labels: Sequence[object],
                 kind: Scale = "sequential", domain: Sequence[float] = (0.0, 1.0)) -> pd.DataFrame:
    """A matrix in long form: one row per cell with its labels, value (None if not finite) and texts; a mask's
    cells also with their category (kept or blocked, in the session's language)."""
    values = np.asarray(values, dtype=float)
    rows, cols = unique_labels(row_labels), unique_labels(col_labels)
    if values.shape != (len(rows), len(cols)):
        raise ValueError(f"matrix of shape {values.shape} with {len(rows)} row and {len(cols)} column labels")
    n_rows, n_cols = values.shape
    flat = values.ravel()  # (n_rows * n_cols,): cell (i, j) at i * n_cols + j
    finite = np.isfinite(flat)
    cells = flat.tolist()
    lang = numbers.language()  # once: asking the session per cell cost more than building the frame
    df = pd.DataFrame({
        "row": [r for r in rows for _ in cols], "col": cols * n_rows,
        "i": np.repeat(np.arange(n_rows), n_cols), "j": np.tile(np.arange(n_cols), n_rows),
        "value": [v if ok else None for v, ok in zip(cells, finite.tolist())], "finite": finite,
        "exact": [exact(v, lang) for v in cells], "text": [short_number(v, lang) for v in cells],
        "dark": _dark(flat, kind, domain)})
    if kind in MASK_SCALES:  # 1, 0, −∞ as written, and what they mean
        names = {True: _t("chart.kept"), False: _t("chart.blocked")}
        df["category"] = [names[bool(k)] for k in kept(flat, kind)]
        df["text"] = [f"{v:.0f}" if np.isfinite(v) and v.is_integer() else short_number(v, lang) for v in cells]
        df["exact"] = [f"{text} ({name})" for text, name in zip(df["text"], df["category"])]
    return df


def _cell_size(n_rows: int, n_cols: int, max_width: int = 560, max_height: int = 440) -> tuple[int, int]:
    w = max(2, min(52, max_width // n_cols))
    h = max(2, min(52, max_height // n_rows))
    if max(n_rows, n_cols) <= 4 * min(n_rows, n_cols):
        w = h = min(w, h)
    return w, h
