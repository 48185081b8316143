"""Approvals only add up: code the model sends runs only after the user approved it, whoever calls
the tool (the main agent or a subagent, whatever the subagent's own `interrupt_on` says), unless
the user turned that tool's approval off by name."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain.agents.middleware import AgentMiddleware
from langchain_core.tools import StructuredTool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import (
    RUNS_CODE,
    ScriptedChatModel,
    SubAgent,
    create_research_agent,
    trace_run,
)

CODER = "You run code for the lead."


def marker_code(marker: Path) -> str:
    """Code that leaves a file behind and says so."""
    write = f"pathlib.Path({str(marker)!r}).write_text('ran')"
    return f"import pathlib\n{write}\nprint('marker written')"


def delegating_model(marker: Path, *, tool_name: str = "python", **args: str) -> object:
    """The main agent hands a task to `coder`; the coder's model sends code that leaves a file."""
    code = marker_code(marker)
    attack = call(tool_name, **(args or {"code": code}))
    return scripted(
        call("task", description="Count the rows of the table.", subagent_type="coder"),
        "The coder is done.",
        rules=[
            {"when": "Count the rows of the table.", "when_system": CODER, "reply": attack},
            {"when": "marker written", "when_system": CODER, "reply": "Counted."},
            {"when": "memo.md", "when_system": CODER, "reply": "Counted."},
        ],
    )


def coder(interrupt_on: list[str] | None) -> dict:
    spec = {"name": "coder", "description": "Runs code.", "system_prompt": CODER}
    if interrupt_on is not None:
        spec["interrupt_on"] = interrupt_on
    return spec


@pytest.mark.parametrize("own_approvals", [["write_file"], [], None])
def test_python_delegated_to_a_subagent_waits_for_approval(
    notebook: Notebook, own_approvals: list[str] | None
) -> None:
    marker = notebook.folder / "marker.txt"
    notebook.session.configure(
        model=delegating_model(marker), python=True, subagents=[coder(own_approvals)]
    )
    cell = notebook.run("%%agent\nHow many rows?")
    assert cell.error is None
    assert not marker.exists()  # the code did not run
    assert "waiting for approval" in cell.live_text
    assert any("marker written" in text for text in cell.markdown)  # the user sees the code

    resumed = notebook.run("%agent resume approve")
    assert resumed.error is None
    assert marker.read_text() == "ran"


def test_parallel_subagents_each_wait_and_one_resume_answers_both(notebook: Notebook) -> None:
    markers = [notebook.folder / f"marker-{n}.txt" for n in (1, 2)]
    codes = [marker_code(m) for m in markers]
    model = scripted(
        {"tool_calls": [
            {"name": "task", "args": {"description": f"Part {n}.", "subagent_type": "coder"}}
            for n in (1, 2)
        ]},
        "Both parts done.",
        rules=[
            *({"when": f"Part {n}.", "when_system": CODER, "reply": call("python", code=code)}
              for n, code in zip((1, 2), codes)),
            {"when": "marker written", "when_system": CODER, "reply": "Done.", "repeat": True},
        ],
    )
    notebook.session.configure(model=model, python=True, subagents=[coder([])])
    cell = notebook.run("%%agent\nDo both parts.")
    assert "waiting for approval" in cell.live_text
    assert not any(m.exists() for m in markers)
    notebook.run("%agent resume approve")
    assert all(m.read_text() == "ran" for m in markers)


def test_the_users_opt_out_by_name_still_holds_in_a_subagent(notebook: Notebook) -> None:
    marker = notebook.folder / "marker.txt"
    notebook.session.configure(
        model=delegating_model(marker), python=True, python_approval=False,
        subagents=[coder(["write_file"])],
    )
    cell = notebook.run("%%agent\nHow many rows?")
    assert cell.error is None
    assert "waiting for approval" not in cell.live_text
    assert marker.read_text() == "ran"


def test_a_subagents_own_approvals_add_to_the_callers(notebook: Notebook) -> None:
    notebook.session.configure(
        model=delegating_model(
            notebook.folder / "memo.md", tool_name="write_file",
            file_path="/workspace/memo.md", content="marker written",
        ),
        interrupt_on=["write_file"], subagents=[coder(["edit_file"])],
    )
    cell = notebook.run("%%agent\nWrite the memo.")
    assert "waiting for approval" in cell.live_text
    assert not (notebook.folder / "memo.md").exists()


CODE_TOOL_CELL = '''
import pandas as pd
from jupyter_deepagent import agent_tool

table = pd.DataFrame({"station": ["Svalbard", "Abisko"], "warming": [0.7, 0.3]})

@agent_tool(runs_code=True)
def select_rows(condition: str) -> str:
    """Rows of the stations table matching a pandas query.

    Args:
        condition: A DataFrame.query condition, e.g. "warming > 0.5".
    """
    return table.query(condition).to_string()
'''

ESCAPE = "@__builtins__.__import__('pathlib').Path('{marker}').write_text('ran') > 0"


