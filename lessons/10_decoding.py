"""Lesson 10: decoding strategies (CURRICULUM.md, lesson 10), one part on screen at a time (ui/parts.py).

Part 1: a hand-editable next-token distribution through core.sampling's filters (temperature, top-k, top-p)
and seeded draws. Part 2: a trained model (ui.models) decodes the learner's input step by step, greedily and
by sampling (core.sampling.decode_steps) and with beam search (core.decoding.beam_search, its search tree drawn).
"""
import math
from collections import Counter

import pandas as pd
import streamlit as st
import torch

from core import to_numpy
from core.decoding import beam_search, next_token_logits
from core.sampling import (
    apply_temperature,
    decode_steps,
    decode_strategies,
    filter_logits,
    filter_stages,
    sample,
    sequence_log_prob,
    top_k_filter,
    top_p_filter,
)
from core.tasks import BOS_ID, TaskInputError
from ui import charts, links, panels, parts, scenes, state
from ui.decoding_views import (DRAWS, MAX_DRAWN_STEPS, PRUNED_SHOWN, STRATEGY_NAMES, bars, candidates_table,
                               final_table, input_problem, model_and_input, move_step, strategy_controls, table,
                               toy_controls, tree_svg, word_list)
from ui.i18n import md_escape, number, t
from ui.presentation import prose

N_SAMPLES = 20
TOY_CODE = (apply_temperature, top_k_filter, top_p_filter, filter_logits, sample)
PARTS = ("toy", "model")  # the sub-lessons: a hand-made distribution, a trained model


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); values are canonical settings
    "hot": {"dec_part": "toy", "dec_temp": 2.0, "dec_top_k": 3, "dec_top_p": 0.9},
    "nucleus": {"dec_part": "toy", "dec_temp": 1.0, "dec_top_k": 6, "dec_top_p": 0.5, "dec_draws": 10000},
    # the model's scenes put the toy distribution's controls back to their defaults
    "long_answer": {"dec_part": "model", "dec_model": "shipped:copy",
                    "dec_text_shipped_copy": "16 5 1 1 12 8 6 10 10 5 14 2 4 8 17 16 2 12 19 7",
                    "dec_m_temp": 1.0, "dec_m_top_p": 1.0, "dec_temp": 1.0, "dec_top_k": 3, "dec_top_p": 0.9},
    "beam_wins": {"dec_part": "model", "dec_model": "early:copy", "dec_view": "beam", "dec_width": 3,
                  "dec_text_early_copy": "1 2 1 12 4 12 6 2 11 4 8 13 3 12 14 13 18 2 1 16",  # views.BEAM_WINS
                  "dec_alpha": 0.0, "dec_temp": 1.0, "dec_top_k": 3, "dec_top_p": 0.9},
    "beam": {"dec_part": "model", "dec_model": "shipped:addition", "dec_text_shipped_addition": "044+239",
             "dec_view": "beam", "dec_width": 4, "dec_temp": 1.0, "dec_top_k": 3, "dec_top_p": 0.9},
}


def intro() -> str:
    """Title, scenes, the filters' equations and the part picker; returns the chosen part."""
    st.title(t("dec.title"))
    scenes.picker("dec", SCENES)
    prose(t("dec.intro"))
    st.latex(r"p_i = \frac{e^{z_i / T}}{\sum_j e^{z_j / T}} \qquad S_k = \operatorname{top}_k(p) \qquad "
             r"S_p = \underset{S:\ \sum_{i \in S} p_i \,\ge\, p}{\arg\min} |S| \qquad "
             r"\tilde{p}_i = \begin{cases} p_i / \sum_{j \in S} p_j & i \in S \\ 0 & i \notin S \end{cases}")
    prose(t("dec.equations"))
    return parts.pick("dec_part", PARTS, label=t("dec.part"),
                      format_func=lambda part, lang=lang: t(f"dec.{part}_header", lang))


