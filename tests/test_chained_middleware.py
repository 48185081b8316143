"""The harness's own layers run as one LangChain middleware (`ChainedMiddleware`), because
LangChain's wrapper around each middleware's hooks costs more than most of them. A run must not
tell the difference: the same events, the same messages and the same files as with each layer in
the stack on its own, sync and async, with offloading, aging, summarization, a failing tool, a
retried model call, a budget and a subagent in the run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain.agents.middleware import AgentMiddleware, AgentState, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain.tools import tool
from langchain_core.messages import AIMessage
from langgraph.types import Command

from jupyter_deepagent import ScriptedChatModel, SubAgent, create_research_agent, trace_run
from jupyter_deepagent.harness import agent_stack
from jupyter_deepagent.harness.chained_middleware import ChainedMiddleware
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.trace.run_trace import atrace_run

VARYING = {"time", "run_id", "seconds", "id", "turn_id"}  # ids: random in each run


@tool
def fetch(key: str) -> str:
    """Return the research notes named `key`."""
    if key == "broken":
        raise ConnectionError("the archive is down")
    lines = 200 if key == "big" else 40
    return "\n".join(f"{key} line {i:03d} " + "glacier melt " * 6 for i in range(lines))


def script() -> list[Any]:
    steps: list[Any] = [
        {
            "tool_calls": [
                {
                    "name": "write_todos",
                    "args": {"todos": [{"content": "read", "status": "in_progress"}]},
                }
            ]
        },
        {"tool_calls": [{"name": "fetch", "args": {"key": "broken"}}]},
        {"raise": "rate_limit", "message": "overloaded"},  # retried by the retry layer
    ]
    steps += [{"tool_calls": [{"name": "fetch", "args": {"key": f"n{i}"}}]} for i in range(8)]
    steps.insert(4, {"tool_calls": [{"name": "fetch", "args": {"key": "big"}}]})
    steps += [
        {
            "tool_calls": [
                {"name": "task", "args": {"description": "Count n1.", "subagent_type": "counter"}}
            ]
        },
        {"tool_calls": [{"name": "fetch", "args": {"key": "n1"}}]},
        "n1 has 40 lines.",
        "Read everything; n1 has 40 lines.",
    ]
    return steps


def agent() -> Any:
    rules = [{"when": SUMMARY_MARKER, "reply": "## Session intent\nRead notes.", "repeat": True}]
    model = ScriptedChatModel(script=script(), rules=rules, profile={"max_input_tokens": 6_000})
    counter = SubAgent("counter", "Counts lines.", system_prompt="You count.", tools=[fetch])
    return create_research_agent(
        model, tools=[fetch], subagents=[counter], age_token_limit=300, model_retry_wait=0
    )


def unchained(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Build agents with each layer of the chain in LangChain's stack on its own; the list
    returned counts the chains taken apart."""
    build = agent_stack.middleware_stack
    taken_apart: list[int] = []

    def stack(*args: Any, **kwargs: Any) -> list[Any]:
        out: list[Any] = []
        for middleware in build(*args, **kwargs):
            is_chain = isinstance(middleware, ChainedMiddleware)
            out.extend(middleware.layers if is_chain else [middleware])
            taken_apart.extend([len(middleware.layers)] if is_chain else [])
        return out

    monkeypatch.setattr(agent_stack, "middleware_stack", stack)
    return taken_apart


def comparable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: comparable(v) for k, v in value.items() if k not in VARYING}
    if isinstance(value, list):
        return [comparable(v) for v in value]
    return value


def outcome(trace: Any) -> tuple[Any, Any, Any]:
    messages = [
        (m.type, m.content, getattr(m, "tool_calls", None)) for m in trace.state["messages"]
    ]
    return comparable(trace.events), messages, sorted(trace.state.get("files", {}))


def run(asynchronous: bool) -> tuple[Any, Any, Any]:
    question = {"messages": [{"role": "user", "content": "Survey the notes."}]}
    config = {"recursion_limit": 200, "configurable": {"thread_id": "t"}}
    if asynchronous:
        trace = asyncio.run(atrace_run(agent(), question, config=config, budget="200k tokens"))
    else:
        trace = trace_run(agent(), question, config=config, budget="200k tokens")
    return outcome(trace)