def test_a_notebook_tool_marked_as_running_code_waits_for_approval(notebook: Notebook) -> None:
    marker = notebook.folder / "marker.txt"
    notebook.run(CODE_TOOL_CELL)
    model = scripted(
        call("select_rows", condition=ESCAPE.format(marker=marker)), "Selected."
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nWhich stations warm fast?")
    assert cell.error is None
    assert "waiting for approval" in cell.live_text
    assert not marker.exists()
    notebook.run("%agent resume approve")
    assert marker.exists()  # pandas really evaluates the condition: that is why it asks


def test_a_notebook_tool_marked_as_running_code_asks_inside_a_subagent_too(
    notebook: Notebook,
) -> None:
    marker = notebook.folder / "marker.txt"
    notebook.run(CODE_TOOL_CELL)
    notebook.session.configure(
        model=delegating_model(
            marker, tool_name="select_rows", condition=ESCAPE.format(marker=marker)
        ),
        subagents=[coder([])],
    )
    cell = notebook.run("%%agent\nWhich stations warm fast?")
    assert "waiting for approval" in cell.live_text
    assert not marker.exists()


def test_runs_code_takes_true_or_false() -> None:
    from jupyter_deepagent import agent_tool

    def select(condition: str) -> str:
        """Select rows."""
        return condition

    with pytest.raises(TypeError, match="runs_code=.*True or False"):
        agent_tool(runs_code="yes")(select)  # type: ignore[arg-type]


def test_an_unmarked_notebook_tool_runs_without_asking(notebook: Notebook) -> None:
    notebook.run(CODE_TOOL_CELL.replace("@agent_tool(runs_code=True)", "@agent_tool"))
    model = scripted(call("select_rows", condition="warming > 0.5"), "Svalbard.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nWhich stations warm fast?")
    assert "waiting for approval" not in cell.live_text
    assert "Svalbard" in model.requests[-1].messages[-1].text


# --- the harness API: the same rule for create_research_agent ---------------------------------

ran: list[str] = []


def _evaluate(expression: str) -> str:
    """Evaluate a Python expression."""
    ran.append(expression)
    return "evaluated"


evaluate = StructuredTool.from_function(_evaluate, name="evaluate", metadata={RUNS_CODE: True})


def subagent_model() -> ScriptedChatModel:
    return ScriptedChatModel(
        script=[
            {"tool_calls": [{"name": "task", "args": {"description": "Work it out.",
                                                      "subagent_type": "coder"}}]},
            "done",
        ],
        rules=[
            {"when": "Work it out.", "when_system": CODER,
             "reply": {"tool_calls": [{"name": "evaluate", "args": {"expression": "6 * 7"}}]}},
            {"when": "evaluated", "when_system": CODER, "reply": "42"},
        ],
    )


@pytest.mark.parametrize("own", [{"write_file": True}, {}, None])
def test_a_code_running_tool_asks_in_every_subagent_whatever_its_own_settings(own) -> None:
    ran.clear()
    agent = create_research_agent(
        subagent_model(), [evaluate], checkpointer=InMemorySaver(),
        subagents=[SubAgent("coder", "Runs code.", system_prompt=CODER, interrupt_on=own)],
    )
    config = {"configurable": {"thread_id": "t"}}
    paused = trace_run(agent, {"messages": [{"role": "user", "content": "go"}]}, config=config)
    [pending] = paused.interrupts
    assert pending.value["action_requests"][0]["name"] == "evaluate"
    assert ran == []
    done = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}), config=config)
    assert done.final_text == "done"
    assert ran == ["6 * 7"]


class CodeTools(AgentMiddleware):
    """A middleware that brings a code-running tool of its own."""

    tools = [evaluate]


def test_a_code_running_tool_a_subagents_middleware_brings_asks_too() -> None:
    ran.clear()
    agent = create_research_agent(
        subagent_model(), checkpointer=InMemorySaver(),
        subagents=[SubAgent("coder", "Runs code.", system_prompt=CODER, tools=[],
                            middleware=[CodeTools()])],
    )
    paused = trace_run(agent, {"messages": [{"role": "user", "content": "go"}]},
                       config={"configurable": {"thread_id": "t"}})
    [pending] = paused.interrupts
    assert pending.value["action_requests"][0]["name"] == "evaluate"
    assert ran == []


def test_the_caller_turns_a_code_running_tools_approval_off_by_name() -> None:
    ran.clear()
    agent = create_research_agent(
        subagent_model(), [evaluate], checkpointer=InMemorySaver(),
        interrupt_on={"evaluate": False},
        subagents=[SubAgent("coder", "Runs code.", system_prompt=CODER)],
    )
    done = trace_run(agent, {"messages": [{"role": "user", "content": "go"}]},
                     config={"configurable": {"thread_id": "t"}})
    assert not done.interrupts
    assert ran == ["6 * 7"]


def test_a_subagent_cannot_turn_off_an_approval() -> None:
    with pytest.raises(ValueError, match="subagent 'coder'.*'evaluate'.*runs code.*main agent"):
        create_research_agent(
            subagent_model(), [evaluate], checkpointer=InMemorySaver(),
            subagents=[SubAgent("coder", "Runs code.", interrupt_on={"evaluate": False})],
        )
    with pytest.raises(ValueError, match="subagent 'coder'.*'write_file'.*calls it"):
        create_research_agent(
            subagent_model(), checkpointer=InMemorySaver(), interrupt_on={"write_file": True},
            subagents=[SubAgent("coder", "Runs code.", interrupt_on={"write_file": False})],
        )


def test_a_code_running_tool_without_a_checkpointer_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="evaluate.*runs code.*checkpointer"):
        create_research_agent(subagent_model(), [evaluate])
