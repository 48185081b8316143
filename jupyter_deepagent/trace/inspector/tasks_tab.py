"""The inspector's Subagents tab, from events: the results table and each task's transcript.

The table is `results_frame()` itself, turned into JSON rows, so the inspector and the DataFrame
a run returns can never disagree. It is rebuilt only when a subagent event arrives.
"""

from __future__ import annotations

import math
from typing import TypeAlias, cast

from jupyter_deepagent.events import (
    MODEL_CALL,
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    TOOL_CALL,
    TOOL_RESULT,
    RunEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
)
from jupyter_deepagent.trace.results import RESULT_COLUMNS

__all__ = ["TaskTracker", "json_value"]

_COMPACT_COLUMNS = ("description", "subagent", "status")
"""Shown first in the table; then the structured fields, tokens and seconds."""

_TRANSCRIPT_LIMIT = 200  # entries kept per task
_TEXT_LIMIT = 600

_TaskEvent: TypeAlias = SubagentStartedEvent | SubagentFinishedEvent
_JSONDict: TypeAlias = dict[str, object]


def json_value(value: object) -> object:
    """A DataFrame cell as a JSON value (NA and NaN as None, timestamps as ISO text)."""
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [json_value(v) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v) for k, v in value.items()}
    if hasattr(value, "isoformat"):
        return None if str(value) == "NaT" else value.isoformat()
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):
        value = value.item()  # numpy scalars
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (str, int, float, bool)):
        return value
    try:
        import pandas as pd

        if pd.isna(value):
            return None
    except (TypeError, ValueError, ImportError):
        pass
    return str(value)


def _short(text: object, limit: int = _TEXT_LIMIT) -> str:
    text = "" if text is None else str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


class TaskTracker:
    """Follows subagent events and the events of each task's own steps."""

    def __init__(self) -> None:
        self.events: list[_TaskEvent] = []  # subagent_started / subagent_finished, in order
        self.transcripts: dict[str, list[_JSONDict]] = {}
        self._cached: tuple[int, _JSONDict] | None = None

    def add(self, event: RunEvent) -> None:
        """Take one event of any agent."""
        task_id = event.get("task_id")
        if event["type"] in (SUBAGENT_STARTED, SUBAGENT_FINISHED):
            self.events.append(event)
        if task_id is None:
            return
        lines = self.transcripts.setdefault(str(task_id), [])
        if len(lines) >= _TRANSCRIPT_LIMIT:
            return
        entry = _transcript_entry(event)
        if entry is not None:
            lines.append(entry)

    def view(self) -> _JSONDict:
        """The Subagents tab's data: `columns`, `compact` (shown first), `rows`, `transcripts`."""
        if self._cached is not None and self._cached[0] == len(self.events):
            table = self._cached[1]
        else:
            table = self._table()
            self._cached = (len(self.events), table)
        running = [
            {
                "task_id": e.get("task_id"),
                "subagent": e.get("agent"),
                "description": e.get("description"),
            }
            for e in self._running()
        ]
        return {
            **table,
            "running": running,
            "transcripts": {task: list(lines) for task, lines in self.transcripts.items()},
        }

    def _running(self) -> list[_TaskEvent]:
        started: dict[str, _TaskEvent] = {}
        for event in self.events:
            task = str(event.get("task_id"))
            if event["type"] == SUBAGENT_STARTED:
                started[task] = event
            else:
                started.pop(task, None)
        return list(started.values())

    def _table(self) -> _JSONDict:
        if not any(e["type"] == SUBAGENT_FINISHED for e in self.events):
            return {"columns": list(RESULT_COLUMNS), "compact": [], "rows": []}
        from jupyter_deepagent.trace.results import results_frame

        frame = results_frame(self.events)
        columns = [str(c) for c in frame.columns]
        structured = [c for c in columns if c not in RESULT_COLUMNS]
        compact = [*_COMPACT_COLUMNS, *structured, "tokens", "seconds"]
        rows = []
        for record in frame.to_dict("records"):
            row = {str(k): json_value(v) for k, v in record.items()}
            row["tokens"] = _count(row.get("tokens_in")) + _count(row.get("tokens_out"))
            rows.append(row)
        return {"columns": columns, "compact": compact, "rows": rows}


def _count(value: object) -> int:
    """A token count of a results row (0 when missing)."""
    return int(cast("int", value) or 0)


def _transcript_entry(event: RunEvent) -> _JSONDict | None:
    """One line of a task's transcript: what its model said or called, what a tool returned."""
    step = event.get("step")
    if event["type"] == MODEL_CALL:
        data = (event.get("reply") or {}).get("data") or {}
        content = data.get("content")
        if isinstance(content, list):
            content = " ".join(str(b.get("text", "")) for b in content if isinstance(b, dict))
        text = _short(content)
        if not text:
            return None
        return {"step": step, "kind": "says", "text": text}
    if event["type"] == TOOL_CALL:
        return {
            "step": step,
            "kind": "calls",
            "text": f"{event.get('tool')} {_short(event.get('args'), 200)}",
        }
    if event["type"] == TOOL_RESULT:
        mark = "✗" if event.get("error") else "✓"
        return {
            "step": step,
            "kind": "result",
            "text": f"{mark} {event.get('tool')}: "
            f"{_short(event.get('error') or event.get('content'), 300)}",
        }
    if event["type"] == SUBAGENT_FINISHED:
        return {"step": step, "kind": "report", "text": _short(event.get("result"), 2_000)}
    return None
