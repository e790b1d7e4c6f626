"""The welcome page: what the app teaches, the encoder-decoder diagram with a door into every lesson, the lesson
map (every page of ui.lessons.PAGES with its one-line summary `<section>.summary`) and how to use the app.

Every door is an st.page_link: a click switches page inside the same session, so settings, edits and trained
models stay. (Graphviz's URL attribute does give clickable boxes in st.graphviz_chart, but a click there loads
the app afresh in a new session, and everything the learner did is gone.) Run on its own, without app.py's
navigation, the lessons are not registered pages: their names are shown without links, with a note saying why.
"""
from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from ui import links, state
from ui.charts import PALETTE
from ui.i18n import t
from ui.lessons import PAGES, SECTIONS

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()  # "lessons/00_welcome.py"
LESSONS = {path: (title_key, icon) for _section, path, title_key, icon, _url in PAGES}
MAP_COLUMNS = 3
# The diagram's boxes: (kind, text key, lesson). The kind picks the colour, as on the lessons' own pictures.
COLORS = {"embed": PALETTE["input"], "attn": PALETTE["query"], "cross": PALETTE["key"], "norm": PALETTE["highlight"],
          "ff": PALETTE["value"], "out": PALETTE["output"], "layer": PALETTE["masked"]}
EMBED = ("embed", "welcome.box_embed", "lessons/05_positional_encoding.py")
ADD_NORM = ("norm", "welcome.box_add_norm", "lessons/06_layer_norm.py")
FEED_FORWARD = ("ff", "welcome.box_ff", "lessons/07_blocks.py")
ENCODER_LAYER = (("attn", "welcome.box_self_attn", "lessons/04_multi_head.py"), ADD_NORM, FEED_FORWARD, ADD_NORM)
DECODER_LAYER = (("attn", "welcome.box_masked_attn", "lessons/03_masks.py"), ADD_NORM,
                 ("cross", "welcome.box_cross_attn", "lessons/08_architecture.py"), ADD_NORM, FEED_FORWARD, ADD_NORM)
GENERATOR = (("out", "welcome.box_generator", "lessons/08_architecture.py"),
             ("out", "welcome.box_decoding", "lessons/10_decoding.py"))
INSIDE = (("attn", "welcome.box_similarity", "lessons/01_similarity.py"),
          ("attn", "welcome.box_qkv", "lessons/02_attention.py"))
AROUND = (("out", "welcome.box_train", "lessons/09_training.py"),
          ("norm", "welcome.box_exercises", "lessons/11_exercises.py"),
          ("embed", "welcome.box_classifier", "lessons/12_classifier.py"),
          ("embed", "welcome.box_real", "lessons/13_real_model.py"))


def style() -> str:
    """CSS for the diagram: larger text for a projector, a coloured edge and tint per kind of box."""
    link = "[data-testid='stPageLink']"
    rules = [f".st-key-welcome_diagram {link} p {{ font-size: 1.1rem; font-weight: 600; line-height: 1.35; }}",
             f".st-key-welcome_map {link} p {{ font-size: 1.05rem; font-weight: 600; }}",
             f".st-key-welcome_diagram {link} a {{ justify-content: center; }}",
             (f":is(.st-key-welcome_diagram, .st-key-welcome_map) {link} :is(span, p) "  # long names wrap
              "{ white-space: normal; overflow: visible; text-overflow: clip; }")]
    rules += [(f"[class*='st-key-welcome_box_{kind}_'] {{ border-left: 0.4rem solid {color}; "
               f"background: {color}24; border-radius: 0.5rem; padding: 0.1rem 0.4rem; }}")
              for kind, color in COLORS.items()]
    return "<style>\n" + "\n".join(rules) + "\n</style>"


def start_button() -> None:
    """A button that opens the first lesson, above the fold on a 1366x768 projector."""
    _, path, title_key, _, _ = PAGES[1]  # PAGES[0] is this page
    if st.button(t("welcome.start", title=t(title_key)), type="primary", icon=":material/play_arrow:",
                 key="welcome_start"):
        st.switch_page(str(ROOT / path))


def lesson_number(path: str) -> int:
    return int(Path(path).name.split("_")[0])