@st.fragment
def toy() -> None:
    """Part 1: a distribution to edit, each filter's effect, and seeded draws; its controls rerun this part only."""
    st.subheader(t("dec.toy_header"))
    st.markdown(t("dec.toy_text"))
    edited = toy_controls()
    labels = edited.labels
    T, k, p, n_draws = float(ss["dec_temp"]), int(ss["dec_top_k"]), float(ss["dec_top_p"]), int(ss["dec_draws"])
    z = torch.tensor(edited.values[:, 0], dtype=torch.float64)  # (V,)
    D = filter_stages(z, T, k, p, torch.Generator().manual_seed(settings.seed), n_draws)
    P, kept, counts = D["P"], D["kept"], D["counts"]
    left, right = st.columns(2, gap="large")
    bars(left, P["model"], labels, t("dec.chart_model"), marked=int(z.argmax()), color=charts.PALETTE["input"])
    bars(right, P["temp"], labels, t("dec.chart_temp", T=T), ghost=P["model"])
    cols = st.columns(3, gap="medium")
    bars(cols[0], P["topk"], labels, t("dec.chart_topk", k=k), ghost=P["temp"], kept=kept["topk"])
    bars(cols[1], P["topp"], labels, t("dec.chart_topp", p=p), ghost=P["temp"], kept=kept["topp"])
    bars(cols[2], P["all"], labels, t("dec.chart_all"), ghost=P["temp"], kept=kept["all"],
         color=charts.PALETTE["output"])
    st.caption(t("dec.bars_caption"))
    st.markdown(t("dec.toy_summary", greedy=md_escape(labels[int(z.argmax())]), k=k,
                  topk=word_list(labels, kept["topk"]), p=p, topp=word_list(labels, kept["topp"]),
                  mass=float(P["temp"][kept["topp"]].sum()), all=word_list(labels, kept["all"])))
    left, right = st.columns([3, 2], gap="large")
    bars(left, counts, labels, t("dec.chart_draws", n=n_draws, seed=settings.seed), ghost=n_draws * P["all"],
         kept=kept["all"], domain=None, value_format=".0f", color=charts.PALETTE["value"],
         value_title=t("dec.col_draws"), ghost_title=t("dec.col_expected"))
    with right:
        prose(t("dec.draws_text", n=n_draws))
    with st.container():  # the numbers come and go in their own block: the code below keeps its place (no redraw)
        if settings.show_numbers:
            table(pd.DataFrame({t("dec.logit"): z.numpy(), "softmax(z)": P["model"], f"T = {number(T, 'g')}": P["temp"],
                                f"top-k (k = {k})": P["topk"], f"top-p (p = {number(p, 'g')})": P["topp"],
                                t("dec.col_all"): P["all"], t("dec.col_draws"): counts,
                                t("dec.col_expected"): n_draws * P["all"]},
                               index=charts.unique_labels(labels)), "dec_toy_numbers")
    panels.show_code(*TOY_CODE)

def compare(runs: dict, task, expected: str, strategy: dict, seed: int) -> None:
    """The three answers side by side, and what they say about greedy, sampling and beam search."""
    greedy, best = runs["greedy"], runs["beam"].hypotheses[0]
    outputs = {"greedy": (greedy.tokens[0].tolist(), sequence_log_prob(greedy)),
               "sampling": (runs["sampling"].tokens[0].tolist(), sequence_log_prob(runs["sampling"])),
               "beam": (best.tokens, best.log_prob)}
    st.markdown(f"#### {t('dec.compare_header')}")
    answer = {s: task.decode_target(ids) for s, (ids, _) in outputs.items()}
    table(pd.DataFrame({t("dec.col_output"): list(answer.values()),
                        t("dec.col_right"): ["✓" if a == expected else "✗" for a in answer.values()],
                        t("dec.col_logp"): [lp for _, lp in outputs.values()],
                        t("dec.col_tokens"): [len(ids) for ids, _ in outputs.values()]},
                       index=[t(STRATEGY_NAMES[s]) for s in outputs]), "dec_compare")
    with torch.no_grad():
        kept_probs = torch.softmax(filter_logits(greedy.logits[0], **strategy), -1)  # (k, V)
        path_probs = kept_probs.gather(-1, greedy.tokens[0][:, None])  # (k, 1)
    gain = best.log_prob - outputs["greedy"][1]
    sampled_texts = Counter(task.decode_target(row) for row in runs["many"].tokens.tolist())
    top_p_model = greedy.before[0].max(dim=-1).values  # (k,)
    st.markdown(t("dec.compare_text", mean=float(top_p_model.mean()), low=float(top_p_model.min()),
                  k=greedy.tokens.shape[1], same=float(path_probs.prod()), n=N_SAMPLES,
                  right=sampled_texts[expected], distinct=len(sampled_texts), seed=seed,
                  beam_gain=float(gain) if abs(gain) >= 5e-5 else 0.0))
    if gain >= 5e-5:  # beam search found a more probable whole answer than greedy's
        st.success(t("dec.beam_wins", gain=float(gain), ratio=math.exp(gain)),
                   icon=":material/account_tree:")
    else:
        st.info(t("dec.beam_ties"), icon=":material/account_tree:")
    with st.container():  # the numbers in their own block: the steps below keep their place (no redraw)
        if settings.show_numbers:
            table(pd.DataFrame({t("dec.col_output"): list(sampled_texts),
                                t("dec.col_count"): list(sampled_texts.values())}), "dec_samples")


@st.fragment
def model_part() -> None:
    """Part 2: a trained model decodes the learner's input three ways; its controls rerun this part only."""
    st.subheader(t("dec.model_header"))
    prose(t("dec.model_text"))
    choice, text = model_and_input(lang)
    task, model = choice.task, choice.model
    try:
        src = task.encode_source(text)  # (1, n_src)
    except TaskInputError as error:
        st.warning(input_problem(error, task), icon=":material/edit_note:")
        panels.show_code(*TOY_CODE)
        return
    expected = task.format_target(task.answer(task.parse(text)))
    st.markdown(t("dec.expected", source=md_escape(text), expected=md_escape(expected)))
    strategy = strategy_controls(len(task.tgt_vocab.tokens))
    seed = int(ss["dec_m_seed"])
    runs = decode_strategies(model, src.to(next(model.parameters()).device), task.max_tgt_len + 1, strategy,
                             int(ss["dec_width"]), float(ss["dec_alpha"]), seed, N_SAMPLES)
    compare(runs, task, expected, strategy, seed)
    step_through(runs, task, expected)
    panels.show_code(*TOY_CODE, next_token_logits, decode_steps, beam_search)


