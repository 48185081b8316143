"""create_research_agent end to end with ScriptedChatModel: prompt, memory, skills, profile,
runtime context, custom state, human in the loop and run events."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import SystemMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from jupyter_deepagent import (
    DiskBackend,
    HarnessProfile,
    ScriptedChatModel,
    assemble_prompt,
    create_research_agent,
    trace_run,
)

SKILL = """---
name: literature-review
description: Survey papers on a topic and write a structured review with citations.
license: MIT
---
# Literature review
1. Search for the five most cited papers.
2. SECRET-SKILL-BODY: summarise each in three bullet points.
"""


def call(name: str, call_id: str | None = None, **args):
    return {"name": name, "args": args, **({"id": call_id} if call_id else {})}


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "AGENTS.md").write_text("The user prefers metric units.\n")
    skill = tmp_path / "skills" / "literature-review"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL)
    return tmp_path


def test_system_prompt_the_model_received_is_the_assembly_text(workspace: Path) -> None:
    model = ScriptedChatModel(script=["Done."])
    backend = DiskBackend(workspace)
    agent = create_research_agent(
        model, system_prompt="You study glaciers.", memory=["/AGENTS.md"], skills=["/skills/"],
        backend=backend,
    )
    trace = trace_run(agent, ask("hello"))
    assert model.requests[0].system == trace.prompts[0].text
    assert model.requests[0].system == assemble_prompt(
        system_prompt="You study glaciers.", memory=["/AGENTS.md"], skills=["/skills/"],
        backend=backend,
    ).text
    assert trace.final_text == "Done."


def test_memory_edited_between_two_invokes_is_seen_by_the_second(workspace: Path) -> None:
    model = ScriptedChatModel(script=["one", "two"])
    agent = create_research_agent(model, memory=["/AGENTS.md"], backend=DiskBackend(workspace))
    agent.invoke(ask("first"))
    assert "metric units" in model.requests[0].system
    (workspace / "AGENTS.md").write_text("The user prefers imperial units.\n")
    agent.invoke(ask("second"))
    assert "imperial units" in model.requests[1].system
    assert "metric units" not in model.requests[1].system


def test_memory_edited_by_the_agent_mid_run_reaches_the_next_run(workspace: Path) -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [call("edit_file", file_path="/AGENTS.md", old_string="metric",
                                 new_string="SI")]},
            "Noted.",
            "SI it is.",
        ]
    )
    agent = create_research_agent(model, memory=["/AGENTS.md"], backend=DiskBackend(workspace))
    trace = trace_run(agent, ask("remember: SI units"))
    # the run keeps its prompt (a cached prefix); the edit is in its conversation
    assert model.requests[1].system == model.requests[0].system
    assert "prefers metric units" in trace.prompts[1]["memory"].text
    after = trace_run(agent, ask("which units?"))
    assert "prefers SI units" in model.requests[2].system
    assert "prefers SI units" in after.prompts[0]["memory"].text


def test_missing_memory_file_is_skipped_with_a_warning() -> None:
    model = ScriptedChatModel(script=["ok"])
    agent = create_research_agent(model, memory=["/nowhere/AGENTS.md"])
    trace = trace_run(agent, ask("hi"))
    assert any("/nowhere/AGENTS.md" in w and "does not exist" in w for w in trace.warnings)
    assert trace.final_text == "ok"


def test_skill_is_listed_but_its_body_arrives_only_when_read(workspace: Path) -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [call("read_file", file_path="/skills/literature-review/SKILL.md")]},
            "Following the skill.",
        ]
    )
    agent = create_research_agent(model, skills=["/skills/"], backend=DiskBackend(workspace))
    trace = trace_run(agent, ask("review papers on permafrost"))
    first = model.requests[0]
    assert "literature-review" in first.system
    assert "/skills/literature-review/SKILL.md" in first.system
    assert "SECRET-SKILL-BODY" not in first.system
    assert not any("SECRET-SKILL-BODY" in m.text for m in first.messages)
    assert any("SECRET-SKILL-BODY" in m.text for m in model.requests[1].messages)
    [loaded] = trace.of_type("skill_loaded")
    assert loaded["skill"] == "literature-review"
    assert loaded["step"] == 1


@pytest.mark.parametrize(
    ("frontmatter", "field"),
    [
        ("name: Bad_Name\ndescription: x", "name"),
        ("description: no name here", "name"),
        ("name: fine-name", "description"),
        ("name: [unclosed\ndescription: x", "YAML"),
        ("name: ok\ndescription: " + "d" * 1100, "description"),
    ],
)
def test_broken_skill_frontmatter_is_skipped_with_a_warning(
    workspace: Path, frontmatter: str, field: str
) -> None:
    broken = workspace / "skills" / "broken"
    broken.mkdir()
    (broken / "SKILL.md").write_text(f"---\n{frontmatter}\n---\nbody\n")
    model = ScriptedChatModel(script=["ok"])
    agent = create_research_agent(model, skills=["/skills/"], backend=DiskBackend(workspace))
    trace = trace_run(agent, ask("hi"))
    [warning] = [w for w in trace.warnings if "/skills/broken/SKILL.md" in w]
    assert field in warning
    assert "literature-review" in model.requests[0].system  # the good skill is still there
    assert trace.final_text == "ok"


def test_skill_name_clash_later_source_wins_with_a_warning(workspace: Path) -> None:
    other = workspace / "team-skills" / "literature-review"
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text(
        "---\nname: literature-review\ndescription: The team's own review recipe.\n---\n"
    )
    model = ScriptedChatModel(script=["ok"])
    agent = create_research_agent(
        model, skills=["/skills/", "/team-skills/"], backend=DiskBackend(workspace)
    )
    trace = trace_run(agent, ask("hi"))
    assert "The team's own review recipe." in model.requests[0].system
    assert "Survey papers" not in model.requests[0].system
    assert any("literature-review" in w and "later" in w for w in trace.warnings)


def test_skills_are_rescanned_every_run(workspace: Path) -> None:
    model = ScriptedChatModel(script=["one", "two"])
    agent = create_research_agent(model, skills=["/skills/"], backend=DiskBackend(workspace))
    agent.invoke(ask("first"))
    new = workspace / "skills" / "plotting"
    new.mkdir()
    (new / "SKILL.md").write_text("---\nname: plotting\ndescription: Make clear plots.\n---\n")
    agent.invoke(ask("second"))
    assert "plotting" not in model.requests[0].system
    assert "Make clear plots." in model.requests[1].system


def test_profile_replaces_base_appends_suffix_overrides_and_excludes_tools() -> None:
    model = ScriptedChatModel(script=["ok"])
    profile = HarnessProfile(
        base_system_prompt="You are a terse assistant.",
        system_prompt_suffix="Always answer in French.",
        tool_description_overrides={"grep": "Search files for text (custom)."},
        excluded_tools=("write_todos", "delete"),
    )
    agent = create_research_agent(model, profile=profile)
    trace = trace_run(agent, ask("hi"))
    request = model.requests[0]
    assert request.system.startswith("You are a terse assistant.")
    assert request.system.endswith("Always answer in French.")
    names = request.tool_names
    assert "write_todos" not in names and "delete" not in names
    assert "grep" in names and "read_file" in names
    grep = next(t for t in request.tools if t["function"]["name"] == "grep")
    assert grep["function"]["description"] == "Search files for text (custom)."
    assert "todos" not in trace.prompts[0]
    assert trace.prompts[0].names[-1] == "suffix"


def test_excluding_every_filesystem_tool_removes_the_filesystem_section() -> None:
    profile = HarnessProfile(
        excluded_tools=("ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep")
    )
    assembly = assemble_prompt(profile=profile)
    assert "filesystem" not in assembly
    model = ScriptedChatModel(script=["ok"])
    create_research_agent(model, profile=profile).invoke(ask("hi"))
    assert model.requests[0].tool_names == ["write_todos", "task"]


@dataclass
class UserContext:
    user_id: str
    api_token: str


@tool
def whoami(runtime: ToolRuntime[UserContext]) -> str:
    """Say which user this run is for."""
    return f"user={runtime.context.user_id}"


def test_runtime_context_reaches_a_tool_and_never_the_prompt() -> None:
    model = ScriptedChatModel(script=[{"tool_calls": [call("whoami")]}, "ok"])
    agent = create_research_agent(model, tools=[whoami], context_schema=UserContext)
    agent.invoke(ask("who am I"), context=UserContext(user_id="ada", api_token="tok-XYZ-123"))
    assert any("user=ada" in m.text for m in model.requests[1].messages)
    for request in model.requests:
        assert "tok-XYZ-123" not in request.system
        assert not any("tok-XYZ-123" in m.text for m in request.messages)


class ResearchState(AgentState):
    page_url: str
    file_urls: list[str]


@tool
def cite_page(runtime: ToolRuntime) -> str:
    """Return the current page URL."""
    return runtime.state["page_url"]


def test_custom_state_survives_a_checkpoint_round_trip() -> None:
    model = ScriptedChatModel(script=[{"tool_calls": [call("cite_page")]}, "cited", "again"])
    saver = InMemorySaver()
    agent = create_research_agent(
        model, tools=[cite_page], state_schema=ResearchState, checkpointer=saver
    )
    config = {"configurable": {"thread_id": "t1"}}
    agent.invoke(
        {**ask("Cite the current page"), "page_url": "https://example.com/report", "file_urls": []},
        config,
    )
    assert any("https://example.com/report" in m.text for m in model.requests[1].messages)
    restored = create_research_agent(
        model, tools=[cite_page], state_schema=ResearchState, checkpointer=saver
    )
    state = restored.get_state(config).values
    assert state["page_url"] == "https://example.com/report"
    assert state["file_urls"] == []


def test_interrupt_on_write_file_approved_then_rejected() -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [call("write_file", file_path="/a.md", content="first")]},
            "wrote it",
            {"tool_calls": [call("write_file", file_path="/b.md", content="second")]},
            "understood, not written",
        ]
    )
    agent = create_research_agent(
        model, interrupt_on={"write_file": True}, checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "hitl"}}
    paused = trace_run(agent, ask("write a"), config=config)
    assert paused.interrupts, "the run should pause before write_file"
    [request] = paused.interrupts[0].value["action_requests"]
    assert request["name"] == "write_file"
    assert "files" not in agent.get_state(config).values or "/a.md" not in agent.get_state(
        config
    ).values["files"]
    done = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}), config=config)
    assert done.state["files"]["/a.md"]["content"] == "first"
    assert done.final_text == "wrote it"

    paused = trace_run(agent, ask("write b"), config=config)
    assert paused.interrupts
    done = trace_run(
        agent,
        Command(resume={"decisions": [{"type": "reject", "message": "not now"}]}),
        config=config,
    )
    assert "/b.md" not in done.state["files"]
    assert any("not now" in m.text for m in model.requests[-1].messages)
    assert "Approval" in model.requests[0].system


def test_interrupt_on_without_checkpointer_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="checkpointer"):
        create_research_agent(ScriptedChatModel(script=[]), interrupt_on={"write_file": True})


def test_event_stream_of_a_five_step_run_in_order() -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [call("write_todos", todos=[{"content": "gather", "status": "in_progress"}])]},
            {"tool_calls": [call("write_file", file_path="/notes.md", content="a\nb\n")]},
            {"tool_calls": [call("read_file", file_path="/notes.md")]},
            {"tool_calls": [call("read_file", file_path="/missing.md")]},
            "All done.",
        ]
    )
    agent = create_research_agent(model)
    trace = trace_run(agent, ask("do research"))
    kinds = [(e["type"], e["step"]) for e in trace.events if e["type"] != "warning"]
    expected = [("run_started", 0), ("prompt", 1), ("context", 1), ("model_call", 1),
                ("tool_call", 1), ("tool_result", 1), ("todos", 1)]
    for step in (2, 3, 4):
        expected += [("prompt", step), ("context", step), ("model_call", step),
                     ("tool_call", step), ("tool_result", step)]
        if step == 2:  # the write_file call
            expected.append(("file_written", 2))
    expected += [("prompt", 5), ("context", 5), ("model_call", 5), ("answer", 5),
                 ("run_finished", 5)]
    assert kinds == expected
    results = trace.of_type("tool_result")
    assert [r["tool"] for r in results] == ["write_todos", "write_file", "read_file", "read_file"]
    assert results[3]["error"] and "missing.md" in results[3]["error"]
    assert results[1]["error"] is None and results[1]["chars"] == len(results[1]["content"]) > 0
    assert results[2]["content"] == "     1\ta\n     2\tb"  # what read_file returned, whole
    assert trace.of_type("todos")[0]["todos"] == [{"content": "gather", "status": "in_progress"}]
    calls = trace.of_type("model_call")
    assert all(c["tokens_in"] > 0 and c["seconds"] >= 0 for c in calls)
    assert calls[0]["tool_calls"] == ["write_todos"]
    assert all(e["agent"] == "main" and e["task_id"] is None for e in trace.events)
    assert trace.final_text == "All done."


class Citations(AgentMiddleware):
    """User middleware that adds its own prompt text."""

    def wrap_model_call(self, request, handler):
        extra = "Cite every source as [n]."
        text = (request.system_message.text + "\n\n" if request.system_message else "") + extra
        return handler(request.override(system_message=SystemMessage(content=text)))


def test_user_middleware_prompt_text_becomes_its_own_section() -> None:
    model = ScriptedChatModel(script=["ok"])
    agent = create_research_agent(model, middleware=[Citations()], system_prompt="Be careful.")
    trace = trace_run(agent, ask("hi"))
    assembly = trace.prompts[0]
    assert assembly["middleware"].text == "Cite every source as [n]."
    assert model.requests[0].system == assembly.text


def test_agent_runs_from_a_model_string_with_a_scripted_file(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text("script:\n  - Hello from a script.\n")
    agent = create_research_agent(f"scripted:{script}")
    assert trace_run(agent, ask("hi")).final_text == "Hello from a script."


@tool
def flaky_source(query: str) -> str:
    """Fetch a source that is down."""
    msg = f"server for {query!r} is down"
    raise RuntimeError(msg)


def test_a_tool_that_raises_becomes_an_error_message_and_the_run_goes_on() -> None:
    model = ScriptedChatModel(
        script=[{"tool_calls": [call("flaky_source", query="glaciers")]}, "Worked around it."]
    )
    trace = trace_run(create_research_agent(model, tools=[flaky_source]), ask("look it up"))
    tool_message = model.requests[1].messages[-1]
    assert tool_message.status == "error"
    assert "RuntimeError" in tool_message.text and "is down" in tool_message.text
    [result] = trace.of_type("tool_result")
    assert "is down" in result["error"]
    assert trace.final_text == "Worked around it."
