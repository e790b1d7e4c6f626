"""Presentation mode: the same lessons, readable on a projector at the back of a lecture room.

One shared setting, ``present`` (the sidebar toggle, or ``?present=1`` in a link; see ui.state). When it is on:
- `style` (called by app.py on every run, before the lesson) adds one ``<style>`` that zooms the lesson area:
  text, LaTeX, widgets, tables and charts grow together, by one factor, so their proportions stay as designed;
- `prose` folds a long explanatory paragraph into a collapsed "Read the explanation" expander, leaving the
  titles, equations, controls, figures and "what to notice" on screen;
- `lesson_buttons` (called by app.py after the lesson) draws Previous / Next, pressed by the arrow keys too
  (except where a slider, a field or a table uses those keys itself).

Why CSS and not an Altair config: the builders in ui/charts/ set every font size explicitly (12 to 16 px), and a
Vega-Lite config only fills in values a chart leaves unset, so a config would change nothing. Streamlit draws
Vega-Lite as SVG, so zoomed charts stay sharp; the zoom also reaches st.dataframe (a canvas grid) and KaTeX.
"""
from __future__ import annotations

from collections.abc import Sequence

import streamlit as st

from . import parts
from .i18n import t

KEY = "cfg_present"  # the canonical session_state key (ui.state.key("present"))
ZOOM, ZOOM_WIDE = 1.25, 1.4  # the lesson area's scale; the larger one on screens at least WIDE px wide
WIDE = 1800
_AREA = '[data-testid="stMainBlockContainer"]'
# The side padding shrinks so that the zoom goes to the content. A zoomed column is narrower in CSS pixels, so
# anything of a fixed width could stick out of it: a display equation scrolls sideways instead (KaTeX's own
# advice), a chart or diagram shrinks to fit (SVG keeps its aspect). Streamlit sizes a full-width table from its
# container's width on screen, which the zoom has already enlarged; capped at 100%, the grid measures itself again.
CSS = f"""
{_AREA} {{ zoom: {ZOOM}; padding: 3rem 2rem 6rem; }}
@media (min-width: {WIDE}px) {{ {_AREA} {{ zoom: {ZOOM_WIDE}; }} }}
{_AREA} .katex-display {{ overflow-x: auto; overflow-y: hidden; padding: 0.1em 0; }}
{_AREA} [data-testid="stVegaLiteChart"] svg {{ max-width: 100%; height: auto; }}
{_AREA} [data-testid="stDataFrame"] {{ max-width: 100%; }}
{_AREA} [data-testid="stDataFrame"] > div {{ max-width: 100% !important; }}
"""
# Streamlit cuts a widget's, metric's or button's label to one line with an ellipsis; in a narrow column on a
# 1280-pixel projector that hid the end of labels ("Varianza de las puntuaciones"). In the lesson area they wrap.
LABELS = f"""
{_AREA} .stMarkdownEllipsis, {_AREA} .stMarkdownEllipsis * {{
  white-space: normal !important; overflow: visible !important; text-overflow: clip !important; }}
"""
# Streamlit's shortcuts skip keys typed into inputs (a slider's thumb and a radio are inputs too) but not keys
# pressed in a table (st.dataframe / st.data_editor move between cells with the arrows) or in tabs and menus.
# Streamlit listens on the document; this stops those arrow keys at <body>, after the widget has used them.
OWN_ARROWS = ('[data-testid="stDataFrame"], [role="grid"], [role="tablist"], [role="listbox"], [role="menu"], '
              '[role="tree"]')
KEY_GUARD = f"""<script>
if (!window.presentArrowGuard) {{
  window.presentArrowGuard = true;
  document.body.addEventListener("keydown", (event) => {{
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    if (event.composedPath().some((el) => el instanceof Element && el.matches('{OWN_ARROWS}'))) {{
      event.stopPropagation();
    }}
  }});
}}
</script>"""


def on() -> bool:
    """Whether presentation mode is on in this session."""
    return bool(st.session_state.get(KEY, False))


def style() -> None:
    """Add the stylesheet of every run (`LABELS`) and, when the mode is on, the presentation one (style-only HTML
    takes no room on the page)."""
    st.html(f"<style>{LABELS}{CSS if on() else ''}</style>")


def prose(text: str) -> None:
    """Draw an explanatory paragraph (markdown): as it is, or folded in a collapsed expander in presentation mode.

    Use it for the long explanations only; equations, results with live numbers, captions, warnings and the
    "what to notice" points stay as they are. Do not call it inside an expander (Streamlit cannot nest them)."""
    if on():
        with st.expander(t("present.read"), icon=":material/menu_book:"):
            st.markdown(text)
    else:
        st.markdown(text)


def neighbours(current: object, lessons: Sequence[object]) -> tuple[object | None, object | None]:
    """The lessons before and after `current` in `lessons` (None at either end, and when it is not among them).
    Pages are compared by their url path, which is unique in an app."""
    paths = [page.url_path for page in lessons]
    if current.url_path not in paths:
        return None, None
    i = paths.index(current.url_path)
    return (lessons[i - 1] if i > 0 else None), (lessons[i + 1] if i + 1 < len(lessons) else None)


def _go_to_part(setting: str, part: str) -> None:
    st.session_state[setting] = part


def _button(side: str, target: st.Page | None, offset: int, **kwargs) -> None:
    """Previous or Next: to the neighbouring sub-lesson while there is one, else to the neighbouring lesson."""
    shortcut = "Left" if offset < 0 else "Right"
    sibling = parts.step(offset)
    if sibling is not None:
        setting, part = sibling
        # A key of its own: the click is still True in the rerun it causes, when the last part may be open and the
        # lesson's button drawn instead; with one key, that button would take the click and leave the lesson.
        st.button(t(f"present.{side}", title=parts.label_of(setting, part)), key=f"present_{side}_part",
                  shortcut=shortcut, on_click=_go_to_part, args=sibling, **kwargs)
    elif target is not None and st.button(t(f"present.{side}", title=target.title), key=f"present_{side}",
                                          shortcut=shortcut, **kwargs):
        st.switch_page(target)


def lesson_buttons(current: st.Page, lessons: Sequence[st.Page]) -> None:
    """Previous / Next at the bottom of the lesson, in presentation mode; the Left / Right arrow keys press them.
    In a lesson with sub-lessons (ui/parts.py) they walk its parts first.

    `lessons` are the app's pages in the navigation's order. Streamlit ignores a button's shortcut while the focus
    is in a text field; outside presentation mode the sidebar is the way between lessons and the arrow keys keep
    their usual meaning."""
    if not on():
        return
    before, after = neighbours(current, lessons)
    st.divider()
    left, right = st.columns(2, vertical_alignment="center")
    with left:
        _button("previous", before, -1, icon=":material/arrow_back:")
    with right, st.container(horizontal_alignment="right"):
        _button("next", after, 1, type="primary", icon=":material/arrow_forward:", icon_position="right")
    st.caption(t("present.keys"))
    st.html(KEY_GUARD, unsafe_allow_javascript=True)
