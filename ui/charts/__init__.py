"""Chart builders: arrays and labels in, an ``alt.Chart`` or an SVG (``SvgChart``: heatmaps of small matrices, line
charts, bars) out. No Streamlit elements here.

A small package by kind; everything a lesson or a ui module uses is here as ``charts.<name>``:
- engine.py: charts drawn without schema validation, the finish every chart gets (size, title, text alternative,
  number locale), fonts, axes, legends, labels, and the one numbering of dimensions (`dimension_labels`);
- numbers.py: numbers in the session's language (decimal comma in Spanish), in Python and in Vega;
- palette.py: the colour roles (`PALETTE`), series colours, one declared scale per kind of matrix (`Scale`), and
  the same scales as colours computed here (`SCHEME_STOPS`, `cell_colours`) for what is drawn on the server;
- describe.py: the text alternative of every chart (screen readers);
- svg.py: labelled heatmaps drawn on the server as SVG and shown as images: one matrix (`heatmap_svg`, what a
  matrix panel shows) and small multiples (`facet_svg`, one per head);
- heatmaps.py: the long form of a matrix (`matrix_frame`) and the cell size that svg.py draws with;
- svg_picture.py: a big matrix as one picture with axes and legend (`picture`), drawn on the server as SVG;
- svg_lines.py: named series over a shared x, drawn on the server as SVG and shown as an image (`lines`);
- svg_bars.py: values per label, distributions over tokens and a weighted average's parts as bars, drawn on the
  server the same way;
- lines.py: log-log costs, runs' curves, vectors in a plane;
- strips.py: how rows' values spread (value strips);
- attention.py: head view and model view.
All user-visible words (axis and tooltip titles) are passed in by the caller, already translated; the few words of
their own (descriptions, legend titles by scale kind, mask categories) come from the catalog in the session's
language.
"""
from .attention import GRID_GAP, attention_grid, grid_pixels, head_view, head_view_lines
from .strips import value_strips
from .describe import DESCRIBED_ITEMS, named
from .engine import (FIRST_DIMENSION, HEADING_FONT, LABEL_FONT, TITLE_FONT, ChartText, _finish, _Unvalidated,
                     dimension_labels, unique_labels)
from .heatmaps import SMALL_MATRIX, matrix_frame
from .lines import DASHES, cost_curves, growth_lines, plane_arrows, run_lines
from .numbers import NUMBER_LOCALES, exact, number, short_number, vega_locale
from .palette import (_SCHEMES, CATEGORICAL, GRID_EMPTY, HEAD_COLORS, IMAGE_STOPS, MASK_COLOURS, MASK_SCALES, PALETTE,
                      SCHEME_STOPS, WEIGHT_STOPS, Scale, _dark, auto_scale, colour_image, kept,
                      legend_title, png_data_url, ramp_image)
from .svg import SvgChart, facet_svg, heatmap_svg
from .svg_bars import bars, contributions, distribution_bars
from .svg_lines import lines
from .svg_picture import picture

__all__ = [
    "CATEGORICAL", "DASHES", "DESCRIBED_ITEMS", "FIRST_DIMENSION", "GRID_EMPTY", "GRID_GAP", "HEADING_FONT",
    "HEAD_COLORS", "IMAGE_STOPS", "LABEL_FONT", "MASK_COLOURS", "MASK_SCALES", "NUMBER_LOCALES", "PALETTE",
    "SCHEME_STOPS", "SMALL_MATRIX", "TITLE_FONT", "WEIGHT_STOPS", "ChartText", "Scale", "SvgChart", "attention_grid",
    "auto_scale", "bars", "colour_image", "contributions", "cost_curves", "dimension_labels",
    "distribution_bars", "exact", "facet_svg", "grid_pixels", "growth_lines", "head_view", "head_view_lines",
    "heatmap_svg", "kept", "legend_title", "lines", "matrix_frame", "named", "number", "picture",
    "plane_arrows", "png_data_url", "ramp_image", "run_lines", "short_number", "unique_labels", "value_strips",
    "vega_locale",
    "_SCHEMES", "_Unvalidated", "_dark", "_finish",  # for tests/test_accessibility.py and tests/test_charts.py
]
