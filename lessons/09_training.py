"""Lesson 9: train a small Transformer here, then open that very model (CURRICULUM.md, lesson 9).

Setup (task, preset, sizes) -> Start: the session's `ui.training.Run` advances core.train.Trainer CHUNK_SECONDS
at a time inside a fragment that reruns itself while training, so the page redraws at most twice a second and
only the live section -> live curves (their data changes only when an evaluation lands). Then the trained (or
shipped) model, one inspection tool at a time (ui/parts.py, the tools in ui.training_tools); the exports. The
buttons' callbacks and the settings a run is built from are in ui.training_page.
"""
import streamlit as st

from core.decoding import greedy_decode
from core.evaluation import evaluate
from core.train import Trainer, learning_rate, sequence_loss
from ui import limits, links, models, panels, parts, scenes, state
from ui.presentation import prose
from ui.i18n import number, power_of_ten, t
from ui.training import CHUNK_SECONDS, Run
from ui.training_page import (drawn, load_preset, parameter_count, reset, start, start_session, step_work, stop,
                              use_pretrained, upload_checkpoint, wanted, train_chunk)
from ui.training_tools import (attention_section, curves, errors_section, export_section, headline,
                               snapshots_section, try_model, vocabulary_section)

TASK_NAMES = ("copy", "addition", "parser", "reverse", "sort")
D_MODELS, HEADS = (16, 32, 64, 128, 256), (1, 2, 4, 8)  # every d_model here is a multiple of every head count
D_FFS, BATCHES = (32, 64, 128, 256, 512, 1024), (16, 32, 64, 128, 256)
LRS = (1e-4, 2e-4, 5e-4, 1e-3, 2e-3, 5e-3, 1e-2, 2e-2)
MAX_LAYERS, MAX_STEPS = 4, 5000
POSITIONALS = ("sinusoidal", "learned", "rotary")
PARTS = ("try", "attention", "snapshots", "errors", "vocab")  # the inspection tools, one on screen at a time
ss = st.session_state


def task_controls(lang: str) -> None:
    links.control(st.selectbox, t("train.task"), TASK_NAMES, format_func=lambda n: t(f"task.{n}", lang),
                  setting="train_task", after=load_preset)
    links.control(st.radio, t("train.preset"), ("fast", "course"),
                  format_func=lambda p: t(f"train.preset_of.{p}", lang),
                  horizontal=True, help=t("train.preset_help"), setting="train_preset",
                  after=load_preset)
    if ss["train_task"] == "addition":
        links.control(st.slider, t("train.digits"), 1, 6, setting="train_digits")
        links.control(st.toggle, t("train.full_range"), help=t("train.full_range_help"), setting="train_full_range")
    elif ss["train_task"] == "parser":
        links.control(st.toggle, t("train.spaces"), setting="train_spaces")
    else:
        links.control(st.slider, t("train.length"), 2, 32, setting="train_length")
        links.control(st.slider, t("train.vocab"), 2, 64, setting="train_vocab")


def model_controls(lang: str) -> None:
    links.control(st.select_slider, "d_model", D_MODELS, setting="train_d_model")
    links.control(st.select_slider, t("train.heads"), HEADS, help=t("train.heads_help"), setting="train_heads")
    links.control(st.slider, t("train.layers"), 1, MAX_LAYERS, setting="train_layers")
    links.control(st.select_slider, "d_ff", D_FFS, setting="train_d_ff")
    links.control(st.slider, t("train.dropout"), 0.0, 0.5, step=0.05, setting="train_dropout")
    links.control(st.radio, t("train.norm"), ("pre", "post"), format_func=lambda v: t(f"train.norm_of.{v}", lang),
                  horizontal=True, setting="train_norm")
    links.control(st.radio, t("train.positional"), POSITIONALS, format_func=lambda v: t(f"train.pos_of.{v}", lang),
                  horizontal=True, setting="train_positional")


