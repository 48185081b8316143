"""Offloading: moving a large text out of the conversation into a file, leaving a pointer behind.

A tool result becomes `/large_tool_results/<tool>-<short-id>.<ext>`; a long human message becomes
`/conversation_history/<name>.<ext>`. The extension is sniffed from the content (json, csv, md or
txt) so the file opens sensibly in a file browser or pandas. Names are built only from safe
characters; an empty, long or unsafe id is replaced by a readable prefix plus a hash of the id
and the content, and an existing file is never overwritten (`-2`, `-3`, ... are tried), so two
results never collide. The pointer names the path, the size and the first lines, so the agent
can `read_file` or `grep` the rest.

Three moves use it. At tool time, a result over the offload limit is written as it arrives and
the conversation gets a pointer with its size and first ten lines (`offload_tool_result`;
filesystem tools are exempt: `read_file` pages instead, the content already is a file; the write
goes through `bind_state_files`, so with a `StateBackend` the file comes back as a `files` update
in the tool's `Command`). At model time, `ContextView` moves consumed results and long human
messages (`persist_text`), and sends old `write_file`/`edit_file` calls whose long arguments are
already applied to a file with a pointer to that file instead (`cut_file_arguments`).
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from itertools import chain, islice
from typing import Any, Final

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langgraph.types import Command

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import bind_state_files, merge_files
from jupyter_deepagent.events import OFFLOADED, WARNING
from jupyter_deepagent.harness.artifact_folders import LARGE_RESULTS_FOLDER
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.harness.run_events.event_stream import first_in_run
from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES

__all__ = [
    "Offloaded",
    "aged_pointer_text",
    "cut_file_arguments",
    "line_count",
    "long_file_writes",
    "offload_tool_result",
    "persist_text",
    "pointer_text",
    "safe_name",
    "short_id",
    "sniff_extension",
]

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")
_ID_LIMIT = 24
_NAME_LIMIT = 40
_PREVIEW_WIDTH = 200
_SNIFF_CHARS = 4_000
_MARKDOWN = re.compile(
    r"^(#{1,6} |\s*[-*+] |\s*\d+\. |```|>\s|\|.*\|\s*$)|\[[^\]]+\]\([^)]+\)|\*\*[^*]+\*\*",
    re.MULTILINE,
)
_MARK_LINE = re.compile(r"\n(?=[#*+`>|\-\s\d])")  # a line whose start may be a mark of `_MARKDOWN`


def sniff_extension(text: str) -> str:
    """`json`, `csv`, `md` or `txt`, judged from the text itself: its first 4,000 characters,
    but for JSON, which must parse whole."""
    head = text[: _SNIFF_CHARS * 2].strip()
    if head[:1] in ("{", "[") and text.rstrip()[-1:] in ("}", "]"):
        try:
            json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: nested too deeply to parse
            pass
        else:
            return "json"
    whole = len(head) <= _SNIFF_CHARS and len(text) <= _SNIFF_CHARS * 2
    head = head[:_SNIFF_CHARS]
    lines = head.splitlines()[:21]
    if _looks_like_csv(lines[:20] if len(lines) > 20 or whole else lines[:-1]):
        return "csv"
    if _markdown_marks(head) == 2:
        return "md"
    return "txt"


def _markdown_marks(head: str) -> int:
    """How many of `_MARKDOWN`'s marks `head` has, up to two (as `finditer` finds them).

    Without a `[` or a `**`, a mark can only start a line, with one of a few characters: those
    line starts alone are tried, which spares running the pattern at every character."""
    if "[" in head or "**" in head:
        return len(list(islice(_MARKDOWN.finditer(head), 2)))
    found, free_from = 0, 0
    for start in chain((0,), (line.end() for line in _MARK_LINE.finditer(head))):
        if start < free_from:
            continue
        mark = _MARKDOWN.match(head, start)
        if mark is not None:
            found, free_from = found + 1, mark.end()
            if found == 2:
                break
    return found


def _looks_like_csv(first: list[str]) -> bool:
    """Whether the first lines of a text (whole lines, at most 20) read as one CSV table."""
    lines = [line for line in first if line.strip()]
    if len(lines) < 2 or "," not in lines[0]:
        return False
    try:
        widths = {len(row) for row in csv.reader(lines)}
    except csv.Error:
        return False
    return len(widths) == 1 and widths.pop() >= 2


def safe_name(raw: str, fallback: str, limit: int = _NAME_LIMIT) -> str:
    """`raw` reduced to letters, digits, `_` and `-` (runs of others become `_`), cut to `limit`."""
    name = _UNSAFE.sub("_", raw).strip("_")[:limit].rstrip("_")
    return name or fallback


def short_id(call_id: str | None, content: str) -> str:
    """A file-name-safe id: the id itself when it is short and safe, else a readable prefix plus
    eight hex digits of a hash of the id and the content (so two results cannot share it)."""
    raw = call_id or ""
    clean = safe_name(raw, "noid", _ID_LIMIT)
    if clean == raw:
        return clean
    digest = hashlib.sha1(f"{raw}\x00{content}".encode("utf-8", "surrogatepass")).hexdigest()[:8]
    return f"{clean}-{digest}"


def _exists(backend: BackendProtocol, path: str) -> bool:
    try:
        backend.ls(path)
    except BackendError:
        return False
    return True


def _holds(backend: BackendProtocol, path: str, text: str) -> bool:
    """Tell whether the file at `path` already holds `text` (a re-run offloading it again)."""
    wanted = text.splitlines()
    try:
        page = backend.read(path, 0, max(len(wanted), 1))
    except BackendError:
        return False
    return page.total_lines == len(wanted) and page.lines == wanted


def _free_path(
    backend: BackendProtocol, folder: str, stem: str, ext: str, text: str
) -> tuple[str, bool]:
    """The first free name `<stem>[-n].<ext>`, or the first one an earlier run left holding
    `text` (so a notebook re-run sends the model the same path); and whether the file is
    already there. Within one run (`trace_run`) a name is never given twice."""
    path = f"{folder}{stem}.{ext}"
    number = 1
    while _exists(backend, path):
        if _holds(backend, path, text) and first_in_run(("offload", path), otherwise=False):
            return path, True
        number += 1
        path = f"{folder}{stem}-{number}.{ext}"
    return path, False


@dataclass(frozen=True)
class Offloaded:
    """A text written to a file: where, and how big it was."""

    path: str
    tokens: int
    lines: int
    chars: int


def persist_text(backend: BackendProtocol, folder: str, stem: str, text: str) -> Offloaded:
    """Write `text` to a new file `<folder><stem>.<sniffed ext>` (never overwriting one; a file
    of that name already holding `text` is reused).

    Raises:
        BackendError: the backend refused the write (read-only mount, file too large...).
    """
    path, present = _free_path(backend, folder, stem, sniff_extension(text), text)
    if not present:
        backend.write(path, text)
        first_in_run(("offload", path), otherwise=False)  # this run's own: not to be reused
    return Offloaded(path, approx_tokens(text), line_count(text), len(text))


_OTHER_BREAKS: Final = "\r\x0b\x0c\x1c\x1d\x1e"
"""What `str.splitlines` breaks an ASCII text at, besides a newline."""


def line_count(text: str) -> int:
    """`len(text.splitlines())`, without making the lines of the usual text (ASCII, `\n` breaks)."""
    if not text.isascii() or any(mark in text for mark in _OTHER_BREAKS):
        return len(text.splitlines())
    return text.count("\n") + (bool(text) and not text.endswith("\n"))


def _first_lines(text: str, count: int) -> list[str]:
    """`text.splitlines()[:count]`, splitting only as much of `text` as those lines take."""
    size = 4_096
    while True:
        lines = text[:size].splitlines()
        if len(lines) > count or size >= len(text):  # the first `count` lines are whole
            return lines[:count]
        size *= 8


def _preview_lines(text: str, count: int, width: int = _PREVIEW_WIDTH) -> str:
    """The first `count` lines of `text`, each cut to `width` characters."""
    lines = _first_lines(text, count)
    return "\n".join(line if len(line) <= width else f"{line[:width]}…" for line in lines)


def pointer_text(offloaded: Offloaded, headline: str, text: str, preview: int) -> str:
    """The message left in the conversation: what moved where, its size, how to read it back,
    and the first `preview` lines (none when `preview` is 0)."""
    body = (
        f"{headline} ({offloaded.tokens:,} tokens, {offloaded.lines:,} lines) is saved in "
        f"{offloaded.path}. Read it with read_file(file_path={offloaded.path!r}, offset=0, "
        f"limit=100) or search it with grep."
    )
    if preview <= 0 or not text:
        return body
    shown = min(preview, offloaded.lines)
    return (
        f"{body}\nFirst {shown} line{'s' if shown != 1 else ''}:\n{_preview_lines(text, preview)}"
    )


def aged_pointer_text(offloaded: Offloaded, tool: str, text: str, preview: int) -> str:
    """The short pointer a result the model has already read becomes: where it is, its size,
    and its first `preview` lines (cut to 100 characters)."""
    body = (
        f"[Already read: the result of {tool} ({offloaded.tokens:,} tokens, "
        f"{offloaded.lines:,} lines) is in {offloaded.path}; read_file or grep it to see it again.]"
    )
    if preview <= 0 or not text:
        return body
    return f"{body}\n{_preview_lines(text, preview, 100)}"


# -- tool time: a large result as it arrives -------------------------------------------------
_OFFLOAD_PREVIEW = 10
"""Lines of an offloaded result shown in the conversation."""

_EXEMPT_TOOLS = frozenset({*FILESYSTEM_TOOL_NAMES, "compact_conversation"})


def offload_tool_result(
    backend: BackendProtocol,
    request: ToolCallRequest,
    result: Any,
    limit: int,
    emit: Callable[..., Any],
) -> Any:
    """`result` unchanged, or, when its text is over `limit` tokens, a `Command` carrying the
    pointer message and the file written (`emit` reports `offloaded` or a warning)."""
    name = request.tool_call["name"]
    if name in _EXEMPT_TOOLS:
        return result
    message, messages = _tool_message(result)
    if message is None or not isinstance(message.content, str):
        return result
    text = message.content
    if approx_tokens(text) <= limit:
        return result
    state = request.state if isinstance(request.state, dict) else {}
    call_id = request.tool_call.get("id")
    with bind_state_files(state.get("files")) as changes:
        try:
            offloaded = persist_text(
                backend,
                LARGE_RESULTS_FOLDER,
                f"{safe_name(name, 'tool')}-{short_id(call_id, text)}",
                text,
            )
        except BackendError as exc:
            emit(
                WARNING,
                message=f"Could not offload the result of {name}: {exc}",
                source=LARGE_RESULTS_FOLDER,
            )
            return result
    pointer = "This result was too large for the conversation. " + pointer_text(
        offloaded, f"The full result of {name}", text, _OFFLOAD_PREVIEW
    )
    stub = message.model_copy(
        update={
            "content": pointer,
            "response_metadata": {**message.response_metadata, "offloaded_to": offloaded.path},
        }
    )
    emit(
        OFFLOADED,
        path=offloaded.path,
        tool=name,
        tool_call_id=call_id,
        tokens=offloaded.tokens,
        lines=offloaded.lines,
        chars=offloaded.chars,
    )
    update = dict(result.update or {}) if isinstance(result, Command) else {}
    update["messages"] = [stub if m is message else m for m in messages] or [stub]
    update["files"] = merge_files(update.get("files"), changes)
    return Command(update=update)


def _tool_message(result: Any) -> tuple[ToolMessage | None, list[Any]]:
    """The tool's (last) ToolMessage, and all the messages it returned (empty for a bare one)."""
    if isinstance(result, ToolMessage):
        return result, []
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = list(result.update.get("messages", []))
        for message in reversed(messages):
            if isinstance(message, ToolMessage):
                return message, messages
    return None, []


