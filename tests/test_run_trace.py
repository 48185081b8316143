"""`RunTrace` from events alone: JSONL written here and read back in a fresh process rebuilds the
same views; the sink masks secrets before any consumer and never edits an event it handed out;
approvals, files written, the answer and the summarizer's own calls are in the stream."""

from __future__ import annotations

import asyncio
import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from langchain.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from notebook_shell import Notebook, notebook, scripted  # noqa: F401 - the notebook fixture
from notebook_shell import call as notebook_call

from jupyter_deepagent import (
    RunTrace,
    ScriptedChatModel,
    SubAgent,
    atrace_run,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER

SUMMARY = "## Session intent\nStudy glaciers.\n## Next steps\nWrite the report."
FAKE_KEY = "AIza" + "FAKE-0123456789abcdefghijklmnop"  # split: no key-shaped literal


@tool
def fetch(key: str) -> str:
    """Return the research notes named `key`."""
    count = 200 if key == "big" else 70
    return "\n".join(f"{key} line {i:03d} " + ("yyy " * 14)[:55] for i in range(count))


def call(name: str, **args: object) -> dict:
    return {"name": name, "args": args}


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def _views(trace: RunTrace) -> dict:
    frame = trace.results_frame()
    return {
        "prompts": [p.as_dict() for p in trace.prompts],
        "frame": json.loads(frame.to_json(orient="split", date_format="iso", default_handler=str)),
        "final_text": trace.final_text,
        "status": trace.status,
    }


_READ_BACK = """
import json, sys
from jupyter_deepagent import RunTrace
frame_views = []
for path in sys.argv[1:]:
    trace = RunTrace.read_jsonl(path)
    frame = trace.results_frame()
    frame_views.append({
        "prompts": [p.as_dict() for p in trace.prompts],
        "frame": json.loads(frame.to_json(orient="split", date_format="iso", default_handler=str)),
        "final_text": trace.final_text,
        "status": trace.status,
    })
print(json.dumps(frame_views))
"""


def _long_run() -> tuple[RunTrace, RunTrace]:
    """Offloading, two subagents, summarization, then an approval and the answer."""
    script = [
        {"tool_calls": [call("fetch", key="big")]},  # ~3k tokens: offloaded (window/4 = 2.5k)
        {"tool_calls": [call("task", description="Count the lines of big.",
                             subagent_type="counter")]},
        "big has 200 lines.",
        {"tool_calls": [call("task", description="Read n1.", subagent_type="reader")]},
        {"tool_calls": [call("fetch", key="n1")]},
        "n1 says the glaciers retreat.",
        *({"tool_calls": [call("fetch", key=f"n{i}")]} for i in range(2, 9)),
        {"tool_calls": [call("write_file", file_path="/report.md", content="# Glaciers\n")]},
        "The report is in /report.md.",
    ]
    model = ScriptedChatModel(
        script=script, profile={"max_input_tokens": 10_000},
        rules=[{"when": SUMMARY_MARKER, "reply": SUMMARY, "repeat": True}],
    )
    subagents = [
        SubAgent("counter", "Counts lines.", system_prompt="You count."),
        SubAgent("reader", "Reads notes.", system_prompt="You read.", tools=[fetch]),
    ]
    agent = create_research_agent(
        model, tools=[fetch], subagents=subagents, interrupt_on={"write_file": True},
        checkpointer=InMemorySaver(), age_token_limit=None,
    )
    config = {"configurable": {"thread_id": "round-trip"}, "recursion_limit": 200}
    paused = trace_run(agent, ask("survey the notes, then write the report"), config=config)
    resumed = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}),
                        config=config)
    return paused, resumed


def test_a_run_read_back_from_jsonl_in_a_fresh_process_shows_the_same_views(
    tmp_path: Path,
) -> None:
    paused, resumed = _long_run()
    kinds = {e["type"] for e in paused.events}
    assert {"offloaded", "summarized", "approval_requested"} <= kinds
    assert len(paused.of_type("subagent_finished")) == 2
    assert {"approval_decided", "answer", "file_written"} <= {e["type"] for e in resumed.events}
    assert (paused.status, resumed.status) == ("interrupted", "ok")
    paths = [tmp_path / "paused.jsonl", tmp_path / "resumed.jsonl"]
    paused.to_jsonl(paths[0])
    resumed.to_jsonl(paths[1])

    out = subprocess.run([sys.executable, "-c", _READ_BACK, *map(str, paths)],
                         capture_output=True, text=True, check=True)

    assert json.loads(out.stdout) == [_views(paused), _views(resumed)]
    assert resumed.final_text == "The report is in /report.md."
    assert len(paused.prompts) > 10 and len(paused.results_frame()) == 2


def test_the_summarizers_own_requests_are_model_calls_of_purpose_summarize() -> None:
    paused, _ = _long_run()
    summarize = [e for e in paused.of_type("model_call") if e["purpose"] == "summarize"]
    summarized = paused.of_type("summarized")

    assert summarize and len(summarize) == len(summarized)
    assert summarize[0]["reply"]["data"]["content"] == SUMMARY
    assert summarize[0]["step"] == summarized[0]["step"]
    agent_calls = [e for e in paused.of_type("model_call") if e["purpose"] == "agent"]
    assert paused.events[-1]["model_calls"] == len(agent_calls) + len(summarize)