def schedule_controls() -> None:
    links.control(st.select_slider, t("train.lr"), LRS, format_func=power_of_ten, setting="train_lr")
    links.control(st.select_slider, t("train.batch"), BATCHES, setting="train_batch")
    links.control(st.slider, t("train.steps"), 20, MAX_STEPS, step=10, help=t("train.steps_help", cap=MAX_STEPS),
                  setting="train_steps")
    spec = wanted()
    size = parameter_count(spec["task_name"], spec["task_options"], spec["model_changes"])
    st.metric(t("train.parameters"), number(size, ","))
    st.caption(t("train.schedule", warmup=spec["warmup"], steps=spec["steps"], lr=spec["lr"]))
    if step_work(spec) > limits.MAX_STEP_WORK:
        st.warning(t("train.too_heavy", times=step_work(spec) / limits.MAX_STEP_WORK), icon=":material/speed:")


@st.fragment
def setup(outside: tuple) -> None:
    """Task, model and schedule in three columns; the buttons that start, stop, reset or load a run. A fragment:
    a setting reruns this section alone (a run is built from them at Start); the buttons and an upload rerun the
    whole lesson (`outside`: `drawn`, ui/training_page.py)."""
    st.subheader(t("train.setup_header"))
    task_col, model_col, train_col = st.columns(3, gap="large")
    with task_col:
        task_controls(settings.lang)
    with model_col:
        model_controls(settings.lang)
    with train_col:
        schedule_controls()
    run_buttons(ss.get(models.RUN_KEY))
    if drawn(models.RUN_KEY) != outside:
        st.rerun()  # a run started, stopped, was reset or loaded: the live section and the tools follow


