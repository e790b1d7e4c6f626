"""Lesson 4: multi-head attention (CURRICULUM.md, lesson 4).

X (1, n, d_model) -> Q, K, V split into h heads (1, h, n, d_k) -> attention per head -> concat (1, n, d_model)
-> W_O, all by one core.MultiHeadAttention read through its hook points.
"""
import numpy as np
import pandas as pd
import streamlit as st
import torch

import core
import core.lab.analysis
import core.hooks
from ui import charts, links, panels, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose
from ui.tokens import sentence_tokens

PAD = "[PAD]"  # the padding token's label; its id is core.PAD_ID
BIAS = 0.5  # biases from U(-BIAS, BIAS) (init_parameters zeroes them): a query bias gives a head a favourite key
MAX_CELLS, MAX_COLS = 4096, 128  # drawn per heatmap; a larger matrix shows its first columns (the table has all)
FACET_CELLS = 8192  # cells drawn in the small multiples of all heads
MAX_LINES, THRESHOLD = 4000, 0.05  # head view: lines drawn, and the smallest weight that gets a line


def token_ids(tokens: tuple[str, ...], n_pad: int) -> torch.Tensor:
    """Ids from the sentence's own little vocabulary (0-2 are core's PAD, BOS, EOS), then n_pad PADs: (1, n)."""
    vocab = {word: k + 3 for k, word in enumerate(dict.fromkeys(tokens))}
    return torch.tensor([[vocab[w] for w in tokens] + [core.PAD_ID] * n_pad])  # (1, n)


def build_mask(kind: str, ids: torch.Tensor) -> torch.Tensor | None:
    """The shared mask setting as a boolean keep-mask that broadcasts to (1, h, n, n), or None."""
    if kind == "causal":
        return core.causal_mask(ids.shape[1], ids.device)  # (n, n)
    if kind == "padding":
        return core.padding_mask(ids, core.PAD_ID)  # (1, 1, 1, n)
    if kind == "both":
        return core.decoder_mask(ids, core.PAD_ID)  # (1, 1, n, n)
    return None


def seeded_module(d_model: int, heads: int, seed: int) -> core.MultiHeadAttention:
    """The real module: Xavier weights from `seed` (core.init_parameters), biases from U(-BIAS, BIAS)."""
    module = core.init_parameters(core.MultiHeadAttention(d_model, heads), seed)
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        for name, p in module.named_parameters():
            if name.endswith("bias"):
                p.uniform_(-BIAS, BIAS, generator=generator)
    return module


