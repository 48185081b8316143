"""With an Anthropic model the agent sends prompt-cache breakpoints: the real `ChatAnthropic`,
pointed at a local HTTP server that records each request body and answers in the Messages API's
wire format, sends `cache_control` on the last tool, on the system prompt and for the request's
tail; the cached tokens the server reports reach the run's events. Any other model gets none."""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

pytest.importorskip("langchain_anthropic")

from langchain_anthropic import ChatAnthropic

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
FAKE_KEY = "sk-ant-" + "FAKE-cache-test"  # split: no key-shaped literal in the repo
EPHEMERAL = {"type": "ephemeral", "ttl": "5m"}
ASK = {"messages": [{"role": "user", "content": "Write the notes."}]}


def _tool_use(index: int) -> dict[str, Any]:
    return {
        "type": "tool_use",
        "id": f"toolu_{index}",
        "name": "write_file",
        "input": {"file_path": f"/n{index}.md", "content": "notes"},
    }


class MessagesServer(ThreadingHTTPServer):
    """Answers `POST /v1/messages`: two file writes, then a text; keeps each request body."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.bodies: list[dict[str, Any]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        self.bodies.append(body)
        index = len(self.bodies)
        content = [_tool_use(index)] if index <= 2 else [{"type": "text", "text": "Done."}]
        return {
            "id": f"msg_{index}",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": content,
            "stop_reason": "tool_use" if index <= 2 else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": 100,
                "output_tokens": 20,
                "cache_creation_input_tokens": 500 if index == 1 else 50,
                "cache_read_input_tokens": 0 if index == 1 else 500 + 50 * (index - 2),
            },
        }


class _Handler(BaseHTTPRequestHandler):
    server: MessagesServer

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        body = json.loads(self.rfile.read(length))
        data = json.dumps(self.server.reply(body)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def server() -> Iterator[MessagesServer]:
    server = MessagesServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def claude(server: MessagesServer) -> ChatAnthropic:
    return ChatAnthropic(
        model="claude-sonnet-4-5",
        api_key=FAKE_KEY,
        base_url=server.url,
        max_retries=0,
        streaming=False,
        profile={"max_input_tokens": 200_000},
    )


def _breakpoints(body: dict[str, Any]) -> dict[str, object]:
    """Where a request body carries `cache_control`: top level, system, tools, messages."""
    system = body.get("system")
    blocks = system if isinstance(system, list) else []
    return {
        "top": body.get("cache_control"),
        "system": [b.get("cache_control") for b in blocks],
        "tools": [t.get("cache_control") for t in body.get("tools", [])],
        "messages": sum(
            1
            for m in body["messages"]
            if isinstance(m["content"], list)
            for b in m["content"]
            if isinstance(b, dict) and "cache_control" in b
        ),
    }


def _check_marked(body: dict[str, Any]) -> None:
    found = _breakpoints(body)
    assert found["top"] is None  # compression marks the messages itself
    assert found["system"] and found["system"][-1] == EPHEMERAL
    assert all(c is None for c in found["system"][:-1])
    tools = found["tools"]
    assert isinstance(tools, list) and len(tools) > 1
    assert tools[-1] == EPHEMERAL and all(c is None for c in tools[:-1])
    assert found["messages"] == 1  # nothing aged: one breakpoint, on the last message
    last = body["messages"][-1]["content"]
    assert isinstance(last, list) and last[-1]["cache_control"] == EPHEMERAL


@LOOPBACK_ONLY
def test_an_anthropic_agent_sends_cache_breakpoints_and_sees_its_cached_tokens(
    server: MessagesServer,
) -> None:
    trace = trace_run(create_research_agent(claude(server)), ASK)

    assert trace.final_text == "Done."
    assert len(server.bodies) == 3
    for body in server.bodies:
        _check_marked(body)
    # the system text and tool schemas are the same in every request: the prefix is cached
    assert len({json.dumps([b["system"], b["tools"]]) for b in server.bodies}) == 1
    calls = trace.of_type("model_call")
    assert [c["tokens_in_cached"] for c in calls] == [0, 500, 550]
    assert [c["tokens_in_cache_write"] for c in calls] == [500, 50, 50]
    assert calls[0]["model"] == "anthropic:claude-sonnet-4-5"


@LOOPBACK_ONLY
def test_the_breakpoints_are_sent_through_the_research_logs_recorder(
    server: MessagesServer,
) -> None:
    # in a notebook the agent's model is the research log's wrapper around the live model
    ledger = CallLedger([], "off", "the cell")
    wrapper = ReplayChatModel(
        inner=claude(server), ledger=ledger, label="anthropic:claude-sonnet-4-5"
    )
    trace = trace_run(create_research_agent(wrapper), ASK)

    assert trace.final_text == "Done." and len(server.bodies) == 3
    for body in server.bodies:
        _check_marked(body)
    # the strict replay of that recording is tagged alike, so it matches with no model call
    replay = CallLedger([json.loads(json.dumps(ledger.as_record()))], "strict", "the cell")
    offline = ReplayChatModel(inner=None, ledger=replay, label="anthropic:claude-sonnet-4-5")
    replayed = trace_run(create_research_agent(offline), ASK)
    assert replayed.final_text == "Done." and replay.outcome == "replayed"
    assert len(server.bodies) == 3


def test_another_model_gets_no_breakpoints() -> None:
    model = ScriptedChatModel(script=["Hello."])
    trace_run(create_research_agent(model), ASK)

    [request] = model.requests
    assert isinstance(request.messages[0].content, str)  # the system prompt as plain text
    assert "cache_control" not in json.dumps(request.tools)


def test_without_langchain_anthropic_an_anthropic_label_gets_no_breakpoints(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # a recording made with Claude, replayed where langchain-anthropic is not installed
    monkeypatch.setitem(sys.modules, "langchain_anthropic", None)
    monkeypatch.delitem(sys.modules, "langchain_anthropic.middleware", raising=False)
    monkeypatch.delitem(
        sys.modules, "jupyter_deepagent.harness.prompt.cache_breakpoints", raising=False
    )
    inner = ScriptedChatModel(script=["Hello."])
    ledger = CallLedger([], "off", "the cell")
    wrapper = ReplayChatModel(inner=inner, ledger=ledger, label="anthropic:claude-sonnet-4-5")
    trace = trace_run(create_research_agent(wrapper), ASK)

    assert trace.final_text == "Hello."
    [request] = inner.requests
    assert isinstance(request.messages[0].content, str)


class FetchingServer(MessagesServer):
    """Asks for four long sources in turn, then answers."""

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = super().reply(body)
        index = len(self.bodies)
        if index <= 4:
            call = {
                "type": "tool_use",
                "id": f"toolu_{index}",
                "name": "fetch",
                "input": {"n": index},
            }
            answer.update(content=[call], stop_reason="tool_use")
        else:
            answer.update(content=[{"type": "text", "text": "Done."}], stop_reason="end_turn")
        return answer


def _marked_results(body: dict[str, Any]) -> list[tuple[str, str]]:
    """The tool results of a request body that carry a breakpoint: (tool_use_id, text)."""
    found = []
    for message in body["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result" and "cache_control" in block:
                content = block["content"]
                text = content if isinstance(content, str) else content[0]["text"]
                found.append((block["tool_use_id"], text))
    return found


@LOOPBACK_ONLY
def test_a_breakpoint_keeps_the_aged_results_cached_when_the_next_ones_age() -> None:
    from langchain_core.tools import tool

    @tool
    def fetch(n: int) -> str:
        """Fetch source `n`."""
        return "\n".join(f"source {n}, line {i}: " + "glacier melt " * 4 for i in range(100))

    server = FetchingServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        agent = create_research_agent(claude(server), tools=[fetch], context_window=16_000)
        trace = trace_run(agent, ASK)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

    assert trace.final_text == "Done." and len(server.bodies) == 5
    marked = [_marked_results(body) for body in server.bodies]
    # each result ages at the call after the model replied to it, so the last message (the
    # newest result) is not marked, a write no later request would read; the newest pointer
    # before it is. The next request marks that pointer again (read from the cache) and its own
    # newest pointer (written): only the newest result goes at the plain price
    assert [[call_id for call_id, _ in found] for found in marked] == [
        [],
        [],
        ["toolu_1"],
        ["toolu_1", "toolu_2"],
        ["toolu_2", "toolu_3"],
    ]
    for found in marked[2:]:
        assert all(text.startswith("[Already read: the result of fetch") for _, text in found)
    assert "cache_control" in str(server.bodies[0]["messages"][-1])  # the question
    assert all("cache_control" not in str(body["messages"][-1]) for body in server.bodies[1:])


class LifetimeServer(MessagesServer):
    """Reports cache writes as today's API does: split by lifetime."""

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        answer = super().reply(body)
        written = answer["usage"]["cache_creation_input_tokens"]
        answer["usage"]["cache_creation"] = {
            "ephemeral_5m_input_tokens": written,
            "ephemeral_1h_input_tokens": 0,
        }
        return answer


