"""Lesson 10's presentation machinery (lessons/10_decoding.py): the toy table and its controls, the model and
input pickers, the strategies' settings, the bar charts and tables, and the beam-search tree (SVG drawn on the
server by ui/tree_diagram.py)."""
import numpy as np
import pandas as pd
import streamlit as st

from core import to_numpy
from core.decoding import beam_paths
from core.tasks import BOS_ID, EOS_ID, TaskInputError
from ui import charts, links, models, panels, tables
from ui.i18n import md_escape, number, t
from ui.tree_diagram import Tree, TreeNode, layout, render

TOY_LOGITS = (3.0, 2.2, 1.9, 1.0, 0.2, -0.5)  # illustrative numbers
MAX_TOY, BOUND = 12, 50.0
DRAWS = (20, 100, 1000, 10000)
INPUT_MAX_CHARS = 200  # the typed source (the longest task input is 32 symbols)
MAX_WIDTH, MAX_DRAWN_STEPS, PRUNED_SHOWN = 8, 6, 3
STRATEGY_NAMES = {"greedy": "dec.greedy", "sampling": "dec.sampling", "beam": "dec.beam"}
INPUT_ERRORS = {"empty": "dec.err_empty", "unknown_symbol": "dec.err_unknown_symbol", "too_long": "dec.err_too_long",
                "too_short": "dec.err_too_short", "bad_format": "dec.err_bad_format"}
EARLY = "copy_early"  # assets/checkpoints/copy_early.pt: the shipped copy model's run stopped at step 180 of 400
BEAM_WINS = "1 2 1 12 4 12 6 2 11 4 8 13 3 12 14 13 18 2 1 16"  # there greedy errs; beam search (width 3) does not


def toy_table() -> pd.DataFrame:
    return pd.DataFrame({"token": t("dec.toy_words").split(","), "logit": list(TOY_LOGITS)})


def reset_toy() -> None:
    ss = st.session_state
    ss["dec_temp"], ss["dec_top_k"], ss["dec_top_p"], ss["dec_draws"] = 1.0, 3, 0.9, DRAWS[0]
    panels.reset_editor("dec_toy", toy_table())


def move_step(delta: int, n_steps: int) -> None:
    st.session_state["dec_step"] = min(max(1, st.session_state["dec_step"] + delta), n_steps)


def word_list(labels: list[str], mask: np.ndarray) -> str:
    return ", ".join(f"**{md_escape(w)}**" for w, keep in zip(labels, mask) if keep)


def table(df: pd.DataFrame, key: str, **kwargs) -> None:
    """One of the lesson's read-only tables, plain (no grid to redraw when a strategy's setting moves), scrolling
    past tables.SCROLL_ROWS rows (every candidate of a beam step: up to width x vocabulary rows)."""
    tables.table(df, width="content", key=key, **kwargs)


def bars(col, values, labels, title, **kw) -> None:
    with col:
        st.markdown(f"##### {title}")
        kw = {"value_title": t("dec.probability"), "ghost_title": t("dec.before")} | kw
        panels.svg_image(charts.distribution_bars(values, labels, removed_text=t("dec.removed"),
                                                  marked_text=t("dec.chosen"), **kw))


def input_problem(error: TaskInputError, task) -> str:
    return t(INPUT_ERRORS.get(error.code, "dec.err_bad_format"), part=md_escape(error.part), limit=error.limit,
             symbols=md_escape(" ".join(task.src_vocab.symbols)), example=md_escape(task.examples(1)[0][0]))


def beam_tree(beam, names: list[str], upto: int) -> tuple[Tree, str]:
    """The search tree of steps lo..upto (at most MAX_DRAWN_STEPS), placed (ui/tree_diagram.py): the root or the
    hypotheses alive before step lo, then each step's kept candidates and best pruned ones. Returns the tree and
    its full text description, which names every node's hypothesis and log-probability."""
    lo, paths, best = max(1, upto - MAX_DRAWN_STEPS + 1), beam_paths(beam), beam.hypotheses[0]
    if lo == 1:
        previous = {-1: TreeNode((names[BOS_ID],), marked=True)}
    else:
        previous = {i: TreeNode((f"… {' '.join(names[x] for x in path[-3:])}",), marked=path == best.tokens[:lo - 1])
                    for i, path in paths[lo - 2].items() if path[-1] != EOS_ID}
    columns, steps = [list(previous.values())], []
    for s in range(lo, upto + 1):
        previous, text = step_nodes(beam.steps[s - 1], paths[s - 2] if s > 1 else {-1: []}, paths[s - 1], s,
                                    previous, names, best.tokens)
        columns.append(list(previous.values()))
        steps.append(text)
    tree = layout(columns, [""] + [t("dec.tree_step", step=s) for s in range(lo, upto + 1)])
    return tree, t("dec.tree_description", lo=lo, hi=upto, steps=" ".join(steps),
                   best=" ".join(names[x] for x in best.tokens), best_logp=best.log_prob)


