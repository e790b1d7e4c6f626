"""Lesson 13: a real pretrained Transformer, all-MiniLM-L6-v2, computed by core (GitHub issue 8).

Text -> WordPiece tokens (core.pretrained.encode) -> core.EncoderOnly with the packaged weights, read through its
hook points (core.hooks.trace) -> attention of every layer and head, head patterns, one head step by step;
several sentences -> mean pooling -> cosine similarity.
"""

import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
from core import pretrained
from core.hooks import trace
from core.lab import probing
from core.model import Embeddings, EncoderOnly
from ui import charts, links, panels, scenes, state
from ui.minilm import minilm
from ui.i18n import md_escape, t
from ui.presentation import prose

DEFAULT_A = "The animal didn't cross the street because it was too tired"
DEFAULT_LIST = ("A man is playing a guitar.", "Someone is playing an instrument.", "The cat sleeps on the sofa.",
                "A kitten is napping on the couch.", "Stock markets fell sharply today.")
MAX_TOKENS, MAX_CHARS, MAX_SENTENCES = 128, 600, 8  # tokens include [CLS] and [SEP]
MOSTLY = 0.5  # a head "mostly" does a pattern when more than half of its attention goes there
MAX_LINES, THRESHOLD = 4000, 0.05  # head view cap
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
    model, tokenizer, lock = minilm()
    with lock:
        vectors = pretrained.sentence_embeddings(model, tokenizer, list(sentences))  # (m, d_model)
    return pretrained.cosine_similarity(vectors).numpy()  # (m, m)


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


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "it_animal": {"real_text_a": "The animal didn't cross the street because it was too tired", "real_text_b": "",
                  "real_layer": 3, "real_head": 1},
    "previous_token": {"real_text_a": "The animal didn't cross the street because it was too tired",
                       "real_text_b": "", "real_layer": 0, "real_head": 2, "real_view_layer": 0,
                       "real_view_heads": [2]},
    "spanish": {"real_text_a": "El animal no cruzó la calle porque estaba demasiado cansado",
                "real_text_b": "The animal didn't cross the street because it was too tired"},
    "paraphrase": {"real_text_a": "How old are you?", "real_text_b": "What is your age?",
                   "real_list": "How old are you?\nWhat is your age?\nWhere do you live?\nHow old is this house?"},
}

def intro() -> None:
    """Title, scenes, the model's equations and its card."""
    st.title(t("real.title"))
    scenes.picker("real", SCENES)
    prose(t("real.intro"))
    st.latex(r"X_0 = \mathrm{LN}(E_{\text{token}} + E_{\text{position}} + E_{\text{type}}) \qquad "
             r"H = \mathrm{LN}(X + \mathrm{MultiHead}(X)) \qquad X' = \mathrm{LN}(H + \mathrm{FFN}_{\mathrm{GELU}}(H))")
    st.latex(r"e = \frac{1}{n}\sum_{i=1}^{n} x_i^{(6)} \qquad \cos(e_a, e_b) = \frac{e_a \cdot e_b}{\lVert e_a\rVert\,"
             r"\lVert e_b\rVert}")
    params = core.count_parameters(model)["total"]
    prose(t("real.card", layers=cfg.n_layers, heads=cfg.n_heads, d_model=cfg.d_model, d_k=cfg.d_k, d_ff=cfg.d_ff,
            vocab=f"{cfg.src_vocab:,}", params=f"{params:,}", max_len=cfg.max_len,
            eps=f"10^{{{round(float(np.log10(cfg.norm_eps)))}}}"))
    st.caption(t("common.cpu_only"))  # one shared read-only copy of the model, on the CPU


def inputs() -> tuple[str, str]:
    """Sentences A and B; a change reruns the whole lesson. Returns the last valid pair."""
    st.subheader(t("real.input_header"))
    links.control(st.text_input, t("real.sentence_a"), help=t("real.sentence_help", max=MAX_CHARS),
                  max_chars=MAX_CHARS, setting="real_text_a")
    links.control(st.text_input, t("real.sentence_b"), help=t("real.sentence_b_help"), max_chars=MAX_CHARS,
                  setting="real_text_b")
    problem = check(ss["real_text_a"], ss["real_text_b"], tokenizer)
    if problem:
        st.warning(problem + " " + t("real.showing_last", text=md_escape(" | ".join(filter(None, ss["real_valid"])))),
                   icon=":material/warning:")
    else:
        ss["real_valid"] = (ss["real_text_a"], ss["real_text_b"])
    return ss["real_valid"]