@st.cache_data(max_entries=64, show_spinner=False)
def compute(tokens: tuple[str, ...], n_pad: int, d_model: int, heads: int, seed: int, mask_kind: str,
            device: str) -> dict:
    """Every tensor the page shows, as numpy (batch 0), plus the live shapes and the parameter list."""
    words = [*tokens, *[PAD] * n_pad]
    ids = token_ids(tokens, n_pad).to(device)  # (1, n)
    n = ids.shape[1]
    x = (core.lab.analysis.toy_embeddings(words, d_model, seed) + core.sinusoidal_encoding(n, d_model))[None]  # (1, n, d)
    x = x.to(device)
    module = seeded_module(d_model, heads, seed).to(device)
    mask = build_mask(mask_kind, ids)
    with torch.no_grad():
        out, cache = core.hooks.trace(module, lambda: module(x, x, x, mask))  # (1, n, d)
        projected = module.q_proj(x)  # (1, n, d): the shape before the split
        concat = cache["hook_heads"].transpose(1, 2).reshape(1, n, d_model)  # (1, n, d)
        rebuilt = module.out_proj(concat)  # (1, n, d): concat W_Oᵀ + b_O
    keep = torch.ones(1, 1, n, n, dtype=torch.bool, device=device) if mask is None else mask
    shapes = {"x": x.shape, "proj": projected.shape, "view": projected.view(1, n, heads, d_model // heads).shape,
              "split": cache["hook_q"].shape, "scores": cache["hook_scores"].shape,
              "masked": cache["hook_masked_scores"].shape, "weights": cache["hook_weights"].shape,
              "heads": cache["hook_heads"].shape, "back": cache["hook_heads"].transpose(1, 2).shape,
              "concat": concat.shape, "out": out.shape}
    arrays = {name: cache[f"hook_{name}"][0].cpu().double().numpy()
              for name in ("q", "k", "v", "scores", "masked_scores", "weights", "heads")}
    arrays.update(x=x[0].cpu().double().numpy(), concat=concat[0].cpu().double().numpy(),
                  out=out[0].cpu().double().numpy(), keep=keep.expand(1, 1, n, n)[0, 0].cpu().double().numpy(),
                  entropy=core.lab.analysis.entropy(cache["hook_weights"][0]).cpu().double().numpy(),  # (h, n)
                  distance=core.lab.analysis.mean_attention_distance(cache["hook_weights"][0].cpu()).double().numpy())
    arrays["rebuild_error"] = float((rebuilt - out).abs().max())
    arrays["shapes"] = {k: tuple(v) for k, v in shapes.items()}
    arrays["params"] = [(name, tuple(p.shape), p.numel()) for name, p in module.named_parameters()]
    return arrays


def panel(matrix: np.ndarray, *, title: str, key: str, rows: list[str], cols: list[str], scale=None,
          caption: str | None = None, max_width: int = 560) -> None:
    """matrix_panel, but a matrix over MAX_CELLS or MAX_COLS draws only its first columns; the table and CSV keep
    them all."""
    if matrix.size <= MAX_CELLS and matrix.shape[1] <= MAX_COLS:
        panels.matrix_panel(matrix, title=title, key=key, row_labels=rows, col_labels=cols, scale=scale,
                            caption=caption, max_width=max_width)
        return
    shown = max(1, min(MAX_COLS, MAX_CELLS // matrix.shape[0]))
    st.markdown(f"##### {title} &nbsp; {t('panel.shape', rows=matrix.shape[0], cols=matrix.shape[1])}")
    st.caption(" ".join(filter(None, [caption, t("mha.sliced", shown=shown, total=matrix.shape[1])])))
    chart = charts.named(charts.heatmap(matrix[:, :shown], rows, cols[:shown], scale=scale or charts.auto_scale(matrix),
                                        text=panels.chart_text(), max_width=max_width), title)
    st.altair_chart(chart, width="content")
    if settings.show_numbers:
        panels.numbers_table(matrix, rows, cols, key=f"{key}_numbers")
    panels.download_menu(chart, panels.numbers_frame(matrix, rows, cols), key)


def facet_columns(n: int) -> int:
    """Panels per row so the small multiples fit the page (each panel is 2/3 of a heatmap's cells, see ui.charts)."""
    panel_width = max(2, min(52, 440 // n)) * 2 // 3 * n + 40
    return max(1, min(4, 880 // panel_width))


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "eight_heads": {"mha_view_heads": [0, 1, 2, 3, 4, 5, 6, 7], "cfg_d_model": 64, "cfg_heads": 8},
    "one_head": {"mha_view_heads": [0], "mha_head": 0, "cfg_d_model": 64, "cfg_heads": 1},
    "causal": {"cfg_mask": "causal", "cfg_d_model": 64, "cfg_heads": 4, "mha_view_heads": [0, 1, 2, 3]},
    "paper": {"cfg_d_model": 512, "cfg_heads": 8, "mha_view_heads": [0, 1, 2, 3, 4, 5, 6, 7]},
}

def intro() -> None:
    """Title, scenes and the two equations of multi-head attention."""
    st.title(t("mha.title"))
    scenes.picker("mha", SCENES)
    prose(t("mha.intro"))
    st.latex(r"\mathrm{MultiHead}(X) = \mathrm{Concat}(\mathrm{head}_1, \dots, \mathrm{head}_h)\, W^O,"
             r"\qquad d_k = \frac{d_{\mathrm{model}}}{h}")
    st.latex(r"\mathrm{head}_i = \mathrm{softmax}\!\Big(\frac{Q_i K_i^{\top}}{\sqrt{d_k}} + M\Big) V_i,"
             r"\qquad Q_i = X W_i^Q,\quad K_i = X W_i^K,\quad V_i = X W_i^V")
    prose(t("mha.equations"))


def controls(d_model: int, h: int, d_k: int) -> list[str]:
    """The sentence, then d_model and h beside the split they make (the sidebar's settings: a change reruns the
    whole lesson). Returns the sentence's tokens."""
    st.subheader(t("mha.controls_header"))
    tokens = sentence_tokens(settings.seq_len, "mha")
    c1, c2, c3 = st.columns([1, 1, 2], vertical_alignment="bottom")
    with c1:
        links.control(st.number_input, t("sidebar.d_model"), min_value=state.D_MODEL_RANGE[0],
                      max_value=state.D_MODEL_RANGE[1], step=8, setting=state.key("d_model"), key="mha_w_d_model")
    with c2:
        options = state.heads_options(d_model)
        links.control(st.selectbox, t("sidebar.heads"), options, help=t("sidebar.heads_help"),
                      setting=state.key("heads"), key="mha_w_heads")
    with c3:
        st.caption(t("mha.split_caption", d_model=d_model, h=h, d_k=d_k, mask=t(f"mask.{settings.mask}")))
    return tokens


STEPS = (("x", "mha.step_x", "x"), ("proj", "mha.step_proj", "q_proj(x)"),
         ("view", "mha.step_view", ".view(b, n, h, d_k)"), ("split", "mha.step_split", ".transpose(1, 2)"),
         ("scores", "mha.step_scores", "q @ k.transpose(-2, -1) / √d_k"),
         ("masked", "mha.step_masked", "apply_mask(scores, mask)"),
         ("weights", "mha.step_weights", "softmax(masked, dim=-1)"), ("heads", "mha.step_heads", "weights @ v"),
         ("back", "mha.step_back", ".transpose(1, 2)"), ("concat", "mha.step_concat", ".reshape(b, n, h · d_k)"),
         ("out", "mha.step_out", "out_proj(concat)"))  # (shape name, label key, code)
SYMBOLIC = {"x": "(b, n, d_model)", "proj": "(b, n, d_model)", "view": "(b, n, h, d_k)", "split": "(b, h, n, d_k)",
            "scores": "(b, h, n, n)", "masked": "(b, h, n, n)", "weights": "(b, h, n, n)", "heads": "(b, h, n, d_k)",
            "back": "(b, n, h, d_k)", "concat": "(b, n, d_model)", "out": "(b, n, d_model)"}


def steps(R: dict, labels: list[str], dims: list[str]) -> None:
    """The input X, then every step from X to the output with its code and its live shape."""
    prose(t("mha.input_text"))
    panel(R["x"], title=t("mha.X_title"), key="mha_X", rows=labels, cols=dims, caption=t("mha.X_caption"))
    st.subheader(t("mha.steps_header"))
    prose(t("mha.steps_intro"))
    header = f"| {t('mha.col_step')} | {t('mha.col_code')} | {t('mha.col_symbolic')} | {t('mha.col_shape')} |"
    st.markdown("\n".join([header, "|---|---|---|---|", *(
        f"| {t(label)} | `{code}` | `{SYMBOLIC[s]}` | **{R['shapes'][s]}** |" for s, label, code in STEPS)]))


@st.fragment
def all_heads(R: dict, labels: list[str], head_names: list[str]) -> None:
    """Every chosen head's weights side by side, and the head view; picking heads reruns this section only."""
    st.subheader(t("mha.heads_header"))
    h, n = len(head_names), len(labels)
    ss.setdefault("mha_view_heads", list(range(min(h, 4))))
    kept = [k for k in ss["mha_view_heads"] if k < h]
    ss["mha_view_heads"] = kept if kept or not ss["mha_view_heads"] else list(range(min(h, 4)))
    lang = settings.lang
    chosen = sorted(links.control(st.multiselect, t("mha.pick_heads"), list(range(h)),
                                  format_func=lambda k: t("mha.head", lang, k=k + 1), help=t("mha.pick_heads_help"),
                                  setting="mha_view_heads"))
    if not chosen:
        st.info(t("mha.no_heads"), icon=":material/visibility_off:")
        return
    facet_heads = chosen[:max(1, FACET_CELLS // (n * n))]
    if len(facet_heads) < len(chosen):
        st.caption(t("mha.facet_capped", shown=len(facet_heads), chosen=len(chosen)))
    st.altair_chart(charts.facet_heatmaps([R["weights"][k] for k in facet_heads], [head_names[k] for k in facet_heads],
                                          labels, labels, scale="weights", columns=facet_columns(n),
                                          text=panels.chart_text()),
                    width="content")
    st.markdown(f"##### {t('mha.head_view_title')}")
    top_k = max(1, min(5, MAX_LINES // (len(chosen) * n)))
    st.caption(t("mha.head_view_caption", threshold=THRESHOLD, top_k=top_k))
    st.altair_chart(charts.head_view(R["weights"], labels, chosen, head_names, threshold=THRESHOLD, top_k=top_k,
                                     text=charts.ChartText(t("mha.query"), t("mha.key"), t("mha.weight")),
                                     head_title=t("mha.head_legend")), width="content")


def summary(R: dict, head_names: list[str], n_real: int) -> tuple[np.ndarray, np.ndarray]:
    """Entropy, distance and self-weight per head (over the real tokens' queries); returns entropy and distance."""
    st.subheader(t("mha.summary_header"))
    prose(t("mha.summary_intro", n=n_real, log_n=f"{np.log(n_real):.4f}"))  # PAD keys are never seen
    entropy = R["entropy"][:, :n_real].mean(axis=1)  # (h,): over the real tokens' queries
    distance = R["distance"][:, :n_real].mean(axis=1)  # (h,)
    self_weight = np.einsum("hii->hi", R["weights"])[:, :n_real].mean(axis=1)  # (h,)
    frame = pd.DataFrame({t("mha.head_legend"): head_names, t("mha.entropy"): entropy,
                          t("mha.distance"): distance, t("mha.self_weight"): self_weight})
    st.dataframe(frame, hide_index=True, width="content", key="mha_summary", height=35 * (len(head_names) + 1) + 3,
                 column_config={c: st.column_config.NumberColumn(format="%.4f") for c in frame.columns[1:]})
    b1, b2 = st.columns(2, gap="large")
    with b1:
        st.altair_chart(charts.bars(entropy, head_names, title=t("mha.entropy"), value_title=t("mha.nats"),
                                    domain=(0.0, max(float(np.log(n_real)), 0.01)), color=charts.PALETTE["query"]),
                        width="content")
    with b2:
        st.altair_chart(charts.bars(distance, head_names, title=t("mha.distance"), value_title=t("mha.positions"),
                                    domain=(0.0, max(float(n_real - 1), 1.0)), color=charts.PALETTE["key"]),
                        width="content")
    return entropy, distance


@st.fragment
def one_head(R: dict, labels: list[str], d_k: int) -> None:
    """One head's Q, K, V, scores, mask, weights and output; picking the head reruns this section only."""
    st.subheader(t("mha.one_head_header"))
    h, n, lang = R["weights"].shape[0], len(labels), settings.lang
    ss.setdefault("mha_head", 0)
    if ss["mha_head"] >= h:
        ss["mha_head"] = 0
    i = links.control(st.selectbox, t("mha.pick_head"), list(range(h)),
                      format_func=lambda k: t("mha.head", lang, k=k + 1), width=240, setting="mha_head")
    st.markdown(t("mha.one_head_intro", k=i + 1, lo=i * d_k + 1, hi=(i + 1) * d_k, d_k=d_k))
    head_dims = [f"d{i * d_k + j + 1}" for j in range(d_k)]
    wide = d_k > 8 or n > 8
    slots = [st.container() for _ in range(3)] if wide else st.columns(3, gap="medium")
    for slot, (name, colour) in zip(slots, (("q", "Q"), ("k", "K"), ("v", "V"))):
        with slot:
            panel(R[name][i], title=t("mha.qkv_title", m=colour, k=i + 1), key=f"mha_{name}", rows=labels,
                  cols=head_dims, max_width=560 if wide else 300)
    panel(R["scores"][i], title=t("mha.scores_title", k=i + 1), key="mha_scores", rows=labels, cols=labels,
          caption=t("mha.scores_caption", d_k=d_k, root=f"{np.sqrt(d_k):.4f}"))
    if settings.mask != "none":
        panel(R["keep"], title=t("mha.mask_title"), key="mha_mask", rows=labels, cols=labels, scale="weights",
              caption=t("mha.mask_caption"))
        panel(R["masked_scores"][i], title=t("mha.masked_title", k=i + 1), key="mha_masked", rows=labels,
              cols=labels)
    row_error = float(np.abs(R["weights"][i].sum(axis=1) - 1).max())
    panel(R["weights"][i], title=t("mha.weights_title", k=i + 1), key="mha_weights", rows=labels, cols=labels,
          scale="weights", caption=t("mha.weights_caption", error=f"{row_error:.1e}"))
    panel(R["heads"][i], title=t("mha.head_out_title", k=i + 1), key="mha_head_out", rows=labels, cols=head_dims,
          caption=t("mha.head_out_caption"))


def concat_and_output(R: dict, labels: list[str], dims: list[str], d_k: int) -> None:
    """The heads joined back to (n, d_model), then W_O."""
    st.subheader(t("mha.concat_header"))
    panel(R["concat"], title=t("mha.concat_title"), key="mha_concat", rows=labels, cols=dims,
          caption=t("mha.concat_caption", h=R["weights"].shape[0], d_k=d_k))
    panel(R["out"], title=t("mha.out_title"), key="mha_out", rows=labels, cols=dims,
          caption=t("mha.out_caption", error=f"{R['rebuild_error']:.1e}"))


def parameters(R: dict, d_model: int, h: int) -> None:
    """The module's parameters, counted and checked against 4 d_model² + 4 d_model."""
    st.subheader(t("mha.params_header"))
    total = sum(count for _, _, count in R["params"])
    formula = 4 * d_model**2 + 4 * d_model
    p1, p2 = st.columns([1, 2], gap="large")
    with p1:
        st.metric(t("mha.params_metric"), f"{total:,}")
    with p2:
        st.dataframe(pd.DataFrame({t("mha.param_name"): [name for name, _, _ in R["params"]],
                                   t("mha.param_shape"): [" × ".join(map(str, shape)) for _, shape, _ in R["params"]],
                                   t("mha.param_count"): [count for _, _, count in R["params"]]}),
                     hide_index=True, width="content", key="mha_params")
    tex = rf"4\,d_{{\mathrm{{model}}}}^2 + 4\,d_{{\mathrm{{model}}}} = 4 \cdot {d_model}^2 + 4 \cdot {d_model} = "
    check = r"\ \checkmark" if formula == total else rf"\ \neq {total:,}".replace(",", "{,}")
    st.latex(tex + f"{formula:,}".replace(",", "{,}") + check)  # {,}: a thousands comma, not punctuation
    prose(t("mha.params_text", h=h))
    panels.show_code(core.MultiHeadAttention, core.scaled_dot_product_attention, core.softmax,
                     core.lab.analysis.entropy, core.lab.analysis.mean_attention_distance)


def notice(R: dict, labels: list[str], head_names: list[str], entropy: np.ndarray, distance: np.ndarray,
           n_real: int) -> None:
    """What to notice, read off this run's numbers."""
    st.subheader(t("mha.notice_header"))
    h = len(head_names)
    focused, spread = int(entropy.argmin()), int(distance.argmax())
    if h == 1:
        st.markdown(t("mha.notice_one_head", entropy=f"{entropy[0]:.4f}", distance=f"{distance[0]:.4f}"))
    else:
        st.markdown(t("mha.notice_heads", focused=head_names[focused], entropy=f"{entropy[focused]:.4f}",
                      far=head_names[spread], distance=f"{distance[spread]:.4f}"))
        favourite = R["weights"][:, :n_real].mean(axis=1).argmax(axis=1)  # (h,): the key each head looks at most
        pairs = ", ".join(f"**{head_names[k]}** → {md_escape(labels[favourite[k]])}" for k in range(min(h, 8)))
        pairs += ", …" if h > 8 else ""
        st.markdown(t("mha.notice_favourite", pairs=pairs))
    st.markdown(t("mha.notice_points"))


settings = state.settings()
ss = st.session_state
d_model, h = settings.d_model, settings.heads
if h < 1 or d_model % h:  # the controls never allow it; a hand-made session state could
    fixed = state.closest_heads(d_model, max(h, 1))
    st.error(t("mha.invalid_pair", d_model=d_model, heads=h, fixed=fixed,
               choices=", ".join(map(str, state.heads_options(d_model)))), icon=":material/block:")
    ss[state.key("heads")] = h = fixed
d_k = d_model // h

intro()
tokens = controls(d_model, h, d_k)
padded = settings.mask in ("padding", "both")
n_pad = settings.seq_len - len(tokens) if padded else 0
if padded:
    st.info(t("mha.padding_note", n=n_pad, seq_len=settings.seq_len) if n_pad else
            t("mha.padding_none", seq_len=settings.seq_len), icon=":material/space_bar:")
R = compute(tuple(tokens), n_pad, d_model, h, settings.seed, settings.mask, settings.device)
labels = [*tokens, *[PAD] * n_pad]
head_names = [t("mha.head", k=k + 1) for k in range(h)]
dims = [f"d{j + 1}" for j in range(d_model)]
steps(R, labels, dims)
all_heads(R, labels, head_names)
entropy, distance = summary(R, head_names, len(tokens))
one_head(R, labels, d_k)
concat_and_output(R, labels, dims, d_k)
parameters(R, d_model, h)
notice(R, labels, head_names, entropy, distance, len(tokens))
