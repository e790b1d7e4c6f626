"""Lesson 13: a real pretrained Transformer, all-MiniLM-L6-v2, computed by core (GitHub issue 8).

Text -> WordPiece tokens (core.pretrained.encode) -> core.EncoderOnly with the packaged weights, read through its
hook points (core.hooks.trace). Three parts, one on screen at a time (ui/parts.py, `PARTS`): the whole model (tokens,
every layer and head, the share to [CLS] and [SEP], head patterns); one layer's heads as lines and one head step by
step; several sentences -> mean pooling -> cosine similarity. The first two start from sentences A and B. The input
checks, cached runs, token and pattern tables and one head's Q and K panels live in ui/real_model_views.py.
"""
import numpy as np
import streamlit as st

import core
from core import pretrained
from core.lab import probing
from core.model import Embeddings, EncoderOnly
from ui import charts, links, panels, parts, real_model_views as views, scenes, state
from ui.i18n import md_escape, t
from ui.minilm import minilm
from ui.presentation import prose
from ui.real_model_views import MAX_CHARS, MAX_SENTENCES, MAX_TOKENS, MOSTLY

DEFAULT_A = "The animal didn't cross the street because it was too tired"
DEFAULT_LIST = ("A man is playing a guitar.", "Someone is playing an instrument.", "The cat sleeps on the sofa.",
                "A kitten is napping on the couch.", "Stock markets fell sharply today.")
MAX_LINES, THRESHOLD = 4000, 0.05  # head view cap
PARTS = ("model", "head", "similarity")  # the sub-lessons (ui/parts.py), label key real.part_of.<code>

SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "it_animal": {"real_text_a": "The animal didn't cross the street because it was too tired", "real_text_b": "",
                  "real_layer": 3, "real_head": 1, "real_part": "head"},
    "previous_token": {"real_text_a": "The animal didn't cross the street because it was too tired",
                       "real_text_b": "", "real_layer": 0, "real_head": 2, "real_view_layer": 0,
                       "real_view_heads": [2], "real_part": "head"},
    "spanish": {"real_text_a": "El animal no cruzó la calle porque estaba demasiado cansado",
                "real_text_b": "The animal didn't cross the street because it was too tired", "real_part": "model"},
    "paraphrase": {"real_text_a": "How old are you?", "real_text_b": "What is your age?",
                   "real_list": "How old are you?\nWhat is your age?\nWhere do you live?\nHow old is this house?",
                   "real_part": "similarity"},
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
            vocab=cfg.src_vocab, params=params, max_len=cfg.max_len,
            eps=f"10^{{{round(float(np.log10(cfg.norm_eps)))}}}"))
    st.caption(t("common.cpu_only"))  # one shared read-only copy of the model, on the CPU


def inputs() -> tuple[dict, list[str], np.ndarray]:
    """Sentences A and B, which the first two parts start from; a change reruns the whole lesson. Returns the run
    of the last valid pair, its token labels and which tokens are [CLS] or [SEP]."""
    st.subheader(t("real.input_header"))
    links.control(st.text_input, t("real.sentence_a"), help=t("real.sentence_help", max=MAX_CHARS),
                  max_chars=MAX_CHARS, setting="real_text_a")
    links.control(st.text_input, t("real.sentence_b"), help=t("real.sentence_b_help"), max_chars=MAX_CHARS,
                  setting="real_text_b")
    problem = views.check(ss["real_text_a"], ss["real_text_b"], tokenizer)
    if problem:
        st.warning(problem + " " + t("real.showing_last", text=md_escape(" | ".join(filter(None, ss["real_valid"])))),
                   icon=":material/warning:")
    else:
        ss["real_valid"] = (ss["real_text_a"], ss["real_text_b"])
    R = views.analyse(*ss["real_valid"])
    return R, charts.unique_labels(R["tokens"]), np.array([tok in pretrained.SPECIAL_TOKENS for tok in R["tokens"]])


