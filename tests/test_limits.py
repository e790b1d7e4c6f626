"""The training budget of a shared server (ui/limits.py): places, starts per session, and one stepping thread."""
from __future__ import annotations

import threading
import weakref
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


class FakeSessionState(dict):
    """What limits.watch_session keeps of a session: items, and `filtered_state` as Streamlit's own has it."""

    @property
    def filtered_state(self) -> dict:
        return dict(self)


class HeldTimer:
    """A threading.Timer that never fires: the test calls its function itself."""
    made: list[HeldTimer] = []

    def __init__(self, wait, function, args):
        self.wait, self.function, self.args, self.daemon = wait, function, args, False
        HeldTimer.made.append(self)

    def start(self):
        pass


def test_a_closed_tab_gives_back_its_places_at_once_and_its_models_once_it_cannot_come_back(monkeypatch):
    monkeypatch.setattr(limits.threading, "Timer", HeldTimer)
    HeldTimer.made.clear()
    shared = limits.places()
    run = Run.new("parser", "fast", "cpu", {}, {}, steps=50, warmup=5)
    state = FakeSessionState({models.RUN_KEY: run, "train_task": "parser"})
    presence = limits.Presence("tab", weakref.ref(state), shared)
    shared.seen.update({run.token: 0.0, "someone else": 0.0})
    shared.owners.update({run.token: "tab", "someone else": "another tab"})

    limits._session_left(presence)
    assert run.token not in shared.seen and "someone else" in shared.seen
    timer, = HeldTimer.made
    assert timer.wait > 120  # Streamlit's reconnect window (server.disconnectedSessionTTL) and a margin

    shared.left.pop("tab")  # the tab reconnected in time (watch_session): nothing is forgotten
    timer.function(presence, 0.0)
    assert state[models.RUN_KEY] is run and run.trainer is not None

    limits._session_left(presence)  # it left again, and did not come back
    timer.function(presence, 0.0)
    assert state == {} and run.trainer is None and not run.running