def lesson_link(path: str, label: str, icon: str | None = None) -> bool | None:
    """A link that opens the lesson in this session: True. Otherwise the label alone, and None if the lesson is
    not in PAGES, False if it is but no navigation has registered it (this page runs on its own)."""
    found = None
    if path in LESSONS:
        title_key, page_icon = LESSONS[path]
        try:
            st.page_link(str(ROOT / path), label=label, icon=icon or page_icon, width="stretch",
                         help=t("welcome.open", title=t(title_key)))
            return True
        except StreamlitPageNotFoundError:
            found = False
    st.markdown(f"**{label}**")
    return found


def boxes(place: str, specs) -> list[bool | None]:
    """One coloured box per (kind, text key, lesson), stacked, each labelled "text · lesson number"."""
    linked = []
    for i, (kind, text_key, path) in enumerate(specs):
        with st.container(key=f"welcome_box_{kind}_{place}_{i}"):
            linked.append(lesson_link(path, f"{t(text_key)} · {lesson_number(path)}"))
    return linked


def arrow(text: str = "↓") -> None:
    st.markdown(f":gray[{text}]", text_alignment="center")


def stack(place: str, name_key: str, tokens_key: str, layer_key: str, layer) -> list[bool | None]:
    """One side of the diagram: its name, its input, the embedding, and the layer repeated N times."""
    st.markdown(f"#### {t(name_key)}", text_alignment="center")
    st.caption(t(tokens_key), text_alignment="center")
    linked = boxes(f"{place}_in", [EMBED])
    arrow()
    with st.container(border=True):
        linked += boxes(f"{place}_layer", [("layer", layer_key, "lessons/07_blocks.py")])
        linked += boxes(place, layer)
    return linked


def diagram() -> list[bool | None]:
    with st.container(key="welcome_diagram"):
        encoder, decoder = st.columns(2, gap="large")
        with encoder:
            linked = stack("enc", "welcome.encoder", "welcome.src_tokens", "welcome.box_enc_layer", ENCODER_LAYER)
            arrow(t("welcome.memory"))
        with decoder:
            linked += stack("dec", "welcome.decoder", "welcome.tgt_tokens", "welcome.box_dec_layer", DECODER_LAYER)
            arrow()
            linked += boxes("head", GENERATOR)
        for place, header_key, specs in (("inside", "welcome.inside_header", INSIDE),
                                         ("around", "welcome.around_header", AROUND)):
            st.markdown(f"#### {t(header_key)}", text_alignment="center")
            for column, spec in zip(st.columns(len(specs)), specs):
                with column:
                    linked += boxes(f"{place}_{lesson_number(spec[2])}", [spec])
    return linked


def lesson_map() -> list[bool | None]:
    """Every page of PAGES but this one, section by section, as cards: its link and its one-line summary."""
    linked = []
    for section in SECTIONS:
        lessons = [(path, title_key, icon) for page_section, path, title_key, icon, _url in PAGES
                   if page_section == section and path != HERE]
        if not lessons:
            continue
        st.subheader(t(f"nav.{section}"))
        for start in range(0, len(lessons), MAP_COLUMNS):
            row = lessons[start:start + MAP_COLUMNS]
            for column, (path, title_key, icon) in zip(st.columns(MAP_COLUMNS), row):
                with column.container(border=True, height="stretch"):
                    linked.append(lesson_link(path, t(title_key), icon))
                    st.markdown(t(f"{title_key.split('.')[0]}.summary"))
    return linked


settings = state.settings()
st.html(style())
st.title(t("welcome.title"))
standalone_note = st.empty()
st.markdown(t("welcome.intro"))
start_button()
st.markdown(t("welcome.audience"))

st.header(t("welcome.diagram_header"))
st.markdown(t("welcome.diagram_text"))
linked = diagram()
st.caption(t("welcome.diagram_caption"))

st.header(t("welcome.map_header"))
st.markdown(t("welcome.map_text"))
with st.container(key="welcome_map"):
    linked += lesson_map()

with st.container(border=True):
    st.subheader(t("welcome.howto_header"))
    st.markdown(t("welcome.howto_points", show_numbers=t("sidebar.show_numbers"),
                  lesson_settings=t("sidebar.lesson_settings"), show_code=t("common.show_code")))
    st.markdown(t("welcome.link_label"))
    st.code(links.view_url(), language=None, wrap_lines=True)

if False in linked:
    standalone_note.info(t("welcome.standalone"), icon=":material/link_off:")
