"""A block diagram drawn on the server as SVG: boxes down each column's spine, arrows between them, dashed frames
around a repeated layer, residual paths around a sub-layer, arrows from one column to another. Graphviz would lay
it out in the browser (WebAssembly, about a second of browser CPU per change); here the layout is a few sums (each
item goes below the previous one) and text widths are estimated generously, so a box is never narrower than its text.

    enc, dec = Column([...], lane="left"), Column([...], lane="right")  # Node, Branch (residual), Frame (× N)
    svg = render([enc, dec], [Link(memory, cross, "K, V")], layout([enc, dec]), title=..., description=..., name=...)

The SVG names itself for screen readers (`<title>`, `<desc>`) and scales down to its container, never up. Show it
with `st.markdown(svg, unsafe_allow_html=True)`: st.html's sanitizer keeps HTML only and drops SVG. ui/tree_diagram.py
(lesson 10's beam search tree) draws with the same text, arrowheads and `document`.
"""
from __future__ import annotations

import html
from dataclasses import dataclass, field

FONT, TITLE_FONT, LINE = 13, 13.5, 16  # px: box text, frame titles; the height of one line of text
CHAR_EM = 0.58  # an average character's width, in em: a little more than a sans-serif font's (about 0.5)
PAD_X, PAD_Y = 12, 6  # px inside a box around its text
GAP = 24  # px of arrow between two items of a column
ADD_R = 9  # px: the radius of the ⊕ where a residual connection adds back
LANE = 18  # px from a column's widest box to its residual paths
FRAME_PAD = 10  # px inside a frame around its boxes and lane
COLUMN_GAP = 64  # px between two columns' frames
MARGIN = 8  # px around the drawing
INK, EDGE, FRAME_INK, TINT = "#1A1A1A", "#555555", "#777777", 0.25


def text_width(line: str, size: float = FONT) -> float:
    """An estimate of a line's width in px, at least as wide as the line drawn in a sans-serif font."""
    return len(line) * CHAR_EM * size


def wrap(text: str, width: float, size: float = TITLE_FONT) -> list[str]:
    """Greedy word wrap of `text` into lines of at most `width` px (a single long word stays whole)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(f"{lines[-1]} {word}", size) <= width:
            lines[-1] += f" {word}"
        else:
            lines.append(word)
    return lines


@dataclass(eq=False)
class Node:
    """A box of one or more lines (`kind="box"`), or the ⊕ of a residual connection (`kind="add"`). `fill` is a
    colour drawn as a light tint (`tint`; None: white). x is the centre and y the top, set by the layout."""
    lines: tuple[str, ...] = ()
    fill: str | None = None
    kind: str = "box"
    x: float = 0.0
    y: float = 0.0

    @property
    def w(self) -> float:
        return 2 * ADD_R if self.kind == "add" else max(map(text_width, self.lines)) + 2 * PAD_X

    @property
    def h(self) -> float:
        return 2 * ADD_R if self.kind == "add" else len(self.lines) * LINE + 2 * PAD_Y

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass(eq=False)
class Branch:
    """The point on the spine where a residual path leaves, to rejoin at the ⊕ `to` further down."""
    to: Node
    y: float = 0.0


@dataclass(eq=False)
class Frame:
    """A dashed frame around `items` (one layer, repeated), titled with the paragraphs of `title` (the first in
    bold), each wrapped to the frame's width."""
    title: tuple[str, ...]
    items: list
    lines: list[tuple[str, bool]] = field(default_factory=list)  # (line, bold)
    top: float = 0.0
    bottom: float = 0.0


@dataclass(eq=False)
class Link:
    """An arrow from one column's node (its side) to another's, straight across once the columns are aligned."""
    start: Node
    end: Node
    label: str = ""
    color: str = EDGE