@LOOPBACK_ONLY
def test_cache_writes_reported_by_lifetime_reach_the_events() -> None:
    server = LifetimeServer()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        trace = trace_run(create_research_agent(claude(server)), ASK)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)

    calls = trace.of_type("model_call")
    assert [c["tokens_in_cache_write"] for c in calls] == [500, 50, 50]
    assert [c["tokens_in_cached"] for c in calls] == [0, 500, 550]


def test_breakpoints_go_only_where_the_formatter_keeps_them() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from jupyter_deepagent.harness.compression.cache_marks import mark_positions
    from jupyter_deepagent.harness.compression.view_entries import Entry

    call = AIMessage(content="", tool_calls=[{"name": "fetch", "args": {}, "id": "t1"}])
    entries = [
        Entry(0, HumanMessage("Survey it."), 5, "human"),
        Entry(1, call, 5, "ai"),
        Entry(2, ToolMessage("[Already read: ...]", tool_call_id="t1"), 9, "tool", "pointer"),
        Entry(3, HumanMessage("  "), 1, "human"),  # blank: its text block would be dropped
        Entry(4, call, 5, "ai"),  # calls only: its empty text would be dropped
    ]
    assert mark_positions(entries, set(), newest_ages_next=False) == [2]
    assert mark_positions(entries, {2}, newest_ages_next=False) == [2]  # boundary gone, tail
    assert mark_positions(entries[:1], set(), newest_ages_next=False) == [0]


def test_a_breakpoint_does_not_change_what_the_research_log_matches() -> None:
    # a recording made before breakpoints were placed (or where they fall elsewhere) replays
    from langchain_core.messages import HumanMessage, ToolMessage

    from jupyter_deepagent.harness.compression.cache_marks import with_cache_mark
    from jupyter_deepagent.trace.research_log.fingerprint import canonical_message

    for message in (HumanMessage("Survey it."), ToolMessage("result", tool_call_id="t1")):
        marked = with_cache_mark(message)
        assert marked.content != message.content
        assert canonical_message(marked) == canonical_message(message)
