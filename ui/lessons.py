"""The lessons of the app, in order: the navigation's sections and pages.

Read by app.py (the navigation), by the welcome page (its diagram and lesson map) and by tests and scripts, which
can import this module; importing app.py would run the app. A lesson is one line in `PAGES`.
"""
SECTIONS = ("start", "attention", "blocks", "model", "practice", "real")  # navigation order; keys of nav.* in the catalogs
# (section, file, title key, icon, url path). Only pages that exist and work are listed.
# A url path must differ from the file's name without its number ("similarity" for 01_similarity.py):
# until st.navigation first runs in a process (and in every AppTest run) Streamlit still serves the old
# pages/ folder mode, which would run a page whose url matches its file directly, without the app's frame.
# The url path "" marks the default page, served at the app's root ("/"); there is exactly one.
PAGES = (
    ("start", "pages/00_welcome.py", "welcome.nav_title", ":material/home:", ""),
    ("attention", "pages/01_similarity.py", "sim.nav_title", ":material/join_inner:", "similarity-to-attention"),
    ("attention", "pages/02_attention.py", "qkv.nav_title", ":material/key:", "queries-keys-values"),
    ("attention", "pages/03_masks.py", "masks.nav_title", ":material/visibility_off:", "attention-masks"),
    ("attention", "pages/04_multi_head.py", "mha.nav_title", ":material/view_week:", "multi-head-attention"),
    ("blocks", "pages/05_positional_encoding.py", "pe.nav_title", ":material/pin_drop:", "position-information"),
    ("blocks", "pages/06_layer_norm.py", "ln.nav_title", ":material/equalizer:", "layer-normalization"),
    ("blocks", "pages/07_blocks.py", "blocks.nav_title", ":material/stacks:", "encoder-decoder-blocks"),
    ("model", "pages/08_architecture.py", "arch.nav_title", ":material/account_tree:", "whole-transformer"),
    ("practice", "pages/09_training.py", "train.nav_title", ":material/model_training:", "train-a-transformer"),
    ("practice", "pages/10_decoding.py", "dec.nav_title", ":material/alt_route:", "decoding-strategies"),
    ("practice", "pages/11_exercises.py", "ex.nav_title", ":material/edit_note:", "worked-exercises"),
    ("practice", "pages/12_classifier.py", "clf.nav_title", ":material/stacked_line_chart:", "depth-experiment"),
    ("real", "pages/13_real_model.py", "real.nav_title", ":material/psychology:", "real-pretrained-model"),
)
