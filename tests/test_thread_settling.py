"""After a stop, every tool call gets a result placed right after it, found by position and not by
id (providers reuse ids; a scripted model starts again at `call_1`), and a stopped first turn is
kept."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from langchain.tools import tool
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from notebook_shell import Notebook, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.session.run_options import RunOptions
from jupyter_deepagent.jupyter.session.thread_state import unanswered_calls


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    if url == "stop":
        raise KeyboardInterrupt  # the stop button, pressed while the tool runs
    return f"the page at {url}"


def fetch(*urls_and_ids: tuple[str, str]) -> dict[str, Any]:
    """A scripted reply calling fetch_page once per `(url, id)`."""
    calls = [{"name": "fetch_page", "args": {"url": u}, "id": i} for u, i in urls_and_ids]
    return {"tool_calls": calls}


def assert_paired(messages: Sequence[BaseMessage]) -> None:
    """Each AI message's tool calls are answered by the tool messages right after it."""
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage):
            assert index > 0 and messages[index - 1].type in ("ai", "tool"), "a stray result"
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        ids = sorted(call["id"] for call in message.tool_calls)
        following = messages[index + 1 : index + 1 + len(ids)]
        assert all(isinstance(m, ToolMessage) for m in following), f"message {index} unanswered"
        assert sorted(m.tool_call_id for m in following) == ids


def test_a_stopped_call_whose_id_an_earlier_turn_used_still_gets_its_result(
    notebook: Notebook,
) -> None:
    model = scripted(
        fetch(("a", "call_1"), ("b", "call_2")), "Read a and b.",
        fetch(("stop", "call_1"), ("c", "call_2")), "Carried on.",
    )
    notebook.session.configure(model=model)
    notebook.session.tools.append(fetch_page)
    assert notebook.run("%%agent\nread a and b").error is None
    stopped = notebook.run("%%agent\nread more")
    assert isinstance(stopped.error, KeyboardInterrupt)
    after = notebook.run("%%agent\ncarry on")
    assert after.error is None
    sent = model.requests[-1].messages
    assert_paired(sent)
    stopped_turn = [m for m in sent if isinstance(m, ToolMessage)][2:]
    assert [m.tool_call_id for m in stopped_turn] == ["call_1", "call_2"]
    assert all("interrupted by the user" in m.text for m in stopped_turn)


def test_calls_an_earlier_turn_left_open_are_answered_in_place(notebook: Notebook) -> None:
    model = scripted("First answer.", "Second answer.")
    notebook.session.configure(model=model)
    assert notebook.run("%%agent\nfirst").error is None
    plan = notebook.session.plan(RunOptions())
    broken = [  # a history an older version left behind: calls with no results, twice
        AIMessage(content="", tool_calls=[{"name": "fetch_page", "args": {}, "id": "call_1"}]),
        HumanMessage(content="in between"),
        AIMessage(content="", tool_calls=[
            {"name": "fetch_page", "args": {}, "id": "call_1"},
            {"name": "fetch_page", "args": {}, "id": "call_1"},
        ]),
        ToolMessage(content="one of two", tool_call_id="call_1", name="fetch_page"),
    ]
    plan.agent.update_state(plan.config, {"messages": broken}, as_node="tools")
    cell = notebook.run("%%agent\nsecond")
    assert cell.error is None
    assert "the 2 interrupted calls" in cell.live_text
    sent = model.requests[-1].messages
    assert_paired(sent)
    assert [m.text for m in sent if m.type == "human"] == ["first", "in between", "second"]


def test_a_stop_before_the_request_was_saved_keeps_the_first_turn(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_deepagent.trace import run_trace

    model = scripted("Answer to the second.")
    notebook.session.configure(model=model)
    real = run_trace.trace_run

    def stopped_as_it_starts(agent: Any, payload: Any, **kwargs: Any) -> Any:
        raise KeyboardInterrupt  # the stop lands before LangGraph saved anything

    monkeypatch.setattr(run_trace, "trace_run", stopped_as_it_starts)
    assert isinstance(notebook.run("%%agent --new\nthe first request").error, KeyboardInterrupt)
    monkeypatch.setattr(run_trace, "trace_run", real)
    assert notebook.run("%%agent\nthe second request").error is None
    sent = [m.text for m in model.requests[0].messages if m.type == "human"]
    assert sent == ["the first request", "the second request"]


def test_unanswered_calls_are_found_by_position() -> None:
    answered = AIMessage(content="", tool_calls=[{"name": "f", "args": {}, "id": "call_1"}])
    reused = AIMessage(content="", tool_calls=[{"name": "g", "args": {}, "id": "call_1"}])
    messages = [
        HumanMessage(content="q"),
        answered,
        ToolMessage(content="r", tool_call_id="call_1"),
        HumanMessage(content="q2"),
        reused,
    ]
    assert unanswered_calls(messages) == [(4, [{"name": "g", "args": {}, "id": "call_1",
                                                "type": "tool_call"}])]
    assert unanswered_calls(messages[:4]) == []


def test_a_failed_run_is_kept_even_when_settling_the_thread_fails_too(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's trace is the record of what happened: a second failure, while the thread is
    left valid after the first, must not lose it (`_agent`, the run history)."""
    from jupyter_deepagent import StateDamaged
    from jupyter_deepagent.jupyter.session import execution

    def damaged(*args: Any, **kwargs: Any) -> list[str]:
        raise StateDamaged("the thread's database went away", path="state.sqlite")

    monkeypatch.setattr(execution, "settle_thread", damaged)
    notebook.session.configure(model=scripted(fetch(("stop", "call_1"))))
    cell = notebook.run("%%agent\nread it")

    assert isinstance(cell.error, StateDamaged)
    trace = notebook.shell.user_ns.get("_agent")
    assert trace is not None and trace is notebook.session.last_trace
    assert [e["tool"] for e in trace.of_type("tool_call")] == ["fetch_page"]
    assert notebook.session.runs.history.counts() == {notebook.session.thread: 1}
