"""Lesson 13's presentation machinery (lessons/13_real_model.py): the checks of the typed sentences, the cached runs
of the shared MiniLM (traced attention, sentence cosines), the token table, the head-pattern table and notes, the
matrix panels with their numbers behind an expander, and one head's Q and K panels."""
import numpy as np
import pandas as pd
import streamlit as st
import torch

from core import pretrained
from core.hooks import trace
from core.lab import probing
from ui import panels, state, tables
from ui.i18n import number, t
from ui.minilm import minilm

MAX_TOKENS, MAX_CHARS, MAX_SENTENCES = 128, 600, 8  # tokens include [CLS] and [SEP]
MOSTLY = 0.5  # a head "mostly" does a pattern when more than half of its attention goes there
PATTERN_NAMES = {"previous": "real.pattern_previous", "next": "real.pattern_next",
                 "same_word": "real.pattern_same_word", "special": "real.pattern_special"}  # core.pretrained.PATTERNS


def check(text_a: str, text_b: str, tokenizer) -> str | None:
    """The translated problem with the input, or None."""
    if not text_a.strip():
        return t("real.empty_b" if text_b.strip() else "real.empty")
    if max(len(text_a), len(text_b)) > MAX_CHARS:
        return t("real.too_many_chars", max=MAX_CHARS, n=max(len(text_a), len(text_b)))
    found = tokenizer.encode(text_a, text_b) if text_b.strip() else tokenizer.encode(text_a)
    if len(found.ids) > MAX_TOKENS:
        return t("real.too_many_tokens", n=len(found.ids), max=MAX_TOKENS)
    if all(tok in pretrained.SPECIAL_TOKENS for tok in found.tokens):
        return t("real.no_tokens")
    return None


def check_list(lines: list[str], tokenizer) -> str | None:
    """The translated problem with the list of sentences, or None."""
    if len(lines) < 2 or len(lines) > MAX_SENTENCES:
        return t("real.list_count", n=len(lines), max=MAX_SENTENCES)
    if max(map(len, lines)) > MAX_CHARS or max(len(tokenizer.encode(line).ids) for line in lines) > MAX_TOKENS:
        return t("real.list_long", chars=MAX_CHARS, max=MAX_TOKENS)
    return None


@st.cache_data(max_entries=32, show_spinner=False)
def analyse(text_a: str, text_b: str) -> dict:
    """Run the model once with every hook recording; the tensors the page shows as numpy, (L, h, ...) stacks."""
    model, tokenizer, lock = minilm()
    batch = pretrained.encode(tokenizer, [(text_a, text_b) if text_b.strip() else text_a])
    with lock, torch.no_grad():
        _, cache = trace(model, lambda: model(batch.ids, batch.types, batch.mask))  # hidden states (1, n, d_model)
    layers = range(model.cfg.n_layers)
    stack = {name: torch.stack([cache[f"encoder.layers.{i}.self_attn.hook_{name}"][0] for i in layers])
             for name in ("q", "k", "scores", "weights")}  # (L, h, n, d_k) or (L, h, n, n)
    patterns = pretrained.head_patterns(stack["weights"], batch.tokens[0], batch.words[0], batch.types[0].tolist())
    return {"tokens": batch.tokens[0], "ids": batch.ids[0].tolist(), "types": batch.types[0].tolist(),
            "words": batch.words[0], **{k: v.numpy() for k, v in stack.items()},
            "patterns": {k: v.numpy() for k, v in patterns.items()}}


@st.cache_data(max_entries=32, show_spinner=False)
def similarity(sentences: tuple[str, ...]) -> np.ndarray:
    """The (m, m) cosine similarities of the sentences' mean-pooled vectors."""
    model, tokenizer, lock = minilm()
    with lock:
        vectors = pretrained.sentence_embeddings(model, tokenizer, list(sentences))  # (m, d_model)
    return pretrained.cosine_similarity(vectors).numpy()  # (m, m)


def token_frame(R: dict) -> None:
    """Every WordPiece token (a column) with its id, type and word (rows)."""
    words = ["" if w is None else str(w + 1) for w in R["words"]]
    rows = {t("real.col_token"): R["tokens"], t("real.col_id"): [str(i) for i in R["ids"]],
            t("real.col_type"): [str(i) for i in R["types"]], t("real.col_word"): words}
    tables.table(pd.DataFrame(rows, index=[str(i) for i in range(len(R["tokens"]))]).T, key="real_tokens")


