"""ui/diagram.py: the server-drawn SVG diagram (lesson 8's encoder-decoder). Its layout is checked by geometry
(nothing overlaps, frames hold their items, residual paths leave above their sub-layer and rejoin below it), its
SVG by parsing it (well-formed, text escaped, an accessible name and description)."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from ui.diagram import (ADD_R, FRAME_PAD, LANE, LINE, Branch, Column, Frame, Link, Node, layout, render, text_width,
                        wrap)

SVG = "{http://www.w3.org/2000/svg}"


def sublayer(name: str, pre: bool) -> list:
    add, norm = Node(kind="add"), Node(("LayerNorm",))
    return [Branch(add), norm, Node((name, "(batch, 8, 64)")), add] if pre else [Branch(add), Node((name,)), add, norm]


def two_columns(pre: bool) -> tuple[Column, Column, Node, Node]:
    memory, cross = Node(("memory", "(batch, 8, 64)"), "#D55E00"), Node(("cross-attention <Q> & K, V",), "#0072B2")
    left = Column([Node(("source tokens",)), Frame(("encoder layer × 6", "2 LayerNorms: 256 parameters"),
                                                   [*sublayer("self-attention", pre), *sublayer("FFN", pre)]),
                   memory], lane="left")
    right = Column([Node(("target tokens",)), Frame(("decoder layer × 6",), [*sublayer("masked", pre), cross,
                                                                          *sublayer("FFN", pre)]),
                    Node(("softmax",))], lane="right")
    return left, right, memory, cross


def boxes(col: Column) -> list[tuple[float, float, float, float]]:
    return [(n.x - n.w / 2, n.y, n.x + n.w / 2, n.y + n.h) for n in col.nodes()]


@pytest.mark.parametrize("pre", [True, False])
def test_items_go_down_the_spine_inside_their_frames_without_overlap(pre):
    left, right, *_ = two_columns(pre)
    width, height = layout([left, right])
    for col in (left, right):
        spans = boxes(col)
        assert all(a[3] < b[1] for a, b in zip(spans, spans[1:]))  # each box starts below the previous one
        assert all(0 <= x0 and x1 <= width and y1 <= height for x0, _, x1, y1 in spans)
        assert {n.x for n in col.nodes()} == {col.x}  # one spine
        frame = col.frames()[0]
        inside = [n for n in frame.items if isinstance(n, Node)]
        assert all(frame.top + len(frame.lines) * LINE <= n.y and n.y + n.h <= frame.bottom for n in inside)
        frame_left = col.x - col.box_w / 2 - (LANE if col.sign < 0 else 0) - FRAME_PAD
        assert all(frame_left <= n.x - n.w / 2 and n.x + n.w / 2 <= frame_left + col.width for n in inside)
    assert max(x1 for x0, _, x1, _ in boxes(left)) < min(x0 for x0, *_ in boxes(right))  # columns side by side


def test_a_residual_path_leaves_above_its_sub_layer_and_rejoins_at_the_sum_below_it():
    for pre in (True, False):
        left, right, *_ = two_columns(pre)
        layout([left, right])
        for col in (left, right):
            flat = col.flat()
            for i, item in enumerate(flat):
                if isinstance(item, Branch):
                    between = flat[i + 1:flat.index(item.to)]
                    assert between and all(item.y < n.y for n in between)
                    assert item.to.kind == "add" and all(n.y + n.h < item.to.y for n in between)


def test_shift_moves_a_column_from_a_node_on():
    left, right, memory, cross = two_columns(True)
    layout([left, right])
    before = {id(n): n.y for n in left.nodes()}
    top_frame = left.frames()[0].top
    left.shift(40, start=memory)
    assert memory.y == before[id(memory)] + 40 and left.frames()[0].top == top_frame
    assert all(n.y == before[id(n)] for n in left.nodes() if n is not memory)
    right.shift(25)
    assert right.frames()[0].top > top_frame


def test_wrap_keeps_lines_within_the_width_and_every_word():
    text = "3 LayerNorms, 3 residual connections: 1,234,567 parameters"
    lines = wrap(text, 200)
    assert " ".join(lines) == text and len(lines) > 1
    assert all(text_width(line, 13.5) <= 200 for line in lines)
    assert wrap("unbreakable" * 5, 50) == ["unbreakable" * 5]


def test_render_is_well_formed_escaped_and_named_for_screen_readers():
    left, right, memory, cross = two_columns(True)
    size = layout([left, right])
    svg = render([left, right], [Link(memory, cross, "K, V")], size, title="A <title>", description="desc & more",
                 name="test-diagram")
    root = ET.fromstring(svg)  # well-formed XML, so "<Q> & K" was escaped
    assert root.get("role") == "img"
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert (title.text, desc.text) == ("A <title>", "desc & more")
    assert root.get("aria-labelledby") == title.get("id") and root.get("aria-describedby") == desc.get("id")
    texts = ["".join(span.itertext()) for span in root.iter(f"{SVG}tspan")]
    assert "cross-attention <Q> & K, V" in texts and "K, V" in texts
    width = root.get("viewBox").split()[2]
    assert f"max-width: {width}px" in root.get("style")  # scales down to its column, never up
    sums = [c for c in root.iter(f"{SVG}circle") if c.get("r") == str(ADD_R)]
    assert len(sums) == 2 + 2  # one ⊕ per residual sub-layer (the cross-attention here has none)
