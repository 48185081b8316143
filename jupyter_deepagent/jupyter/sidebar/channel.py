"""`SidebarChannel`: the kernel's end of the JupyterLab sidebar, speaking the comm protocol of
`sidebar/protocol.py`.

`%load_ext jupyter_deepagent` registers the comm target and announces itself (a comm the sidebar
answers by opening its own), so a sidebar already showing the notebook connects as soon as the
extension loads, and again after a kernel restart. Each open comm may ask for the thread list or
a run's snapshot; while a `%%agent` cell runs, every open comm receives its events and, a few
times a second, the live snapshot. The views are the inspector's own HTML (`static_html`), built
from escaped run data: the sidebar shows them, it does not render runs itself.

Nothing the browser sends can raise in the kernel: a message that is not a valid request gets an
`error` reply, and an answer that fails (a run pruned from the history, a broken comm) is caught
and reported the same way. Nor can it hold the kernel up: comm messages are handled on the thread
that runs cells, so a comm may ask at most `REQUEST_BURST` requests in `REQUEST_WINDOW` seconds
(more get a short `error` reply, unanswered), and at most `MAX_SIDEBARS` comms stay open.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jupyter_deepagent.jupyter.sidebar.protocol import (
    PROTOCOL_VERSION,
    TARGET,
    ProtocolError,
    Request,
    error_message,
    event_message,
    read_request,
)

if TYPE_CHECKING:
    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.jupyter.session.session import Session
    from jupyter_deepagent.trace.inspector import InspectorBuilder

__all__ = [
    "MAX_SIDEBARS",
    "REQUEST_BURST",
    "REQUEST_WINDOW",
    "Comm",
    "Message",
    "SidebarChannel",
]

_FILE_CHARS = 1_000_000
"""At most this many characters of a file go to the sidebar."""

_LIVE_PUSH_INTERVAL = 0.4
"""Seconds between two live snapshots pushed to the sidebar while a run goes on."""

REQUEST_BURST = 20
"""At most this many requests of one comm are answered within `REQUEST_WINDOW` seconds; a sidebar
asks once per click, so only a flood (a page script in a loop) reaches it."""

REQUEST_WINDOW = 1.0

MAX_SIDEBARS = 16
"""At most this many sidebar comms open at once (every live event goes to each of them)."""

_now = time.monotonic  # the clock of the request limit

Message = dict[str, object]
"""A message of the sidebar protocol, JSON-ready (see `protocol`)."""


class Comm(Protocol):
    """The kernel's end of one comm (`comm.base_comm.BaseComm`), as far as the channel uses it."""

    def send(self, data: Message) -> None:
        """Send a message to the browser."""

    def close(self) -> None:
        """Close the comm."""

    def on_msg(self, callback: Callable[[object], None]) -> None:
        """Call `callback` with each message from the browser."""

    def on_close(self, callback: Callable[[object], None]) -> None:
        """Call `callback` when the browser closes the comm."""