@st.fragment
def step_through(runs: dict, task, expected: str) -> None:
    """One strategy, one step at a time; the view, the step slider and its buttons rerun this section only."""
    st.markdown(f"#### {t('dec.steps_header')}")
    links.control(st.radio, t("dec.view"), list(STRATEGY_NAMES),
                  format_func=lambda s, lang=lang: t(STRATEGY_NAMES[s], lang), horizontal=True, setting="dec_view")
    view = ss["dec_view"]
    n_steps = len(runs["beam"].steps) if view == "beam" else int(runs[view].tokens.shape[1])
    ss["dec_step"] = min(max(1, int(ss["dec_step"])), n_steps)
    back, slider_col, forward = st.columns([2, 5, 2], vertical_alignment="bottom")
    back.button(t("dec.previous"), on_click=move_step, args=(-1, n_steps), icon=":material/chevron_left:",
                key="dec_previous")
    forward.button(t("dec.next"), on_click=move_step, args=(1, n_steps), icon=":material/chevron_right:",
                   key="dec_next")
    with slider_col:
        if n_steps > 1:
            links.control(st.slider, t("dec.step"), 1, n_steps, step=1, setting="dec_step")
        else:
            st.caption(t("dec.one_step"))
    if view == "beam":
        beam_step(runs["beam"], task, expected, int(ss["dec_step"]))
    else:
        token_step(runs[view], task.tgt_vocab.tokens, view, int(ss["dec_step"]))


def token_step(trace, names: list[str], view: str, s: int) -> None:
    """Step s of greedy or sampling: the decoder's input, the model's distribution and the strategy's."""
    ids = trace.tokens[0].tolist()
    chosen = ids[s - 1]
    st.markdown(t("dec.decoder_input", step=s, tokens=" ".join(f"`{names[i]}`" for i in [BOS_ID, *ids[:s - 1]])))
    before, after = to_numpy(trace.before[0, s - 1]), to_numpy(trace.after[0, s - 1])
    left, right = st.columns(2, gap="large")
    bars(left, before, names, t("dec.chart_step_model"), marked=chosen, color=charts.PALETTE["input"])
    bars(right, after, names, t("dec.chart_step_after", strategy=t(STRATEGY_NAMES[view])), marked=chosen,
         ghost=before, kept=after > 0, color=charts.PALETTE["output"])
    st.markdown(t("dec.step_choice", step=s, token=md_escape(names[chosen]), p_model=float(before[chosen]),
                  p_after=float(after[chosen]), rank=int((before > before[chosen]).sum()) + 1))
    if settings.show_numbers:
        table(pd.DataFrame({t("dec.logit"): to_numpy(trace.logits[0, s - 1]), "softmax(z)": before,
                            t("dec.col_after"): after}, index=names), "dec_step_numbers")


def beam_step(beam, task, expected: str, s: int) -> None:
    """Step s of beam search: the tree so far, the candidates (kept, finished, pruned) and the final beams."""
    names = task.tgt_vocab.tokens
    step = beam.steps[s - 1]
    room = int(step.kept.sum())
    st.markdown(t("dec.beam_step", step=s, alive=len(step.token) // len(names), V=len(names), m=len(step.token),
                  kept=room))
    st.markdown(tree_svg(beam, names, s), unsafe_allow_html=True)  # SVG drawn on the server (ui/tree_diagram.py)
    st.caption(t("dec.tree_caption", lo=max(1, s - MAX_DRAWN_STEPS + 1), hi=s, cap=MAX_DRAWN_STEPS,
                 pruned=PRUNED_SHOWN, m=len(step.token)))
    shown = len(step.token) if settings.show_numbers else min(len(step.token), room + PRUNED_SHOWN)
    candidates_table(beam, names, s, shown, room)
    st.markdown(f"##### {t('dec.final_header')}")
    final_table(beam, task, expected)



settings = state.settings()
ss = st.session_state
lang = settings.lang
for name, value in (("dec_temp", 1.0), ("dec_top_k", 3), ("dec_top_p", 0.9), ("dec_draws", DRAWS[0]),
                    ("dec_m_temp", 1.0), ("dec_m_top_p", 1.0), ("dec_m_seed", settings.seed), ("dec_width", 3),
                    ("dec_alpha", 0.0), ("dec_view", "greedy"), ("dec_step", 1)):
    ss.setdefault(name, value)

if intro() == "toy":
    toy()
else:
    model_part()
st.subheader(t("dec.notice_header"))
st.markdown(t("dec.notice_points"))