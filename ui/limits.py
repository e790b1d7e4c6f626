"""What one learner, and a whole class, may make the server spend: the one place a lecturer changes the caps.

- Uploads: at most MAX_UPLOAD_MB (Streamlit itself refuses larger files: keep ``server.maxUploadSize`` in
  `.streamlit/config.toml` equal), records of at most MAX_CHECKPOINT_BYTES uncompressed, and a config no larger
  than the training lesson's own controls allow (MODEL_LIMITS).
- Training (lessons 9 and 12): at most MAX_CONCURRENT_RUNS runs step at once on the whole server; one session
  starts at most MAX_STARTS runs in STARTS_WINDOW_SECONDS; one run trains at most MAX_RUN_MINUTES; one step
  of lesson 9 costs at most MAX_STEP_WORK (about 0.5 s on a 2-core machine), so Stop acts within a second.
- A run that has not stepped for STALE_SECONDS (its tab closed, its learner on another lesson) gives its place
  back; it takes one again when it goes on.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import streamlit as st

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


def step_work(batch_size: int, positions: int, n_layers: int, d_model: int, d_ff: int) -> float:
    """The cost of one training step of an encoder-decoder, in the units of MAX_STEP_WORK (a multiply-add count
    of its projections and feed-forward layers per position, times the positions of a batch)."""
    return float(batch_size * positions * n_layers * (4 * d_model * d_model + 2 * d_model * d_ff))


@dataclass
class Places:
    """The server's training places: {run token: when it last stepped}, under a lock."""
    lock: threading.Lock = field(default_factory=threading.Lock)
    seen: dict[str, float] = field(default_factory=dict)


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
        if token not in shared.seen and len(shared.seen) >= MAX_CONCURRENT_RUNS:
            return False
        shared.seen[token] = now
        return True


def release(token: str) -> None:
    """Give the run's place back (it stopped or finished)."""
    shared = places()
    with shared.lock:
        shared.seen.pop(token, None)


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
