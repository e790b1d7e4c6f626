"""A light Streamlit client for load tests: what one browser tab says over the websocket, without a browser.

A `Tab` fetches the start page over HTTP (so it holds the cookies a proxy may set for stickiness), opens
`/_stcore/stream` and speaks Streamlit's own protocol (streamlit.proto): it sends `BackMsg.rerun_script` with the
query string, the page and the widget states it has set, and reads the `ForwardMsg`s the server sends back
(`new_session` at the start of every run, `delta`s with the elements, `page_info_changed`, `navigation`,
`auto_rerun`, `script_finished`). Like the browser it reruns a fragment by itself while the server asks it to
(`auto_rerun`, e.g. lesson 9's training section) and stops when told (`stop_auto_rerun`) or when a full run starts.

`Tab.rerun` returns the seconds from sending a change to the `script_finished` of the run it started: the time
until the server has sent everything a browser would draw (drawing itself is not counted). Every exception box
(`Element.exception`), compile error, timeout or lost connection is kept in `Tab.errors`. Widgets are found by
their visible label; `change` computes the value a person would set next (a slider one step, the next option...).
"""
from __future__ import annotations

import asyncio
import http.cookiejar
import random
import time
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable

import websockets
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

RUN_TIMEOUT = 120.0  # seconds a change may wait for its run before it counts as an error
DONE = (ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY)
WIDGETS = ("slider", "number_input", "selectbox", "radio", "checkbox", "button", "button_group", "multiselect",
           "text_input", "text_area")


@dataclass
class Widget:
    id: str
    kind: str  # the Element field: slider (also select sliders), selectbox, checkbox, ...
    label: str
    fragment: str  # the fragment it belongs to ("" for none): a change reruns only that fragment
    element: Any  # its proto, as last drawn


@dataclass
class Pending:
    sent: float
    fragment: str
    started: bool = False  # a run began after the change was sent
    done: asyncio.Future = field(default_factory=lambda: asyncio.get_running_loop().create_future())


def selected(widget: Widget) -> str:
    """The option label a selectbox or radio shows now."""
    e = widget.element
    return e.raw_value if e.set_value and e.HasField("raw_value") else e.options[e.default]


def change(widget: Widget, rng: random.Random) -> WidgetState | None:
    """The widget's next value as the browser would send it, or None for a kind this client does not move."""
    e, state = widget.element, WidgetState(id=widget.id)
    if widget.kind == "slider" and e.options:  # a select slider: formatted options, value as indices
        i = int(e.value[0] if e.value else e.default[0])
        state.string_array_value.data.append(e.options[_neighbour(i, len(e.options), rng)])
    elif widget.kind == "slider":
        value = e.value[0] if e.value else e.default[0]
        up = value + e.step <= e.max and (value - e.step < e.min or rng.random() < 0.5)
        state.double_array_value.data.append(value + e.step if up else value - e.step)
    elif widget.kind == "number_input":
        value, step = (e.value if e.set_value else e.default), e.step or 1
        up = (not e.has_max or value + step <= e.max) and (e.has_min and value - step < e.min or rng.random() < 0.5)
        state.double_value = value + step if up else value - step
    elif widget.kind in ("selectbox", "radio") and len(e.options) > 1:
        i = list(e.options).index(selected(widget)) if selected(widget) in e.options else 0
        state.string_value = e.options[_neighbour(i, len(e.options), rng)]
    elif widget.kind == "checkbox":
        state.bool_value = not (e.value if e.set_value else e.default)
    elif widget.kind == "button":
        state.trigger_value = True
    else:
        return None
    return state


def _neighbour(i: int, n: int, rng: random.Random) -> int:
    if i == 0 or (i < n - 1 and rng.random() < 0.5):
        return i + 1
    return i - 1


def text_state(widget: Widget, text: str) -> WidgetState:
    state = WidgetState(id=widget.id)
    state.string_value = text
    return state


