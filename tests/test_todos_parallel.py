"""The todo list is written at most once per reply: several `write_todos` calls in one reply are
each refused with an error the model sees, the other calls of that reply still run, and the todo
list keeps its last good value."""

from __future__ import annotations

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run


def todos(*items: str) -> dict:
    return {
        "name": "write_todos",
        "args": {"todos": [{"content": item, "status": "pending"} for item in items]},
    }


def test_two_write_todos_in_one_reply_are_both_refused_and_the_list_is_kept() -> None:
    script = [
        {"tool_calls": [todos("gather")]},
        {"tool_calls": [todos("a"), todos("b"), {"name": "ls", "args": {"path": "/"}}]},
        "done",
    ]
    model = ScriptedChatModel(script=script)
    trace = trace_run(
        create_research_agent(model), {"messages": [{"role": "user", "content": "plan it"}]}
    )
    assert trace.status == "ok"
    assert [t["content"] for t in trace.state["todos"]] == ["gather"]
    results = {m.tool_call_id: m for m in model.requests[2].messages if m.type == "tool"}
    refused = [m for m in results.values() if m.name != "ls" and m.status == "error"]
    assert len(refused) == 2
    assert all("never be called multiple times in parallel" in m.text for m in refused)
    assert any(m.name == "ls" and m.status != "error" for m in results.values())
