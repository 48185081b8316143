"""The inspector's Files tab, from events: what the run put in the virtual filesystem.

Offloaded and aged tool results (path, tool, tokens, first lines of the result), long inputs
moved to files, conversation-history and subagent transcripts, memory files read, and files
written. Written files come from `file_written` events when the run has them; otherwise from
successful `write_file`/`edit_file` calls (their whole arguments are in the `model_call` reply);
deleted ones from successful `delete` calls, until written again. Files are grouped by mount,
the first folder of their path.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeAlias, TypedDict, cast

from jupyter_deepagent.events import (
    AGED,
    FILE_WRITTEN,
    INPUT_OFFLOADED,
    MEMORY_LOADED,
    MODEL_CALL,
    OFFLOADED,
    SUBAGENT_FINISHED,
    SUMMARIZED,
    TOOL_CALL,
    TOOL_RESULT,
    AgedEvent,
    OffloadedEvent,
    RunEvent,
    SubagentFinishedEvent,
    ToolResultEvent,
)

__all__ = ["FileTracker"]

_MOUNT_ORDER = (
    "/outputs/",
    "/workspace/",
    "/memories/",
    "/large_tool_results/",
    "/conversation_history/",
    "/subagents/",
    "/notebook/",
)
"""Mounts in the order the Files tab lists them; other folders (thread scratch) come last."""

PREVIEW_LINES = 12
PREVIEW_CHARS = 2_000
_WRITERS = ("write_file", "edit_file", "delete")

_Entry: TypeAlias = dict[str, object]
"""One file of the Files tab (JSON)."""


class _WriteCall(TypedDict):
    """A write_file/edit_file call waiting for its result."""

    tool: str
    args: Mapping[str, object]
    agent: str
    step: int


def _preview_text(text: str, lines: int = PREVIEW_LINES, chars: int = PREVIEW_CHARS) -> str:
    """The first `lines` lines of `text`, at most `chars` characters, "…" when cut."""
    head = "\n".join(text.split("\n", lines)[:lines])
    cut = len(head) < len(text)
    if len(head) > chars:
        head, cut = head[:chars], True
    return head + ("\n…" if cut else "")


def mount_of(path: str) -> str:
    """The mount a virtual path is in: "/outputs/" for "/outputs/a.md", "/" for scratch."""
    parts = path.lstrip("/").split("/", 1)
    return f"/{parts[0]}/" if len(parts) == 2 else "/"


def _arg_text(value: object) -> str:
    """A tool argument as text: whole, or the head `summarize_args` kept."""
    if isinstance(value, dict) and "head" in value:
        return str(value["head"]) + "…"
    return value if isinstance(value, str) else ("" if value is None else str(value))


class FileTracker:
    """Follows every agent's events for files (subagents write to the same filesystem)."""

    def __init__(self) -> None:
        self.files: dict[str, _Entry] = {}  # path -> entry, in first-seen order
        self.written: dict[str, _Entry] = {}  # from file_written events
        self.derived: dict[str, _Entry] = {}  # from write_file/edit_file calls
        self.deleted: dict[str, _Entry] = {}  # from delete calls, until written again
        self._results: dict[str, str] = {}  # tool_call_id -> result text (for previews)
        self._calls: dict[str, _WriteCall] = {}  # tool_call_id -> {tool, args, agent}
        self._full_args: dict[str, dict[str, object]] = {}  # tool_call_id -> args from the reply

    def add(self, event: RunEvent) -> None:
        """Take one event of any agent."""
        if event["type"] == MODEL_CALL:
            reply = (event.get("reply") or {}).get("data") or {}
            for call in reply.get("tool_calls") or []:
                if call.get("name") in _WRITERS and call.get("id"):
                    self._full_args[str(call["id"])] = dict(call.get("args") or {})
        elif event["type"] == TOOL_CALL:
            if event.get("tool") in _WRITERS:
                self._calls[str(event.get("tool_call_id"))] = {
                    "tool": event.get("tool"),
                    "args": event.get("args") or {},
                    "agent": event.get("agent"),
                    "step": event.get("step"),
                }
        elif event["type"] == TOOL_RESULT:
            self._take_result(event)
        elif event["type"] in (OFFLOADED, AGED):
            self._artifact(event)
        elif event["type"] == INPUT_OFFLOADED and event.get("path"):
            self._put(
                str(event["path"]),
                kind="input",
                tool=event.get("tool"),
                tokens=event.get("tokens"),
                step=event.get("step"),
                preview="",
                agent=event.get("agent"),
                note=f"{event.get('kind', 'input')} input moved out of the conversation",
            )
        elif event["type"] == SUMMARIZED and event.get("transcript_path"):
            self._put(
                str(event["transcript_path"]),
                kind="transcript",
                tool=None,
                tokens=None,
                step=event.get("step"),
                agent=event.get("agent"),
                preview="",
                note=f"{event.get('messages_folded', 0)} messages folded "
                f"into summary {event.get('count', 1)}",
            )
        elif event["type"] == SUBAGENT_FINISHED:
            self._subagent(event)
        elif event["type"] == MEMORY_LOADED and event.get("path"):
            self._put(
                str(event["path"]),
                kind="memory",
                tool=None,
                tokens=event.get("tokens"),
                step=event.get("step"),
                agent=event.get("agent"),
                preview="",
                note="memory: always in the prompt",
            )
        elif event["type"] == FILE_WRITTEN and event.get("path"):
            path = str(event["path"])
            self.deleted.pop(path, None)
            extra = cast("Mapping[str, object]", event)  # fields an older writer sent
            preview = _arg_text(extra.get("preview") or extra.get("content") or "")
            self.written[path] = {
                "path": path,
                "kind": "written",
                "tool": event.get("tool"),
                "tokens": extra.get("tokens"),
                "step": event.get("step"),
                "agent": event.get("agent"),
                "preview": _preview_text(preview),
                "note": f"{event.get('chars'):,} characters" if event.get("chars") else "",
            }

    def _take_result(self, event: ToolResultEvent) -> None:
        call_id = str(event.get("tool_call_id"))
        content = str(event.get("content") or "")
        self._results[call_id] = _preview_text(content)
        for entry in self.files.values():  # an artifact announced before its result arrived
            if entry.get("tool_call_id") == call_id and not entry["preview"]:
                entry["preview"] = self._results[call_id]
        call = self._calls.pop(call_id, None)
        if call is None or event.get("error"):
            return
        args = self._full_args.get(call_id) or call["args"]
        path = _arg_text(args.get("file_path") or args.get("path"))
        if not path:
            return
        if call["tool"] == "delete":  # gone: shown, so a deletion is never silent
            inside = path.rstrip("/") + "/"  # a folder's files went with it
            for kept in (self.written, self.derived, self.deleted):
                for gone in [p for p in kept if p == path or p.startswith(inside)]:
                    del kept[gone]
            self.deleted[path] = {
                "path": path,
                "kind": "deleted",
                "tool": "delete",
                "tokens": None,
                "step": call["step"],
                "agent": call["agent"],
                "preview": "",
                "note": "deleted by the agent",
            }
            return
        if call["tool"] == "write_file":
            preview = _preview_text(_arg_text(args.get("content")))
            note = ""
        else:
            old, new = _arg_text(args.get("old_string")), _arg_text(args.get("new_string"))
            preview = _preview_text(f"- {old}\n+ {new}")
            note = "edited"
        self.deleted.pop(path, None)
        self.derived[path] = {
            "path": path,
            "kind": "written",
            "tool": call["tool"],
            "tokens": None,
            "step": call["step"],
            "agent": call["agent"],
            "preview": preview,
            "note": note,
        }

    def _artifact(self, event: OffloadedEvent | AgedEvent) -> None:
        kind = event["type"]
        call_id = str(event.get("tool_call_id"))
        path = str(event.get("path"))
        replies = event.get("replies") if event["type"] == AGED else None
        note = f"{event.get('lines', 0):,} lines, sent as a pointer" + (
            f" after {replies} replies" if kind == AGED else ""
        )
        self._put(
            path,
            kind=kind,
            tool=event.get("tool"),
            tokens=event.get("tokens"),
            step=event.get("step"),
            agent=event.get("agent"),
            preview=self._results.get(call_id, ""),
            note=note,
            tool_call_id=call_id,
        )

    def _subagent(self, event: SubagentFinishedEvent) -> None:
        if event.get("transcript_path"):
            self._put(
                str(event["transcript_path"]),
                kind="transcript",
                tool="task",
                tokens=None,
                step=event.get("step"),
                agent=event.get("agent"),
                preview=_preview_text(str(event.get("result") or "")),
                note=f"transcript of task {event.get('task_id')}",
            )

    def _put(self, path: str, **entry: object) -> None:
        old = self.files.get(path)
        if old is not None and old["kind"] == OFFLOADED and entry["kind"] == AGED:
            old["note"] = f"{old['note']}; aged"
            return
        self.files[path] = {"path": path, **entry}

    def view(self) -> dict[str, object]:
        """The Files tab's data: `mounts` in `_MOUNT_ORDER`, each with its files by path (parallel
        subagents finish in any order: a replay must show the same tab)."""
        # `file_written` says what was written; the call's own arguments give its first lines
        written = {
            path: {
                **entry,
                "preview": entry["preview"] or self.derived.get(path, {}).get("preview", ""),
            }
            for path, entry in self.written.items()
        } or dict(self.derived)
        written.update(self.deleted)
        entries = [*written.values(), *(e for p, e in self.files.items() if p not in written)]
        groups: dict[str, list[_Entry]] = {}
        for entry in sorted(entries, key=lambda e: str(e["path"])):
            groups.setdefault(mount_of(str(entry["path"])), []).append(
                {k: v for k, v in entry.items() if k != "tool_call_id"}
            )
        order = [m for m in _MOUNT_ORDER if m in groups] + sorted(
            m for m in groups if m not in _MOUNT_ORDER
        )
        return {
            "mounts": [{"mount": mount, "files": groups[mount]} for mount in order],
            "count": len(entries),
        }
