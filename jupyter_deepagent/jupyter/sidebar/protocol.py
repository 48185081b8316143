"""The JupyterLab sidebar's comm protocol: the messages, and the check of what the browser sends.

One comm target, `jupyter_deepagent.sidebar`, carries JSON objects that all hold `protocol`
(this version: 1) and `type`. The messages are the `TypedDict`s below; the sidebar's TypeScript
twin, `labextension/src/protocol.ts`, is generated from them (`python -m
jupyter_deepagent.jupyter.sidebar.typescript labextension/src/protocol.ts`) and a test fails when
the committed one differs.

The sidebar sends one kind of message:

- `request`: `id` (a string the reply echoes, at most 64 characters), `want` ("threads",
  "snapshot" or "file"), for a snapshot `thread` (a thread name, or null for the kernel's
  current thread) and `run` (1 = the thread's first run in this kernel, -1 = its last, the
  default), for a file `path` (a virtual path of a run's file, one the snapshot's `files` lists).

The kernel sends:

- `hello`: on a comm it opens and closes at once when `%load_ext` runs, so a sidebar waiting for
  this kernel connects (it opens its own comm and sends a request).
- `threads`: the threads with runs in this kernel (`name`, `runs`, `live`) and `current`, in reply
  to a request and unsolicited (`id` null) when a run starts or ends.
- `snapshot`: a run's inspector: `thread`, `run` (1-based), `runs`, `live`, `snapshot` (the JSON
  of `trace.inspector`), `html` (the inspector's static view of that snapshot, the same HTML a
  saved notebook shows) and `files` (virtual path -> path relative to the notebook's folder, for
  the files of the run that are on disk and inside that folder). Sent in reply, and unsolicited
  (`id` null, `live` true) a few times a second while a `%%agent` cell runs.
- `file`: the text of a run's file on disk (`path`, `local`, `text`, `truncated` past 1 MB), for
  files JupyterLab will not open itself (the state folder is hidden, and Jupyter's server refuses
  hidden files by default).
- `event`: one run event as it happens (`thread`, `event`: its `type`, `step`, `agent`, `task_id`
  and other short scalar fields; text is cut to 200 characters), for the panel's live line.
- `error`: `id` (of the request, or null) and `message`, the reply to a request the kernel could
  not read or answer. A malformed or hostile message gets this reply; it never raises in the
  kernel.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, Literal, NotRequired, Required, TypedDict, get_args

__all__ = [
    "KERNEL_MESSAGES",
    "MAX_MESSAGE_CHARS",
    "PROTOCOL_VERSION",
    "TARGET",
    "ErrorMessage",
    "EventMessage",
    "FileMessage",
    "HelloMessage",
    "ProtocolError",
    "Request",
    "RequestMessage",
    "RunEventFields",
    "SnapshotMessage",
    "ThreadInfo",
    "ThreadsMessage",
    "Want",
    "error_message",
    "event_message",
    "read_request",
]

PROTOCOL_VERSION: Final = 1
"""Bumped when a message changes meaning; both sides refuse another version with a message."""

TARGET: Final = "jupyter_deepagent.sidebar"
"""The comm target `%load_ext jupyter_deepagent` registers, and the frontend's announce target."""

MAX_MESSAGE_CHARS: Final = 4096
"""A request is a few short fields; anything longer is refused unread."""

Want = Literal["threads", "snapshot", "file"]
"""What a request asks for."""


class RequestMessage(TypedDict):
    """What the sidebar asks: the thread list, a run's snapshot, or the text of a run's file."""

    protocol: int
    type: Literal["request"]
    id: str
    """A string the reply echoes, at most 64 characters."""
    want: Want
    thread: NotRequired[str | None]
    """For `snapshot`: a thread name, or null for the kernel's current thread."""
    run: NotRequired[int]
    """For `snapshot`: 1 = the thread's first run in this kernel, -1 = its last (the default)."""
    path: NotRequired[str]
    """For `file`: a virtual path the snapshot's `files` lists."""


class ThreadInfo(TypedDict):
    """A thread with runs in this kernel."""

    name: str
    runs: int
    live: bool
    """A run of this thread is going on."""


class ThreadsMessage(TypedDict):
    """The threads with runs in this kernel (in reply, or unsolicited when a run starts or ends)."""

    protocol: int
    type: Literal["threads"]
    id: str | None
    threads: list[ThreadInfo]
    current: str | None


class SnapshotMessage(TypedDict):
    """A run's inspector (in reply, or unsolicited and live while a `%%agent` cell runs)."""

    protocol: int
    type: Literal["snapshot"]
    id: str | None
    thread: str
    run: int
    runs: int
    live: bool
    snapshot: dict[str, object]
    """The inspector snapshot (`jupyter_deepagent.trace.inspector.snapshot`), JSON."""
    html: str
    """The inspector's static view of the snapshot, rendered by the kernel from escaped data."""
    files: dict[str, str]
    """Virtual path -> path relative to the notebook's folder, for files on disk."""


class FileMessage(TypedDict):
    """The text of a run's file on disk (for files JupyterLab's server will not open: hidden)."""

    protocol: int
    type: Literal["file"]
    id: str | None
    path: str
    local: str
    text: str
    truncated: bool


