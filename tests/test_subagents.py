"""Subagents through the `task` tool, end to end with ScriptedChatModel: isolation, parallel runs,
structured results as DataFrame rows, failures, runtime context, files, transcripts and approvals."""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass
from typing import Annotated

import pandas as pd
import pytest
from langchain.agents import create_agent
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command
from pydantic import BaseModel
from typing_extensions import TypedDict

from jupyter_deepagent import (
    CompiledSubAgent,
    HarnessProfile,
    ScriptedChatModel,
    SubAgent,
    assemble_prompt,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.harness.run_events.event_stream import event_sink

LEAD = "You coordinate a research team."
RESEARCHER = "You research exactly one topic."
TOPICS = ("ice", "sea", "air")


def call(name: str, **args):
    return {"name": name, "args": args}


def ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def tasks(*descriptions: str, subagent_type: str = "researcher") -> dict:
    """One model turn that launches a task per description."""
    return {
        "tool_calls": [
            call("task", description=d, subagent_type=subagent_type) for d in descriptions
        ]
    }


def lead_requests(model: ScriptedChatModel) -> list:
    return [r for r in model.requests if LEAD in r.system]


class Finding(BaseModel):
    topic: str
    score: float
    n_sources: int
    sources: list[str]
    peer_reviewed: bool


DELAYS = {"ice": 0.4, "sea": 0.0, "air": 0.2}  # the first task called finishes last


@tool
def lookup(topic: str) -> str:
    """Look a topic up in the literature."""
    time.sleep(DELAYS.get(topic, 0.0))
    return f"lookup result for {topic}: 3 papers"


def research_rules() -> list[dict]:
    rules = []
    for index, topic in enumerate(TOPICS):
        rules.append(
            {"when": f"Topic: {topic}.", "when_system": RESEARCHER,
             "reply": {"tool_calls": [call("lookup", topic=topic)]}}
        )
        finding = {
            "topic": topic, "score": index + 0.5, "n_sources": index + 1,
            "sources": [f"{topic}2020", f"{topic}2021"], "peer_reviewed": index != 1,
        }
        rules.append(
            {"when": f"lookup result for {topic}", "when_system": RESEARCHER,
             "reply": {"tool_calls": [call("Finding", **finding)]}}
        )
    return rules


def researcher(**overrides) -> SubAgent:
    fields = {
        "name": "researcher",
        "description": "Researches one topic and rates the evidence.",
        "system_prompt": RESEARCHER,
        "tools": [lookup],
        "response_format": Finding,
    }
    return SubAgent(**{**fields, **overrides})


def test_three_parallel_subagents_give_a_typed_dataframe_in_call_order() -> None:
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    trace = trace_run(agent, ask("Compare ice, sea and air."))

    frame = trace.results_frame()
    assert len(frame) == 3
    assert list(frame["topic"]) == list(TOPICS)
    assert list(frame["description"]) == [f"Topic: {t}. Rate the evidence." for t in TOPICS]
    assert list(frame["status"]) == ["ok"] * 3
    assert frame["score"].dtype == "float64" and list(frame["score"]) == [0.5, 1.5, 2.5]
    assert frame["n_sources"].dtype == "int64" and list(frame["n_sources"]) == [1, 2, 3]
    assert frame["peer_reviewed"].dtype == bool and list(frame["peer_reviewed"]) == [True, False, True]
    assert frame["sources"].iloc[0] == ["ice2020", "ice2021"]
    assert frame["tokens_in"].dtype == "int64" and (frame["tokens_in"] > 0).all()
    assert (frame["tokens_out"] > 0).all() and (frame["seconds"] > 0).all()
    assert isinstance(frame["started_at"].dtype, pd.DatetimeTZDtype)
    assert frame["error"].isna().all()
    assert frame["task_id"].str.match(r"^researcher-[0-9a-f]{8}$").all()
    assert frame["task_id"].is_unique
    # the report each task returned is its structured response as JSON
    assert frame["result"].iloc[1] == (
        '{"topic": "sea", "score": 1.5, "n_sources": 2, '
        '"sources": ["sea2020", "sea2021"], "peer_reviewed": false}'
    )
    assert trace.final_text == "Summary."


def test_the_lead_context_holds_only_the_three_reports() -> None:
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    trace = trace_run(agent, ask("Compare ice, sea and air."))

    first, last = lead_requests(model)
    assert len(model.requests) == 2 + 3 * 2  # the lead twice, each subagent twice
    reports = [m for m in last.messages if m.type == "tool"]
    assert [m.text for m in reports] == list(trace.results_frame()["result"])
    assert [m.type for m in last.messages] == ["system", "human", "ai", "tool", "tool", "tool"]
    for request in (first, last):
        assert not any("lookup result" in m.text for m in request.messages)
    # each subagent started fresh: its task description and nothing of the lead's conversation
    for request in model.requests:
        if RESEARCHER in request.system and len(request.messages) == 2:
            assert request.messages[1].text.startswith("Topic: ")
            assert "Compare ice" not in request.messages[1].text


def test_events_of_a_subagent_carry_its_task_id() -> None:
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    trace = trace_run(agent, ask("go"))

    finished = trace.of_type("subagent_finished")
    assert len(finished) == len(trace.of_type("subagent_started")) == 3
    for done in finished:
        own = [e for e in trace.events if e["task_id"] == done["task_id"]]
        assert {e["agent"] for e in own} == {"researcher"}
        assert {"subagent_started", "prompt", "model_call", "tool_call", "tool_result"} <= {
            e["type"] for e in own
        }
        calls = [e for e in own if e["type"] == "model_call"]
        assert done["tokens_in"] == sum(e["tokens_in"] for e in calls)
        assert done["tokens_out"] == sum(e["tokens_out"] for e in calls)
        assert done["parent_task_id"] is None
        assert done["structured"]["topic"] in TOPICS
    lead_turn = trace.messages[1]  # the lead's AI message with the three task calls
    assert {done["turn_id"] for done in finished} == {lead_turn.id}
    assert sorted(done["call_index"] for done in finished) == [0, 1, 2]
    assert [e["task_id"] for e in trace.events if e["type"] == "prompt"].count(None) == 2
    assert len(trace.prompts) == 2  # only the lead's own prompts


def test_a_failing_subagent_reports_an_error_while_its_siblings_finish() -> None:
    rules = research_rules()
    rules.insert(0, {"when": "Topic: sea.", "when_system": RESEARCHER,
                     "reply": {"raise": "error", "message": "literature service unavailable"}})
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Two of three."],
        rules=rules,
    )
    # no retries: the failing step is played once
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()],
                                  model_retries=0)
    trace = trace_run(agent, ask("go"))

    frame = trace.results_frame()
    assert list(frame["status"]) == ["ok", "error", "ok"]
    assert "literature service unavailable" in frame["error"].iloc[1]
    assert pd.isna(frame["topic"].iloc[1]) and list(frame["topic"].dropna()) == ["ice", "air"]
    assert frame["n_sources"].dtype == "Int64"  # whole numbers with a gap stay whole numbers
    reports = [m for m in lead_requests(model)[-1].messages if m.type == "tool"]
    assert [m.status for m in reports] == ["success", "error", "success"]
    assert "failed" in reports[1].text and "literature service unavailable" in reports[1].text
    assert trace.final_text == "Two of three."


