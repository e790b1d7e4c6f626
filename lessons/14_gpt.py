"""Lesson 14: a small GPT trained live on this course's own text (issue 19).

Corpus (ui.gpt_run: the lessons' prose in the learner's language, every 10th section held out) -> baselines
(core.lab.charlm) -> Start (ui/gpt_page.py): `ui.gpt_run.GPTRun` advances core.lab.gpt.LMTrainer CHUNK_SECONDS at a
time inside a fragment that reruns itself while training, with the held-out loss against both baselines and a
sample from a fixed prompt and seed every few seconds -> the trained (or shipped) model, one tool at a time:
generation step by step with temperature / top-k / top-p, the causal attention of every layer and head, the KV
cache timed live. The charts and tables are ui/gpt_views.py's.
"""
import streamlit as st

from core import to_numpy
from core.lab.charlm import Corpus, baselines, bigram_cross_entropy, prose_sections
from core.lab.gpt import DEFAULT_MODEL, DEFAULT_TRAIN, LMTrainer, heldout_cross_entropy
from core.lab.kvcache import causal_attention, compare_cache, generate
from core.model import DecoderOnly
from ui import charts, gpt_run, gpt_views, limits, links, panels, parts, scenes, state
from ui.gpt_page import built_from, reset, start, start_session, stop, wanted
from ui.training_page import drawn, train_chunk
from ui.i18n import md_escape, number, power_of_ten, t
from ui.presentation import prose
from ui.training import CHUNK_SECONDS

D_MODELS, HEADS, LRS = (32, 64, 128), (1, 2, 4), (1e-3, 2e-3, 5e-3, 1e-2)
MAX_LAYERS, MIN_STEPS, MAX_STEPS = 4, 100, 3000
MAX_PROMPT = 40  # prompt characters (the context is 64)
KV_REPEATS = 3  # generations timed each way (the fastest time of every step is shown)
PARTS = ("generate", "attention", "kvcache")
SCENES = {"default": {"gpt_d_model": 64, "gpt_layers": 2, "gpt_heads": 4, "gpt_lr": 1e-2, "gpt_steps": 1500},
          "tiny": {"gpt_d_model": 32, "gpt_layers": 1, "gpt_heads": 2, "gpt_lr": 1e-2, "gpt_steps": 600}}
ss = st.session_state


def intro(found: Corpus) -> None:
    st.title(t("gpt.title"))
    scenes.picker("gpt", SCENES)
    prose(t("gpt.intro"))
    st.latex(r"\mathcal{L} = -\frac{1}{N}\sum_{t=1}^{N} \ln p_\theta(c_t \mid c_{<t})")
    base = baselines(found)
    prose(t("gpt.corpus_text", sections=found.sections, heldout=found.heldout_sections, train=len(found.train),
            held=len(found.heldout), vocab=len(found.vocab)))
    cols = st.columns(3)
    cols[0].metric(t("gpt.uniform"), number(base.uniform, ".3f"), help=t("gpt.uniform_help"))
    cols[1].metric(t("gpt.unigram"), number(base.unigram, ".3f"), help=t("gpt.unigram_help", alpha=base.unigram_alpha))
    cols[2].metric(t("gpt.bigram"), number(base.bigram, ".3f"), help=t("gpt.bigram_help", alpha=base.bigram_alpha))


