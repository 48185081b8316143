"""Approvals through the Python API: `interrupt_on` names are checked against the agent's tools,
and a person's `edit` decision is what runs."""

from __future__ import annotations

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from jupyter_deepagent import (
    HarnessProfile,
    ScriptedChatModel,
    SubAgent,
    assemble_prompt,
    create_research_agent,
    trace_run,
)


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "args": {"file_path": path, "content": content}}]}


@tool
def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"sent to {to}"


class _Publisher(AgentMiddleware):
    """A middleware that brings its own tool."""

    tools = [send_email]


def _agent(interrupt_on: dict, **kwargs) -> object:
    return create_research_agent(
        ScriptedChatModel(script=[]), interrupt_on=interrupt_on, checkpointer=InMemorySaver(),
        **kwargs,
    )


# -- names in interrupt_on ----------------------------------------------------------------------


@pytest.mark.parametrize("typo", ["write", "delete_file"])
def test_a_misspelled_tool_name_is_an_error_listing_the_valid_names(typo: str) -> None:
    with pytest.raises(ValueError, match=f"does not have: '{typo}'") as caught:
        _agent({typo: True})
    message = str(caught.value)
    assert "Valid names:" in message
    for name in ("write_file", "edit_file", "delete", "write_todos", "task"):
        assert name in message.split("Valid names:")[1]


def test_every_unknown_name_is_listed_at_once() -> None:
    with pytest.raises(ValueError, match="tools the agent does not have: 'write', 'rm'"):
        _agent({"write_file": True, "write": True, "rm": True})


def test_tools_the_agent_really_has_are_accepted() -> None:
    _agent({"write_file": True, "task": True, "write_todos": True})
    _agent({"send_email": True}, tools=[send_email])
    _agent({"send_email": True}, middleware=[_Publisher()])
    _agent({"compact_conversation": True}, compaction_tool=True)


def test_tools_the_agent_lacks_in_this_setup_are_refused() -> None:
    with pytest.raises(ValueError, match="'compact_conversation'"):
        _agent({"compact_conversation": True})  # compaction_tool is off
    with pytest.raises(ValueError, match="'task'"):
        _agent({"task": True}, profile=HarnessProfile(general_purpose_subagent=False))
    with pytest.raises(ValueError, match="'delete' \\(hidden by the profile's excluded_tools\\)"):
        _agent({"delete": True}, profile=HarnessProfile(excluded_tools=("delete",)))


def test_assemble_prompt_checks_the_names_too() -> None:
    with pytest.raises(ValueError, match="'write'"):
        assemble_prompt(interrupt_on={"write": True})
    assembly = assemble_prompt(interrupt_on={"write_file": True})
    assert "`write_file`" in assembly["human_in_the_loop"].text


def test_interrupt_on_must_be_a_mapping() -> None:
    with pytest.raises(TypeError, match="mapping"):
        _agent(["write_file"])  # type: ignore[arg-type]


def test_a_subagents_own_interrupt_on_is_checked_against_its_tools() -> None:
    reader = SubAgent("reader", "Reads.", tools=[], interrupt_on={"send_email": True})
    with pytest.raises(ValueError, match="the agent 'reader' does not have: 'send_email'"):
        create_research_agent(
            ScriptedChatModel(script=[]), tools=[send_email], subagents=[reader],
            checkpointer=InMemorySaver(),
        )


def test_a_subagent_inherits_only_the_approvals_for_tools_it_has() -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [{"name": "task", "args": {"description": "note it",
                                                       "subagent_type": "notes"}}]},
            write("/n.md", "note"),
            "noted",
            "done",
        ]
    )
    notes = SubAgent("notes", "Takes notes.", system_prompt="Take notes.")
    agent = create_research_agent(
        model, subagents=[notes], interrupt_on={"task": True, "write_file": True},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "inherit"}}
    paused = trace_run(agent, ask("take a note"), config=config)
    [request] = paused.interrupts[0].value["action_requests"]
    assert request["name"] == "task"
    paused = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}), config=config)
    [request] = paused.interrupts[0].value["action_requests"]
    assert request["name"] == "write_file"  # the subagent still asks before writing
    sub_prompt = model.requests[1].system
    assert "`write_file`" in sub_prompt and "`task`" not in sub_prompt.split("## Approval")[1]


# -- decisions ------------------------------------------------------------------------------------


def test_an_edit_decision_writes_the_edited_content() -> None:
    model = ScriptedChatModel(script=[write("/draft.md", "first draft"), "saved"])
    agent = create_research_agent(
        model, interrupt_on={"write_file": True}, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "edit"}}
    paused = trace_run(agent, ask("save a draft"), config=config)
    [request] = paused.interrupts[0].value["action_requests"]
    assert request["args"] == {"file_path": "/draft.md", "content": "first draft"}

    edited = {"name": "write_file", "args": {"file_path": "/final.md", "content": "reviewed text"}}
    done = trace_run(
        agent,
        Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}),
        config=config,
    )
    assert done.final_text == "saved"
    assert done.state["files"]["/final.md"]["content"] == "reviewed text"
    assert "/draft.md" not in done.state["files"]
    tool_reply = model.requests[-1].messages[-1]
    assert "human reviewer replaced this tool call" in str(tool_reply.content)
    assert "/final.md" in str(tool_reply.content)


def test_an_edit_is_refused_when_the_tool_only_allows_approve_or_reject() -> None:
    model = ScriptedChatModel(script=[write("/a.md", "x"), "ok"])
    agent = create_research_agent(
        model,
        interrupt_on={"write_file": {"allowed_decisions": ["approve", "reject"]}},
        checkpointer=InMemorySaver(),
    )
    config = {"configurable": {"thread_id": "no-edit"}}
    trace_run(agent, ask("write"), config=config)
    edited = {"name": "write_file", "args": {"file_path": "/a.md", "content": "y"}}
    with pytest.raises(ValueError, match="'edit' is not allowed for tool 'write_file'"):
        trace_run(
            agent,
            Command(resume={"decisions": [{"type": "edit", "edited_action": edited}]}),
            config=config,
        )
    assert "/a.md" not in (agent.get_state(config).values.get("files") or {})