@pytest.mark.parametrize("asynchronous", [False, True], ids=["sync", "async"])
def test_a_chained_run_is_the_run_of_the_layers_one_by_one(
    asynchronous: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    chained = run(asynchronous)
    taken_apart = unchained(monkeypatch)
    alone = run(asynchronous)
    assert len(taken_apart) >= 2 and min(taken_apart) >= 6  # the main agent's, each subagent's
    events = [e["type"] for e in chained[0]]
    for happened in ("offloaded", "aged", "summarized", "model_retry", "tool_result"):
        assert happened in events, f"the run was meant to show a {happened} event"
    assert any(e.get("error") for e in chained[0] if e["type"] == "tool_result")
    assert any(e.get("agent") == "counter" for e in chained[0])
    assert chained == alone


class _Marks(AgentMiddleware):
    """A layer that writes its own state key after the model call, as compression does."""

    def __init__(self, key: str, calls: list[str]) -> None:
        super().__init__()
        self.key, self.calls = key, calls

    @property
    def name(self) -> str:
        return f"Marks{self.key}"

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> ExtendedModelResponse:
        response = handler(request)
        assert isinstance(response, ModelResponse)  # an inner layer's extension is not seen
        self.calls.append(self.key)
        return ExtendedModelResponse(
            model_response=response, command=Command(update={self.key: len(self.calls)})
        )


class _Answers(AgentMiddleware):
    def wrap_model_call(self, request: ModelRequest, handler: Any) -> AIMessage:
        return AIMessage("answered by a layer")


def test_each_layer_gets_a_model_response_and_every_layers_update_is_kept() -> None:
    calls: list[str] = []
    chain = ChainedMiddleware([_Marks("a", calls), _Marks("b", calls), _Answers()], name="C")
    result = chain.wrap_model_call(None, lambda request: None)  # type: ignore[arg-type]
    assert calls == ["b", "a"]  # innermost first
    assert isinstance(result, ExtendedModelResponse)
    assert result.command.update == {"b": 1, "a": 2}
    assert result.model_response.result[0].content == "answered by a layer"


class _Counts(AgentMiddleware):
    def after_model(self, state: AgentState, runtime: Any) -> None:
        return None


def test_a_layer_with_a_hook_the_chain_does_not_run_is_refused() -> None:
    with pytest.raises(ValueError, match="after_model"):
        ChainedMiddleware([_Counts()], name="C")


class _TriesTwice(AgentMiddleware):
    """Calls the layers inside it again when they fail, then answers by itself."""

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> AIMessage:
        handler(request)
        try:
            handler(request)
        except RuntimeError:
            return AIMessage("answered after a failed second try")
        raise AssertionError("the second try was meant to fail")


class _FailsSecondTime(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def wrap_model_call(self, request: ModelRequest, handler: Any) -> ExtendedModelResponse:
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("the provider failed")
        return ExtendedModelResponse(
            model_response=ModelResponse(result=[AIMessage("first")]),
            command=Command(update={"noted": True}),
        )


def test_an_attempt_that_failed_leaves_no_state_update() -> None:
    chain = ChainedMiddleware([_TriesTwice(), _FailsSecondTime()], name="C")
    result = chain.wrap_model_call(None, lambda request: None)  # type: ignore[arg-type]
    assert isinstance(result, ModelResponse)  # the first attempt's update was dropped with it
    assert result.result[0].content == "answered after a failed second try"


class _Sets(AgentMiddleware):
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        return {"x": 1}


class _Reads(AgentMiddleware):
    def __init__(self) -> None:
        super().__init__()
        self.seen: Any = None

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any]:
        self.seen = state.get("x")
        return {"y": 2}


def test_each_layer_starts_from_the_state_the_layers_before_it_left() -> None:
    reads = _Reads()
    chain = ChainedMiddleware([_Sets(), reads], name="C")
    assert chain.before_agent({"messages": []}, None) == {"x": 1, "y": 2}
    assert reads.seen == 1
    with pytest.raises(RuntimeError, match="'x'"):
        ChainedMiddleware([_Sets(), _Sets()], name="C").before_agent({}, None)


def test_the_chain_keeps_its_name_in_the_graph_and_the_traces() -> None:
    """LangSmith names the chain's spans, and the graph its node, after the chain's name."""
    chain = ChainedMiddleware([_Sets(), _Reads()], name="ResearchHarness")
    assert chain.name == "ResearchHarness"
    nodes = set(agent().get_graph().nodes)
    assert f"{agent_stack.HARNESS_LAYERS}.before_agent" in nodes
