"""A tree drawn on the server as SVG, left to right: one column of boxes per depth, each box joined to its parent in
the column before by a curved arrow (lesson 10's beam search: one column per decoding step). Like ui/diagram.py,
whose text widths, tints and SVG document it shares, the layout is a few sums, so nothing is laid out in the browser.

    root = TreeNode(("<bos>",)); child = TreeNode(("12", "-0.05"), root, look="kept", marked=True)
    svg = render(layout([[root], [child]], titles=["", "step 1"]), title=..., description=..., name=...)

Layout: a column's boxes are grouped by parent, the groups in their parents' order (so no two arrows cross), and
stacked tightly; the drawing is as tall as its tallest column, and every other column slides down within that
height to line its boxes up with their parents as well as it can (on average). Looks: "plain"
(white), "kept" (blue tint), "finished" (green tint, double border), "pruned" (white, dashed, grey text); a
`marked` box and the arrow into it are drawn thick in the highlight colour (the path of the best answer).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ui.charts import PALETTE
from ui.diagram import EDGE, INK, LINE, MARGIN, PAD_X, arrowhead, document, num, text_block, text_width, tint

PAD_Y = 3  # px inside a box above and below its text
ROW_GAP, GROUP_GAP = 5, 10  # px between two boxes with one parent; between two parents' groups
COLUMN_GAP = 44  # px of arrow between two columns
HEAD = LINE + 6  # px above the boxes for the columns' titles
DIM, DIM_INK = "#9E9E9E", "#6E6E6E"  # a pruned box's border and text (4.9:1 on white)
FILLS = {"plain": None, "kept": "#56B4E9", "finished": "#009E73", "pruned": None}
MARK_WIDTH = 2.6  # px: the best path's borders and arrows


@dataclass(eq=False)
class TreeNode:
    """A box of lines; `parent` is the box in the previous column it grows from (None in the first column).
    x is the box's centre and y its top, set by `layout`."""
    lines: tuple[str, ...]
    parent: TreeNode | None = None
    look: str = "plain"
    marked: bool = False
    x: float = 0.0
    y: float = 0.0

    @property
    def w(self) -> float:
        return max(map(text_width, self.lines)) + 2 * PAD_X

    @property
    def h(self) -> float:
        return len(self.lines) * LINE + 2 * PAD_Y

    @property
    def cy(self) -> float:
        return self.y + self.h / 2


@dataclass
class Tree:
    """Placed columns (each ordered top to bottom), their titles, and the drawing's (width, height)."""
    columns: list[list[TreeNode]]
    titles: list[str]
    size: tuple[float, float] = (0.0, 0.0)
    nodes: list[TreeNode] = field(default_factory=list)


def _groups(column: list[TreeNode], previous: list[TreeNode]) -> list[list[TreeNode]]:
    """The column's boxes grouped by parent, the groups in their parents' order (boxes keep their given order)."""
    place = {id(node): i for i, node in enumerate(previous)}
    groups: dict[int, list[TreeNode]] = {}
    for node in column:
        groups.setdefault(place.get(id(node.parent), -1), []).append(node)
    return [groups[k] for k in sorted(groups)]


def _stack(groups: list[list[TreeNode]]) -> float:
    """The groups' boxes one below the other from y = 0 (ROW_GAP apart, GROUP_GAP between groups); returns the
    stack's height."""
    y = -GROUP_GAP + ROW_GAP
    for group in groups:
        y += GROUP_GAP - ROW_GAP
        for node in group:
            node.y, y = y, y + node.h + ROW_GAP
    return y - ROW_GAP


def layout(columns: list[list[TreeNode]], titles: list[str]) -> Tree:
    """Place the columns left to right and their boxes top to bottom; returns the placed tree. The drawing is as
    tall as its tallest column: every other column moves down as far as lines its boxes up with their parents on
    average, and no further."""
    ordered, heights, left = [], [], MARGIN
    for c, column in enumerate(columns):
        groups = _groups(column, ordered[-1]) if c else [column]
        heights.append(_stack(groups))
        ordered.append([node for group in groups for node in group])
        width = max([node.w for node in column] + [text_width(titles[c])])
        for node in column:
            node.x = left + width / 2
        left += width + COLUMN_GAP
    top, tallest = MARGIN + HEAD, max(heights)
    for column, height in zip(ordered, heights):
        pulls = [node.parent.cy - node.cy for node in column if node.parent]  # the parents are placed already
        wanted = sum(pulls) / len(pulls) if pulls else top + (tallest - height) / 2
        for node in column:
            node.y += min(max(wanted, top), top + tallest - height)
    nodes = [node for column in ordered for node in column]
    return Tree(ordered, titles, (left - COLUMN_GAP + MARGIN, MARGIN + HEAD + tallest + MARGIN), nodes)


def _edge(node: TreeNode) -> str:
    """A curve from the parent's right side to the node's left side, ending in an arrowhead."""
    a = node.parent
    x0, y0, x1, y1 = a.x + a.w / 2, a.cy, node.x - node.w / 2, node.cy
    mid = (x0 + x1) / 2
    color, width = ((PALETTE["highlight"], MARK_WIDTH) if node.marked else
                    (DIM, 1.2) if node.look == "pruned" else (EDGE, 1.3))
    base, head = arrowhead((mid, y1), (x1, y1), color, width)
    dash = ' stroke-dasharray="4 3"' if node.look == "pruned" and not node.marked else ""
    return (f'<path d="M{num(x0)},{num(y0)} C{num(mid)},{num(y0)} {num(mid)},{num(y1)} {num(base[0])},{num(y1)}" '
            f'fill="none" stroke="{color}" stroke-width="{width}"{dash}/>' + head)


def _box(node: TreeNode) -> str:
    x, y, w, h = node.x - node.w / 2, node.y, node.w, node.h
    stroke = (PALETTE["highlight"], MARK_WIDTH) if node.marked else (DIM if node.look == "pruned" else INK, 1)
    dash = ' stroke-dasharray="4 3"' if node.look == "pruned" else ""
    out = (f'<rect x="{num(x)}" y="{num(y)}" width="{num(w)}" height="{num(h)}" rx="6" '
           f'fill="{tint(FILLS[node.look])}" stroke="{stroke[0]}" stroke-width="{stroke[1]}"{dash}/>')
    if node.look == "finished":  # a second border inside the first
        out += (f'<rect x="{num(x + 3)}" y="{num(y + 3)}" width="{num(w - 6)}" height="{num(h - 6)}" rx="4" '
                f'fill="none" stroke="{INK}"/>')
    ink = DIM_INK if node.look == "pruned" else INK
    return out + text_block(node.lines, node.x, y + PAD_Y, color=ink)


def render(tree: Tree, *, title: str, description: str, name: str) -> str:
    """The placed tree as one accessible SVG: column titles, arrows (the marked ones last), then boxes."""
    heads = [text_block([text], column[0].x, MARGIN, bold=True) for text, column in zip(tree.titles, tree.columns)
             if text and column]
    edges = sorted((node for node in tree.nodes if node.parent), key=lambda node: node.marked)
    body = heads + [_edge(node) for node in edges] + [_box(node) for node in tree.nodes]
    return document(body, tree.size, title=title, description=description, name=name)