class SidebarChannel:
    """Answers the sidebar's requests from the session's run history and the run in progress.

    Args:
        session: The kernel's session (its runs' history; its notebook folder and settings say
            which of a run's files are on disk).
    """

    def __init__(self, session: Session) -> None:
        self.session = session
        self.comms: list[Comm] = []
        self._lock = threading.RLock()
        self._live: tuple[str, InspectorBuilder] | None = None  # of the running cell
        self._last_push = 0.0
        self._current: str | None = None
        self._served: set[str] = set()  # virtual paths sent in a snapshot's `files`: readable
        self._asked: dict[int, deque[float]] = {}  # id(comm) -> times of its latest requests

    # -- the kernel side of the comm ----------------------------------------------------------------
    def register(self, kernel: Any) -> None:
        """Register the comm target on `kernel` and tell any sidebar that it can connect."""
        kernel.comm_manager.register_target(TARGET, self.open)
        try:
            from comm import create_comm

            announce = create_comm(
                target_name=TARGET, data={"protocol": PROTOCOL_VERSION, "type": "hello"}
            )
            announce.close()
        except Exception:
            pass

    def unregister(self, kernel: Any) -> None:
        """Close the open comms and drop the target (`%unload_ext`)."""
        kernel.comm_manager.unregister_target(TARGET, self.open)
        with self._lock:
            comms, self.comms = self.comms, []
        for comm in comms:
            try:
                comm.close()
            except Exception:
                pass

    def open(self, comm: Comm, msg: object) -> None:
        """A sidebar opened a comm: keep it, answer what its open message asks."""
        with self._lock:
            full = len(self.comms) >= MAX_SIDEBARS
            if not full:
                self.comms.append(comm)
        if full:
            self._send(
                comm,
                error_message(
                    f"{MAX_SIDEBARS} sidebars are already connected to this kernel: close one, or "
                    "reload the page, and open this one again"
                ),
            )
            try:
                comm.close()
            except Exception:
                pass
            return
        comm.on_msg(lambda message: self.receive(comm, message))
        comm.on_close(lambda _message: self._forget(comm))
        data = (msg.get("content") or {}).get("data") if isinstance(msg, dict) else None
        if data:
            self.receive(comm, {"content": {"data": data}})
        else:
            self._send(comm, self.threads_message(None))

    def receive(self, comm: Comm, msg: object) -> None:
        """Answer one message from the sidebar; never raises, and drops a flood unanswered."""
        ident = None
        try:
            data = msg.get("content", {}).get("data") if isinstance(msg, dict) else None
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                ident = data["id"][:64]
            if not self._admit(comm):
                self._send(
                    comm,
                    error_message(
                        f"more than {REQUEST_BURST} requests in {REQUEST_WINDOW:g} s: this one was "
                        "dropped unanswered; ask again in a moment",
                        ident,
                    ),
                )
                return
            request = read_request(data)
            reply = self.answer(request)
        except ProtocolError as exc:
            reply = error_message(str(exc), ident)
        except Exception as exc:
            reply = error_message(
                f"the kernel could not answer: {type(exc).__name__}: {exc}", ident
            )
        self._send(comm, reply)

    def answer(self, request: Request) -> Message:
        """The reply to a checked request."""
        if request.want == "threads":
            return self.threads_message(request.id)
        if request.want == "file":
            return self.file_message(str(request.path), request.id)
        return self.snapshot_message(request.thread, request.run, request.id)

    def _admit(self, comm: Comm) -> bool:
        """True if `comm` asked fewer than `REQUEST_BURST` requests in the last `REQUEST_WINDOW`."""
        now = _now()
        with self._lock:
            asked = self._asked.setdefault(id(comm), deque(maxlen=REQUEST_BURST))
            if len(asked) == REQUEST_BURST and now - asked[0] < REQUEST_WINDOW:
                return False
            asked.append(now)
            return True

    # -- messages -----------------------------------------------------------------------------------
    def threads_message(self, ident: str | None) -> Message:
        """The `threads` message: every thread with runs in this kernel."""
        runs = self.session.runs.history.counts()
        live = self._live[0] if self._live else None
        names = list(runs)
        if live is not None and live not in names:
            names.append(live)
        threads = [
            {"name": name, "runs": runs.get(name, 0) + (name == live), "live": name == live}
            for name in names
        ]
        return {
            "protocol": PROTOCOL_VERSION,
            "type": "threads",
            "id": ident,
            "threads": threads,
            "current": live or self._current,
        }

    def snapshot_message(self, thread: str | None, run: int, ident: str | None) -> Message:
        """The `snapshot` message of run `run` of `thread` (None: the current thread).

        Raises:
            ValueError: No such thread or run in this kernel (the reply says which there are).
        """
        from jupyter_deepagent.trace.inspector import build_snapshot

        with self._lock:
            live = self._live
        name = thread or (live[0] if live else self._current)
        if name is None:
            msg = "no %%agent run in this kernel yet: run an %%agent cell"
            raise ValueError(msg)
        history = self.session.runs.history
        runs = history.counts().get(name, 0)
        is_live = live is not None and live[0] == name
        total = runs + is_live
        index = run if run > 0 else total + 1 + run
        if live is not None and is_live and index == total:
            with self._lock:
                snap = live[1].snapshot()
        else:
            trace = history.get(name, index if index > 0 else run)
            snap = build_snapshot(trace.events, history.previous_prompt(name, before=trace))
        return self._snapshot(snap, name, index, total, is_live and index == total, ident)

    def _snapshot(
        self, snap: dict[str, Any], thread: str, run: int, runs: int, live: bool, ident: str | None
    ) -> Message:
        from jupyter_deepagent.trace.inspector import static_html

        return {
            "protocol": PROTOCOL_VERSION,
            "type": "snapshot",
            "id": ident,
            "thread": thread,
            "run": run,
            "runs": runs,
            "live": live,
            "snapshot": snap,
            "html": static_html(snap, open_=True),
            "files": self.local_files(snap),
        }

    def local_files(self, snap: dict[str, Any]) -> dict[str, str]:
        """Virtual path -> path relative to the notebook's folder, for the run's files that are on
        disk inside that folder (the workspace and the harness folders under the state folder)."""
        found: dict[str, str] = {}
        for group in snap["files"]["mounts"]:
            for entry in group["files"]:
                local = self.local_path(str(entry["path"]))
                if local is not None:
                    found[entry["path"]] = local[1]
        with self._lock:
            self._served.update(found)
        return found

    def local_path(self, virtual: str) -> tuple[Path, str] | None:
        """The file on disk of a virtual path and its path relative to the notebook's folder;
        None unless it is a file of the workspace or a harness folder inside that folder."""
        session = self.session
        mount, _, rest = virtual.lstrip("/").partition("/")
        if not rest:
            return None
        try:
            from jupyter_deepagent.project.storage.artifacts import ARTIFACT_MOUNTS, artifact_folder

            root = Path(session.notebook_dir).resolve()
            if mount == "workspace":
                home = (root / session.config.workspace).resolve()
            elif mount in ARTIFACT_MOUNTS:
                home = artifact_folder(session.state_dir, mount, session.owner.user).resolve()
            else:
                return None
            local = (home / rest).resolve()
        except (OSError, ValueError):  # a broken configuration: no link, the views still show
            return None
        if home not in local.parents or root not in local.parents or not local.is_file():
            return None
        return local, local.relative_to(root).as_posix()

    def file_message(self, virtual: str, ident: str | None) -> Message:
        """The `file` message: the text of a run's file on disk (at most `_FILE_CHARS`).

        Raises:
            ValueError: The path is not a file of a run that a snapshot listed as on disk (so
                nothing else in the workspace, such as `.env`, can be read this way).
        """
        with self._lock:
            served = virtual in self._served
        found = self.local_path(virtual) if served else None
        if found is None:
            msg = (
                f"{virtual} is not a file of a run shown here that is on disk in this "
                "notebook's folder"
            )
            raise ValueError(msg)
        with found[0].open(encoding="utf-8", errors="replace") as handle:
            text = handle.read(_FILE_CHARS + 1)
        return {
            "protocol": PROTOCOL_VERSION,
            "type": "file",
            "id": ident,
            "path": virtual,
            "local": found[1],
            "text": text[:_FILE_CHARS],
            "truncated": len(text) > _FILE_CHARS,
        }

    # -- the live run -------------------------------------------------------------------------------
    def run_started(self, thread: str, previous_prompt: dict[str, object] | None) -> None:
        """A `%%agent` cell starts a run on `thread`: follow its events."""
        from jupyter_deepagent.trace.inspector import InspectorBuilder

        with self._lock:
            self._live = (thread, InspectorBuilder(previous_prompt))
            self._current = thread
            self._last_push = 0.0
        self._broadcast(lambda: self.threads_message(None))

    def on_event(self, event: RunEvent) -> None:
        """One event of the running cell: sent as it is, and the snapshot a few times a second."""
        with self._lock:
            live = self._live
            if live is None:
                return
            live[1].add(event)
            due = time.perf_counter() - self._last_push >= _LIVE_PUSH_INTERVAL
            if due:
                self._last_push = time.perf_counter()
        if not self.comms:
            return
        self._broadcast(lambda: event_message(live[0], event))
        if due:
            self._broadcast(lambda: self.snapshot_message(live[0], -1, None))

    def run_finished(self) -> None:
        """The cell's run ended (and is in the history): send the final snapshot."""
        with self._lock:
            live, self._live = self._live, None
        if live is None:
            return
        self._broadcast(lambda: self.threads_message(None))
        self._broadcast(lambda: self.snapshot_message(live[0], -1, None))

    # -- sending ------------------------------------------------------------------------------------
    def _broadcast(self, build: Callable[[], Message]) -> None:
        with self._lock:
            comms = list(self.comms)
        if not comms:
            return
        try:
            message = build()
        except Exception as exc:
            message = error_message(f"the sidebar update failed: {type(exc).__name__}: {exc}")
        for comm in comms:
            self._send(comm, message)

    def _send(self, comm: Comm, message: Message) -> None:
        try:
            comm.send(message)
        except Exception:
            self._forget(comm)

    def _forget(self, comm: Comm) -> None:
        with self._lock:
            if comm in self.comms:
                self.comms.remove(comm)
            self._asked.pop(id(comm), None)