@st.fragment
def setup(outside: tuple) -> None:
    """The run's settings and its buttons. A fragment: a setting reruns this section alone (a run is built from
    them only at Start); Start, Stop and Reset rerun the whole lesson (`outside`: `drawn`, ui/training_page.py)."""
    st.subheader(t("gpt.setup_header"))
    cols = st.columns(3, gap="large")
    with cols[0]:
        links.control(st.select_slider, "d_model", D_MODELS, setting="gpt_d_model")
        links.control(st.slider, t("gpt.layers"), 1, MAX_LAYERS, setting="gpt_layers")
    with cols[1]:
        links.control(st.select_slider, t("train.heads"), HEADS, setting="gpt_heads")
        links.control(st.select_slider, t("train.lr"), LRS, format_func=power_of_ten, setting="gpt_lr")
    with cols[2]:
        links.control(st.slider, t("train.steps"), MIN_STEPS, MAX_STEPS, step=100,
                      help=t("train.steps_help", cap=MAX_STEPS), setting="gpt_steps")
        st.caption(t("gpt.fixed_caption", context=DEFAULT_MODEL["max_len"], batch=DEFAULT_TRAIN.batch_size))
    run = ss.get(gpt_run.RUN_KEY)
    running = run is not None and run.running
    finished = run is not None and (run.trainer.done or ss.get("gpt_capped") == run.token)
    buttons = st.columns([1, 1, 1, 2])
    buttons[0].button(t("train.continue" if run is not None and run.trainer.step else "train.start"), on_click=start,
                      type="primary", icon=":material/play_arrow:", disabled=running or finished)
    buttons[1].button(t("train.stop"), on_click=stop, icon=":material/pause:", disabled=not running)
    buttons[2].button(t("train.reset"), on_click=reset, icon=":material/restart_alt:", disabled=run is None)
    if drawn(gpt_run.RUN_KEY) != outside:
        st.rerun()  # a run started, stopped or was reset: the live section and the tools follow
    if ss.get("gpt_refused"):
        st.warning(t(ss["gpt_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    if run is not None and built_from(run) != wanted():
        st.info(t("train.settings_changed"), icon=":material/info:")
    if run is not None and run.lang != settings.lang:
        st.info(t("gpt.other_language", lang=t(f"gpt.lang_of.{run.lang}")), icon=":material/translate:")


def live() -> None:
    run = ss.get(gpt_run.RUN_KEY)
    if run is None:
        st.info(t("gpt.no_run"), icon=":material/info:")
        return
    if ss.get("gpt_capped") == run.token:
        st.warning(t("train.time_cap", minutes=limits.MAX_RUN_MINUTES), icon=":material/timer_off:")
    trainer, last = run.trainer, run.measures[-1]
    st.progress(min(1.0, trainer.step / trainer.train_cfg.steps),
                text=t("train.progress", step=trainer.step, steps=trainer.train_cfg.steps))
    cols = st.columns(3)
    cols[0].metric(t("gpt.heldout"), number(last.heldout, ".3f"), help=t("gpt.heldout_help"))
    cols[1].metric(t("gpt.ratio"), number(last.heldout / run.baselines.bigram, ".2f"), help=t("gpt.ratio_help"))
    cols[2].metric(t("gpt.seconds"), number(trainer.elapsed, ".0f"))
    gpt_views.loss_chart(run, settings.lang)
    st.markdown(t("gpt.sample_header", step=last.step, seconds=float(last.elapsed)))
    st.code(run.prompt + last.sample, language=None, wrap_lines=True)
    gpt_views.samples_table(run, expanded=settings.show_numbers)
    if run.running:  # after drawing, as lesson 9 does (see ui/training.py's CHUNK_SECONDS)
        train_chunk(run, refused="gpt_refused", capped="gpt_capped")


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
    found = gpt_views.shipped(settings.lang)
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
    before, after = gpt_views.step_probabilities(found.logits[step - 1], knobs)  # (V,) twice
    chosen = int(found.tokens[step - 1])
    st.markdown(t("gpt.step_text", step=step, context=md_escape(vocab.decode(ids.tolist()) + chars[:step - 1])[-40:],
                  chosen=md_escape(repr(chars[step - 1])), p=float(after[chosen])))
    gpt_views.next_char_bars(before, after, chosen, vocab, settings.show_numbers)


def attention_part(model, vocab) -> None:
    prose(t("gpt.attention_text"))
    ids = prompt_ids(vocab)
    if ids is None:
        return
    weights = causal_attention(model, ids)  # (layers, heads, n, n)
    layers, heads = weights.shape[:2]
    st.altair_chart(charts.attention_grid(to_numpy(weights), [t("train.layer_n", i=i + 1) for i in range(layers)],
                                          [t("train.head_n", h=h + 1) for h in range(heads)],
                                          value_title=t("gpt.weight"), width=700), width="content")
    st.caption(t("gpt.attention_caption", n=len(ids), above=float(weights.triu(1).abs().max())))
    if settings.show_numbers:
        labels = [gpt_views.char_label(c) for c in vocab.decode(ids.tolist())]
        panels.numbers_table(to_numpy(weights[-1, 0]), labels, labels, key="gpt_attention_numbers")


def kv_part(model, vocab) -> None:
    prose(t("gpt.kv_text"))
    ids = prompt_ids(vocab)
    if ids is None:
        return
    new = model.cfg.max_len - len(ids)  # up to the end of the context
    found = compare_cache(model, ids, new, repeats=KV_REPEATS, seed=settings.seed)
    st.code(vocab.decode(ids.tolist()) + vocab.decode(found.cached.tokens.tolist()), language=None, wrap_lines=True)
    same = found.identical
    (st.success if same else st.warning)(t("gpt.kv_same" if same else "gpt.kv_differ", gap=found.logit_gap),
                                         icon=":material/check_circle:" if same else ":material/warning:")
    gpt_views.kv_timings(found, list(range(len(ids), len(ids) + new)), KV_REPEATS, settings.lang,
                         settings.show_numbers)
    st.caption(t("gpt.kv_caption", plain=1000 * sum(found.plain_seconds), cached=1000 * sum(found.cached_seconds)))


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
start_session()
intro(gpt_views.corpus_of(settings.lang))
setup(drawn(gpt_run.RUN_KEY))
training()
inspect()
notice()