class Column:
    """Items (Node, Branch, Frame) top to bottom on one vertical spine; residual paths on the `lane` side."""

    def __init__(self, items: list, lane: str = "left"):
        self.items, self.sign = items, -1 if lane == "left" else 1
        self.box_w = max(node.w for node in self.nodes())
        self.x = 0.0

    def flat(self) -> list:
        return [leaf for item in self.items for leaf in (item.items if isinstance(item, Frame) else [item])]

    def nodes(self) -> list[Node]:
        return [item for item in self.flat() if isinstance(item, Node)]

    def frames(self) -> list[Frame]:
        return [item for item in self.items if isinstance(item, Frame)]

    @property
    def width(self) -> float:
        """From the frame's left edge to its right edge (the residual lane on one side)."""
        return self.box_w + LANE + 2 * FRAME_PAD

    def place(self, left: float, top: float) -> None:
        """Put every item below the previous one, the frame's left edge at `left`."""
        self.x = left + FRAME_PAD + self.box_w / 2 + (LANE if self.sign < 0 else 0)
        y, after_branch = top - GAP, False
        for item in self.items:
            if isinstance(item, Frame):
                item.lines = [(line, i == 0) for i, text in enumerate(item.title)
                              for line in wrap(text, self.width - 2 * FRAME_PAD)]
                item.top = y + GAP
                y, after_branch = self._stack(item.items, item.top + len(item.lines) * LINE + 2, after_branch)
                item.bottom = y + FRAME_PAD
                y = item.bottom - GAP / 2
            else:
                y, after_branch = self._stack([item], y, after_branch)

    def _stack(self, items: list, y: float, after_branch: bool) -> tuple[float, bool]:
        for item in items:
            if isinstance(item, Branch):
                item.y, after_branch = y + GAP / 2, True
                y = item.y
            else:
                item.x, item.y = self.x, y + (GAP / 2 if after_branch else GAP)
                y, after_branch = item.y + item.h, False
        return y, after_branch

    def shift(self, dy: float, start: Node | None = None) -> None:
        """Move every item down by dy (from `start` on, if given: that node and the ones after it)."""
        for item in self.items if start is None else self.items[self.items.index(start):]:
            for leaf in item.items if isinstance(item, Frame) else [item]:
                leaf.y += dy
            if isinstance(item, Frame):
                item.top, item.bottom = item.top + dy, item.bottom + dy

    def bottom(self) -> float:
        return max([n.y + n.h for n in self.nodes()] + [f.bottom for f in self.frames()])


# ---- drawing ---------------------------------------------------------------------------------------------

def num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def tint(color: str | None) -> str:
    """A box's fill: `color` (#RRGGBB) at TINT over white, or white."""
    channels = [int(color[i:i + 2], 16) for i in (1, 3, 5)] if color else [255] * 3
    return "#" + "".join(f"{round(255 - TINT * (255 - c)):02X}" for c in channels)


def text_block(lines: list[str] | tuple[str, ...], x: float, top: float, size: float = FONT, bold: bool = False,
               halo: bool = False, color: str = INK) -> str:
    """Centred lines of text, the first line's box starting at `top`; a white halo keeps them readable over a line."""
    weight = ' font-weight="600"' if bold else ""
    spans = "".join(f'<tspan x="{num(x)}" y="{num(top + (i + 0.72) * LINE)}">{html.escape(line, quote=False)}'
                    "</tspan>" for i, line in enumerate(lines))
    outline = ' stroke="#FFFFFF" stroke-width="4" stroke-linejoin="round" paint-order="stroke"' if halo else ""
    return f'<text text-anchor="middle" font-size="{size}"{weight}{outline} fill="{color}">{spans}</text>'


def arrowhead(start: tuple[float, float], tip: tuple[float, float], color: str, width: float
              ) -> tuple[tuple[float, float], str]:
    """The arrowhead of a line of `width` arriving at `tip` from the direction of `start`: (where the line should
    stop, the head's polygon)."""
    (x0, y0), (x1, y1) = start, tip
    length = max(1e-9, ((x1 - x0) ** 2 + (y1 - y0) ** 2) ** 0.5)
    ux, uy = (x1 - x0) / length, (y1 - y0) / length  # the last segment's direction
    head, half = 5 + 2 * width, (5 + 2 * width) * 0.45
    base = (x1 - ux * head, y1 - uy * head)
    wing = [(base[0] - uy * half, base[1] + ux * half), (base[0] + uy * half, base[1] - ux * half)]
    corners = " ".join(f"{num(x)},{num(y)}" for x, y in [(x1, y1), *wing])
    return base, f'<polygon points="{corners}" fill="{color}"/>'


def _arrow(points: list[tuple[float, float]], color: str = EDGE, width: float = 1.4, dashed: bool = False) -> str:
    """A polyline ending in an arrowhead at its last point."""
    base, head = arrowhead(points[-2], points[-1], color, width)
    line = " ".join(f"{num(x)},{num(y)}" for x, y in [*points[:-1], base])
    dash = ' stroke-dasharray="5 3"' if dashed else ""
    return f'<polyline points="{line}" fill="none" stroke="{color}" stroke-width="{width}"{dash}/>' + head


