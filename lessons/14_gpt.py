"""Lesson 14: a small GPT trained live on this course's own text (issue 19).

Corpus (ui.gpt_run: the lessons' prose in the learner's language, every 10th section held out) -> baselines
(core.lab.charlm) -> Start: `ui.gpt_run.GPTRun` advances core.lab.gpt.LMTrainer CHUNK_SECONDS at a time inside a
fragment that reruns itself while training, with the held-out loss against both baselines and a sample from a
fixed prompt and seed every few seconds -> the trained (or shipped) model, one tool at a time: generation step by
step with temperature / top-k / top-p, the causal attention of every layer and head, the KV cache timed live.
"""
import numpy as np
import pandas as pd
import streamlit as st
import torch

from core.lab.charlm import Corpus, baselines, bigram_cross_entropy, prose_sections
from core.lab.gpt import DEFAULT_MODEL, DEFAULT_TRAIN, LMTrainer, heldout_cross_entropy, load_char_model
from core.lab.kvcache import causal_attention, compare_cache, generate
from core.model import DecoderOnly
from core.sampling import filter_logits
from ui import charts, gpt_run, i18n, limits, links, panels, parts, scenes, state
from ui.i18n import md_escape, t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

D_MODELS, HEADS, LRS = (32, 64, 128), (1, 2, 4), (1e-3, 2e-3, 5e-3, 1e-2)
MAX_LAYERS, MIN_STEPS, MAX_STEPS = 4, 100, 3000
MAX_PROMPT, TOP_CHARS = 40, 10  # prompt characters (the context is 64); bars of the next-character chart
KV_REPEATS = 3  # generations timed each way (the fastest time of every step is shown)
PARTS = ("generate", "attention", "kvcache")
SCENES = {"default": {"gpt_d_model": 64, "gpt_layers": 2, "gpt_heads": 4, "gpt_lr": 1e-2, "gpt_steps": 1500},
          "tiny": {"gpt_d_model": 32, "gpt_layers": 1, "gpt_heads": 2, "gpt_lr": 1e-2, "gpt_steps": 600}}
ss = st.session_state


@st.cache_data(max_entries=4, show_spinner=False)
def corpus_of(lang: str) -> Corpus:
    return gpt_run.corpus(lang)


@st.cache_resource(show_spinner=False)
def shipped(lang: str):
    """The shipped checkpoint of `lang` (shared by every session: read-only, used under no_grad in eval mode)."""
    return load_char_model(gpt_run.checkpoint_path(lang))


def num(value: float, spec: str) -> str:
    """A number for a sentence, with the reader's decimal mark (a comma in Spanish)."""
    return i18n.number(value, spec, settings.lang)


def wanted() -> dict:
    model = {"d_model": ss["gpt_d_model"], "n_layers": ss["gpt_layers"], "n_heads": ss["gpt_heads"],
             "d_ff": 4 * ss["gpt_d_model"]}
    return {"model_changes": model, "lr": ss["gpt_lr"], "steps": int(ss["gpt_steps"]), "seed": settings.seed}


def built_from(run: gpt_run.GPTRun) -> dict:
    """`wanted()` as the run was built (to say when the controls no longer match it)."""
    cfg, train = run.trainer.model_cfg, run.trainer.train_cfg
    model = {"d_model": cfg.d_model, "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_ff": cfg.d_ff}
    return {"model_changes": model, "lr": train.lr, "steps": train.steps, "seed": train.seed}


def start() -> None:
    ss.pop("gpt_refused", None)
    run = ss.get(gpt_run.RUN_KEY)
    if run is None:
        if not limits.may_start():
            ss["gpt_refused"] = "train.refused_starts"
            return
        run = ss[gpt_run.RUN_KEY] = gpt_run.GPTRun.new(settings.lang, t("gpt.sample_prompt"), settings.device,
                                                       **wanted())
    if run.trainer.done:
        return
    if not limits.claim(run.token):
        ss["gpt_refused"] = "train.refused_busy"
        return
    run.running = True


def stop() -> None:
    if gpt_run.RUN_KEY in ss:
        ss[gpt_run.RUN_KEY].running = False
        limits.release(ss[gpt_run.RUN_KEY].token)


def reset() -> None:
    stop()
    ss.pop(gpt_run.RUN_KEY, None)