class Tab:
    """One browser tab's conversation with the app at `base_url` (http://host:port)."""

    def __init__(self, base_url: str, watch: Callable[[bytes], None] | None = None) -> None:
        self.base_url, self.watch = base_url.rstrip("/"), watch
        self.errors: list[str] = []  # exceptions, compile errors, timeouts, lost connections
        self.alerts: list[str] = []  # warning and error boxes the app drew (its own messages, not failures)
        self.widgets: dict[str, Widget] = {}  # by label: the first widget of that label in the latest run
        self.pages: dict[str, str] = {}  # url path -> page script hash, from the navigation message
        self.query = ""  # the address bar's query string, as the app last set it
        self.page_hash = ""
        self.fragment_runs = 0  # fragment runs finished (lesson 9 trains in those)
        self.bytes_in = 0
        self.cookie = ""
        self._states: dict[str, WidgetState] = {}  # what this tab has set, sent again with every rerun
        self._seen: set[str] = set()  # labels drawn in the current run
        self._pending: Pending | None = None
        self._auto: dict[str, asyncio.Task] = {}
        self._ws = self._reader = None

    # ---- connection ----------------------------------------------------------------------------------------
    async def open(self, page: str = "", query: str = "") -> float:
        """GET the start page (cookies), connect, run `page` (a url path) with `query`; seconds to the first run."""
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        await asyncio.to_thread(lambda: opener.open(f"{self.base_url}/{page}", timeout=60).read())
        self.cookie = "; ".join(f"{c.name}={c.value}" for c in jar)  # e.g. a proxy's sticky cookie
        headers = {"Origin": self.base_url, **({"Cookie": self.cookie} if self.cookie else {})}
        ws_url = self.base_url.replace("http", "ws", 1) + "/_stcore/stream"
        self._ws = await websockets.connect(ws_url, subprotocols=["streamlit"], additional_headers=headers,
                                            max_size=None, open_timeout=60)
        self._reader = asyncio.create_task(self._read())
        self.query = query
        return await self.rerun(page_name=page)

    @property
    def closed(self) -> bool:
        return self._reader is None or self._reader.done()

    async def close(self) -> None:
        for task in self._auto.values():
            task.cancel()
        if self._ws is not None:
            await self._ws.close()
        if self._reader is not None:
            await asyncio.gather(self._reader, return_exceptions=True)

    # ---- sending -------------------------------------------------------------------------------------------
    def _message(self, page_name: str = "", page_hash: str = "", fragment: str = "", auto: bool = False) -> bytes:
        msg = BackMsg()
        client = msg.rerun_script
        client.query_string, client.page_name = self.query, page_name
        client.page_script_hash = page_hash or (self.page_hash if not page_name else "")
        client.fragment_id, client.is_auto_rerun = fragment, auto
        client.widget_states.widgets.extend(self._states.values())
        client.context_info.locale, client.context_info.timezone = "en-US", "UTC"
        return msg.SerializeToString()

    async def rerun(self, states: list[WidgetState] = (), page_name: str = "", page_hash: str = "",
                    fragment: str = "") -> float:
        """Send a change (new widget states, or another page) and wait for its run; its seconds, or nan."""
        for state in states:
            self._states[state.id] = state
        if page_hash:
            self._states = {}  # the old page's widgets are gone (the sidebar's are drawn again from the state)
            self._stop_auto()
        pending = self._pending = Pending(time.monotonic(), fragment)
        try:
            await self._ws.send(self._message(page_name, page_hash, fragment))
            return await asyncio.wait_for(asyncio.shield(pending.done), RUN_TIMEOUT)
        except asyncio.TimeoutError:
            self.errors.append(f"timeout: no finished run {RUN_TIMEOUT:.0f} s after a change")
        except websockets.ConnectionClosed as closed:
            self.errors.append(f"connection lost: {closed}")
        finally:
            self._pending = None
            for state in states:
                if state.WhichOneof("value") == "trigger_value":
                    self._states.pop(state.id, None)  # a click is sent once
        return float("nan")

    async def _auto_rerun(self, fragment: str, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            try:
                await self._ws.send(self._message(fragment=fragment, auto=True))
            except websockets.ConnectionClosed:
                return

    def _stop_auto(self, fragments=None) -> None:
        for fragment in list(self._auto) if fragments is None else fragments:
            task = self._auto.pop(fragment, None)
            if task is not None:
                task.cancel()

    # ---- receiving -----------------------------------------------------------------------------------------
    async def _read(self) -> None:
        try:
            async for data in self._ws:
                self.bytes_in += len(data)
                if self.watch is not None:
                    self.watch(data)
                self._handle(ForwardMsg.FromString(data))
        except websockets.ConnectionClosed as closed:
            if closed.rcvd is None or closed.rcvd.code != 1000:
                self.errors.append(f"connection lost: {closed}")
        finally:
            if self._pending is not None and not self._pending.done.done():
                self._pending.done.set_result(float("nan"))

    def _handle(self, msg: ForwardMsg) -> None:
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            fragments = list(msg.metadata.run.fragment_ids)
            if not fragments:  # a full run draws every widget again
                self._stop_auto()
                self.widgets = {}
            self._seen = set()
            if self._pending is not None:
                self._pending.started = True
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id)
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "navigation":
            self.pages = {page.url_pathname: page.page_script_hash for page in msg.navigation.app_pages}
            self.page_hash = msg.navigation.page_script_hash  # the lesson on screen (new_session names app.py)
        elif kind == "auto_rerun" and msg.auto_rerun.fragment_id not in self._auto:
            self._auto[msg.auto_rerun.fragment_id] = asyncio.create_task(
                self._auto_rerun(msg.auto_rerun.fragment_id, msg.auto_rerun.interval))
        elif kind == "stop_auto_rerun":
            self._stop_auto(msg.stop_auto_rerun.fragment_ids)
        elif kind == "page_not_found":
            self.errors.append(f"page not found: {msg.page_not_found.page_name}")
        elif kind == "script_finished":
            self._finished(msg)

    def _element(self, element, fragment: str) -> None:
        kind = element.WhichOneof("type")
        if kind == "exception":
            self.errors.append(f"exception: {element.exception.type}: {element.exception.message[:300]}")
        elif kind == "alert" and element.alert.format in (element.alert.ERROR, element.alert.WARNING):
            self.alerts.append(element.alert.body)
        elif kind in WIDGETS:
            widget = getattr(element, kind)
            if widget.label not in self._seen:
                self._seen.add(widget.label)
                self.widgets[widget.label] = Widget(widget.id, kind, widget.label, fragment, widget)

    def _finished(self, msg: ForwardMsg) -> None:
        status, fragments = msg.script_finished, list(msg.metadata.run.fragment_ids)
        if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
            self.errors.append("the script did not compile")
        if fragments and status in DONE:
            self.fragment_runs += 1
        pending = self._pending
        if pending is None or not pending.started or pending.done.done() or status not in DONE:
            return
        if not fragments or pending.fragment in fragments:
            pending.done.set_result(time.monotonic() - pending.sent)