def requested_call_id(trace: RunTrace) -> str:
    [call_event] = [e for e in trace.of_type("tool_call") if e["tool"] == "write_file"] or [None]
    if call_event is not None:
        return call_event["tool_call_id"]
    reply = [e for e in trace.of_type("model_call") if e["tool_calls"] == ["write_file"]][-1]
    return reply["reply"]["data"]["tool_calls"][0]["id"]


def test_approvals_asked_and_given_are_events() -> None:
    paused, resumed = _long_run()
    [requested] = paused.of_type("approval_requested")
    [decided] = resumed.of_type("approval_decided")

    assert requested["tool"] == "write_file" and requested["args"]["file_path"] == "/report.md"
    assert {"approve", "edit", "reject"} <= set(requested["allowed"]) and requested["interrupt_id"]
    assert (decided["tools"], decided["decision"], decided["via"]) == (
        ["write_file"], "approve", "command")
    assert decided["tool_call_ids"] == [requested_call_id(paused)] and decided["edits"] is None
    [written] = resumed.of_type("file_written")
    assert (written["path"], written["tool"], written["chars"]) == ("/report.md", "write_file", 11)
    [answer] = resumed.of_type("answer")
    assert answer["text"] == resumed.events[-1]["final_text"] == "The report is in /report.md."


def test_files_a_subagent_writes_are_events_stamped_with_the_subagent() -> None:
    model = ScriptedChatModel(script=[
        {"tool_calls": [call("task", description="Note it.", subagent_type="general-purpose")]},
        {"tool_calls": [call("write_file", file_path="/note.md", content="ice")]},
        "noted",
        "done",
    ])
    trace = trace_run(create_research_agent(model), ask("take a note"))

    [written] = trace.of_type("file_written")
    assert (written["agent"], written["path"], written["chars"]) == ("general-purpose",
                                                                     "/note.md", 3)
    assert written["task_id"] == trace.of_type("subagent_started")[0]["task_id"]


def test_a_key_in_a_provider_error_is_masked_in_every_event_a_consumer_receives() -> None:
    model = ScriptedChatModel(script=[
        {"tool_calls": [call("fetch", key="n1")]},
        {"raise": "error", "message": f"401 Unauthorized: API key {FAKE_KEY} is not valid"},
    ])
    seen: list[dict] = []

    with pytest.raises(Exception, match="401") as info:
        trace_run(create_research_agent(model, tools=[fetch], model_retries=0),
                  ask(f"use {FAKE_KEY}"),
                  on_event=seen.append, redact=lambda text: text.replace(FAKE_KEY, "***"))

    partial = info.value.trace  # type: ignore[attr-defined]
    assert seen == partial.events and seen[-1]["type"] == "run_finished"
    assert "***" in seen[-1]["error"] and "***" in seen[0]["input"]
    assert FAKE_KEY not in json.dumps(seen)


def test_events_handed_to_a_consumer_are_never_edited_afterwards() -> None:
    model = ScriptedChatModel(script=[{"tool_calls": [call("fetch", key="n1")]}, "done"])
    snapshots: list[dict] = []
    trace = trace_run(create_research_agent(model, tools=[fetch]), ask("go"),
                      on_event=lambda event: snapshots.append(copy.deepcopy(event)))

    assert snapshots == trace.events
    assert [e["seq"] for e in trace.events] == list(range(len(trace.events)))


def test_atrace_run_gives_the_same_stream_as_trace_run() -> None:
    def agent() -> object:
        model = ScriptedChatModel(script=[{"tool_calls": [call("fetch", key="n1")]}, "done"])
        return create_research_agent(model, tools=[fetch])

    live = trace_run(agent(), ask("go"))
    awaited = asyncio.run(atrace_run(agent(), ask("go")))

    assert [e["type"] for e in awaited.events] == [e["type"] for e in live.events]
    assert awaited.final_text == live.final_text == "done"


def test_a_damaged_jsonl_line_is_an_error_naming_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text('{"type": "run_started"}\nnot json\n', encoding="utf-8")

    with pytest.raises(ValueError, match=r"run.jsonl, line 2: not JSON"):
        RunTrace.read_jsonl(path)


def test_a_decision_in_the_notebook_is_an_approval_decided_event(notebook: Notebook) -> None:
    model = scripted(
        notebook_call("write_file", file_path="/workspace/b.md", content="b"), "Did not write b."
    )
    notebook.session.configure(model=model, interrupt_on=("write_file",))
    notebook.run("%%agent\nwrite b")
    notebook.run("%agent resume reject b is not needed")

    [decided] = notebook.session.last_trace.of_type("approval_decided")
    assert (decided["tools"], decided["decision"], decided["message"]) == (
        ["write_file"], "reject", "b is not needed")


def test_a_decision_the_caller_reports_is_not_reported_twice() -> None:
    from jupyter_deepagent.harness.run_events.event_stream import emit_event

    model = ScriptedChatModel(script=[
        {"tool_calls": [call("write_file", file_path="/a.md", content="a")]}, "done"])
    agent = create_research_agent(model, interrupt_on={"write_file": True},
                                  checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "once"}}
    trace_run(agent, ask("write a"), config=config)

    def report(event: dict) -> None:  # as the notebook does: right after run_started
        if event["type"] == "run_started":
            emit_event("approval_decided", decision="approve", via="button", tools=["write_file"],
                       tool_call_ids=[None], message=None, edits=None)

    resumed = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}),
                        config=config, on_event=report)

    [decided] = resumed.of_type("approval_decided")
    assert decided["via"] == "button" and resumed.final_text == "done"