def intro(found: Corpus) -> None:
    st.title(t("gpt.title"))
    scenes.picker("gpt", SCENES)
    prose(t("gpt.intro"))
    st.latex(r"\mathcal{L} = -\frac{1}{N}\sum_{t=1}^{N} \ln p_\theta(c_t \mid c_{<t})")
    base = baselines(found)
    prose(t("gpt.corpus_text", sections=found.sections, heldout=found.heldout_sections, train=len(found.train),
            held=len(found.heldout), vocab=len(found.vocab)))
    cols = st.columns(3)
    cols[0].metric(t("gpt.uniform"), f"{base.uniform:.3f}", help=t("gpt.uniform_help"))
    cols[1].metric(t("gpt.unigram"), f"{base.unigram:.3f}",
                   help=t("gpt.unigram_help", alpha=num(base.unigram_alpha, "g")))
    cols[2].metric(t("gpt.bigram"), f"{base.bigram:.3f}", help=t("gpt.bigram_help", alpha=num(base.bigram_alpha, "g")))


def setup() -> None:
    st.subheader(t("gpt.setup_header"))
    cols = st.columns(3, gap="large")
    with cols[0]:
        links.control(st.select_slider, "d_model", D_MODELS, setting="gpt_d_model")
        links.control(st.slider, t("gpt.layers"), 1, MAX_LAYERS, setting="gpt_layers")
    with cols[1]:
        links.control(st.select_slider, t("train.heads"), HEADS, setting="gpt_heads")
        links.control(st.select_slider, t("train.lr"), LRS, format_func=lambda v: f"{v:g}", setting="gpt_lr")
    with cols[2]:
        links.control(st.slider, t("train.steps"), MIN_STEPS, MAX_STEPS, step=100,
                      help=t("train.steps_help", cap=MAX_STEPS), setting="gpt_steps")
        st.caption(t("gpt.fixed_caption", context=DEFAULT_MODEL["max_len"], batch=DEFAULT_TRAIN.batch_size))
    run = ss.get(gpt_run.RUN_KEY)
    running = run is not None and run.running
    finished = run is not None and run.trainer.done
    buttons = st.columns([1, 1, 1, 2])
    buttons[0].button(t("train.continue" if run is not None and run.trainer.step else "train.start"), on_click=start,
                      type="primary", icon=":material/play_arrow:", disabled=running or finished)
    buttons[1].button(t("train.stop"), on_click=stop, icon=":material/pause:", disabled=not running)
    buttons[2].button(t("train.reset"), on_click=reset, icon=":material/restart_alt:", disabled=run is None)
    if ss.get("gpt_refused"):
        st.warning(t(ss["gpt_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    if run is not None and built_from(run) != wanted():
        st.info(t("train.settings_changed"), icon=":material/info:")
    if run is not None and run.lang != settings.lang:
        st.info(t("gpt.other_language", lang=t(f"gpt.lang_of.{run.lang}")), icon=":material/translate:")


def curve(run: gpt_run.GPTRun) -> None:
    measures, history = run.measures, run.trainer.history
    steps = [m.step for m in measures]
    recent = [np.mean([r.loss for r in history[max(0, m.step - 20):m.step]]) if m.step else m.heldout
              for m in measures]
    lang = settings.lang
    series = {t("gpt.train_loss", lang): recent, t("gpt.heldout", lang): [m.heldout for m in measures],
              t("gpt.bigram", lang): [run.baselines.bigram] * len(steps),
              t("gpt.unigram", lang): [run.baselines.unigram] * len(steps)}
    colors = (charts.PALETTE["query"], charts.PALETTE["key"], charts.PALETTE["value"], charts.PALETTE["masked"])
    st.altair_chart(charts.lines(steps, series, x_title=t("train.step", lang), y_title=t("gpt.nats", lang),
                                 colors=colors), width="content")


def live() -> None:
    run = ss.get(gpt_run.RUN_KEY)
    if run is None:
        st.info(t("gpt.no_run"), icon=":material/info:")
        return
    if run.running:
        if limits.claim(run.token):
            run.advance(CHUNK_SECONDS)
        else:
            run.running = False
        if run.trainer.elapsed > 60 * limits.MAX_RUN_MINUTES:
            run.running = False
        if not run.running:
            limits.release(run.token)
            st.rerun()
    trainer, last = run.trainer, run.measures[-1]
    st.progress(min(1.0, trainer.step / trainer.train_cfg.steps),
                text=t("train.progress", step=trainer.step, steps=trainer.train_cfg.steps))
    cols = st.columns(3)
    cols[0].metric(t("gpt.heldout"), f"{last.heldout:.3f}", help=t("gpt.heldout_help"))
    cols[1].metric(t("gpt.ratio"), f"{last.heldout / run.baselines.bigram:.2f}", help=t("gpt.ratio_help"))
    cols[2].metric(t("gpt.seconds"), f"{trainer.elapsed:.0f}")
    curve(run)
    st.markdown(t("gpt.sample_header", step=last.step, seconds=f"{last.elapsed:.0f}"))
    st.code(run.prompt + last.sample, language=None, wrap_lines=True)
    with st.expander(t("gpt.samples_all"), expanded=settings.show_numbers):
        st.dataframe(pd.DataFrame({t("train.step"): [m.step for m in run.measures],
                                   t("gpt.heldout"): [m.heldout for m in run.measures],
                                   t("gpt.sample"): [m.sample for m in run.measures]}),
                     hide_index=True, key="gpt_samples_table")


def training() -> None:
    st.subheader(t("gpt.live_header"))
    prose(t("gpt.live_text"))
    run = ss.get(gpt_run.RUN_KEY)
    st.fragment(live, run_every=CHUNK_SECONDS if run is not None and run.running else None)()


def chosen_model():
    """(model, vocab, source): this session's run once it has trained, else the shipped model of the language."""
    run = ss.get(gpt_run.RUN_KEY)
    if run is not None and run.trainer.step > 0:
        return run.model, run.vocab, "session"
    found = shipped(settings.lang)
    return found.model, found.vocab, "shipped"


def prompt_ids(vocab):
    """The learner's prompt as ids (n,), or None after saying what is wrong with it."""
    text = links.control(st.text_input, t("gpt.prompt"), max_chars=MAX_PROMPT, help=t("gpt.prompt_help"),
                         setting="gpt_prompt")
    if not text:
        st.warning(t("gpt.prompt_empty"), icon=":material/edit:")
        return None
    if missing := vocab.unknown(text):
        st.warning(t("gpt.prompt_unknown", chars=md_escape(" ".join(missing))), icon=":material/edit:")
        return None
    return vocab.encode(text)


def sampling_controls(vocab) -> dict:
    cols = st.columns(4)
    links.control(cols[0].slider, t("dec.temperature"), 0.1, 2.0, step=0.05, setting="gpt_temp")
    links.control(cols[1].slider, t("dec.top_k"), 1, len(vocab), setting="gpt_top_k")
    links.control(cols[2].slider, t("dec.top_p"), 0.05, 1.0, step=0.05, setting="gpt_top_p")
    links.control(cols[3].slider, t("gpt.new_chars"), 1, DEFAULT_MODEL["max_len"] - MAX_PROMPT, setting="gpt_new")
    return {"temperature": float(ss["gpt_temp"]), "top_k": int(ss["gpt_top_k"]), "top_p": float(ss["gpt_top_p"])}


def generate_part(model, vocab) -> None:
    prose(t("gpt.generate_text"))
    ss["gpt_top_k"] = min(int(ss["gpt_top_k"]), len(vocab))
    ids = prompt_ids(vocab)
    knobs = sampling_controls(vocab)
    if ids is None:
        return
    found = generate(model, ids, int(ss["gpt_new"]), seed=settings.seed, **knobs)
    chars = vocab.decode(found.tokens.tolist())
    st.code(vocab.decode(ids.tolist()) + chars, language=None, wrap_lines=True)
    ss["gpt_step"] = min(int(ss["gpt_step"]), len(chars))
    step = links.control(st.slider, t("gpt.step"), 1, len(chars), setting="gpt_step") if len(chars) > 1 else 1
    before = torch.softmax(found.logits[step - 1], dim=-1)  # (V,)
    after = torch.softmax(filter_logits(found.logits[step - 1], knobs["temperature"], knobs["top_k"],
                                        knobs["top_p"]), dim=-1)  # (V,)
    top = torch.argsort(before, descending=True, stable=True)[:TOP_CHARS].tolist()
    chosen = int(found.tokens[step - 1])
    shown = top if chosen in top else top[:-1] + [chosen]
    labels = [repr(vocab.chars[i])[1:-1] or "␣" for i in shown]
    st.markdown(t("gpt.step_text", step=step, context=md_escape(vocab.decode(ids.tolist()) + chars[:step - 1])[-40:],
                  chosen=md_escape(repr(chars[step - 1])), p=num(float(after[chosen]), ".3f")))
    st.altair_chart(charts.distribution_bars(after[shown].tolist(), labels, kept=[bool(after[i] > 0) for i in shown],
                                             ghost=before[shown].tolist(), marked=shown.index(chosen),
                                             value_title=t("gpt.probability"), ghost_title=t("gpt.model_p"),
                                             label_title=t("gpt.next_char")), width="content")
    st.caption(t("gpt.bars_caption"))
    if settings.show_numbers:
        st.dataframe(pd.DataFrame({t("gpt.next_char"): labels, t("gpt.model_p"): before[shown].tolist(),
                                   t("gpt.probability"): after[shown].tolist()}), hide_index=True,
                     key="gpt_distribution_numbers")


def attention_part(model, vocab) -> None:
    prose(t("gpt.attention_text"))
    ids = prompt_ids(vocab)
    if ids is None:
        return
    weights = causal_attention(model, ids)  # (layers, heads, n, n)
    layers, heads = weights.shape[:2]
    st.altair_chart(charts.attention_grid(weights.numpy(), [t("train.layer_n", i=i + 1) for i in range(layers)],
                                          [t("train.head_n", h=h + 1) for h in range(heads)],
                                          value_title=t("gpt.weight"), width=700), width="content")
    st.caption(t("gpt.attention_caption", n=len(ids), above=num(float(weights.triu(1).abs().max()), "g")))
    if settings.show_numbers:
        labels = [repr(c)[1:-1] or "␣" for c in vocab.decode(ids.tolist())]
        panels.numbers_table(weights[-1, 0].numpy(), labels, labels, key="gpt_attention_numbers")


def kv_part(model, vocab) -> None:
    prose(t("gpt.kv_text"))
    ids = prompt_ids(vocab)
    if ids is None:
        return
    new = model.cfg.max_len - len(ids)  # up to the end of the context
    found = compare_cache(model, ids, new, repeats=KV_REPEATS, seed=settings.seed)
    st.code(vocab.decode(ids.tolist()) + vocab.decode(found.cached.tokens.tolist()), language=None, wrap_lines=True)
    same, gap = found.identical, num(found.logit_gap, ".1e")
    (st.success if same else st.warning)(t("gpt.kv_same" if same else "gpt.kv_differ", gap=gap),
                                         icon=":material/check_circle:" if same else ":material/warning:")
    positions = list(range(len(ids), len(ids) + new))
    lang = settings.lang
    series = {t("gpt.without_cache", lang): [1000 * s for s in found.plain_seconds],
              t("gpt.with_cache", lang): [1000 * s for s in found.cached_seconds]}
    st.altair_chart(charts.lines(positions, series, x_title=t("gpt.position", lang), y_title=t("gpt.ms", lang),
                                 colors=(charts.PALETTE["key"], charts.PALETTE["query"])), width="content")
    st.metric(t("gpt.speedup"), f"{found.speedup:.2f}×", help=t("gpt.speedup_help", repeats=KV_REPEATS))
    if settings.show_numbers:
        st.dataframe(pd.DataFrame({t("gpt.position"): positions, **series}), hide_index=True, key="gpt_kv_numbers")
    st.caption(t("gpt.kv_caption", plain=num(1000 * sum(found.plain_seconds), ".1f"),
                 cached=num(1000 * sum(found.cached_seconds), ".1f")))


@st.fragment
def inspect() -> None:
    lang = settings.lang
    st.subheader(t("gpt.inspect_header"))
    model, vocab, source = chosen_model()
    st.caption(t(f"gpt.source_{source}") + (" " + t("common.cpu_only") if source == "shipped" else ""))
    part = parts.pick("gpt_part", PARTS, label=t("train.part"), format_func=lambda p: t(f"gpt.part_of.{p}", lang))
    if part == "generate":
        generate_part(model, vocab)
    elif part == "attention":
        attention_part(model, vocab)
    else:
        kv_part(model, vocab)


def notice() -> None:
    panels.show_code(LMTrainer.train_step, heldout_cross_entropy, bigram_cross_entropy, DecoderOnly.forward,
                     generate, prose_sections)
    st.subheader(t("gpt.notice_header"))
    st.markdown(t("gpt.notice_points"))


settings = state.settings()
for name, value in (("gpt_d_model", 64), ("gpt_layers", 2), ("gpt_heads", 4), ("gpt_lr", 1e-2), ("gpt_steps", 1500),
                    ("gpt_temp", 0.8), ("gpt_top_k", 20), ("gpt_top_p", 0.95), ("gpt_new", 24), ("gpt_step", 1)):
    ss.setdefault(name, value)
ss.setdefault("gpt_prompt", t("gpt.sample_prompt").strip())
intro(corpus_of(settings.lang))
setup()
training()
inspect()
notice()
