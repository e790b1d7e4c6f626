"""How rows' values spread (value strips), drawn by Vega."""
from __future__ import annotations

from collections.abc import Sequence

import altair as alt
import numpy as np
import pandas as pd

from .describe import _describe, _listed, _t, _titled
from .engine import (_PAD, FIRST_DIMENSION, LABEL_FONT, TITLE_FONT, _finish, _plain_axis, _title,
                     dimension_labels, layer, unique_labels)
from .numbers import exact
from .palette import PALETTE


def value_strips(panels: dict[str, np.ndarray], row_labels: Sequence[object], *, value_title: str,
                 row_title: str | None = None, mean_title: str = "mean", width: int = 240) -> alt.HConcatChart:
    """How each row's values are spread: one panel per matrix (side by side, each with its own x axis; the rows
    labelled once, on the left), one line per row, a tick at every value (its dimension, numbered as
    `dimension_labels` does, in the tooltip) and a black diamond at the row's mean.

    panels {title: (n, d) matrix}, all with the same rows. Used for "before and after a normalization"."""
    rows = unique_labels(row_labels)
    charts = []
    for index, (title, matrix) in enumerate(panels.items()):
        matrix = np.asarray(matrix, dtype=float)  # (n, d)
        dims = dimension_labels(matrix.shape[1])
        values = pd.DataFrame([{"row": rows[i], "k": FIRST_DIMENSION + k, "dim": dims[k],
                                "value": float(matrix[i, k]), "exact": exact(float(matrix[i, k]))}
                               for i in range(matrix.shape[0]) for k in range(matrix.shape[1])])
        row_means = matrix.mean(axis=1)  # (n,)
        means = pd.DataFrame({"row": rows, "mean": row_means, "exact": [exact(v) for v in row_means]})
        axis = None if index else _plain_axis(row_title, ticks=False, label_size=LABEL_FONT)  # rows named once
        y = alt.Y("row:N", sort=rows, axis=axis)
        ticks = alt.Chart(values).mark_tick(color=PALETTE["input"], thickness=3, size=22).encode(
            x=alt.X("value:Q", axis=_plain_axis(value_title), scale=alt.Scale(zero=False, nice=True)), y=y,
            tooltip=[alt.Tooltip("row:N", title=row_title or " "), alt.Tooltip("dim:N", title=_t("chart.dimension")),
                     alt.Tooltip("exact:N", title=value_title)])
        mean = alt.Chart(means).mark_point(shape="diamond", filled=True, size=110, color=PALETTE["ink"]).encode(
            x=alt.X("mean:Q"), y=y, tooltip=[alt.Tooltip("row:N", title=row_title or " "),
                                             alt.Tooltip("exact:N", title=mean_title)])
        charts.append(_finish(layer(ticks, mean), top=False, width=width, height=max(60, 30 * len(rows)),
                              title=_title(title, TITLE_FONT)))
    body = _t("a11y.strips", panels=_listed(list(panels)), row_title=_titled(row_title), rows=_listed(rows),
              value=value_title, mean=mean_title)
    return _finish(alt.hconcat(*charts, spacing=24), autosize=_PAD,
                   description=_describe(_t("a11y.strips_kind"), None, body))