def run_buttons(run: Run | None) -> None:
    running = run is not None and run.running
    finished = run is not None and (run.trainer.done or ss.get("train_capped") == run.token)
    buttons = st.columns([1, 1, 1, 2])
    buttons[0].button(t("train.continue" if run is not None and run.trainer.step else "train.start"), on_click=start,
                      type="primary", icon=":material/play_arrow:", disabled=running or finished)
    buttons[1].button(t("train.stop"), on_click=stop, icon=":material/pause:", disabled=not running)
    buttons[2].button(t("train.reset"), on_click=reset, icon=":material/restart_alt:", disabled=run is None)
    buttons[3].button(t("train.pretrained", task=t(f"task.{ss['train_task']}")), on_click=use_pretrained,
                      icon=":material/download_done:", disabled=ss["train_task"] not in models.SHIPPED or running,
                      help=t("train.pretrained_help"))
    if ss.get("train_refused"):
        st.warning(t(ss["train_refused"], running=limits.MAX_CONCURRENT_RUNS, starts=limits.MAX_STARTS,
                     minutes=limits.STARTS_WINDOW_SECONDS // 60), icon=":material/hourglass_top:")
    st.caption(t("train.reload_note"))
    if run is not None and not run.pretrained and ss.get("train_built_from") not in (None, wanted()):
        st.info(t("train.settings_changed"), icon=":material/info:")
    with st.expander(t("train.upload"), icon=":material/upload_file:"):
        st.file_uploader(t("train.upload_label", mb=limits.MAX_UPLOAD_MB), type=["pt"], key="train_upload",
                         on_change=upload_checkpoint)
        if ss.get("train_upload_problem"):
            st.error(ss["train_upload_problem"], icon=":material/error:")


def live() -> None:
    """The progress so far, then a chunk of training (when running). Reruns itself every CHUNK_SECONDS while
    running. Drawn first, so what is drawn reaches the browser while the chunk trains (see ui/training.py's
    CHUNK_SECONDS). A chunk that ends where the task is first learned draws the headline again at once (its
    metrics say so half a chunk sooner, on average, than the next redraw would)."""
    run = ss.get(models.RUN_KEY)
    if run is None:
        st.info(t("train.no_run"), icon=":material/info:")
        return
    if ss.get("train_capped") == run.token:
        st.warning(t("train.time_cap", minutes=limits.MAX_RUN_MINUTES), icon=":material/timer_off:")
    top = st.empty()
    with top.container():
        headline(run)
    if not run.pretrained:
        curves(run)
    if run.running:
        learned = run.learned
        train_chunk(run)
        if run.learned and not learned:
            with top.container():
                headline(run)


SCENES = {  # named settings a lecturer opens with one click (ui/scenes.py); they never start training
    "addition_course": {"train_task": "addition", "train_preset": "course", "train_digits": 3,
                        "train_full_range": False, "train_d_model": 256, "train_heads": 4, "train_layers": 3,
                        "train_d_ff": 512, "train_dropout": 0.1, "train_norm": "pre", "train_positional": "sinusoidal",
                        "train_lr": 0.0005, "train_batch": 128, "train_steps": 1500, "train_part": "try"},
    "parser_course": {"train_task": "parser", "train_preset": "course", "train_spaces": False, "train_d_model": 128,
                      "train_heads": 4, "train_layers": 3, "train_d_ff": 512, "train_dropout": 0.1, "train_norm": "pre",
                      "train_positional": "sinusoidal", "train_lr": 0.0005, "train_batch": 64, "train_steps": 500,
                      "train_part": "try"},
    "deep_pre_norm": {"train_task": "copy", "train_preset": "fast",
                      "train_length": 20, "train_vocab": 19, "train_d_model": 32, "train_heads": 2, "train_layers": 4,
                      "train_d_ff": 64, "train_dropout": 0.0, "train_norm": "pre", "train_positional": "sinusoidal",
                      "train_lr": 0.02, "train_batch": 64, "train_steps": 400, "cfg_seed": 0,
                      "train_part": "snapshots"},
    "deep_post_norm": {"train_task": "copy", "train_preset": "fast",
                       "train_length": 20, "train_vocab": 19, "train_d_model": 32, "train_heads": 2, "train_layers": 4,
                       "train_d_ff": 64, "train_dropout": 0.0, "train_norm": "post", "train_positional": "sinusoidal",
                       "train_lr": 0.02, "train_batch": 64, "train_steps": 400, "cfg_seed": 0,
                       "train_part": "snapshots"},
}
PART_HEADERS = {"try": "train.try_header", "attention": "train.attention_header",
                "snapshots": "train.snapshots_header", "errors": "train.errors_header", "vocab": "train.vocab_header"}


@st.fragment
def inspect(run: Run) -> None:
    """The trained model, one tool at a time; the tools' own controls rerun this section only."""
    lang = settings.lang
    st.subheader(t("train.inspect_header"))
    part = parts.pick("train_part", PARTS, label=t("train.part"), format_func=lambda p: t(f"train.part_of.{p}", lang))
    st.markdown(f"#### {t(PART_HEADERS[part])}")
    if run.running:  # a model that changes under a tool would show numbers of no step; the page stays light too
        st.info(t("train.tools_wait"), icon=":material/hourglass_top:")
    elif part == "try":
        try_model(run)
    elif part == "attention":
        attention_section(run)
    elif part == "snapshots" and run.pretrained:
        st.info(t("train.snapshots_pretrained"), icon=":material/info:")
    elif part == "snapshots":
        st.markdown(t("train.snapshots_text", every=run.eval_every))
        snapshots_section(run)
    elif part == "errors":
        st.markdown(t(f"train.errors_text_of.{run.trainer.task.name}"))
        errors_section(run)
    else:
        prose(t("train.vocab_text"))
        vocabulary_section(run)


def intro() -> None:
    st.title(t("train.title"))
    scenes.picker("train", SCENES)
    prose(t("train.intro"))
    st.latex(r"\mathcal{L} = -\frac{1}{|T|}\sum_{t \in T} \sum_{v} q_t(v) \log p_\theta(v \mid y_{<t}, x), \qquad "
             r"q_t = (1 - \varepsilon)\, \mathbb{1}[v = y_t] + \tfrac{\varepsilon}{V}")
    prose(t("train.loss_text"))


def training() -> None:
    """The live section: a fragment that trains CHUNK_SECONDS, redraws itself, and goes on while the run runs."""
    st.subheader(t("train.live_header"))
    run = ss.get(models.RUN_KEY)
    st.fragment(live, run_every=CHUNK_SECONDS if run is not None and run.running else None)()


def notice() -> None:
    panels.show_code(Trainer.train_step, learning_rate, sequence_loss, evaluate, greedy_decode, Run.advance)
    st.subheader(t("train.notice_header"))
    st.markdown(t("train.notice_points"))


settings = state.settings()
start_session()

intro()
setup(drawn(models.RUN_KEY))
training()
if (run := ss.get(models.RUN_KEY)) is not None:
    inspect(run)
    export_section(run)
notice()
