"""Run events as the views and the research log receive them: every run traced by `trace_run` is
a numbered JSON stream between `run_started` and `run_finished`, and its `model_call` replies are
enough to play the run again offline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langchain.tools import tool
from langchain_core.exceptions import ModelAPIError
from langchain_core.messages import messages_from_dict
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from jupyter_deepagent import (
    DiskBackend,
    ScriptedChatModel,
    SubAgent,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.events import EVENT_TYPES
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.jupyter.views.event_text import short_args

COMMON = {"type", "time", "agent", "task_id", "step", "run_id", "seq"}
TODOS = [{"content": c, "status": "pending"} for c in ("read", "compare", "write")]
BODY = "glacier " * 1_250  # 10,000 characters


def call(name: str, **args) -> dict:
    return {"name": name, "args": args}


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def notes(key: str, count: int = 70) -> str:
    return "\n".join(f"{key} line {i:03d} " + ("yyy " * 14)[:55] for i in range(count))


@tool
def fetch(key: str) -> str:
    """Return the research notes named `key`."""
    return notes(key, 170 if key == "big" else 70)


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    raise KeyboardInterrupt  # the stop button, pressed while the tool runs


def plain_script() -> list:
    return [
        {"tool_calls": [call("write_todos", todos=TODOS)]},
        {"tool_calls": [call("write_file", file_path="/notes.md", content=BODY)]},
        {"tool_calls": [call("read_file", file_path="/notes.md", limit=1)]},
        "Glaciers are retreating.",
    ]


def subagent_script() -> list:
    return [
        {"tool_calls": [call("task", description="Count the notes.", subagent_type="counter")]},
        {"tool_calls": [call("fetch", key="n1")]},
        "There are 70 lines.",
        "The counter found 70 lines.",
    ]


def counter() -> SubAgent:
    return SubAgent("counter", "Counts lines of notes.", system_prompt="You count.",
                    tools=[fetch])


def check_stream(trace, status: str) -> list[dict]:
    """The invariants every traced run keeps; returns its events."""
    events = trace.events
    for event in events:
        json.dumps(event, allow_nan=False)
        assert event["type"] in EVENT_TYPES, event["type"]
        assert COMMON <= set(event), (event["type"], COMMON - set(event))
        assert event["run_id"] == trace.run_id and isinstance(event["time"], float)
    assert [event["seq"] for event in events] == list(range(len(events)))
    kinds = [event["type"] for event in events]
    assert kinds[0] == "run_started" and kinds.count("run_started") == 1
    assert kinds[-1] == "run_finished" and kinds.count("run_finished") == 1
    finished = events[-1]
    assert (finished["status"], trace.status) == (status, status)
    calls = trace.of_type("model_call")
    assert finished["model_calls"] == len(calls)
    assert finished["tool_calls"] == len(trace.of_type("tool_call"))
    assert finished["tokens_in"] == sum(c["tokens_in"] for c in calls)
    assert finished["tokens_out"] == sum(c["tokens_out"] for c in calls)
    assert finished["seconds"] >= 0
    return events


def tool_calls(trace) -> list[tuple]:
    return [(e["agent"], e["tool"], e["tool_call_id"], e["args"])
            for e in trace.of_type("tool_call")]


def replay_script(trace) -> list:
    """The recorded replies, in the order the model made them."""
    return messages_from_dict([event["reply"] for event in trace.of_type("model_call")])


def test_a_plain_run_is_a_numbered_stream_from_run_started_to_run_finished() -> None:
    model = ScriptedChatModel(script=[*plain_script(), "Sea ice shrinks."])
    config = {"configurable": {"thread_id": "t-1"}}
    agent = create_research_agent(model, checkpointer=InMemorySaver())
    trace = trace_run(agent, ask("What do glaciers do?"), config=config)
    check_stream(trace, "ok")
    started, finished = trace.events[0], trace.events[-1]
    assert started["input"] == "What do glaciers do?" and started["thread_id"] == "t-1"
    assert started["model"] == "scripted:scripted"
    assert finished["final_text"] == trace.final_text == "Glaciers are retreating."
    assert finished["error"] is None and finished["step"] == 4
    again = trace_run(agent, ask("And sea ice?"), config=config)
    check_stream(again, "ok")
    assert again.run_id != trace.run_id and again.events[0]["input"] == "And sea ice?"
    assert again.prompts[0].text == trace.prompts[0].text  # each run records its prompt whole


def test_model_calls_carry_the_model_and_the_whole_reply() -> None:
    trace = trace_run(create_research_agent(ScriptedChatModel(script=plain_script())), ask("go"))
    write = trace.of_type("model_call")[1]
    assert write["model"] == "scripted:scripted" and write["tool_calls"] == ["write_file"]
    assert write["tokens_in_estimated"] is False  # the scripted model reports its usage
    [reply] = messages_from_dict([write["reply"]])
    [made] = reply.tool_calls
    assert made["args"]["content"] == BODY and made["id"] == write_call(trace)["tool_call_id"]
    assert reply.usage_metadata["output_tokens"] == write["tokens_out"]


def write_call(trace) -> dict:
    return next(e for e in trace.of_type("tool_call") if e["tool"] == "write_file")


def test_tool_events_keep_json_args_and_the_whole_result() -> None:
    trace = trace_run(create_research_agent(ScriptedChatModel(script=plain_script())), ask("go"))
    todos, write, read = trace.of_type("tool_call")
    assert todos["args"]["todos"] == TODOS  # a list stays a list, not its repr
    assert write["args"]["content"] == {"chars": 10_000, "head": BODY[:200]}
    assert short_args(write["args"]) == "/notes.md (10,000 chars)"
    assert short_args(todos["args"]) == "todos=[3 items]"
    assert short_args(read["args"]) == "/notes.md limit=1"
    result = trace.of_type("tool_result")[2]
    assert result["content"].startswith("     1\tglacier glacier")  # what read_file returned
    assert result["chars"] == len(result["content"]) and result["error"] is None


def test_an_unchanged_prompt_is_sent_as_its_hash(tmp_path: Path) -> None:
    (tmp_path / "AGENTS.md").write_text("Prefer metric units.\n")
    model = ScriptedChatModel(script=[
        {"tool_calls": [call("ls", path="/")]},
        {"tool_calls": [call("edit_file", file_path="/AGENTS.md", old_string="metric",
                             new_string="SI")]},
        "Noted.",
        "SI.",
    ])
    agent = create_research_agent(model, memory=["/AGENTS.md"], backend=DiskBackend(tmp_path))
    trace = trace_run(agent, ask("remember SI"))
    first, same, after_edit = trace.of_type("prompt")  # a run keeps its prompt
    assert first["assembly"] is not None and same["assembly"] is after_edit["assembly"] is None
    assert same["hash"] == first["hash"] == after_edit["hash"]
    assert [p.text for p in trace.prompts] == [r.system for r in model.requests]
    [edited] = trace_run(agent, ask("again")).of_type("prompt")  # the next run has the edit
    assert edited["hash"] != first["hash"] and edited["assembly"] is not None


def test_subagent_events_join_the_run_and_the_window_warning_comes_once() -> None:
    model = ScriptedChatModel(script=subagent_script())  # no profile: the window is a guess
    agent = create_research_agent(model, subagents=[counter()])
    trace = trace_run(agent, ask("How many lines?"))
    check_stream(trace, "ok")
    started, finished = trace.of_type("subagent_started", "subagent_finished")
    assert started["agent"] == finished["agent"] == "counter"
    assert "subagent" not in started and "started_at" not in started
    assert finished["task_id"] == started["task_id"] and finished["status"] == "ok"
    own = [e for e in trace.events if e["task_id"] == started["task_id"]]
    assert {"prompt", "model_call", "tool_call", "tool_result"} <= {e["type"] for e in own}
    assert [e for e in own if e["type"] == "prompt"][0]["assembly"] is not None
    window_warnings = [e for e in trace.of_type("warning") if e["source"] == "context_window"]
    assert len(window_warnings) == 1 and window_warnings[0]["agent"] == "main"
    frame = trace.results_frame()
    assert frame["subagent"].tolist() == ["counter"]
    assert frame["started_at"].iloc[0].timestamp() == pytest.approx(started["time"])
    assert trace.events[-1]["model_calls"] == 4  # the subagent's two calls included


def test_offloading_and_summarizing_are_in_the_stream() -> None:
    script = [{"tool_calls": [call("fetch", key="big")]},
              *({"tool_calls": [call("fetch", key=f"n{i}")]} for i in range(6)), "done"]
    rules = [{"when": SUMMARY_MARKER, "reply": "## Session intent\nRead notes.", "repeat": True}]
    model = ScriptedChatModel(script=script, rules=rules, profile={"max_input_tokens": 8_000})
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None)
    trace = trace_run(agent, ask("survey the notes"), config={"recursion_limit": 100})
    check_stream(trace, "ok")
    [offloaded] = trace.of_type("offloaded")
    [big] = [e for e in trace.of_type("tool_result")
             if e["tool_call_id"] == offloaded["tool_call_id"]]
    assert big["content"] == notes("big", 170) and big["chars"] == offloaded["chars"]
    summarized = trace.of_type("summarized")[0]
    assert summarized["transcript_path"].startswith("/conversation_history/")
    assert summarized["tokens_summary"] > 0 and summarized["tokens_summarizer"] > 0
    assert summarized["tokens_after"] < summarized["tokens_before"]


def test_a_pause_for_approval_and_its_resume_are_two_runs() -> None:
    model = ScriptedChatModel(script=[
        {"tool_calls": [call("write_file", file_path="/a.md", content="first")]}, "wrote it"])
    agent = create_research_agent(model, interrupt_on={"write_file": True},
                                  checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "hitl"}}
    paused = trace_run(agent, ask("write a"), config=config)
    check_stream(paused, "interrupted")
    assert paused.events[-1]["final_text"] == ""
    resumed = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}), config=config)
    check_stream(resumed, "ok")
    assert resumed.events[0]["input"] == "resume" and resumed.events[0]["thread_id"] == "hitl"
    assert resumed.events[-1]["final_text"] == "wrote it"


def test_a_stop_records_run_finished_and_keeps_the_partial_trace() -> None:
    model = ScriptedChatModel(script=[{"tool_calls": [call("fetch_page", url="https://a.org")]}])
    seen: list[dict] = []
    agent = create_research_agent(model, tools=[fetch_page])
    with pytest.raises(KeyboardInterrupt) as raised:
        trace_run(agent, ask("fetch it"), on_event=seen.append)
    trace = raised.value.trace
    check_stream(trace, "stopped")
    assert seen == trace.events  # live views got the same events, in order
    assert trace.events[-1]["error"] == "KeyboardInterrupt: "
    assert trace.of_type("tool_call")[0]["tool"] == "fetch_page"


def test_a_failed_run_records_the_error() -> None:
    model = ScriptedChatModel(script=[{"raise": "error", "message": "service down"}])
    with pytest.raises(ModelAPIError) as raised:
        trace_run(create_research_agent(model, model_retries=0), ask("hi"))
    trace = raised.value.trace
    check_stream(trace, "error")
    assert "service down" in trace.events[-1]["error"]


def test_the_plain_custom_stream_has_no_run_identity() -> None:
    agent = create_research_agent(ScriptedChatModel(script=["hi"]))
    events = list(agent.stream(ask("hi"), stream_mode="custom"))
    assert events and not any("run_id" in e or "seq" in e for e in events)
    assert {e["type"] for e in events} <= set(EVENT_TYPES) - {"run_started", "run_finished"}
    assert all(e["assembly"] is not None for e in events if e["type"] == "prompt")


@pytest.mark.parametrize("scenario", ["plain", "subagent"])
def test_recorded_replies_replay_the_run(scenario: str) -> None:
    def build(model: ScriptedChatModel):
        if scenario == "plain":
            return create_research_agent(model)
        return create_research_agent(model, subagents=[counter()])

    script = plain_script() if scenario == "plain" else subagent_script()
    recorded = trace_run(build(ScriptedChatModel(script=script)), ask("go"))
    player = ScriptedChatModel(script=replay_script(recorded))
    replayed = trace_run(build(player), ask("go"))
    assert replayed.final_text == recorded.final_text and replayed.final_text
    assert tool_calls(replayed) == tool_calls(recorded)
    assert player.remaining == 0


def test_an_oversized_memory_file_is_cut_with_one_warning(tmp_path: Path) -> None:
    text = "".join(f"fact {i:04d}: glaciers\n" for i in range(800))
    (tmp_path / "AGENTS.md").write_text(text)
    tokens = approx_tokens(text.rstrip("\n"))  # ~5,000: over the 2,000 a file may take
    model = ScriptedChatModel(script=[{"tool_calls": [call("ls", path="/")]}, "done"],
                              profile={"max_input_tokens": 20_000})
    agent = create_research_agent(model, memory=["/AGENTS.md"], backend=DiskBackend(tmp_path))
    trace = trace_run(agent, ask("hi"))
    [warning] = [e for e in trace.of_type("warning") if e["source"] == "/AGENTS.md"]
    assert f"{tokens:,} tokens" in warning["message"] and "2,000" in warning["message"]
    assert "Trim it" in warning["message"]
    for request in model.requests:
        assert "fact 0000" in request.system and "fact 0799" not in request.system
        assert "/AGENTS.md is cut here" in request.system
    assert trace.of_type("memory_loaded")[0]["tokens"] == tokens