def strongest_notes(patterns: dict) -> list[str]:
    """Per head, flattened layer by layer: its strongest pattern and that pattern's score."""
    best, top = probing.strongest(patterns)
    return [f"{t(PATTERN_NAMES[pretrained.PATTERNS[b]])} ({number(s, '.2f')})" for b, s in zip(best, top)]


def pattern_table(patterns: dict, layer_names: list[str], head_names: list[str]) -> pd.DataFrame:
    """One row per head: its four scores, the strongest pattern and whether it is above MOSTLY."""
    scores = probing.pattern_scores(patterns)  # (L * h, P)
    best, top = probing.strongest(patterns)
    label = [t(PATTERN_NAMES[pretrained.PATTERNS[b]]) if s > MOSTLY else t("real.pattern_mixed")
             for b, s in zip(best, top)]
    names = {"layer": [lay for lay in layer_names for _ in head_names], "head": head_names * len(layer_names)}
    df = pd.DataFrame({t("real.col_layer"): names["layer"], t("real.col_head"): names["head"],
                       t("real.col_mostly"): label, t("real.col_score"): top})
    for k, p in enumerate(pretrained.PATTERNS):
        if np.isfinite(scores[:, k]).any():  # a pattern this text cannot show (no word of 2+ pieces...) is left out
            df[t(PATTERN_NAMES[p])] = scores[:, k]
    return df


def pattern_box(patterns: dict, layer_names: list[str], head_names: list[str]) -> None:
    """Every head's row of `pattern_table`, behind an expander that builds it only while open: a plain table
    draws its cells one by one (this 72 x 7 table cost the browser ~0.6 s of CPU at every cold open)."""
    box = st.expander(t("real.patterns_all", n=len(layer_names) * len(head_names)), icon=":material/table:",
                      key="real_patterns_open", on_change="rerun")
    if box.open:
        with box:
            tables.table(pattern_table(patterns, layer_names, head_names), hide_index=True, key="real_patterns",
                         height=300)


def leader_lines(patterns: dict) -> str:
    """A Markdown list: for each pattern, the head that does it most, or that the text has no such case."""
    leaders = [t("real.leader", pattern=t(PATTERN_NAMES[p]), layer=lead[0] + 1, head=lead[1] + 1, score=lead[2])
               if lead else t("real.leader_none", pattern=t(PATTERN_NAMES[p]))
               for p, lead in probing.leaders(patterns).items()]
    return "\n".join(f"- {line}" for line in leaders)


def qk_panels(q: np.ndarray, k: np.ndarray, labels: list[str], layer: int, head: int) -> None:
    """One head's queries and keys (n, d_k) side by side; `layer` and `head` count from 1."""
    dims = [f"d{j + 1}" for j in range(q.shape[1])]
    for slot, (matrix, name) in zip(st.columns(2, gap="large"), ((q, "q"), (k, "k"))):
        with slot:
            matrix_panel(matrix, title=t(f"real.{name}_title", layer=layer, head=head), key=f"real_{name}",
                         row_labels=labels, col_labels=dims, max_width=280)


def matrix_panel(matrix: np.ndarray, *, title: str, key: str, **kwargs) -> None:
    """panels.matrix_panel, its numbers (with the sidebar's "show the numbers" on) behind an expander of their own
    that builds the table only while it is open: six grids drawn at once cost the browser about 0.4 s per change,
    and the learner reads one at a time. The panel's CSV download has every number either way."""
    panels.matrix_panel(matrix, title=title, key=key, show_numbers=False, **kwargs)
    with st.container():  # comes and goes with the setting: the sections below keep their places (no redraw)
        if not state.current().show_numbers:
            return
        box = st.expander(t("real.numbers_of", title=title), icon=":material/table:", key=f"{key}_numbers_open",
                          on_change="rerun")
        if box.open:
            with box:
                panels.numbers_table(matrix, kwargs["row_labels"], kwargs["col_labels"], key=f"{key}_numbers")
