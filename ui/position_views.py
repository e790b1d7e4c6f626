"""Lesson 5's presentation machinery (lessons/05_positional_encoding.py): the cached sinusoidal table, the position
sliders, the number tables, the curves and frequency factors of the sinusoidal part, the attention outputs of the
order part, the RoPE plane and the comparison table."""
import functools
import math
from typing import Callable

import numpy as np
import pandas as pd
import streamlit as st

import core
from core import positional
from core.lab import positions
from ui import charts, links, panels, tables
from ui.i18n import number, t
from ui.presentation import prose

MAX_POSITIONS, MAX_LEARNED, MAX_CURVES = 512, 64, 6
SHOWN_DIMS = 8  # dimensions drawn in the panels whose rows are tokens or table positions
ZOOM_POS, ZOOM_DIMS, DOT_ZOOM, ROPE_ZOOM = 24, 16, 10, 16  # exact slices of the big matrices
SAMPLE_P = (0, 1, 2, 5, 10, 50, 100, 200, 300, 500)  # positions p of the "independent of p" tables
OUTPUTS = (("plain", "pe.out_plain_original", "pe.out_plain_moved"), ("pe", "pe.out_pe_original", "pe.out_pe_moved"))
COMPARISON = (  # (aspect, sinusoidal, learned, RoPE)
    ("pe.aspect_params", "pe.sin_params", "pe.learned_params", "pe.rope_params"),
    ("pe.aspect_extrapolation", "pe.sin_extrapolation", "pe.learned_extrapolation", "pe.rope_extrapolation"),
    ("pe.aspect_where", "pe.sin_where", "pe.learned_where", "pe.rope_where"),
    ("pe.aspect_relative", "pe.sin_relative", "pe.learned_relative", "pe.rope_relative"),
    ("pe.aspect_used_by", "pe.sin_used_by", "pe.learned_used_by", "pe.rope_used_by"),
)


@st.cache_data(max_entries=32)
def sinusoid(n: int, d: int) -> np.ndarray:
    return positional.sinusoidal_encoding(n, d).numpy()  # (n, d) float32, as the model uses it