# -- old file writes: their long arguments --------------------------------------------------
_FILE_WRITERS = {"write_file": ("content",), "edit_file": ("old_string", "new_string")}
"""Tools whose long text arguments end up in a file, and those arguments."""

_KEEP_CHARS = 200


def long_file_writes(message: AIMessage, limit: int, done: Collection[str]) -> list[ToolCall]:
    """The file-writing calls of `message` whose text arguments exceed `limit` characters
    together and that are not in `done` yet."""
    found = []
    for call in message.tool_calls:
        fields = _FILE_WRITERS.get(call.get("name", ""))
        if not fields or call.get("id") in done:
            continue
        args = call.get("args", {})
        if sum(len(str(args.get(name, ""))) for name in fields) > limit:
            found.append(call)
    return found


def cut_file_arguments(message: AIMessage, cut: Collection[str]) -> AIMessage:
    """A copy of `message` whose file-writing calls with ids in `cut` carry a pointer to the file
    in place of each long text argument (provider-specific raw copies of the calls dropped)."""
    calls = []
    for call in message.tool_calls:
        fields = _FILE_WRITERS.get(call.get("name", ""))
        if fields and call.get("id") in cut:
            args = dict(call.get("args", {}))
            path = args.get("file_path", "the file")
            for name in fields:
                value = args.get(name)
                if isinstance(value, str) and len(value) > _KEEP_CHARS:
                    args[name] = (
                        f"[{len(value):,} characters, already applied to {path}; "
                        "read_file it for the current text]"
                    )
            call = {**call, "args": args}
        calls.append(call)
    kwargs = {
        key: value
        for key, value in message.additional_kwargs.items()
        if key not in ("tool_calls", "function_call")
    }
    return message.model_copy(update={"tool_calls": calls, "additional_kwargs": kwargs})
