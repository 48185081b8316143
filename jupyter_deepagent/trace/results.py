"""Subagent results as a pandas DataFrame: one row per task, one typed column per structured field;
and a DataFrame's HTML as a cell shows it (`frame_html`).

Built from `subagent_finished` events alone, so it works on a live run, a finished `RunTrace`, a
replayed research log, or the events of many runs concatenated.
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Iterable, Sequence
from html import escape
from typing import TYPE_CHECKING, cast

from jupyter_deepagent.events import (
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    RunEvent,
    SubagentFinishedEvent,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FRAME_STYLE", "RESULT_COLUMNS", "frame_html", "results_frame"]

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


_CLIPPED = 48
"""Characters of a longer text shown in its cell; the whole text opens below them."""
_ROWS_SHOWN = 200
FRAME_STYLE = """
.jdi-frame { max-width: 100%; overflow-x: auto; margin: 4px 0;
  font-size: var(--jp-ui-font-size1, 13px); }
.jdi-frame-caption { color: var(--jp-ui-font-color2, #5f6368); margin: 2px 0 4px; }
.jdi-frame-caption code { color: var(--jp-ui-font-color1, #202124); font-weight: 600; }
.jdi-frame table { border-collapse: collapse; }
.jdi-frame th, .jdi-frame td { padding: 2px 8px; text-align: left; vertical-align: top;
  border-bottom: 1px solid var(--jp-border-color2, #e0e0e0); white-space: nowrap; }
.jdi-frame th { font-weight: 600; }
.jdi-frame td.jdi-num { text-align: right; }
.jdi-frame details > summary { cursor: pointer; }
.jdi-frame details[open] { white-space: normal; min-width: 24em; max-width: 40em; }
"""
"""The frame's stylesheet, the kernel's own constant, added after the HTML is cleaned."""


def _cell(value: object) -> tuple[str, bool]:
    """A value as the cell's (escaped) HTML, and whether it is a number."""
    import pandas as pd

    missing = value is None or value is pd.NA or value is pd.NaT
    if missing or (isinstance(value, float) and value != value):  # NaN is not itself
        return "", False
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return str(bool(value)), False
    if isinstance(value, numbers.Integral):
        return str(int(value)), True  # a year stays 2024
    if isinstance(value, numbers.Real):
        return f"{float(value):.6g}", True
    if isinstance(value, (list, tuple)):
        text = ", ".join(str(item) for item in value)
    elif isinstance(value, dict):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = str(value)
    text = " ".join(text.split()) if len(text) > _CLIPPED else text
    if len(text) <= _CLIPPED:
        return escape(text), False
    head = escape(text[: _CLIPPED - 1].rstrip()) + "…"
    return f"<details><summary>{head}</summary>{escape(text)}</details>", False


def frame_html(frame: pd.DataFrame, caption: str | None = None) -> str:
    """A DataFrame as a cell shows it: captioned (`caption`, the variable that holds it) and
    kept within the cell's width, the table scrolling inside it; a text longer than 48
    characters is clipped, the whole of it a click away (`<details>`). Every value is escaped
    and the whole cleaned by the views' allow-list (`clean_view_html`), then preceded by the
    frame's own stylesheet.

    Args:
        frame: The DataFrame (the run's subagent results, an `/outputs/*.csv`).
        caption: The name of the variable that holds it, or None.
    """
    from jupyter_deepagent.trace.safe_html import clean_view_html

    shown = frame.head(_ROWS_SHOWN)
    head = "".join(f"<th>{escape(str(name))}</th>" for name in shown.columns)
    rows = []
    for index, values in zip(shown.index, shown.itertuples(index=False, name=None), strict=True):
        cells = [f"<th>{escape(str(index))}</th>"]
        for value in values:
            text, number = _cell(value)
            cells.append(f'<td class="jdi-num">{text}</td>' if number else f"<td>{text}</td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    size = f"{len(frame)} row{'' if len(frame) == 1 else 's'} × {len(frame.columns)} columns"
    if len(frame) > _ROWS_SHOWN:
        size += f", the first {_ROWS_SHOWN} shown"
    named = f"<code>{escape(caption)}</code> · " if caption else ""
    body = (
        f'<div class="jdi-frame"><div class="jdi-frame-caption">{named}{size}</div>'
        f"<table><thead><tr><th></th>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
        "</div>"
    )
    return f"<style>{FRAME_STYLE}</style>{clean_view_html(body)}"
