"""results_frame: subagent_finished events -> one DataFrame row per task, in call order, typed."""

from __future__ import annotations

import pandas as pd
import pytest

from jupyter_deepagent import RunTrace, results_frame
from jupyter_deepagent.trace.results import RESULT_COLUMNS

STARTED = pd.Timestamp("2025-03-01T10:00:00", tz="UTC").timestamp()  # epoch seconds


def started(task_id: str, turn: str | None, index: int) -> dict:
    return {
        "type": "subagent_started", "time": STARTED, "agent": "researcher", "task_id": task_id,
        "step": 1, "description": f"do {task_id}", "parent_task_id": None, "turn_id": turn,
        "call_index": index,
    }


def finished(task_id: str, turn: str | None, index: int, **fields) -> dict:
    event = {
        **started(task_id, turn, index), "type": "subagent_finished", "status": "ok",
        "result": f"report {task_id}", "structured": None, "tokens_in": 100, "tokens_out": 10,
        "seconds": 1.25, "files_written": [], "transcript_path": f"/subagents/{task_id}.md",
        "error": None,
    }
    event.update(fields)
    return event


def test_no_tasks_gives_an_empty_frame_with_the_fixed_columns() -> None:
    frame = results_frame([{"type": "model_call", "task_id": None}])
    assert frame.empty and tuple(frame.columns) == RESULT_COLUMNS


def test_rows_follow_call_order_not_finish_order() -> None:
    events = [
        started("a", "m1", 0), started("c", "m1", 2), started("b", "m1", 1),
        {"type": "model_call", "task_id": "c", "tokens_in": 5},
        finished("c", "m1", 2), finished("a", "m1", 0), finished("b", "m1", 1),
    ]
    assert results_frame(events)["task_id"].tolist() == ["a", "b", "c"]


def test_events_of_many_runs_concatenated_keep_run_order() -> None:
    first = [started("x1", "m1", 1), started("x0", "m1", 0), finished("x1", "m1", 1),
             finished("x0", "m1", 0)]
    second = [started("y0", "m2", 0), finished("y0", "m2", 0)]
    assert results_frame(first + second)["task_id"].tolist() == ["x0", "x1", "y0"]
    assert results_frame(second + first)["task_id"].tolist() == ["y0", "x0", "x1"]


def test_tasks_without_a_turn_keep_the_order_they_appeared_in() -> None:
    events = [finished("p", None, 0), finished("q", None, 0)]
    assert results_frame(events)["task_id"].tolist() == ["p", "q"]


def test_a_resumed_task_is_one_row_with_its_last_report() -> None:
    events = [
        started("a", "m1", 0), started("b", "m1", 1),
        finished("a", "m1", 0, status="interrupted", transcript_path=None),
        finished("b", "m1", 1),
        started("a", "m1", 0), finished("a", "m1", 0, result="approved and done"),
    ]
    frame = results_frame(events)
    assert frame["task_id"].tolist() == ["a", "b"]
    assert frame["status"].tolist() == ["ok", "ok"]
    assert frame["result"].iloc[0] == "approved and done"


def test_fixed_columns_have_useful_types() -> None:
    events = [
        started("a", "m", 0),
        finished("a", "m", 0, files_written=["/n/a.md"], time=STARTED + 5),
        finished("b", "m", 1, status="error", error="ValueError: bad", transcript_path=None),
    ]
    frame = results_frame(events)
    assert tuple(frame.columns) == RESULT_COLUMNS
    assert frame["subagent"].tolist() == ["researcher", "researcher"]  # the events' agent
    assert frame["tokens_in"].dtype == "int64" and frame["seconds"].dtype == "float64"
    assert frame["files_written"].tolist() == [["/n/a.md"], []]
    # the time of the task's subagent_started event; NaT when the events do not hold it
    assert frame["started_at"].iloc[0] == pd.Timestamp("2025-03-01T10:00:00", tz="UTC")
    assert pd.isna(frame["started_at"].iloc[1])
    assert pd.isna(frame["error"].iloc[0]) and frame["error"].iloc[1] == "ValueError: bad"
    assert pd.isna(frame["transcript_path"].iloc[1])