def token_table(R: dict) -> None:
    """Every WordPiece token with its id, type and word."""
    tokens, n = R["tokens"], len(R["tokens"])
    st.subheader(t("real.tokens_header"))
    prose(t("real.tokens_text", n=n, max=MAX_TOKENS))
    words = ["" if w is None else str(w + 1) for w in R["words"]]
    rows = {t("real.col_token"): tokens, t("real.col_id"): [str(i) for i in R["ids"]],
            t("real.col_type"): [str(i) for i in R["types"]], t("real.col_word"): words}
    st.dataframe(pd.DataFrame(rows, index=[str(i) for i in range(n)]).T, key="real_tokens")
    counts = probing.pieces_per_word(tokens, R["words"], R["types"])
    st.markdown(" ".join(t("real.pieces", sentence="AB"[k], words=w, pieces=p, ratio=p / w)
                         for k, (w, p) in enumerate(counts)))
    unknown = sum(tok == "[UNK]" for tok in tokens)
    if unknown:
        st.info(t("real.unknown", n=unknown), icon=":material/help:")


def model_view(R: dict, labels: list[str], special: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Every layer and head in one picture; hiding [CLS]/[SEP] reruns the lesson (the head view follows it).
    Returns the weights (L, h, m, m) and labels shown."""
    st.subheader(t("real.model_view_header"))
    prose(t("real.model_view_text"))
    hide = links.control(st.toggle, t("real.hide_special"), help=t("real.hide_special_help"),
                         setting="real_hide_special")
    shown_w = probing.without_specials(R["weights"], ~special) if hide else R["weights"]  # (L, h, m, m)
    shown_labels = [lab for lab, s in zip(labels, special) if not s] if hide else labels
    best, top = probing.strongest(R["patterns"])
    notes = [f"{t(PATTERN_NAMES[pretrained.PATTERNS[b]])} ({s_:.2f})" for b, s_ in zip(best, top)]
    st.altair_chart(charts.attention_grid(shown_w, layer_names, head_names, value_title=t("real.weight"),
                                          notes=notes, note_title=t("real.col_strongest"), width=700),
                    width="content")
    st.caption(t("real.model_view_caption_hidden" if hide else "real.model_view_caption", n=len(shown_labels)))
    return shown_w, shown_labels


def special_share(R: dict) -> None:
    """How much of each head's attention goes to [CLS] and [SEP]."""
    st.subheader(t("real.special_header"))
    prose(t("real.special_text"))
    panels.matrix_panel(R["patterns"]["special"], title=t("real.special_title"), key="real_special",  # (L, h)
                        row_labels=layer_names, col_labels=[f"H{k + 1}" for k in range(cfg.n_heads)],
                        scale="weights", max_width=700)


def patterns(R: dict) -> None:
    """Each head's pattern scores, and the head that does each pattern most."""
    st.subheader(t("real.patterns_header"))
    prose(t("real.patterns_text", mostly=MOSTLY))
    table = pattern_table(R["patterns"], layer_names, head_names)
    st.dataframe(table, hide_index=True, key="real_patterns", height=300,
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in table.columns[3:]})
    leaders = [t("real.leader", pattern=t(PATTERN_NAMES[p]), layer=lead[0] + 1, head=lead[1] + 1,
                 score=f"{lead[2]:.4f}") if lead else t("real.leader_none", pattern=t(PATTERN_NAMES[p]))
               for p, lead in probing.leaders(R["patterns"]).items()]
    st.markdown("\n".join(f"- {line}" for line in leaders))


