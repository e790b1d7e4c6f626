"""Lesson 14's run in the session: the settings a run is built from, and the callbacks of its buttons.

The run is a `ui.gpt_run.GPTRun` in ``st.session_state[gpt_run.RUN_KEY]``; the controls' values are the canonical
settings ``gpt_*``. Start, Stop and Reset are button callbacks (they run before the script, so the page that
follows already shows their result). Lesson 9's ui/training_page.py builds its runs otherwise, but stops them and
trains them a chunk at a time the same way: this module and the lesson use its `halt` and `train_chunk`. A refusal
(ui/limits.py) is stored under "gpt_refused" and said by the page, never raised.
"""
from __future__ import annotations

import streamlit as st

from . import gpt_run, limits, state
from .i18n import t
from .training_page import halt

DEFAULTS = (("gpt_d_model", 64), ("gpt_layers", 2), ("gpt_heads", 4), ("gpt_lr", 1e-2), ("gpt_steps", 1500),
            ("gpt_temp", 0.8), ("gpt_top_k", 20), ("gpt_top_p", 0.95), ("gpt_new", 24), ("gpt_step", 1))


def start_session() -> None:
    """The controls' values on the first visit (the prompt: the live samples' prompt of the reader's language)."""
    ss = st.session_state
    for name, value in DEFAULTS:
        ss.setdefault(name, value)
    ss.setdefault("gpt_prompt", t("gpt.sample_prompt").strip())


def wanted() -> dict:
    """What a new run would be built from, read from the controls (and the sidebar's seed)."""
    ss = st.session_state
    model = {"d_model": ss["gpt_d_model"], "n_layers": ss["gpt_layers"], "n_heads": ss["gpt_heads"],
             "d_ff": 4 * ss["gpt_d_model"]}
    return {"model_changes": model, "lr": ss["gpt_lr"], "steps": int(ss["gpt_steps"]), "seed": state.settings().seed}


def built_from(run: gpt_run.GPTRun) -> dict:
    """`wanted()` as the run was built (to say when the controls no longer match it)."""
    cfg, train = run.trainer.model_cfg, run.trainer.train_cfg
    model = {"d_model": cfg.d_model, "n_layers": cfg.n_layers, "n_heads": cfg.n_heads, "d_ff": cfg.d_ff}
    return {"model_changes": model, "lr": train.lr, "steps": train.steps, "seed": train.seed}


def start() -> None:
    """Start (or go on with) the run, within the server's budget (ui/limits.py)."""
    ss = st.session_state
    ss.pop("gpt_refused", None)
    run = ss.get(gpt_run.RUN_KEY)
    if run is None:
        if not limits.may_start():
            ss["gpt_refused"] = "train.refused_starts"
            return
        settings = state.settings()
        run = ss[gpt_run.RUN_KEY] = gpt_run.GPTRun.new(settings.lang, t("gpt.sample_prompt"), settings.device,
                                                       **wanted())
    if run.trainer.done:
        return
    if not limits.claim(run.token):
        ss["gpt_refused"] = "train.refused_busy"
        return
    run.running = True


def stop() -> None:
    halt(gpt_run.RUN_KEY)


def reset() -> None:
    stop()
    st.session_state.pop(gpt_run.RUN_KEY, None)
