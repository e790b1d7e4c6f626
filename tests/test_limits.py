"""The training budget of a shared server (ui/limits.py): places, starts per session, and one stepping thread."""
from __future__ import annotations

import threading

from pathlib import Path

from conftest import start_page

from ui import limits, models
from ui.i18n import t
from ui.training import Run

ROOT = Path(__file__).resolve().parents[1]
APP = ROOT / "app.py"
FAST = {"train_task": "parser", "train_preset": "fast"}


def test_places_are_shared_bounded_released_and_reclaimed(monkeypatch):
    tokens = [f"run{k}" for k in range(limits.MAX_CONCURRENT_RUNS)]
    assert all(limits.claim(token) for token in tokens)
    assert limits.claim(tokens[0]), "a run keeps its own place"
    assert not limits.claim("one more")
    limits.release(tokens[0])
    assert limits.claim("one more")
    monkeypatch.setattr(limits, "STALE_SECONDS", -1)  # every place is now stale: a closed tab gives it back
    assert limits.claim("after the class")
    assert limits.running_now() == 1


def start_clicked(at):
    start = next(b for b in at.button if b.label == t("train.start", "en"))
    return start.click().run()


def test_a_full_server_says_busy_and_builds_nothing():
    for k in range(limits.MAX_CONCURRENT_RUNS):
        limits.claim(f"other learner {k}")
    at = start_clicked(start_page(APP, lesson="lessons/09_training.py", numbers=False, state=FAST))
    assert not at.exception
    assert t("train.refused_busy", "en", running=limits.MAX_CONCURRENT_RUNS) in [w.value for w in at.warning]
    assert not at.session_state[models.RUN_KEY].running


def test_a_session_starts_at_most_max_starts_runs_in_the_window():
    at = start_page(APP, lesson="lessons/09_training.py", numbers=False, state=FAST)
    for _ in range(limits.MAX_STARTS):  # Reset, then Start again
        if models.RUN_KEY in at.session_state:
            del at.session_state[models.RUN_KEY]
        limits.places.clear()
        start_clicked(at.run())
        assert at.session_state[models.RUN_KEY] is not None
        at.session_state[models.RUN_KEY].running = False
    del at.session_state[models.RUN_KEY]
    start_clicked(at.run())
    assert models.RUN_KEY not in at.session_state
    assert t("train.refused_starts", "en", starts=limits.MAX_STARTS, minutes=limits.STARTS_WINDOW_SECONDS // 60) \
        in [w.value for w in at.warning]


def test_a_second_thread_never_steps_a_run_at_once():
    """Streamlit Cloud forces fast reruns: a click starts a new script thread while the old one is stepping."""
    run = Run.new("parser", "fast", "cpu", {}, {}, steps=50, warmup=5)
    with run.stepping:  # another thread is stepping this run
        taken = []
        other = threading.Thread(target=lambda: taken.append(run.advance(0.05)))
        other.start()
        other.join(timeout=30)
    assert taken == [0] and run.trainer.step == 0
    assert run.advance(0.05) > 0
