"""Test helpers shared by the sweep, the link and the scene tests: which lessons there are, and how a test finds,
sets and resets a lesson's widgets through AppTest, and reads what a lesson shows."""
from __future__ import annotations

import ast
import base64
import dataclasses
import functools
import html
import io
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image
from streamlit import dataframe_util
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
KINDS = ("slider", "select_slider", "number_input", "selectbox", "radio", "toggle", "checkbox", "multiselect",
         "text_input", "text_area")
TEXTS = {
    "empty": "",
    "very long": " ".join(f"word{k}" for k in range(600)),
    "non-Latin": "注意力就是一切 Внимание — всё, что нужно مرحبا بالعالم ñandú 🙂",
    "markup": r"*_[]<>$\`{}|#~ <script>alert(1)</script> $$x$$ **b** \frac{1}{0} %s {0} {name}",
}


# ---- which lessons ----------------------------------------------------------------------------------------

def _pages_literal(path: Path) -> tuple | None:
    """The PAGES tuple assigned as a literal in `path`, or None."""
    if not path.exists():
        return None
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(target, ast.Name) and target.id == "PAGES" for target in targets) and node.value:
            try:
                return ast.literal_eval(node.value)
            except ValueError:
                return None
    return None


def sub_lessons(path: str) -> tuple[str | None, list[str]]:
    """(setting, parts) of the lesson's `parts.pick` (its sub-lessons, in order), or (None, []) without one."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    literals = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                literals[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "attr", None) == "pick" and \
                getattr(node.func.value, "id", None) == "parts":
            listed = node.args[1] if isinstance(node.args[1], ast.Name) else node.args[1].args[0]  # PARTS, list(PARTS)
            return ast.literal_eval(node.args[0]), list(literals[listed.id])
    return None, []


def page_file(entry: Any) -> str:
    """The page file ("lessons/NN_x.py") named in one PAGES entry: a tuple, a dict or a dataclass-like record."""
    if isinstance(entry, (tuple, list)):
        parts = list(entry)
    elif isinstance(entry, dict):
        parts = list(entry.values())
    elif dataclasses.is_dataclass(entry):
        parts = [getattr(entry, field.name) for field in dataclasses.fields(entry)]
    else:
        parts = list(vars(entry).values())
    found = [Path(part) for part in parts if isinstance(part, (str, Path)) and str(part).endswith(".py")]
    assert len(found) == 1, f"expected one page file in the PAGES entry {entry!r}"
    path = found[0]
    return (path.relative_to(ROOT) if path.is_absolute() else path).as_posix()


def lesson_files() -> list[str]:
    """Every page file in PAGES: a literal in app.py, or in ui/lessons.py (where it is moving), or imported."""
    pages = _pages_literal(APP) or _pages_literal(ROOT / "ui" / "lessons.py")
    if pages is None:
        from ui import lessons  # PAGES built by code rather than written out

        pages = lessons.PAGES
    files = [page_file(entry) for entry in pages]
    assert files and len(set(files)) == len(files), files
    return files


LESSONS = lesson_files()


# ---- widgets: find, set, reset -----------------------------------------------------------------------------

def find(at: AppTest, kind: str, name: str):
    """The enabled widget of `kind` whose key is `name`, or None."""
    for w in getattr(at, kind):
        if w.key == name and not getattr(w.proto, "disabled", False):
            return w
    return None


def keyed_widgets(container) -> dict[str, str]:
    """{key: kind} of every keyed, enabled, sweepable widget in `container` (the app or its sidebar).
    A disabled widget cannot be changed in the browser; if a change enables it, it counts as revealed."""
    return {w.key: kind for kind in KINDS for w in getattr(container, kind)
            if w.key and not getattr(w.proto, "disabled", False)}


@functools.cache
def _forced(cls: type) -> type:
    """A subclass of an AppTest widget class that sends a prepared WidgetState (the browser's message)."""
    return type(f"Forced{cls.__name__}", (cls,), {"_widget_state": property(lambda self: self._forced_state)})


def force(w, fill: Callable[[WidgetState], None]) -> None:
    """Make the next run receive what `fill` writes for widget `w`: formatted option labels, as the browser sends
    them (AppTest's own set_value needs the raw option objects, which the element tree does not carry)."""
    state = WidgetState()
    state.id = w.id
    fill(state)
    w.__class__ = _forced(type(w))
    w._forced_state = state


def as_number(w, v: float) -> int | float:
    return int(v) if isinstance(w.value, int) and not isinstance(w.value, bool) else float(v)


def snapshot(w, kind: str) -> Any:
    """The widget's current value in a form that survives a language switch (option indices, not labels)."""
    if kind in ("selectbox", "radio"):
        return w.index
    if kind == "select_slider":
        return [w.options.index(label) for label in w._widget_state.string_array_value.data]
    if kind == "multiselect":
        return list(w.indices)
    return w.value


def apply(w, kind: str, value: Any) -> None:
    """Set `value` (a raw value, or option indices for option widgets, as `snapshot` gives them) on widget `w`."""
    if kind in ("selectbox", "radio"):
        force(w, lambda s: None if value is None else setattr(s, "string_value", w.options[value]))
    elif kind in ("select_slider", "multiselect"):
        force(w, lambda s: s.string_array_value.data.extend(w.options[i] for i in value))
    elif kind in ("slider", "number_input"):
        w.set_value([as_number(w, v) for v in value] if isinstance(value, (list, tuple)) else as_number(w, value))
    else:
        w.set_value(value)


def extremes(w, kind: str) -> list[tuple[str, Any]]:
    """(description, value) of each extreme of widget `w` that differs from its current value."""
    current = snapshot(w, kind)
    if kind == "slider":
        lo, hi = w.min, w.max
        ranged = isinstance(w.value, (list, tuple))
        values = [("min", (lo, lo) if ranged else lo), ("max", (hi, hi) if ranged else hi)]
        if ranged:
            values.append(("full range", (lo, hi)))
    elif kind == "number_input":
        lo = w.min if w.min is not None else -1e9
        hi = w.max if w.max is not None else 1e9
        values = [("min", lo), ("max", hi)]
    elif kind == "radio" and w.key.endswith("_part"):  # a lesson's sub-lessons (ui/parts.py): every one,
        values = [(f"part {i + 1}", i) for i in range(len(w.options))]  # each brings its own controls on screen
    elif kind in ("selectbox", "radio"):
        values = [("first", 0), ("last", len(w.options) - 1)] if w.options else []
    elif kind == "select_slider":
        last = len(w.options) - 1
        values = [("first", [0] * len(current)), ("last", [last] * len(current))]
        if len(current) == 2:
            values.append(("full range", [0, last]))
    elif kind == "multiselect":
        most = w.max_selections or len(w.options)
        values = [("none", []), ("all", list(range(min(most, len(w.options)))))]
    elif kind in ("toggle", "checkbox"):
        values = [("flipped", not current)]
    else:  # free text: the browser cannot type more than max_chars
        limit = w.proto.max_chars or None
        values = [(name, text[:limit]) for name, text in TEXTS.items()]
    if kind in ("slider", "number_input"):
        values = [(name, v) for name, v in values if not np.allclose(np.asarray(v, float), np.asarray(current, float))]
    else:
        values = [(name, v) for name, v in values if v != current]
    return [(f"{name} = {shown(w, kind, v)}", v) for name, v in values]


def shown(w, kind: str, value: Any) -> str:
    if kind in ("selectbox", "radio"):
        return repr(w.options[value])
    if kind in ("select_slider", "multiselect"):
        return repr([w.options[i] for i in value])
    text = repr(value)
    return text if len(text) < 60 else text[:40] + f"... ({len(value)} characters)"



# ---- what a lesson shows ------------------------------------------------------------------------------

def view(main) -> list[tuple[str, object]]:
    """What the lesson shows in its main area: text, tables, chart specs and chart data, kind by kind."""
    shown: list[tuple[str, object]] = []
    for kind in ("title", "header", "subheader", "markdown", "caption", "latex", "code", "warning", "info", "error"):
        shown += [(kind, e.value) for e in getattr(main, kind)]
    shown += [("dataframe", e.value.to_csv()) for e in main.dataframe]
    for chart in main.get("vega_lite_chart"):
        data = [dataframe_util.convert_arrow_bytes_to_pandas_df(ds.data.data).to_csv() for ds in chart.proto.datasets]
        shown.append(("chart", (chart.proto.spec, data)))
    return shown


def table(at, key: str):
    """The table `ui.tables` drew under `key` (its container carries the key), grid or plain, as a DataFrame."""
    node = at.get_by_key(key)
    return (node.dataframe or node.table)[0].value


def has_table(at, key: str) -> bool:
    """Whether the page shows a table under `key` now (a view that draws it only in some cases)."""
    try:
        node = at.get_by_key(key)
    except KeyError:
        return False
    return bool(node.dataframe or node.table)


# ---- the heatmaps drawn on the server (ui/charts/svg.py, shown by ui.panels.svg_image) -----------------------

@dataclasses.dataclass(frozen=True)
class Heatmap:
    description: str  # the img's alt
    svg: str
    cells: list[tuple[str, str, str]]  # (row, column, exact value as written) in matrix order
    fills: list[str]  # each cell's colour, "#RRGGBB"
    texts: list[str]  # every text element of the SVG (labels, cell values, legend)
    matrix: np.ndarray  # the values as computed (each cell's data-value), (rows, columns)
    legend: str  # the colour legend's title (its lines joined)
    panels: list[str]  # small multiples' titles, in order (none for one heatmap)

    def panel_matrices(self) -> dict[str, np.ndarray]:
        """Small multiples' matrices by panel title."""
        return dict(zip(self.panels, np.split(self.matrix, len(self.panels)))) if self.panels else {}


def heatmap_of(svg: str, description: str = "") -> Heatmap:
    """What one SVG of charts.heatmap_svg (or facet_svg: its panels one after the other) shows: its cells (tooltip
    text where cells have one, colour, value as computed), texts, legend."""
    rects = re.findall(r'<rect x="[^"]+" y="([^"]+)" [^>]*fill="(#[0-9A-F]{6})" data-value="([^"]+)">'
                       r'(?:<title>([^<]*)</title>)?</rect>', svg)  # (y, fill, value, tooltip)
    cells = [tuple(re.match(r"(.*), (.*): (.*)$", html.unescape(tip)).groups()) for *_, tip in rects if tip]
    texts = [html.unescape(text) for text in re.findall(r"<text [^>]*>([^<]*)</text>", svg)]
    n_cols = next((k for k, (y, *_) in enumerate(rects) if y != rects[0][0]), len(rects))  # the first row's cells
    matrix = np.array([float(value) for _, _, value, _ in rects]).reshape(-1, n_cols)  # panels stacked down
    legend = " ".join(html.unescape(t) for t in re.findall(r'<text [^>]*class="legend">([^<]*)</text>', svg))
    panels = [html.unescape(t) for t in re.findall(r'<text [^>]*class="panel">([^<]*)</text>', svg)]
    return Heatmap(description, svg, cells, [fill for _, fill, _, _ in rects], texts, matrix, legend, panels)


def svg_images(container, kind: str) -> list[tuple[str, str]]:
    """(SVG, description) of every image of `kind` ("heatmap", "picture", "lines", "bars" or "stacked") that
    ui.panels.svg_image showed in `container` (AppTest's main area, a block, or the app), in page order."""
    found = []
    for element in container.get("markdown"):
        match = re.search(r'src="data:image/svg\+xml;base64,([^"]+)" alt="([^"]*)"', element.value)
        if match:
            svg = base64.b64decode(match.group(1)).decode()
            if f'class="{kind}"' in svg[:200]:
                found.append((svg, html.unescape(match.group(2))))
    return found


def heatmaps(container) -> list[Heatmap]:
    """Every server-drawn heatmap in `container`, in page order."""
    return [heatmap_of(svg, description) for svg, description in svg_images(container, "heatmap")]


@dataclasses.dataclass(frozen=True)
class LineChart:
    description: str  # the img's alt
    svg: str
    series: dict[str, tuple[np.ndarray, np.ndarray]]  # name: (x, y) as computed, in legend order
    texts: list[str]  # every text element (title, ticks, axis titles, legend)


def line_chart_of(svg: str, description: str = "") -> LineChart:
    """What one SVG of charts.lines shows: each series' values as computed, and its texts."""
    series = {html.unescape(name): (np.array(xs.split(), dtype=float), np.array(ys.split(), dtype=float))
              for name, xs, ys in re.findall(r'<g class="series" data-name="([^"]*)" data-x="([^"]*)" '
                                             r'data-y="([^"]*)"', svg)}
    texts = [html.unescape(text) for text in re.findall(r"<text [^>]*>([^<]*)</text>", svg)]
    return LineChart(description, svg, series, texts)


def line_charts(container) -> list[LineChart]:
    """Every server-drawn line chart in `container`, in page order."""
    return [line_chart_of(svg, description) for svg, description in svg_images(container, "lines")]


@dataclasses.dataclass(frozen=True)
class BarChart:
    description: str  # the img's alt
    svg: str
    labels: list[str]  # top to bottom, as the bars' data (unique, uncut)
    values: np.ndarray  # as computed
    ghosts: np.ndarray | None  # the grey bars behind, as computed (None without)
    fills: list[str]  # each bar's colour
    marked: list[int]  # the outlined bars
    written: list[str]  # the text after each bar
    texts: list[str]  # every text element (title, labels, values, ticks, axis titles)


def bar_chart_of(svg: str, description: str = "") -> BarChart:
    """What one SVG of charts.bars or charts.distribution_bars shows."""
    bars = re.findall(r'<rect class="bar" [^>]*fill="([^"]+)"( stroke="[^"]+")?[^>]* data-label="([^"]*)" '
                      r'data-value="([^"]+)">', svg)  # (fill, outline, label, value)
    ghosts = re.findall(r'<rect class="ghost" [^>]*data-value="([^"]+)"', svg)
    return BarChart(description, svg, [html.unescape(label) for _, _, label, _ in bars],
                    np.array([float(v) for *_, v in bars]), np.array([float(v) for v in ghosts]) if ghosts else None,
                    [fill for fill, *_ in bars], [k for k, (_, outline, *_) in enumerate(bars) if outline],
                    [html.unescape(s) for s in re.findall(r'<text [^>]*class="value">([^<]*)</text>', svg)],
                    [html.unescape(s) for s in re.findall(r"<text [^>]*>([^<]*)</text>", svg)])


def bar_charts(container, kind: str = "bars") -> list[BarChart]:
    """Every server-drawn bar chart in `container`, in page order (`kind` "stacked": a weighted average's parts,
    read for its description and texts)."""
    return [bar_chart_of(svg, description) for svg, description in svg_images(container, kind)]


@dataclasses.dataclass(frozen=True)
class Picture:
    description: str  # the img's alt
    svg: str
    pixels: np.ndarray  # the embedded PNG's pixels, (height, width, 3) uint8: each cell a block of them
    texts: list[str]  # every text element (tick labels, axis titles, legend)
    legend: str  # the colour legend's title (its lines joined)


def picture_of(svg: str, description: str = "") -> Picture:
    """What one SVG of charts.picture shows: its picture's pixels, decoded from the data URL, and its texts."""
    data = re.search(r'href="data:image/png;base64,([^"]+)"', svg).group(1)
    pixels = np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))
    legend = " ".join(html.unescape(t) for t in re.findall(r'<text [^>]*class="legend">([^<]*)</text>', svg))
    return Picture(description, svg, pixels, [html.unescape(s) for s in re.findall(r"<text [^>]*>([^<]*)</text>", svg)],
                   legend)


def pictures(container) -> list[Picture]:
    """Every server-drawn picture of a big matrix in `container`, in page order."""
    return [picture_of(svg, description) for svg, description in svg_images(container, "picture")]
