"""The lessons of the app, in order: the navigation's sections and pages.

Read by app.py (the navigation), by the welcome page (its diagram and lesson map) and by tests and scripts, which
can import this module; importing app.py would run the app. A lesson is one line in `PAGES`.
"""
# navigation order; keys of nav.* in the catalogs
SECTIONS = ("start", "attention", "blocks", "model", "practice", "real", "descendants")
# (section, file, title key, icon, url path). Only pages that exist and work are listed.
# The lessons live in lessons/, not pages/: Streamlit treats a pages/ folder as its old multipage mode until
# st.navigation first runs, and a link opened first on a fresh server then showed "Page not found".
# The url path "" marks the default page, served at the app's root ("/"); there is exactly one.
PAGES = (
    ("start", "lessons/00_welcome.py", "welcome.nav_title", ":material/home:", ""),
    ("attention", "lessons/01_similarity.py", "sim.nav_title", ":material/join_inner:", "similarity-to-attention"),
    ("attention", "lessons/02_attention.py", "qkv.nav_title", ":material/key:", "queries-keys-values"),
    ("attention", "lessons/03_masks.py", "masks.nav_title", ":material/visibility_off:", "attention-masks"),
    ("attention", "lessons/04_multi_head.py", "mha.nav_title", ":material/view_week:", "multi-head-attention"),
    ("blocks", "lessons/05_positional_encoding.py", "pe.nav_title", ":material/pin_drop:", "position-information"),
    ("blocks", "lessons/06_layer_norm.py", "ln.nav_title", ":material/equalizer:", "layer-normalization"),
    ("blocks", "lessons/07_blocks.py", "blocks.nav_title", ":material/stacks:", "encoder-decoder-blocks"),
    ("model", "lessons/08_architecture.py", "arch.nav_title", ":material/account_tree:", "whole-transformer"),
    ("practice", "lessons/09_training.py", "train.nav_title", ":material/model_training:", "train-a-transformer"),
    ("practice", "lessons/10_decoding.py", "dec.nav_title", ":material/alt_route:", "decoding-strategies"),
    ("practice", "lessons/11_exercises.py", "ex.nav_title", ":material/edit_note:", "worked-exercises"),
    ("practice", "lessons/12_classifier.py", "clf.nav_title", ":material/stacked_line_chart:", "depth-experiment"),
    ("real", "lessons/13_real_model.py", "real.nav_title", ":material/psychology:", "real-pretrained-model"),
    ("descendants", "lessons/14_gpt.py", "gpt.nav_title", ":material/edit_square:", "small-gpt"),
    ("descendants", "lessons/15_fine_tuning.py", "ft.nav_title", ":material/tune:", "fine-tuning"),
)