@st.fragment
def head_view(shown_w: np.ndarray, shown_labels: list[str]) -> None:
    """The chosen heads of one layer as lines; picking them reruns this section only."""
    st.subheader(t("real.head_view_header"))
    c1, c2 = st.columns([1, 3])
    with c1:
        view_layer = links.control(st.selectbox, t("real.pick_layer"), range(cfg.n_layers),
                                   format_func=lambda i: layer_names[i], setting="real_view_layer")
    with c2:
        chosen = sorted(links.control(st.multiselect, t("real.pick_heads"), list(range(cfg.n_heads)),
                                      format_func=lambda k: head_names[k], setting="real_view_heads"))
    top_k = max(1, min(5, MAX_LINES // (max(len(chosen), 1) * len(shown_labels))))
    st.caption(t("real.head_view_caption", threshold=THRESHOLD, top_k=top_k))
    if not chosen:
        st.info(t("real.no_heads"), icon=":material/visibility_off:")
        return
    st.altair_chart(charts.head_view(shown_w[view_layer], shown_labels, chosen, head_names, threshold=THRESHOLD,
                                     top_k=top_k, head_title=t("real.col_head"),
                                     text=charts.ChartText(t("real.query"), t("real.key"), t("real.weight"))),
                    width="content")


@st.fragment
def one_head(R: dict, labels: list[str]) -> None:
    """One head's Q, K, scores and weights; picking the layer or head reruns this section only."""
    st.subheader(t("real.one_head_header"))
    c1, c2 = st.columns(2)
    with c1:
        li = links.control(st.selectbox, t("real.pick_layer"), range(cfg.n_layers),
                           format_func=lambda i: layer_names[i], setting="real_layer")
    with c2:
        hi = links.control(st.selectbox, t("real.pick_head"), range(cfg.n_heads), format_func=lambda k: head_names[k],
                           setting="real_head")
    prose(t("real.one_head_text", layer=li + 1, head=hi + 1, d_k=cfg.d_k, lo=hi * cfg.d_k + 1,
            hi=(hi + 1) * cfg.d_k))
    dims = [f"d{j + 1}" for j in range(cfg.d_k)]
    q, k, scores, weights = (R[name][li, hi] for name in ("q", "k", "scores", "weights"))
    for slot, (matrix, name) in zip(st.columns(2, gap="large"), ((q, "q"), (k, "k"))):
        with slot:
            panels.matrix_panel(matrix, title=t(f"real.{name}_title", layer=li + 1, head=hi + 1), key=f"real_{name}",
                                row_labels=labels, col_labels=dims, max_width=280)
    recomputed = q @ k.T / np.sqrt(cfg.d_k)  # (n, n): the scores again, from the Q and K shown
    panels.matrix_panel(scores, title=t("real.scores_title"), key="real_scores", row_labels=labels, col_labels=labels,
                        caption=t("real.scores_caption", d_k=cfg.d_k, root=f"{np.sqrt(cfg.d_k):.4f}",
                                  error=f"{np.abs(recomputed - scores).max():.1e}"))
    panels.matrix_panel(weights, title=t("real.weights_title"), key="real_weights", row_labels=labels,
                        col_labels=labels, scale="weights",
                        caption=t("real.weights_caption", error=f"{np.abs(weights.sum(axis=1) - 1).max():.1e}"))


def valid_list(lines: list[str]) -> str | None:
    """The translated problem with the list of sentences, or None."""
    if len(lines) < 2 or len(lines) > MAX_SENTENCES:
        return t("real.list_count", n=len(lines), max=MAX_SENTENCES)
    if max(map(len, lines)) > MAX_CHARS or max(len(tokenizer.encode(line).ids) for line in lines) > MAX_TOKENS:
        return t("real.list_long", chars=MAX_CHARS, max=MAX_TOKENS)
    return None


@st.fragment
def sentence_similarity() -> None:
    """Mean-pooled sentence vectors and their cosines; editing the list reruns this section only."""
    st.subheader(t("real.similarity_header"))
    prose(t("real.similarity_text"))
    links.control(st.text_area, t("real.sentences"), help=t("real.sentences_help", max=MAX_SENTENCES, chars=MAX_CHARS),
                  height=160, max_chars=MAX_SENTENCES * (MAX_CHARS + 1), setting="real_list")
    lines = [line.strip() for line in ss["real_list"].splitlines() if line.strip()]
    problem = valid_list(lines)
    if problem:
        st.warning(problem, icon=":material/warning:")
    else:
        ss["real_valid_list"] = tuple(lines)
    sentences = list(ss["real_valid_list"])
    names = [f"S{j + 1}" for j in range(len(sentences))]
    st.markdown("\n".join(f"{j + 1}. {md_escape(s_)}" for j, s_ in enumerate(sentences)))
    cosine = similarity(tuple(sentences))
    panels.matrix_panel(cosine, title=t("real.cosine_title"), key="real_cosine", row_labels=names, col_labels=names,
                        scale="diverging", caption=t("real.cosine_caption"))
    off = cosine - 2 * np.eye(len(sentences))  # the diagonal (1) left out
    a, b = np.unravel_index(off.argmax(), off.shape)
    st.markdown(t("real.closest", a=a + 1, b=b + 1, cos=f"{cosine[a, b]:.4f}"))


def closing() -> None:
    panels.show_code(pretrained.load_model, pretrained.map_weights, Embeddings.forward, EncoderOnly.forward,
                     pretrained.encode, pretrained.mean_pool, pretrained.cosine_similarity, pretrained.head_patterns)
    st.subheader(t("real.notice_header"))
    st.markdown(t("real.notice_points"))


settings = state.settings()
ss = st.session_state
for name, value in (("real_text_a", DEFAULT_A), ("real_text_b", ""), ("real_valid", (DEFAULT_A, "")),
                    ("real_hide_special", False), ("real_layer", 0), ("real_head", 0), ("real_view_layer", 0),
                    ("real_view_heads", [2, 5]), ("real_list", "\n".join(DEFAULT_LIST)),
                    ("real_valid_list", DEFAULT_LIST)):
    ss.setdefault(name, value)
model, tokenizer, _ = minilm()
cfg = model.cfg
layer_names = [t("real.layer", i=i + 1) for i in range(cfg.n_layers)]
head_names = [t("real.head", k=k + 1) for k in range(cfg.n_heads)]

intro()
R = analyse(*inputs())
labels = charts.unique_labels(R["tokens"])
special = np.array([tok in pretrained.SPECIAL_TOKENS for tok in R["tokens"]])
token_table(R)
shown_w, shown_labels = model_view(R, labels, special)
special_share(R)
patterns(R)
head_view(shown_w, shown_labels)
one_head(R, labels)
sentence_similarity()
closing()