def _node(node: Node) -> str:
    if node.kind == "add":
        r, x, y = ADD_R, node.x, node.cy
        cross = f"M{num(x - r + 4)},{num(y)}H{num(x + r - 4)}M{num(x)},{num(y - r + 4)}V{num(y + r - 4)}"
        return (f'<circle cx="{num(x)}" cy="{num(y)}" r="{r}" fill="#FFFFFF" stroke="{INK}" stroke-width="1.2"/>'
                f'<path d="{cross}" stroke="{INK}" stroke-width="1.4"/>')
    return (f'<rect x="{num(node.x - node.w / 2)}" y="{num(node.y)}" width="{num(node.w)}" '
            f'height="{num(node.h)}" rx="7" fill="{tint(node.fill)}" stroke="{INK}"/>'
            + text_block(node.lines, node.x, node.y + PAD_Y))


def _column(col: Column) -> list[str]:
    """The column's frames, spine arrows, residual paths and boxes, in that order (boxes on top)."""
    out = []
    for frame in col.frames():
        left = col.x - col.box_w / 2 - FRAME_PAD - (LANE if col.sign < 0 else 0)
        out.append(f'<rect x="{num(left)}" y="{num(frame.top)}" width="{num(col.width)}" '
                   f'height="{num(frame.bottom - frame.top)}" rx="10" fill="none" stroke="{FRAME_INK}" '
                   f'stroke-dasharray="6 4"/>')
        out += [text_block([line], col.x - col.sign * LANE / 2, frame.top + 2 + i * LINE, TITLE_FONT, bold,
                           halo=True) for i, (line, bold) in enumerate(frame.lines)]
    nodes = col.nodes()
    out += [_arrow([(col.x, a.y + a.h), (col.x, b.y)]) for a, b in zip(nodes, nodes[1:])]
    lane_x = col.x + col.sign * (col.box_w / 2 + LANE / 2)
    for branch in (item for item in col.flat() if isinstance(item, Branch)):
        add = branch.to
        out.append(f'<circle cx="{num(col.x)}" cy="{num(branch.y)}" r="3" fill="{EDGE}"/>')
        path = [(col.x, branch.y), (lane_x, branch.y), (lane_x, add.cy), (col.x + col.sign * ADD_R, add.cy)]
        out.append(_arrow(path, dashed=True))
    return out + [_node(node) for node in nodes]


def _link(link: Link) -> list[str]:
    """An arrow from the side of `start` to the facing side of `end`, at `start`'s height, then to `end`'s."""
    a, b = link.start, link.end
    sign = 1 if b.x > a.x else -1
    x0, x1 = a.x + sign * a.w / 2, b.x - sign * b.w / 2
    points = [(x0, a.cy), (x1, a.cy)] if abs(a.cy - b.cy) < 0.5 else [(x0, a.cy), ((x0 + x1) / 2, a.cy),
                                                                        ((x0 + x1) / 2, b.cy), (x1, b.cy)]
    label = text_block([link.label], (x0 + x1) / 2, a.cy - LINE - 2, FONT, bold=True, halo=True) if link.label else ""
    return [_arrow(points, link.color, width=2.4), label]


def layout(columns: list[Column]) -> tuple[float, float]:
    """Place the columns side by side from the top left; returns the drawing's (width, height)."""
    left = MARGIN
    for col in columns:
        col.place(left, MARGIN)
        left += col.width + COLUMN_GAP
    return left - COLUMN_GAP + MARGIN, max(col.bottom() for col in columns) + MARGIN


def render(columns: list[Column], links: list[Link], size: tuple[float, float], *, title: str, description: str,
           name: str) -> str:
    """The placed columns and links as one accessible SVG (`name` makes its ids unique on the page). The opening tag
    ends its own line, so markdown (st.markdown with unsafe_allow_html) takes the whole SVG as one raw HTML block."""
    body = [part for col in columns for part in _column(col)] + [part for link in links for part in _link(link)]
    return document(body, size, title=title, description=description, name=name)


def document(body: list[str], size: tuple[float, float], *, title: str, description: str, name: str) -> str:
    """SVG elements as one accessible SVG of `size` (width, height) that scales down to its column, never up."""
    width, height = size
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {num(width)} {num(height)}" role="img" '
            f'aria-labelledby="{name}-title" aria-describedby="{name}-desc" '
            f'style="width: 100%; max-width: {num(width)}px; height: auto; display: block">\n'
            f'<title id="{name}-title">{html.escape(title, quote=False)}</title>'
            f'<desc id="{name}-desc">{html.escape(description, quote=False)}</desc>' + "".join(body) + "</svg>")