def step_nodes(step, earlier: dict, kept: dict, s: int, parents: dict, names: list[str], best: list[int]
               ) -> tuple[dict, str]:
    """Step s's kept candidates and its PRUNED_SHOWN best pruned ones as boxes ({candidate index: box}), each
    grown from its parent's box in `parents`, and the sentence that names them. `earlier` and `kept`: the kept
    paths of steps s - 1 and s (core.decoding.beam_paths)."""
    boxes, named = {}, {"kept": [], "finished": [], "pruned": []}
    for i in range(min(len(step.token), len(kept) + PRUNED_SHOWN)):
        token, log_p = int(step.token[i]), float(step.log_prob[i])
        look = "pruned" if i not in kept else "finished" if token == EOS_ID else "kept"
        boxes[i] = TreeNode((names[token], number(log_p, ".2f")), parents[int(step.parent[i])], look,
                            marked=i in kept and kept[i] == best[:s])
        path = [*earlier[int(step.parent[i])], token]
        named[look].append(f"{' '.join(names[x] for x in path)} ({number(log_p, '.2f')})")
    listed = {look: "; ".join(items) or t("dec.tree_none") for look, items in named.items()}
    return boxes, t("dec.tree_step_text", step=s, shown=len(named["pruned"]),
                     total=len(step.token) - len(kept), **listed)


def tree_svg(beam, names: list[str], upto: int) -> str:
    """The beam search tree up to step `upto` as one accessible SVG, drawn on the server."""
    tree, description = beam_tree(beam, names, upto)
    return render(tree, title=t("dec.tree_title"), description=description, name="dec-tree")


def toy_controls() -> panels.EditedMatrix:
    """The editable logits beside T, k, p and the number of draws; returns the edited table."""
    ss = st.session_state
    editor_col, controls_col = st.columns([2, 3], gap="large")
    with editor_col:
        edited = panels.matrix_editor("dec_toy", toy_table(), columns=["logit"], label_column="token",
                                      label_title=t("dec.token"), column_title=lambda k: t("dec.logit"), min_rows=2,
                                      max_rows=MAX_TOY, bound=BOUND, alt_text=t("dec.editor_alt"))
        st.caption(t("dec.editor_help", max=MAX_TOY, bound=BOUND))
    V = len(edited.labels)
    ss["dec_top_k"] = min(int(ss["dec_top_k"]), V)
    with controls_col:
        links.control(st.slider, t("dec.temperature"), 0.1, 3.0, step=0.05, help=t("dec.temperature_help"),
                      setting="dec_temp")
        links.control(st.slider, t("dec.top_k"), 1, V, step=1, help=t("dec.top_k_help"), setting="dec_top_k")
        links.control(st.slider, t("dec.top_p"), 0.05, 1.0, step=0.05, help=t("dec.top_p_help"), setting="dec_top_p")
        links.control(st.select_slider, t("dec.draws"), DRAWS, help=t("dec.draws_help"), setting="dec_draws")
        st.button(t("dec.reset"), on_click=reset_toy, icon=":material/restart_alt:", key="dec_reset")
    if edited.problems:
        panels.problems_box(edited.problems)
    return edited


def model_label(choice: models.ModelChoice, lang: str) -> str:
    """A model's name in the selector: the early snapshot says where it stopped."""
    if choice.source != "early":
        return choice.label(lang)
    metrics = models.shipped(EARLY).metrics
    return t("dec.model_early", lang, step=metrics["steps"], total=metrics["train_config"]["steps"])


