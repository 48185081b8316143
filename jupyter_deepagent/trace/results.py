"""Subagent results as a pandas DataFrame: one row per task, one typed column per structured field.

Built from `subagent_finished` events alone, so it works on a live run, a finished `RunTrace`, a
replayed research log, or the events of many runs concatenated.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from jupyter_deepagent.events import (
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    RunEvent,
    SubagentFinishedEvent,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RESULT_COLUMNS", "results_frame"]

RESULT_COLUMNS = (
    "task_id",
    "subagent",
    "description",
    "status",
    "result",
    "tokens_in",
    "tokens_out",
    "seconds",
    "files_written",
    "transcript_path",
    "started_at",
    "error",
)
"""The columns every results frame has, before one column per structured field."""

_FIELDS = {"subagent": "agent"}  # column -> the event field it comes from, where they differ
_MISSING = object()


def _ordered_tasks(
    events: Iterable[RunEvent],
) -> list[tuple[SubagentFinishedEvent, float | None]]:
    """The last `subagent_finished` event of each task, with the time the task first started,
    in the order the tasks were called.

    Tasks launched by one model turn run concurrently and start in any order, so they are sorted
    by their position in that turn (`call_index`); turns come in the order they first appear.
    A task reported twice (paused for approval, then resumed) keeps its last report.
    """
    turn_seen: dict[str, int] = {}
    task_seen: dict[str, int] = {}
    started: dict[str, float] = {}
    finished: dict[str, SubagentFinishedEvent] = {}
    for position, event in enumerate(events):
        if "type" not in event or event["type"] not in (SUBAGENT_STARTED, SUBAGENT_FINISHED):
            continue
        if not event.get("task_id"):
            continue
        task_id = str(event["task_id"])
        turn = event.get("turn_id")
        turn_seen.setdefault(f"turn:{turn}" if turn else f"task:{task_id}", position)
        task_seen.setdefault(task_id, position)
        if event["type"] == SUBAGENT_FINISHED:
            finished[task_id] = event
        elif isinstance(event.get("time"), (int, float)):
            started.setdefault(task_id, float(event["time"]))

    def key(event: SubagentFinishedEvent) -> tuple[int, int, int]:
        task_id = str(event["task_id"])
        turn = event.get("turn_id")
        return (
            turn_seen[f"turn:{turn}" if turn else f"task:{task_id}"],
            int(event.get("call_index") or 0),
            task_seen[task_id],
        )

    return [
        (event, started.get(str(event["task_id"]))) for event in sorted(finished.values(), key=key)
    ]


def _typed_column(values: Sequence[object]) -> pd.Series:
    """A column whose dtype follows its values: bools stay bool, whole numbers int, other numbers
    float, text str, anything else (lists, dicts) Python objects. Missing values are NA."""
    import pandas as pd

    present = [v for v in values if v is not _MISSING and v is not None]
    missing = len(present) < len(values)
    if present and all(isinstance(v, bool) for v in present):
        dtype = "boolean" if missing else "bool"
    elif present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        dtype = "Int64" if missing else "int64"
    elif present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.Series(
            [
                float("nan") if v is _MISSING or v is None else float(cast("float", v))
                for v in values
            ],
            dtype="float64",
        )
    elif present and all(isinstance(v, str) for v in present):
        return pd.Series([v if isinstance(v, str) else None for v in values], dtype="str")
    else:
        return pd.Series([pd.NA if v is _MISSING or v is None else v for v in values], dtype=object)
    return pd.Series([pd.NA if v is _MISSING or v is None else v for v in values], dtype=dtype)


def _clean(values: Sequence[object]) -> list[object]:
    return [None if v is _MISSING else v for v in values]


def _field(event: SubagentFinishedEvent, name: str, default: object = None) -> object:
    """A field of a task's event, read by name (a damaged record may lack it)."""
    return cast("dict[str, object]", event).get(name, default)


def results_frame(events: Iterable[RunEvent]) -> pd.DataFrame:
    """One row per subagent task, in the order the tasks were called.

    Columns: `RESULT_COLUMNS`, then one per field of the tasks' structured responses (named
    `structured_<field>` if it clashes with a fixed column). Numbers stay numeric, lists stay
    lists, bools stay bool; a field a task did not return is NA. `subagent` is the events'
    `agent`; `started_at` is the time of the task's first `subagent_started` event as a UTC
    timestamp (NaT when the events do not hold it).

    Args:
        events: run events, from one run or many runs concatenated.

    Returns:
        A pandas DataFrame (empty, with the fixed columns, when there were no tasks).
    """
    import pandas as pd

    ordered = _ordered_tasks(events)
    tasks = [event for event, _ in ordered]
    structured_names: list[str] = []
    for event in tasks:
        for name in event.get("structured") or {}:
            if name not in structured_names:
                structured_names.append(name)

    data: dict[str, pd.Series] = {}
    for column in RESULT_COLUMNS:
        values = [_field(event, _FIELDS.get(column, column), _MISSING) for event in tasks]
        if column == "files_written":
            data[column] = pd.Series(
                [list(cast("list[str]", v) or []) for v in _clean(values)], dtype=object
            )
        elif column in ("tokens_in", "tokens_out"):
            data[column] = pd.Series(
                [int(cast("int", v) or 0) for v in _clean(values)], dtype="int64"
            )
        elif column == "seconds":
            data[column] = pd.Series(
                [float(cast("float", v) or 0.0) for v in _clean(values)], dtype="float64"
            )
        elif column == "started_at":
            times = pd.Series([float("nan") if t is None else t for _, t in ordered], dtype=float)
            data[column] = pd.to_datetime(times, unit="s", utc=True)
        else:
            data[column] = pd.Series(
                [v if isinstance(v, str) else None for v in _clean(values)], dtype="str"
            )
    for name in structured_names:
        column = f"structured_{name}" if name in data else name
        data[column] = _typed_column(
            [(event.get("structured") or {}).get(name, _MISSING) for event in tasks]
        )
    return pd.DataFrame(data, index=pd.RangeIndex(len(tasks)))