@dataclass
class UserContext:
    user_id: str
    api_token: str


@tool
def whoami(runtime: ToolRuntime[UserContext]) -> str:
    """Say which user this run is for."""
    return f"user={runtime.context.user_id}"


def test_runtime_context_reaches_a_subagent_tool() -> None:
    model = ScriptedChatModel(
        script=[tasks("Find out who the user is.", subagent_type="general-purpose"), "ok"],
        rules=[
            {"when": "Find out who", "reply": {"tool_calls": [call("whoami")]}},
            {"when": "user=", "reply": "The user is ada."},
        ],
    )
    agent = create_research_agent(
        model, tools=[whoami], system_prompt=LEAD, context_schema=UserContext
    )
    trace = trace_run(agent, ask("who am I?"), context=UserContext("ada", "tok-XYZ-123"))

    assert trace.results_frame()["result"].tolist() == ["The user is ada."]
    assert any("user=ada" in m.text for r in model.requests for m in r.messages)
    assert not any("tok-XYZ-123" in r.system for r in model.requests)


def test_files_written_by_subagents_are_visible_to_the_lead() -> None:
    model = ScriptedChatModel(
        script=[
            tasks("Write notes A.", "Write notes B.", subagent_type="general-purpose"),
            {"tool_calls": [call("read_file", file_path="/notes/a.md")]},
            "Read them.",
        ],
        rules=[
            # both write the shared log: two updates of one path in one step must not conflict
            {"when": "Write notes A.", "reply": {"tool_calls": [
                call("write_file", file_path="/notes/a.md", content="alpha findings"),
                call("write_file", file_path="/notes/log.md", content="A was here")]}},
            {"when": "Write notes B.", "reply": {"tool_calls": [
                call("write_file", file_path="/notes/b.md", content="beta findings"),
                call("write_file", file_path="/notes/log.md", content="B was here")]}},
            {"when": "/notes/log.md", "when_system": "general-purpose subagent", "reply": "saved",
             "repeat": True},
        ],
    )
    agent = create_research_agent(model, system_prompt=LEAD)
    trace = trace_run(agent, ask("take notes"))

    files = trace.state["files"]
    assert files["/notes/a.md"]["content"] == "alpha findings"
    assert files["/notes/b.md"]["content"] == "beta findings"
    assert files["/notes/log.md"]["content"] in ("A was here", "B was here")
    assert any("alpha findings" in m.text for m in lead_requests(model)[-1].messages)
    frame = trace.results_frame()
    assert frame["files_written"].tolist() == [
        ["/notes/a.md", "/notes/log.md"], ["/notes/b.md", "/notes/log.md"]
    ]