def default_dims(d: int) -> list[int]:
    return sorted({0, 1, 2 * (d // 8), 2 * (d // 4)})


def default_pairs(d: int) -> list[int]:
    return sorted({0, d // 4, d // 2 - 1})


def number_table(table: pd.DataFrame, key: str, exact: list[str]) -> None:
    """A table of results with the `exact` columns to 4 decimals."""
    tables.table(table, hide_index=True, width="content", key=key, formats={c: ".4f" for c in exact})


def full_csv(n: int, d: int, dim_labels: list[str]) -> str:
    return panels.csv_text(panels.numbers_frame(sinusoid(n, d), range(n), dim_labels))


def position_labels(count: int) -> list[str]:
    return [t("pe.pos_short", p=p) for p in range(count)]


def position_sliders(offset: bool = True) -> tuple[int, int]:
    """The number of positions P and the offset k (the sinusoidal, PE·PEᵀ and RoPE parts share them)."""
    ss = st.session_state
    c1, c2 = st.columns(2, gap="large")
    P = links.control(c1.slider, t("pe.positions"), 2, MAX_POSITIONS, help=t("pe.positions_help"),
                      setting="pe_positions")
    ss["pe_offset"] = min(int(ss["pe_offset"]), P - 1)
    if offset:
        links.control(c2.slider, t("pe.offset"), 0, P - 1, help=t("pe.offset_help"), setting="pe_offset")
    return P, int(ss["pe_offset"])


def order_outputs(outs: dict, rows: tuple[list[str], list[str]], cols: list[str], d: int) -> None:
    """The attention outputs (plain and with PE) of the sentence and of its reordered copy, side by side."""
    shown = len(cols)
    for name, *titles in OUTPUTS:
        left, right = st.columns(2, gap="large")
        for slot, out, labels, title in zip((left, right), outs[name], rows, titles):
            with slot:
                panels.matrix_panel(core.to_numpy(out[:, :shown]), title=t(title), key=title.replace(".", "_"),
                                    row_labels=labels, col_labels=cols,
                                    caption=t("pe.out_caption", shown=shown, d=d) if shown < d else None,
                                    max_width=300)


def sinusoid_download(P: int, d: int, dim: Callable[..., str]) -> None:
    full = functools.partial(full_csv, P, d, [dim(j=j) for j in range(d)])  # the CSV is made only when clicked
    st.download_button(t("pe.download_full", P=P, d=d), full, file_name=f"pe_{P}x{d}.csv", mime="text/csv",
                       on_click="ignore", icon=":material/download:", key="pe_full_csv")


def curves(pe: np.ndarray, dim: Callable[..., str]) -> None:
    """The chosen dimensions of PE (P, d) as curves over the positions."""
    st.subheader(t("pe.curves_header"))
    P, d = pe.shape
    chosen = links.control(st.multiselect, t("pe.dims"), list(range(d)), max_selections=MAX_CURVES,
                           format_func=lambda j: dim(j=j), help=t("pe.dims_help", max=MAX_CURVES), setting="pe_dims")
    if not chosen:
        st.info(t("pe.no_dims"), icon=":material/info:")
        return
    factors = {j: float(positional.frequency_factor(j // 2, d)) for j in chosen}
    series = {t("pe.curve_name", dim=dim(j=j), fn="sin" if j % 2 == 0 else "cos",
                wavelength=2 * math.pi * factors[j]): pe[:, j] for j in sorted(chosen)}
    panels.svg_image(charts.lines(range(P), series, x_title=t("pe.position"), y_title="PE"))


def frequencies(d: int) -> None:
    """The frequency factor and wavelength of the chosen pairs of dimensions."""
    st.subheader(t("pe.factor_header"))
    prose(t("pe.factor_intro"))
    pairs = sorted(links.control(st.multiselect, t("pe.pairs"), list(range(d // 2)), help=t("pe.pairs_help"),
                                 setting="pe_pairs"))
    rows = positions.frequency_rows(pairs, d)
    exact = [t("pe.col_exponent"), t("pe.col_factor"), t("pe.col_wavelength")]
    number_table(pd.DataFrame({t("pe.col_i"): pairs, t("pe.col_dims"): [f"{2 * i}, {2 * i + 1}" for i in pairs],
                               exact[0]: rows["exponent"], exact[1]: rows["factor"],
                               exact[2]: rows["wavelength"]}), "pe_factor_table", exact)


def offset_table(O: dict, k: int) -> None:
    """PE(p)·PE(p+k) at the sample positions p and the closed form over the complete pairs."""
    exact = ["PE(p)·PE(p+k)", t("pe.col_formula")]
    number_table(pd.DataFrame({"p": O["p"], "p + k": [p + k for p in O["p"]], exact[0]: O["at_p"],
                               exact[1]: O["formula"]}), "pe_offset_table", exact)  # over the complete pairs


def scale_table(rows: dict, tokens: list[str]) -> None:
    """Per token: the norms of E, √d·E and PE, and how much of E survives the sum (with the two mean cosines)."""
    table = pd.DataFrame({t("pe.col_token"): tokens, "p": range(len(tokens)), "‖E‖": rows["E"],
                          "‖√d·E‖": rows["scaled_E"], "‖PE‖": rows["PE"],
                          t("pe.col_cos_plain"): rows["cos_plain"], t("pe.col_cos_scaled"): rows["cos_scaled"]})
    for column, name in zip(st.columns(2), ("pe.col_cos_plain", "pe.col_cos_scaled")):
        column.metric(t(name), number(table[t(name)].mean(), ".4f"))
    number_table(table, "pe_scale_table", list(table.columns[2:]))


def rope_table(R: positions.Rotary, P: int, k: int) -> None:
    """RoPE's score and the additive one for q at p and k at p + k, at the sample positions p that fit."""
    exact = [t("pe.col_rope"), t("pe.col_added")]
    fits = [p for p in SAMPLE_P if p + k < P]
    number_table(pd.DataFrame({"p": fits, "p + k": [p + k for p in fits],
                               exact[0]: [R.scores[p, p + k] for p in fits],
                               exact[1]: [R.added[p, p + k] for p in fits]}), "pe_rope_table", exact)


def rope_plane(R: positions.Rotary, P: int, k: int, d_rope: int, dim: Callable[..., str]) -> None:
    """One pair of dimensions of q and k as arrows, turned a step further at every position."""
    ss = st.session_state
    ss["pe_rope_pair"] = min(int(ss["pe_rope_pair"]), d_rope // 2 - 1)
    i = links.control(st.number_input, t("pe.rope_pair"), 0, d_rope // 2 - 1, step=1, width=240,
                      setting="pe_rope_pair")
    theta = 1.0 / float(positional.frequency_factor(i, d_rope))
    steps = [p for p in range(4) if p + k < P]
    points = R.pair(i, steps, k)
    names = [f"q@{p}" for p in steps] + [f"k@{p + k}" for p in steps]
    colours = [charts.PALETTE["query"]] * len(steps) + [charts.PALETTE["key"]] * len(steps)
    st.altair_chart(charts.plane_arrows(points, names, colours, x_title=dim(j=2 * i), y_title=dim(j=2 * i + 1),
                                        circles=[float(v[2 * i: 2 * i + 2].norm()) for v in (R.q, R.k)],
                                        title=t("pe.rope_plane_title", i=i)), width="content")
    st.caption(t("pe.rope_plane_caption", theta=theta, degrees=math.degrees(theta), k=k))


def comparison(length: int, d: int) -> pd.DataFrame:
    """The three encodings side by side, one row per aspect (the learned table of `length` rows)."""
    kinds = (t("pe.compare_aspect"), t("pe.kind_sinusoidal"), t("pe.kind_learned"), t("pe.kind_rope"))
    compare = pd.DataFrame([[t(key, params=length * d, L=length, d=d) for key in row] for row in COMPARISON],
                           columns=kinds)
    return compare.set_index(t("pe.compare_aspect"))
