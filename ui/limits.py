"""What one learner, and a whole class, may make the server spend: the one place a lecturer changes the caps.

- Uploads: at most MAX_UPLOAD_MB (Streamlit itself refuses larger files: keep ``server.maxUploadSize`` in
  `.streamlit/config.toml` equal), records of at most MAX_CHECKPOINT_BYTES uncompressed, and a config no larger
  than the training lesson's own controls allow (MODEL_LIMITS).
- Training (lessons 9 and 12): at most MAX_CONCURRENT_RUNS runs step at once on the whole server; one session
  starts at most MAX_STARTS runs in STARTS_WINDOW_SECONDS; one run trains at most MAX_RUN_MINUTES; one step
  of lesson 9 costs at most MAX_STEP_WORK (about 0.5 s on a 2-core machine), so Stop acts within a second.
- A run that has not stepped for STALE_SECONDS (its learner on another lesson) gives its place back; it takes one
  again when it goes on. A closed tab gives its places back at once.
- Memory: a closed tab's session is kept for `server.disconnectedSessionTTL` seconds so that a reconnect after a
  network blip finds its model. Past that, `watch_session` empties the session's state (Streamlit itself held a
  closed session for longer: its reconnect store drops an expired entry only when another session disconnects, and
  its message loop keeps the last session it served until another one connects) and glibc is asked to return the
  freed pages (it kept about 70 MB of them per finished run otherwise).
"""
from __future__ import annotations

import contextlib
import ctypes
import gc
import threading
import time
import weakref
from dataclasses import dataclass, field

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

MAX_UPLOAD_MB = 20
MAX_CHECKPOINT_BYTES = 64 * 2**20
MODEL_LIMITS = {"d_model": 256, "n_heads": 8, "n_layers": 4, "d_ff": 1024, "max_len": 128,
                "src_vocab": 128, "tgt_vocab": 128}
MAX_STEP_WORK = 1.7e9  # batch x positions x layers x (4 d_model² + 2 d_model d_ff); 1.6e9 took 0.5 s here
MAX_CONCURRENT_RUNS = 4  # two per core of a 2-core server; the concurrency browser test runs 4 at once
MAX_STARTS, STARTS_WINDOW_SECONDS = 10, 600
MAX_RUN_MINUTES = 10
STALE_SECONDS = 30
STARTS_KEY = "limits_starts"  # this session's start times
FORGET_MARGIN_SECONDS = 10  # after Streamlit's reconnect window, before a closed session's state is emptied


def step_work(batch_size: int, positions: int, n_layers: int, d_model: int, d_ff: int) -> float:
    """The cost of one training step of an encoder-decoder, in the units of MAX_STEP_WORK (a multiply-add count
    of its projections and feed-forward layers per position, times the positions of a batch)."""
    return float(batch_size * positions * n_layers * (4 * d_model * d_model + 2 * d_model * d_ff))


@dataclass
class Places:
    """The server's training places: {run token: when it last stepped} and {run token: its session id}, and
    {session id: when it disconnected} for sessions gone, under a lock."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: dict[str, float] = field(default_factory=dict)
    owners: dict[str, str | None] = field(default_factory=dict)
    left: dict[str, float] = field(default_factory=dict)


@st.cache_resource
def places() -> Places:
    """One per server process, shared by every session (it holds tokens and times, no learner's data)."""
    return Places()


def claim(token: str) -> bool:
    """Take (or keep) a training place for the run `token`; False when the server is full."""
    shared, now = places(), time.monotonic()
    with shared.lock:
        for other in [k for k, seen in shared.seen.items() if now - seen > STALE_SECONDS]:
            del shared.seen[other]
            shared.owners.pop(other, None)
        if token not in shared.seen and len(shared.seen) >= MAX_CONCURRENT_RUNS:
            return False
        shared.seen[token] = now
        ctx = get_script_run_ctx()
        shared.owners[token] = ctx.session_id if ctx else None
        return True


def release(token: str) -> None:
    """Give the run's place back (it stopped or finished), and the memory its steps used to the system."""
    shared = places()
    with shared.lock:
        shared.seen.pop(token, None)
        shared.owners.pop(token, None)
    threading.Thread(target=return_free_memory, args=(False,), daemon=True).start()


def return_free_memory(collect: bool = True) -> None:
    """Collect unreachable cycles (`collect`), then ask glibc to give its free heap pages back to the system
    (elsewhere, nothing: musl, macOS and Windows return them themselves or keep them their own way)."""
    if collect:
        gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


@dataclass
class Presence:
    """A connected session (app.py calls `watch_session` on every run): its id, its state, the server's places."""
    session_id: str
    state: weakref.ref  # the session's SafeSessionState
    shared: Places


def _session_left(presence: Presence) -> None:
    """Streamlit's release hook of a session-scoped resource: the session disconnected. Its places go back now;
    its state is emptied once Streamlit's reconnect window has passed without it coming back."""
    shared, now = presence.shared, time.monotonic()
    with shared.lock:
        for token in [k for k, owner in shared.owners.items() if owner == presence.session_id]:
            shared.seen.pop(token, None)
            shared.owners.pop(token, None)
        shared.left[presence.session_id] = now
    threading.Thread(target=return_free_memory, args=(False,), daemon=True).start()  # what its steps used
    wait = st.get_option("server.disconnectedSessionTTL") + FORGET_MARGIN_SECONDS
    timer = threading.Timer(wait, _forget_if_gone, args=(presence, wait))
    timer.daemon = True
    timer.start()


def _forget_if_gone(presence: Presence, wait: float) -> None:
    """Empty the state of a session that left `wait` seconds ago and did not come back (nor left again later:
    a later timer sees to that), so its models are freed even while Streamlit still holds the session."""
    shared = presence.shared
    with shared.lock:
        left = shared.left.get(presence.session_id)
        if left is None or time.monotonic() - left < wait:
            return
        del shared.left[presence.session_id]
    state = presence.state()
    if state is not None:
        for key in list(state.filtered_state):
            with contextlib.suppress(KeyError):
                value = state[key]
                del state[key]
                if callable(getattr(value, "close", None)):  # a run (lesson 9's, 14's): its model is also
                    value.close()  # reachable from the session's last fragment, which Streamlit may go on holding
    return_free_memory()


@st.cache_resource(scope="session", on_release=_session_left, show_spinner=False)
def _presence(session_id: str, _state, _shared: Places) -> Presence:
    return Presence(session_id, weakref.ref(_state), _shared)


def watch_session() -> None:
    """Call on every run of the app: notes that this session is here (again), so that its places and its state
    are given back when it leaves for good."""
    ctx = get_script_run_ctx()
    if ctx is None:
        return
    shared = places()
    with shared.lock:
        shared.left.pop(ctx.session_id, None)
    _presence(ctx.session_id, ctx.session_state, shared)


def running_now() -> int:
    shared = places()
    with shared.lock:
        return len(shared.seen)


def may_start() -> bool:
    """Count a new run of this session; False when it started MAX_STARTS in the last STARTS_WINDOW_SECONDS."""
    now = time.monotonic()
    starts = [s for s in st.session_state.get(STARTS_KEY, []) if now - s < STARTS_WINDOW_SECONDS]
    if len(starts) >= MAX_STARTS:
        st.session_state[STARTS_KEY] = starts
        return False
    st.session_state[STARTS_KEY] = [*starts, now]
    return True