def test_the_subagent_sees_the_lead_files() -> None:
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [call("write_file", file_path="/brief.md", content="Study moss.")]},
            tasks("Read /brief.md and do what it says.", subagent_type="general-purpose"),
            "done",
        ],
        rules=[
            {"when": "Read /brief.md", "reply": {"tool_calls": [call("read_file", file_path="/brief.md")]}},
            {"when": "Study moss.", "reply": "Moss studied."},
        ],
    )
    trace = trace_run(create_research_agent(model, system_prompt=LEAD), ask("go"))
    assert trace.results_frame()["result"].tolist() == ["Moss studied."]
    assert trace.results_frame()["files_written"].tolist() == [[]]


def test_the_transcript_is_a_readable_markdown_file() -> None:
    model = ScriptedChatModel(
        script=[tasks("Topic: ice. Rate the evidence."), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    trace = trace_run(agent, ask("go"))

    [row] = trace.results_frame().itertuples()
    assert row.transcript_path == f"/subagents/{row.task_id}.md"
    text = trace.state["files"][row.transcript_path]["content"]
    assert text.startswith(f"# Task {row.task_id}\n")
    assert "Topic: ice. Rate the evidence." in text
    assert "Tool call `lookup`" in text and '"topic": "ice"' in text
    assert "lookup result for ice: 3 papers" in text
    assert "## Structured result" in text
    assert text.index("Topic: ice.") < text.index("lookup result") < text.index("Structured")
    assert row.files_written == []  # the harness's own transcript is not counted


def test_a_failed_task_keeps_its_transcript_up_to_the_failure() -> None:
    model = ScriptedChatModel(
        script=[tasks("Topic: ice. Rate the evidence.")],
        rules=[
            research_rules()[0],  # the lookup happens, then the script runs dry
            {"when": "failed", "when_system": LEAD, "reply": "noted"},
        ],
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    trace = trace_run(agent, ask("go"))
    [row] = trace.results_frame().itertuples()
    assert row.status == "error" and "ScriptError" in row.error
    text = trace.state["files"][row.transcript_path]["content"]
    assert "lookup result for ice" in text and "## Error" in text


def test_subagents_run_concurrently() -> None:
    @tool
    def nap() -> str:
        """Sleep for a second."""
        time.sleep(1.0)
        return "rested"

    model = ScriptedChatModel(
        script=[tasks("Nap one.", "Nap two.", "Nap three.", subagent_type="napper"), "ok"],
        rules=[
            {"when": "Nap", "reply": {"tool_calls": [call("nap")]}, "repeat": True},
            {"when": "rested", "reply": "done napping", "repeat": True},
        ],
    )
    spec = SubAgent("napper", "Naps.", system_prompt="You nap.", tools=[nap])
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[spec])
    started = time.perf_counter()
    trace = trace_run(agent, ask("nap three times"))
    assert time.perf_counter() - started < 2.5  # one second each, side by side
    assert list(trace.results_frame()["status"]) == ["ok"] * 3


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_max_parallel_subagents_bounds_how_many_run_at_once(mode: str) -> None:
    running, peak, lock = [0], [0], threading.Lock()

    @tool
    def work() -> str:
        """Do some work."""
        with lock:
            running[0] += 1
            peak[0] = max(peak[0], running[0])
        time.sleep(0.3)
        with lock:
            running[0] -= 1
        return "worked"

    model = ScriptedChatModel(
        script=[tasks(*(f"Job {i}." for i in range(4)), subagent_type="worker"), "ok"],
        rules=[
            {"when": "Job", "reply": {"tool_calls": [call("work")]}, "repeat": True},
            {"when": "worked", "reply": "job done", "repeat": True},
        ],
    )
    spec = SubAgent("worker", "Works.", system_prompt="You work.", tools=[work])
    agent = create_research_agent(
        model, system_prompt=LEAD, subagents=[spec], max_parallel_subagents=2
    )
    events: list[dict] = []
    with event_sink(events.append):
        if mode == "sync":
            agent.invoke(ask("four jobs"))
        else:
            asyncio.run(agent.ainvoke(ask("four jobs")))
    assert peak[0] == 2
    from jupyter_deepagent import results_frame

    assert list(results_frame(events)["description"]) == [f"Job {i}." for i in range(4)]


def test_max_parallel_subagents_must_be_positive() -> None:
    with pytest.raises(ValueError, match="max_parallel_subagents"):
        create_research_agent(ScriptedChatModel(), max_parallel_subagents=0)


def test_async_runs_give_the_same_results() -> None:
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    events: list[dict] = []

    async def run() -> dict:
        with event_sink(events.append):
            return await agent.ainvoke(ask("go"))

    state = asyncio.run(run())
    from jupyter_deepagent import results_frame

    frame = results_frame(events)
    assert list(frame["topic"]) == list(TOPICS) and list(frame["status"]) == ["ok"] * 3
    assert all(path in state["files"] for path in frame["transcript_path"])
    assert state["messages"][-1].text == "Summary."


class Summary(TypedDict):
    title: str
    pages: int


def test_typeddict_and_json_schema_response_formats() -> None:
    schema = {
        "title": "Verdict",
        "type": "object",
        "properties": {"verdict": {"type": "string"}, "confident": {"type": "boolean"}},
        "required": ["verdict", "confident"],
    }
    model = ScriptedChatModel(
        script=[{"tool_calls": [call("task", description="Summarise.", subagent_type="summariser"),
                                call("task", description="Judge.", subagent_type="judge")]}, "ok"],
        rules=[
            {"when": "Summarise.", "reply": {"tool_calls": [call("Summary", title="Moss", pages=12)]}},
            {"when": "Judge.", "reply": {"tool_calls": [call("Verdict", verdict="sound", confident=True)]}},
        ],
    )
    agent = create_research_agent(
        model,
        system_prompt=LEAD,
        subagents=[
            {"name": "summariser", "description": "Summarises.", "system_prompt": "Summarise.",
             "response_format": Summary},
            {"name": "judge", "description": "Judges.", "system_prompt": "Judge.",
             "response_format": schema},
        ],
    )
    frame = trace_run(agent, ask("go")).results_frame()
    assert frame["title"].tolist()[0] == "Moss" and frame["pages"].tolist()[0] == 12
    assert frame["verdict"].tolist()[1] == "sound" and frame["confident"].tolist()[1] is True
    assert frame["pages"].dtype == "Int64" and frame["confident"].dtype == "boolean"


class TinyState(TypedDict):
    messages: Annotated[list, add_messages]


def test_compiled_subagent_wraps_a_state_graph() -> None:
    def answer(state: TinyState) -> dict:
        return {"messages": [AIMessage(f"tiny report on: {state['messages'][-1].text}")]}

    graph = StateGraph(TinyState)
    graph.add_node("answer", answer)
    graph.add_edge(START, "answer")
    graph.add_edge("answer", END)
    tiny = CompiledSubAgent("tiny", "Answers in one step.", graph.compile())

    model = ScriptedChatModel(script=[
        {"tool_calls": [call("write_file", file_path="/x.md", content="x")]},
        tasks("Check the moss.", subagent_type="tiny"),
        "ok",
    ])
    trace = trace_run(create_research_agent(model, system_prompt=LEAD, subagents=[tiny]), ask("go"))
    [row] = trace.results_frame().itertuples()
    assert (row.subagent, row.status, row.result) == ("tiny", "ok", "tiny report on: Check the moss.")
    assert "tiny report on" in trace.state["files"][row.transcript_path]["content"]


def test_compiled_subagent_wraps_a_create_agent_graph() -> None:
    inner_model = ScriptedChatModel(script=["inner agent report"])
    inner = create_agent(inner_model, tools=[], system_prompt="Inner.")
    model = ScriptedChatModel(script=[tasks("Do it.", subagent_type="inner"), "ok"])
    trace = trace_run(
        create_research_agent(
            model, system_prompt=LEAD,
            subagents=[{"name": "inner", "description": "An inner agent.", "runnable": inner}],
        ),
        ask("go"),
    )
    assert trace.results_frame()["result"].tolist() == ["inner agent report"]
    assert inner_model.requests[0].messages[-1].text == "Do it."


def test_a_subagent_can_have_its_own_model() -> None:
    own = ScriptedChatModel(script=["own model report"])
    model = ScriptedChatModel(script=[tasks("Go.", subagent_type="solo"), "ok"])
    spec = {"name": "solo", "description": "Uses its own model.", "system_prompt": "Solo.",
            "model": own}
    trace = trace_run(create_research_agent(model, system_prompt=LEAD, subagents=[spec]), ask("go"))
    assert trace.results_frame()["result"].tolist() == ["own model report"]
    assert len(model.requests) == 2 and len(own.requests) == 1
    assert own.requests[0].system.startswith("Solo.")
    assert "task" not in own.requests[0].tool_names  # subagents do not delegate further


def test_an_unknown_subagent_type_is_an_error_the_model_can_fix() -> None:
    model = ScriptedChatModel(script=[tasks("Go.", subagent_type="nobody"), "ok"])
    trace = trace_run(create_research_agent(model, system_prompt=LEAD), ask("go"))
    [message] = [m for m in model.requests[1].messages if m.type == "tool"]
    assert message.status == "error"
    assert "'nobody'" in message.text and "'general-purpose'" in message.text
    assert trace.results_frame().empty


def test_general_purpose_is_offered_unless_turned_off() -> None:
    with_default = assemble_prompt(system_prompt=LEAD)
    assert "`general-purpose`" in with_default["subagents"].text
    assembly = assemble_prompt(subagents=[researcher()])
    assert assembly.names.index("filesystem") < assembly.names.index("subagents")
    assert "`researcher`: Researches one topic" in assembly["subagents"].text
    off = HarnessProfile(general_purpose_subagent=False)
    assert "subagents" not in assemble_prompt(profile=off)
    only_mine = assemble_prompt(subagents=[researcher()], profile=off)["subagents"].text
    assert "`researcher`" in only_mine and "general-purpose" not in only_mine
    no_task = HarnessProfile(excluded_tools=("task",))
    assert "subagents" not in assemble_prompt(subagents=[researcher()], profile=no_task)
    model = ScriptedChatModel(script=["ok"])
    trace_run(create_research_agent(model, subagents=[researcher()], profile=no_task), ask("hi"))
    assert "task" not in model.requests[0].tool_names


def test_plain_dict_specs_and_their_mistakes() -> None:
    model = ScriptedChatModel(script=[tasks("Topic: ice. Rate the evidence."), "ok"],
                              rules=research_rules())
    spec = {"name": "researcher", "description": "Researches.", "system_prompt": RESEARCHER,
            "tools": [lookup], "response_format": Finding}
    frame = trace_run(create_research_agent(model, subagents=[spec]), ask("go")).results_frame()
    assert frame["topic"].tolist() == ["ice"]

    with pytest.raises(ValueError, match="unknown key 'prompt'"):
        create_research_agent(model, subagents=[{"name": "x", "description": "d", "prompt": "p"}])
    with pytest.raises(ValueError, match="named 'x'"):
        create_research_agent(model, subagents=[{"name": "x", "description": "d"}] * 2)
    with pytest.raises(ValueError, match="not usable"):
        create_research_agent(model, subagents=[{"name": "../x", "description": "d"}])
    with pytest.raises(ValueError, match="needs a description"):
        SubAgent("x", "")
    with pytest.raises(TypeError, match="SubAgent"):
        create_research_agent(model, subagents=["researcher"])


def test_a_subagent_asking_for_approval_pauses_the_run_until_resumed() -> None:
    model = ScriptedChatModel(
        script=[tasks("Write the memo.", "Say hi.", subagent_type="writer"), "both done"],
        rules=[
            {"when": "Write the memo.", "reply": {"tool_calls": [
                call("write_file", file_path="/memo.md", content="memo")]}},
            {"when": "Say hi.", "reply": "hi"},
            {"when": "/memo.md", "when_system": "Write.", "reply": "memo written"},
        ],
    )
    writer = SubAgent("writer", "Writes.", system_prompt="Write.", interrupt_on={"write_file": True})
    agent = create_research_agent(
        model, system_prompt=LEAD, subagents=[writer], checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "approvals"}}
    paused = trace_run(agent, ask("go"), config=config)

    [pending] = paused.interrupts
    assert pending.value["action_requests"][0]["name"] == "write_file"
    frame = paused.results_frame()
    assert list(frame["status"]) == ["interrupted", "ok"]
    assert "approval" in frame["result"].iloc[0] and "write_file" in frame["result"].iloc[0]

    done = trace_run(agent, Command(resume={"decisions": [{"type": "approve"}]}), config=config)
    assert done.final_text == "both done"
    assert done.state["files"]["/memo.md"]["content"] == "memo"
    both = pd.concat([paused.results_frame(), done.results_frame()])
    from jupyter_deepagent import results_frame

    frame = results_frame(paused.events + done.events)
    assert list(frame["task_id"]) == list(paused.results_frame()["task_id"])  # same task, resumed
    assert list(frame["status"]) == ["ok", "ok"] and frame["result"].iloc[0] == "memo written"
    assert len(both) == 3


def test_a_subagent_with_approvals_needs_a_checkpointer() -> None:
    writer = SubAgent("writer", "Writes.", interrupt_on={"write_file": True})
    with pytest.raises(ValueError, match="subagent 'writer'.*checkpointer"):
        create_research_agent(ScriptedChatModel(), subagents=[writer])


@tool
def fetch_table(table: str) -> str:
    """Fetch a data table."""
    return f"table {table}\n" + "\n".join(f"row {i}: " + "x" * 60 for i in range(200))


@tool
def read_page(n: int) -> str:
    """Read one page of a paper."""
    return f"page {n}\n" + "word " * 700


def test_a_subagent_run_gets_offloading_and_summarization() -> None:
    cruncher = "You crunch data."
    rules = [
        {"when": "Crunch the data.", "reply": {"tool_calls": [call("fetch_table", table="big")]}},
        {"when": "/large_tool_results/", "when_system": cruncher,
         "reply": {"tool_calls": [call("read_page", n=1)]}},
        *({"when": f"page {n}\n", "when_system": cruncher,
           "reply": {"tool_calls": [call("read_page", n=n + 1)]}} for n in range(1, 8)),
        {"when": "page 8\n", "when_system": cruncher, "reply": "Crunched 8 pages."},
    ]
    model = ScriptedChatModel(script=[tasks("Crunch the data.", subagent_type="cruncher"), "ok"],
                              rules=rules)
    spec = SubAgent("cruncher", "Crunches.", system_prompt=cruncher, tools=[fetch_table, read_page])
    agent = create_research_agent(  # the lead's compression settings reach its subagents
        model, system_prompt=LEAD, subagents=[spec], context_window=9_000,
        offload_token_limit=1_000, age_token_limit=None,
        summarizer=lambda messages: "SUMMARY: the table is offloaded; pages 1-5 read.",
    )
    trace = trace_run(agent, ask("go"))

    [row] = trace.results_frame().itertuples()
    assert (row.status, row.result) == ("ok", "Crunched 8 pages.")
    [offloaded] = trace.of_type("offloaded")
    summarized = trace.of_type("summarized")  # its older history folded, once or more
    assert summarized and {e["task_id"] for e in summarized} == {offloaded["task_id"]}
    assert offloaded["task_id"] == row.task_id
    assert offloaded["path"].startswith("/large_tool_results/")
    assert offloaded["path"] in trace.state["files"]  # the lead can read what its subagent saved
    own = [r for r in model.requests if cruncher in r.system]
    assert not any("row 199" in m.text for r in own for m in r.messages)
    assert any("SUMMARY: the table is offloaded" in m.text for m in own[-1].messages)
    assert max(e["tokens"] for e in trace.of_type("context") if e["task_id"]) < 9_000
    for request in lead_requests(model):
        assert not any("row 199" in m.text or "page 3" in m.text for m in request.messages)
    # the transcript keeps the whole conversation, summarized part included
    transcript = trace.state["files"][row.transcript_path]["content"]
    assert all(f"page {n}" in transcript for n in range(1, 9))


def test_a_transcript_that_cannot_be_saved_is_a_warning(tmp_path) -> None:
    from jupyter_deepagent import CompositeBackend, DiskBackend, StateBackend

    backend = CompositeBackend(
        StateBackend(), {"/subagents/": DiskBackend(tmp_path, read_only=True)}
    )
    model = ScriptedChatModel(
        script=[tasks("Say hi.", subagent_type="general-purpose"), "ok"],
        rules=[{"when": "Say hi.", "reply": "hi"}],
    )
    trace = trace_run(create_research_agent(model, system_prompt=LEAD, backend=backend), ask("go"))
    [row] = trace.results_frame().itertuples()
    assert (row.status, row.result) == ("ok", "hi") and pd.isna(row.transcript_path)
    assert any("transcript not saved" in w for w in trace.warnings)


def test_subagent_events_reach_the_custom_stream() -> None:
    model = ScriptedChatModel(
        script=[tasks(*(f"Topic: {t}. Rate the evidence." for t in TOPICS)), "Summary."],
        rules=research_rules(),
    )
    agent = create_research_agent(model, system_prompt=LEAD, subagents=[researcher()])
    events = list(agent.stream(ask("go"), stream_mode="custom"))
    from jupyter_deepagent import results_frame

    assert results_frame(events)["topic"].tolist() == list(TOPICS)
    task_ids = set(results_frame(events)["task_id"])
    assert {e["task_id"] for e in events if e["type"] == "model_call"} == task_ids | {None}