class RunEventFields(TypedDict, total=False):
    """The short scalar fields of a run event the kernel forwards (text cut to 200 characters)."""

    type: Required[str]
    """One of the event schema's types (`RunEventType` in the TypeScript)."""
    step: int | None
    agent: str | None
    task_id: str | None
    tool: str | None
    tool_call_id: str | None
    skill: str | None
    path: str | None
    tokens: int | None
    tokens_in: int | None
    tokens_out: int | None
    status: str | None
    message: str | None
    kind: str | None


class EventMessage(TypedDict):
    """One run event as it happens, for the panel's live line."""

    protocol: int
    type: Literal["event"]
    thread: str
    event: RunEventFields


class ErrorMessage(TypedDict):
    """The reply to a request the kernel could not read or answer."""

    protocol: int
    type: Literal["error"]
    id: str | None
    message: str


class HelloMessage(TypedDict):
    """The kernel's announcement when `%load_ext` runs: a waiting sidebar connects."""

    protocol: int
    type: Literal["hello"]


KERNEL_MESSAGES: Final = (
    ThreadsMessage,
    SnapshotMessage,
    EventMessage,
    FileMessage,
    ErrorMessage,
    HelloMessage,
)
"""Every message the kernel sends; `type` says which (`KernelMessage` in the TypeScript)."""

_WANTS: Final[tuple[str, ...]] = get_args(Want)
_MAX_PATH = 1000
_MAX_ID = 64
_MAX_THREAD = 200
_MAX_RUN = 10_000
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_EVENT_TEXT = 200
_EVENT_KEYS = tuple(RunEventFields.__annotations__)


class ProtocolError(ValueError):
    """A message from the browser that is not a valid request; the text goes into the reply."""


class Request:
    """A checked request: `id`, `want`, `thread` (None: the current one), `run` and `path`."""

    __slots__ = ("id", "path", "run", "thread", "want")

    def __init__(
        self,
        id: str,
        want: str,
        thread: str | None,
        run: int,
        path: str | None = None,
    ) -> None:
        self.id = id
        self.want = want
        self.thread = thread
        self.run = run
        self.path = path


def read_request(data: object) -> Request:
    """Check a message from the browser and return it as a `Request`.

    Args:
        data: The comm message's `data` (any JSON value, or anything a hostile page sends).

    Returns:
        The request.

    Raises:
        ProtocolError: The message is not a version-1 request; the text says what is wrong.
    """
    if not isinstance(data, dict):
        msg = f"a request is a JSON object, not {type(data).__name__}"
        raise ProtocolError(msg)
    if len(repr(data)) > MAX_MESSAGE_CHARS:
        msg = f"a request holds at most {MAX_MESSAGE_CHARS} characters"
        raise ProtocolError(msg)
    version = data.get("protocol")
    if version != PROTOCOL_VERSION or isinstance(version, bool):
        msg = (
            f"protocol {version!r} is not spoken here (this kernel speaks "
            f"{PROTOCOL_VERSION}): reinstall jupyter-deepagent so the sidebar and the "
            "kernel match, then reload the page"
        )
        raise ProtocolError(msg)
    if data.get("type") != "request":
        msg = f"the kernel takes only requests, not {str(data.get('type'))[:40]!r}"
        raise ProtocolError(msg)
    ident = data.get("id")
    if not isinstance(ident, str) or len(ident) > _MAX_ID or _CONTROL.search(ident):
        msg = f"a request's id is a short string (at most {_MAX_ID} characters)"
        raise ProtocolError(msg)
    want = data.get("want")
    if want not in _WANTS:
        msg = f"want is one of {', '.join(_WANTS)}, not {str(want)[:40]!r}"
        raise ProtocolError(msg)
    thread = data.get("thread")
    if thread is not None and (
        not isinstance(thread, str)
        or not thread
        or len(thread) > _MAX_THREAD
        or _CONTROL.search(thread)
    ):
        msg = f"thread is null or a thread name (at most {_MAX_THREAD} characters)"
        raise ProtocolError(msg)
    run = data.get("run", -1)
    if isinstance(run, bool) or not isinstance(run, int) or run == 0 or abs(run) > _MAX_RUN:
        msg = "run is a whole number: 1 for a thread's first run, -1 for its last"
        raise ProtocolError(msg)
    path = data.get("path")
    if want == "file" and (
        not isinstance(path, str)
        or not path.startswith("/")
        or len(path) > _MAX_PATH
        or _CONTROL.search(path)
    ):
        msg = "a file request's path is a virtual path such as /large_tool_results/x.txt"
        raise ProtocolError(msg)
    return Request(ident, want, thread, run, path if want == "file" else None)


def error_message(message: str, ident: str | None = None) -> dict[str, Any]:
    """The `error` reply to request `ident` (None when the request could not be read)."""
    return {"protocol": PROTOCOL_VERSION, "type": "error", "id": ident, "message": message}


def event_message(thread: str, event: Mapping[str, object]) -> dict[str, Any]:
    """The `event` message of one run event: its short scalar fields only."""
    fields: dict[str, object] = {}
    for key in _EVENT_KEYS:
        value = event.get(key)
        if isinstance(value, str):
            fields[key] = value if len(value) <= _EVENT_TEXT else value[: _EVENT_TEXT - 1] + "…"
        elif isinstance(value, (int, float)) or value is None:
            if key in event:
                fields[key] = value
    return {"protocol": PROTOCOL_VERSION, "type": "event", "thread": thread, "event": fields}
