"""A run keeps its prompt prefix: every request of an agent in one run sends the very same system
message and tool schemas, byte for byte, however the todo list, the files and the conversation
change, so a provider's prompt cache serves that prefix from the second request on."""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from jupyter_deepagent import (
    DiskBackend,
    ScriptedChatModel,
    SubAgent,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.harness.models.scripted_model import ScriptedRequest

SKILL = "---\nname: {name}\ndescription: {description}\n---\n# {name}\nSteps.\n"
MAIN, NOTES = "Study glaciers.", "You keep the notes tidy."
CONFIG = {"configurable": {"thread_id": "prefix"}, "recursion_limit": 100}


def call(name: str, **args: object) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "args": args}]}


def todos(*states: str) -> dict[str, object]:
    steps = ("survey", "compare", "write up")
    items = [{"content": c, "status": s} for c, s in zip(steps, states, strict=True)]
    return call("write_todos", todos=items)


def ask(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}]}


def folder(root: Path) -> DiskBackend:
    (root / "AGENTS.md").write_text("The user prefers SI units.\n")
    skill = root / "skills" / "field-notes"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL.format(name="field-notes", description="Take notes."))
    return DiskBackend(root)


def script() -> list[object]:
    return [
        todos("in_progress", "pending", "pending"),
        call("write_file", file_path="/notes/a.md", content="# A\n" + "ice " * 400),
        call("ls", path="/notes"),
        call("read_file", file_path="/skills/field-notes/SKILL.md"),
        call("task", description="Tidy the notes.", subagent_type="notes"),
        # the subagent's own steps
        call("write_file", file_path="/notes/b.md", content="# B\ntidy"),
        call("glob", pattern="/notes/*.md"),
        "Tidied: a.md and b.md.",
        # the main agent again
        todos("completed", "in_progress", "pending"),
        call("edit_file", file_path="/notes/a.md", old_string="# A", new_string="# Glacier A"),
        call("grep", pattern="Glacier", path="/notes"),
        todos("completed", "completed", "completed"),
        "Two notes written and tidied.",
    ]


def prefix(request: ScriptedRequest) -> tuple[str, str]:
    """The request's system message and tool schemas, as the bytes a provider would see."""
    system = [m.content for m in request.messages if m.type == "system"]
    return json.dumps(system), json.dumps(request.tools)


def test_every_request_of_a_run_sends_the_same_system_message_and_tools(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        script=script(),
        rules=[{"when": "How many notes?", "reply": "Still two notes."}],
        profile={"max_input_tokens": 1_000_000},
    )
    notes = SubAgent("notes", "Keeps notes tidy.", system_prompt=NOTES)
    agent = create_research_agent(
        model,
        system_prompt=MAIN,
        memory=["/AGENTS.md"],
        skills=["/skills/"],
        subagents=[notes],
        backend=folder(tmp_path),
        checkpointer=InMemorySaver(),
    )
    trace = trace_run(agent, ask("Survey the glacier notes."), config=CONFIG)

    assert trace.final_text == "Two notes written and tidied."
    assert (tmp_path / "notes" / "b.md").is_file() and len(trace.of_type("todos")) == 3
    main = [r for r in model.requests if MAIN in r.system]
    sub = [r for r in model.requests if NOTES in r.system]
    assert (len(main), len(sub), len(model.requests)) == (10, 3, 13)
    assert len({prefix(r) for r in main}) == 1
    assert len({prefix(r) for r in sub}) == 1
    # the todo state and the files written are in the messages, not in the prefix
    assert "compare" not in main[-1].system and "a.md" not in main[-1].system

    # the next run on the thread (a notebook's next cell) starts with the same prefix
    sent = len(model.requests)
    trace_run(agent, ask("How many notes?"), config=CONFIG)
    assert prefix(model.requests[sent]) == prefix(main[0])


def test_a_memory_edit_during_a_run_reaches_the_prompt_at_the_next_run(tmp_path: Path) -> None:
    model = ScriptedChatModel(
        script=[
            call("edit_file", file_path="/AGENTS.md", old_string="SI", new_string="metric"),
            call(
                "write_file",
                file_path="/skills/tides/SKILL.md",
                content=SKILL.format(name="tides", description="Read tide tables."),
            ),
            "Noted: metric units.",
            "Metric it is.",
        ],
        profile={"max_input_tokens": 1_000_000},
    )
    agent = create_research_agent(
        model,
        memory=["/AGENTS.md"],
        skills=["/skills/"],
        backend=folder(tmp_path),
        checkpointer=InMemorySaver(),
    )
    trace_run(agent, ask("Remember: metric units."), config=CONFIG)

    first_run = model.requests[:3]
    assert len({prefix(r) for r in first_run}) == 1
    assert "SI units" in first_run[-1].system and "tides" not in first_run[-1].system
    trace_run(agent, ask("Which units?"), config=CONFIG)
    [next_run] = model.requests[3:]
    assert "metric units" in next_run.system and "Read tide tables." in next_run.system