def shown(R: dict, labels: list[str], special: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """The weights (L, h, m, m) and labels the pictures show: [CLS] and [SEP] hidden (rows renormalised) or not."""
    if not ss["real_hide_special"]:
        return R["weights"], labels
    return probing.without_specials(R["weights"], ~special), [lab for lab, s in zip(labels, special) if not s]


def token_table(R: dict) -> None:
    """Every WordPiece token with its id, type and word."""
    tokens = R["tokens"]
    st.subheader(t("real.tokens_header"))
    prose(t("real.tokens_text", n=len(tokens), max=MAX_TOKENS))
    views.token_frame(R)
    counts = probing.pieces_per_word(tokens, R["words"], R["types"])
    st.markdown(" ".join(t("real.pieces", sentence="AB"[k], words=w, pieces=p, ratio=p / w)
                         for k, (w, p) in enumerate(counts)))
    unknown = sum(tok == "[UNK]" for tok in tokens)
    if unknown:
        st.info(t("real.unknown", n=unknown), icon=":material/help:")


def hide_toggle() -> bool:
    """Hide [CLS] and [SEP] in the pictures: one setting, drawn in the model view and in the head view."""
    return links.control(st.toggle, t("real.hide_special"), help=t("real.hide_special_help"),
                         setting="real_hide_special")


@st.fragment
def model_view(R: dict, labels: list[str], special: np.ndarray) -> None:
    """Every layer and head in one picture; hiding [CLS]/[SEP] reruns this section only."""
    st.subheader(t("real.model_view_header"))
    prose(t("real.model_view_text"))
    hide = hide_toggle()
    shown_w, shown_labels = shown(R, labels, special)  # (L, h, m, m)
    st.altair_chart(charts.attention_grid(shown_w, layer_names, head_names, value_title=t("real.weight"),
                                          notes=views.strongest_notes(R["patterns"]),
                                          note_title=t("real.col_strongest"), width=700),
                    width="content")
    st.caption(t("real.model_view_caption_hidden" if hide else "real.model_view_caption", n=len(shown_labels)))


def special_share(R: dict) -> None:
    """How much of each head's attention goes to [CLS] and [SEP]."""
    st.subheader(t("real.special_header"))
    prose(t("real.special_text"))
    with st.container():  # its numbers come and go with the setting: the sections below keep their places
        views.matrix_panel(R["patterns"]["special"], title=t("real.special_title"), key="real_special",  # (L, h)
                           row_labels=layer_names, col_labels=[f"H{k + 1}" for k in range(cfg.n_heads)],
                           scale="weights", max_width=700)


def patterns(R: dict) -> None:
    """Each head's pattern scores, and the head that does each pattern most."""
    st.subheader(t("real.patterns_header"))
    prose(t("real.patterns_text", mostly=MOSTLY))
    st.markdown(views.leader_lines(R["patterns"]))
    views.pattern_box(R["patterns"], layer_names, head_names)


@st.fragment
def head_view(R: dict, labels: list[str], special: np.ndarray) -> None:
    """The chosen heads of one layer as lines; picking them, or hiding [CLS]/[SEP], reruns this section only."""
    st.subheader(t("real.head_view_header"))
    c1, c2 = st.columns([1, 3])
    with c1:
        view_layer = links.control(st.selectbox, t("real.pick_layer"), range(cfg.n_layers),
                                   format_func=lambda i: layer_names[i], setting="real_view_layer")
    with c2:
        chosen = sorted(links.control(st.multiselect, t("real.pick_heads"), list(range(cfg.n_heads)),
                                      format_func=lambda k: head_names[k], setting="real_view_heads"))
    hide_toggle()
    shown_w, shown_labels = shown(R, labels, special)  # (L, h, m, m)
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
    q, k, scores, weights = (R[name][li, hi] for name in ("q", "k", "scores", "weights"))  # (n, d_k) or (n, n)
    views.qk_panels(q, k, labels, li + 1, hi + 1)
    recomputed = q @ k.T / np.sqrt(cfg.d_k)  # (n, n): the scores again, from the Q and K shown
    with st.container():  # its numbers come and go with the setting: the weights below keep their place
        views.matrix_panel(scores, title=t("real.scores_title"), key="real_scores", row_labels=labels,
                           col_labels=labels, scale="scores",
                           caption=t("real.scores_caption", d_k=cfg.d_k, root=float(np.sqrt(cfg.d_k)),
                                     error=float(np.abs(recomputed - scores).max())))
    views.matrix_panel(weights, title=t("real.weights_title"), key="real_weights", row_labels=labels,
                       col_labels=labels, scale="weights",
                       caption=t("real.weights_caption", error=float(np.abs(weights.sum(axis=1) - 1).max())))


@st.fragment
def sentence_similarity() -> None:
    """Mean-pooled sentence vectors and their cosines; editing the list reruns this section only."""
    st.subheader(t("real.similarity_header"))
    prose(t("real.similarity_text"))
    links.control(st.text_area, t("real.sentences"), help=t("real.sentences_help", max=MAX_SENTENCES, chars=MAX_CHARS),
                  height=160, max_chars=MAX_SENTENCES * (MAX_CHARS + 1), setting="real_list")
    lines = [line.strip() for line in ss["real_list"].splitlines() if line.strip()]
    problem = views.check_list(lines, tokenizer)
    if problem:
        st.warning(problem, icon=":material/warning:")
    else:
        ss["real_valid_list"] = tuple(lines)
    sentences = list(ss["real_valid_list"])
    names = [f"S{j + 1}" for j in range(len(sentences))]
    st.markdown("\n".join(f"{j + 1}. {md_escape(s_)}" for j, s_ in enumerate(sentences)))
    cosine = views.similarity(tuple(sentences))  # (m, m)
    views.matrix_panel(cosine, title=t("real.cosine_title"), key="real_cosine", row_labels=names, col_labels=names,
                       scale="diverging", caption=t("real.cosine_caption"))
    a, b = probing.closest_pair(cosine)
    st.markdown(t("real.closest", a=a + 1, b=b + 1, cos=float(cosine[a, b])))


def closing() -> None:
    panels.show_code(pretrained.load_model, pretrained.map_weights, Embeddings.forward, EncoderOnly.forward,
                     pretrained.encode, pretrained.mean_pool, pretrained.cosine_similarity, pretrained.head_patterns)
    st.subheader(t("real.notice_header"))
    st.markdown(t("real.notice_points"))


def model_part() -> None:
    """Part 1: the tokens, every layer and head, the share of attention to [CLS] and [SEP], the head patterns."""
    R, labels, special = inputs()
    token_table(R)
    model_view(R, labels, special)
    special_share(R)
    patterns(R)


def head_part() -> None:
    """Part 2: the chosen heads of one layer as lines, then one head step by step."""
    R, labels, special = inputs()
    head_view(R, labels, special)
    one_head(R, labels)


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
lang = settings.lang  # the format function gets it now: Streamlit may call it outside the run

intro()
part = parts.pick("real_part", PARTS, label=t("real.part"), format_func=lambda p: t(f"real.part_of.{p}", lang))
{"model": model_part, "head": head_part, "similarity": sentence_similarity}[part]()
closing()