def test_structured_fields_become_typed_columns() -> None:
    events = [
        finished("a", "m", 0, structured={
            "n": 3, "score": 0.5, "mixed": 1, "ok": True, "tags": ["x", "y"], "name": "alpha",
            "meta": {"k": 1},
        }),
        finished("b", "m", 1, structured={
            "n": 4, "score": 2.0, "mixed": 2.5, "ok": False, "tags": [], "name": "beta",
            "meta": {"k": 2},
        }),
    ]
    frame = results_frame(events)
    assert frame["n"].dtype == "int64" and frame["n"].tolist() == [3, 4]
    assert frame["score"].dtype == "float64"
    assert frame["mixed"].dtype == "float64" and frame["mixed"].tolist() == [1.0, 2.5]
    assert frame["ok"].dtype == bool
    assert frame["tags"].tolist() == [["x", "y"], []]
    assert frame["name"].tolist() == ["alpha", "beta"]
    assert frame["meta"].iloc[1] == {"k": 2}
    assert frame.columns.tolist()[len(RESULT_COLUMNS):] == [
        "n", "score", "mixed", "ok", "tags", "name", "meta"
    ]


def test_missing_structured_fields_are_na_and_numbers_stay_numeric() -> None:
    events = [
        finished("a", "m", 0, structured={"n": 3, "ok": True, "tags": ["x"], "score": 1.5}),
        finished("b", "m", 1, status="error", structured=None),
        finished("c", "m", 2, structured={"n": 5, "ok": False, "tags": [], "extra": "late"}),
    ]
    frame = results_frame(events)
    assert frame["n"].dtype == "Int64" and frame["n"].tolist()[::2] == [3, 5]
    assert frame["ok"].dtype == "boolean"
    assert pd.api.types.is_float_dtype(frame["score"])
    for column in ("n", "ok", "tags", "score"):
        assert pd.isna(frame[column].iloc[1]), column
    assert pd.isna(frame["score"].iloc[2]) and pd.isna(frame["extra"].iloc[0])
    assert frame["n"].sum() == 8  # usable as numbers, NA skipped


def test_a_structured_field_named_like_a_fixed_column_is_prefixed() -> None:
    frame = results_frame([finished("a", "m", 0, structured={"status": "draft", "rank": 1})])
    assert frame["status"].iloc[0] == "ok"
    assert frame["structured_status"].iloc[0] == "draft"


def test_run_trace_results_frame_reads_its_events() -> None:
    events = [finished("b", "m", 1), finished("a", "m", 0)]
    trace = RunTrace(events=events)
    pd.testing.assert_frame_equal(trace.results_frame(), results_frame(events))


@pytest.mark.parametrize("bad", [{"type": "subagent_finished"}, {"type": "subagent_started"}])
def test_task_events_without_a_task_id_are_ignored(bad: dict) -> None:
    assert results_frame([bad, finished("a", "m", 0)])["task_id"].tolist() == ["a"]


def test_the_frame_display_is_captioned_with_its_variable_and_clips_long_text() -> None:
    from html5lib import parseFragment

    from jupyter_deepagent.trace.results import FRAME_STYLE, frame_html

    long = "Svalbard warms 0.63 °C per decade <b>fast</b> " * 4
    events = [finished("a", "m1", 0, result=long, structured={"region": "Svalbard", "year": 2024})]
    html = frame_html(results_frame(events), "agent_results")

    assert html.startswith(f"<style>{FRAME_STYLE}</style>")
    root = parseFragment(html.split("</style>", 1)[1], treebuilder="etree",
                         namespaceHTMLElements=False)
    caption = next(e for e in root.iter("div") if e.get("class") == "jdi-frame-caption")
    assert "".join(caption.itertext()) == "agent_results · 1 row × 14 columns"
    [details] = list(root.iter("details"))  # only the long report is clipped
    shown = "".join(details.find("summary").itertext())
    assert len(shown) == 48 and shown.endswith("…")
    assert "".join(details.itertext()).endswith(long.strip())  # the whole text, a click away
    assert not list(root.iter("b"))  # the report's markup is text
    numbers = [e.text for e in root.iter("td") if e.get("class") == "jdi-num"]
    assert numbers == ["100", "10", "1.25", "2024"]
    outer = next(e for e in root.iter("div") if e.get("class") == "jdi-frame")
    assert outer.find("table") is not None and "max-width: 100%" in FRAME_STYLE