def model_and_input(lang: str) -> tuple:
    """The model to decode with and the learner's input; returns (choice, text)."""
    ss = st.session_state
    early = models.shipped(EARLY)
    choices = {c.id: c for c in [*models.choices(), models.ModelChoice("early", "copy", early.model, early.task)]}
    ss.setdefault("dec_model", next(iter(choices)) if "session:" in next(iter(choices)) else "early:copy")
    if ss["dec_model"] not in choices:
        ss["dec_model"] = next(iter(choices))
    pick_col, text_col = st.columns(2, gap="large")
    with pick_col:
        links.control(st.selectbox, t("dec.model"), list(choices),
                      format_func=lambda cid, lang=lang: model_label(choices[cid], lang), setting="dec_model")
    choice = choices[ss["dec_model"]]
    example = choice.task.examples(1)[0][0]
    text_key = f"dec_text_{choice.source}_{choice.task_name}"
    ss.setdefault(text_key, BEAM_WINS if choice.source == "early" else example)
    with text_col:
        text = links.control(st.text_input, t("dec.input"), help=t("dec.input_help", example=example),
                             max_chars=INPUT_MAX_CHARS, setting=text_key)
    return choice, text


def strategy_controls(Vm: int) -> dict:
    """The three strategies' headers and their settings; returns core.sampling's strategy keywords."""
    ss = st.session_state
    if ss.get("dec_m_vocab") != Vm:  # a new vocabulary: top-k starts "off" (k = V)
        ss["dec_m_vocab"], ss["dec_m_top_k"] = Vm, Vm
    g_col, s_col, b_col = st.columns(3, gap="large")
    with g_col:
        st.markdown(f"#### {t('dec.greedy')}")
        st.caption(t("dec.greedy_caption"))
    with s_col:
        st.markdown(f"#### {t('dec.sampling')}")
        links.control(st.slider, t("dec.temperature"), 0.1, 3.0, step=0.05, setting="dec_m_temp")
        links.control(st.slider, t("dec.top_k"), 1, Vm, step=1, help=t("dec.m_top_k_help"), setting="dec_m_top_k")
        links.control(st.slider, t("dec.top_p"), 0.05, 1.0, step=0.05, setting="dec_m_top_p")
        links.control(st.number_input, t("dec.seed"), 0, 2**31 - 1, step=1, setting="dec_m_seed")
    with b_col:
        st.markdown(f"#### {t('dec.beam')}")
        links.control(st.slider, t("dec.width"), 1, MAX_WIDTH, step=1, help=t("dec.width_help"), setting="dec_width")
        links.control(st.slider, t("dec.alpha"), 0.0, 2.0, step=0.1, help=t("dec.alpha_help"), setting="dec_alpha")
    mk = int(ss["dec_m_top_k"])
    return {"temperature": float(ss["dec_m_temp"]), "top_k": mk if mk < Vm else None, "top_p": float(ss["dec_m_top_p"])}


def candidates_table(beam, names: list[str], s: int, shown: int, room: int) -> None:
    """Step s's first `shown` candidates: the prefix each extends, its token, log-probability and status."""
    step, paths = beam.steps[s - 1], beam_paths(beam)
    parents = [paths[s - 2][int(step.parent[i])] if s > 1 else [] for i in range(shown)]
    status = [t("dec.finished") if i < room and int(step.token[i]) == EOS_ID else
              t("dec.kept") if i < room else t("dec.pruned") for i in range(shown)]
    table(pd.DataFrame({t("dec.col_prefix"): [" ".join(names[x] for x in [BOS_ID, *q]) for q in parents],
                        t("dec.col_token"): [names[int(x)] for x in step.token[:shown]],
                        t("dec.col_logp"): to_numpy(step.log_prob[:shown]),
                        t("dec.col_status"): status}), "dec_candidates")


def final_table(beam, task, expected: str) -> None:
    """The final beams: each answer, its tokens, whether it finished, its log-probability, score and rightness."""
    names, hyps = task.tgt_vocab.tokens, beam.hypotheses
    right = ["✓" if task.decode_target(h.tokens) == expected else "✗" for h in hyps]
    table(pd.DataFrame({t("dec.col_output"): [task.decode_target(h.tokens) for h in hyps],
                        t("dec.col_tokens_list"): [" ".join(names[x] for x in h.tokens) for h in hyps],
                        t("dec.col_finished"): ["✓" if h.finished else "✗" for h in hyps],
                        t("dec.col_logp"): [h.log_prob for h in hyps], t("dec.col_score"): [h.score for h in hyps],
                        t("dec.col_right"): right},
                       index=range(1, len(hyps) + 1)), "dec_final", hide_index=False)  # numbered, best first
