"""ui/diagram.py: the server-drawn SVG diagram (lesson 8's encoder-decoder), and ui/tree_diagram.py: lesson 10's
beam search tree, its boxes checked against the core's beam search and a teacher-forced pass. Layouts are checked by
geometry (nothing overlaps, frames hold their items, residual paths leave above their sub-layer and rejoin below it),
the SVG by parsing it (well-formed, text escaped, an accessible name and description)."""
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


# ---- the tree (ui/tree_diagram.py), as lesson 10 draws beam search ------------------------------------------

def beam_of(name: str, text: str, width: int):
    from core.checkpoints import load_checkpoint
    from core.decoding import beam_search
    from core.tasks import BOS_ID, EOS_ID
    from core.train import CHECKPOINT_DIR

    ckpt = load_checkpoint(CHECKPOINT_DIR / f"{name}.pt")
    src = ckpt.task.encode_source(text)  # (1, n_src)
    beam = beam_search(ckpt.model, src, width, ckpt.task.max_tgt_len + 1, BOS_ID, EOS_ID)
    return ckpt, src, beam


def teacher_forced_log_prob(model, src, ids: list[int]) -> float:
    """log P of the tokens `ids` after BOS, summed, from one forward pass (not from the beam search)."""
    import torch

    from core.tasks import BOS_ID
    with torch.no_grad():
        logits = model(src, torch.tensor([[BOS_ID, *ids[:-1]]]))[0]  # (k, V)
    return float(torch.log_softmax(logits, -1).gather(-1, torch.tensor(ids)[:, None]).sum())


BEAMS = [("copy", "1 2 1 12 4 12 6 2 11 4 8 13 3 12 14 13 18 2 1 16", 8), ("addition", "044+239", 4),
         ("parser", "x=4+9", 8)]


@pytest.mark.parametrize("name, text, width", BEAMS, ids=[b[0] for b in BEAMS])
def test_the_beam_tree_draws_every_kept_beam_with_its_token_and_log_prob_without_overlap(name, text, width):
    from core.decoding import beam_paths
    from core.tasks import EOS_ID
    from ui.decoding_views import MAX_DRAWN_STEPS, PRUNED_SHOWN, beam_tree
    from ui.i18n import number
    from ui.tree_diagram import GROUP_GAP, HEAD, MARGIN, ROW_GAP

    ckpt, src, beam = beam_of(name, text, width)
    names, paths = ckpt.task.tgt_vocab.tokens, beam_paths(beam)
    for upto in sorted({1, min(len(beam.steps), MAX_DRAWN_STEPS), len(beam.steps)}):
        tree, description = beam_tree(beam, names, upto)
        lo = max(1, upto - MAX_DRAWN_STEPS + 1)
        assert len(tree.columns) == upto - lo + 2  # the root (or the hypotheses before lo), then one per step
        spans = [(n.x - n.w / 2, n.x + n.w / 2) for n in (col[0] for col in tree.columns)]
        assert all(a[1] < b[0] for a, b in zip(spans, spans[1:]))  # columns side by side
        for col in tree.columns:
            assert all(a.y + a.h < b.y for a, b in zip(col, col[1:]))  # boxes top to bottom, apart
            assert len({n.x for n in col}) == 1 and all(n.parent in tree.columns[tree.columns.index(col) - 1]
                                                         for n in col if n.parent)
        width_px, height_px = tree.size
        stacks = [sum(n.h + ROW_GAP + GROUP_GAP for n in col) for col in tree.columns]
        assert height_px <= 2 * MARGIN + HEAD + max(stacks)  # as tall as its tallest column, however wide the beam
        assert all(0 <= n.x - n.w / 2 and n.x + n.w / 2 <= width_px and 0 <= n.y and n.y + n.h <= height_px
                   for n in tree.nodes)
        for s, col in zip(range(lo, upto + 1), tree.columns[1:]):
            step = beam.steps[s - 1]
            kept, m = paths[s - 1], len(step.token)
            drawn = sorted(n.lines for n in col if n.look != "pruned")
            assert drawn == sorted((names[p[-1]], number(float(step.log_prob[i]), ".2f")) for i, p in kept.items())
            assert sum(n.look == "pruned" for n in col) == min(PRUNED_SHOWN, m - len(kept))
            assert sum(n.look == "finished" for n in col) == sum(p[-1] == EOS_ID for p in kept.values())
            for i, path in kept.items():  # the description names every kept hypothesis and its log P
                assert f"{' '.join(names[x] for x in path)} ({number(float(step.log_prob[i]), '.2f')})" in description
        if lo == 1:  # every box's log P again, from its path read back to the root, by a teacher-forced pass
            for node in tree.nodes[1:]:
                ids, up = [], node
                while up.parent is not None:
                    ids, up = [names.index(up.lines[0]), *ids], up.parent
                expected = teacher_forced_log_prob(ckpt.model, src, ids)
                assert float(node.lines[1]) == pytest.approx(expected, abs=0.0051)
        marked = [n for n in tree.nodes if n.marked]
        best = beam.hypotheses[0].tokens
        assert [n.lines[0] for n in marked if n.parent] == [names[x] for x in best[lo - 1:upto]]  # the best path


def test_the_beam_tree_svg_is_named_and_escaped():
    from ui.decoding_views import tree_svg

    ckpt, _, beam = beam_of("addition", "044+239", 4)
    root = ET.fromstring(tree_svg(beam, ckpt.task.tgt_vocab.tokens, len(beam.steps)))  # "<eos>" escaped
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title.text == "Beam search tree" and root.get("aria-describedby") == desc.get("id")
    texts = ["".join(span.itertext()) for span in root.iter(f"{SVG}tspan")]
    assert "<eos>" in texts and "step 1" in texts
    assert " ".join(ckpt.task.tgt_vocab.tokens[x] for x in beam.hypotheses[0].tokens) in desc.text
