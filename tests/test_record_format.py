"""The research log's record format: a record grows linearly with its run, messages carrying
random tool-call ids still replay, version 1 records still replay, and a mismatch always says
what differs."""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from typing import Any

import pytest
from langchain.tools import tool
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jupyter_deepagent import ReplayMismatch, ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.trace.research_log.difference import describe_difference
from jupyter_deepagent.trace.research_log.fingerprint import canonical_message
from jupyter_deepagent.trace.research_log.record import run_record
from jupyter_deepagent.trace.research_log.recorded import Recording
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel


@tool
def fetch(number: int) -> str:
    """Return research note `number`."""
    return f"# Note {number}\n" + f"station {number} " * 300


def _model(steps: int) -> ScriptedChatModel:
    script: list[Any] = [
        {"tool_calls": [{"name": "fetch", "args": {"number": n}}]} for n in range(steps)
    ]
    return ScriptedChatModel(script=[*script, "All notes read."],
                             profile={"max_input_tokens": 1_000_000}, name="notes")


def _run(ledger: CallLedger, model: ScriptedChatModel, messages: list[Any]) -> Any:
    wrapped = ReplayChatModel(inner=model, ledger=ledger, label="scripted:notes",
                              profile=model.profile)
    agent = create_research_agent(wrapped, tools=[fetch])
    return trace_run(agent, {"messages": messages}, config={"recursion_limit": 1000})


def _record(steps: int) -> dict[str, Any]:
    ledger = CallLedger([], "off", "the cell")
    trace = _run(ledger, _model(steps), [HumanMessage("Read the notes.")])
    return run_record(events=trace.events, calls=ledger.calls, messages=ledger.canon.messages,
                      tools=ledger.canon.tools, cell_id="c", source_key="s", thread="t",
                      mode="auto", outcome=ledger.outcome, model="scripted:notes", profile=None)


def _size(record: dict[str, Any]) -> int:
    return len(json.dumps(record, ensure_ascii=False, separators=(",", ":")))


def test_a_record_grows_linearly_with_its_run() -> None:
    short, long = _record(30), _record(60)

    assert _size(long) < 2.3 * _size(short)
    [first, *_] = long["calls"]
    assert isinstance(first["request"]["messages"], list)  # later ones name an earlier prefix
    assert all(isinstance(c["request"]["messages"], dict) for c in long["calls"][1:])


def test_a_record_read_back_replays_its_run_strictly() -> None:
    record = json.loads(json.dumps(_record(5)))
    silent = ScriptedChatModel(script=[], name="notes")
    replay = CallLedger([record], "strict", "the cell")

    trace = _run(replay, silent, [HumanMessage("Read the notes.")])

    assert silent.requests == [] and replay.outcome == "replayed"
    assert trace.final_text == "All notes read."
    assert replay.replayed_recording() is not None
    assert replay.replayed_recording().record is record  # type: ignore[union-attr]


def _few_shot() -> list[Any]:
    """A few-shot example as a user writes it: a tool call and its answer, with a random id."""
    example = f"toolu_{uuid.uuid4().hex}"
    return [
        HumanMessage("Example: read note 7."),
        AIMessage("", tool_calls=[{"name": "fetch", "args": {"number": 7}, "id": example}]),
        ToolMessage("# Note 7\nstation 7", tool_call_id=example, name="fetch"),
        AIMessage("Note 7 is about station 7."),
        HumanMessage("Now read the notes."),
    ]


def test_a_recorded_run_with_random_tool_call_ids_replays() -> None:
    recording = CallLedger([], "off", "the cell")
    _run(recording, _model(2), _few_shot())
    silent = ScriptedChatModel(script=[], name="notes")
    replay = CallLedger([json.loads(json.dumps(recording.as_record()))], "strict", "the cell")

    trace = _run(replay, silent, _few_shot())  # new random ids

    assert silent.requests == [] and replay.outcome == "replayed"
    assert trace.final_text == "All notes read."


def _v1(record: dict[str, Any]) -> dict[str, Any]:
    """A record as version 1 wrote it: each request whole, tool-call ids as they were sent."""
    ids: defaultdict[str, str] = defaultdict(lambda: f"toolu_{uuid.uuid4().hex}")
    calls = []
    for call, recorded in zip(record["calls"], Recording(record).calls, strict=True):
        request = json.loads(json.dumps(recorded.request()))  # its own copy
        for message in request["messages"]:
            for tool_call in message.get("tool_calls", []):
                tool_call["id"] = ids[tool_call["id"]]
            if "tool_call_id" in message:
                message["tool_call_id"] = ids[message["tool_call_id"]]
        calls.append({**call, "request": request, "fingerprint": "a v1 fingerprint"})
    old = {k: v for k, v in record.items() if k not in ("messages", "tools")}
    return {**old, "v": 1, "calls": calls}


def test_a_version_1_record_still_replays() -> None:
    record = _v1(json.loads(json.dumps(_record(4))))
    silent = ScriptedChatModel(script=[], name="notes")
    replay = CallLedger([record], "strict", "the cell")

    trace = _run(replay, silent, [HumanMessage("Read the notes.")])

    assert silent.requests == [] and replay.outcome == "replayed"
    assert trace.final_text == "All notes read."


def test_every_recording_is_offered_the_latest_first() -> None:
    old = _record(2)
    ledger = CallLedger([], "off", "the cell")
    _run(ledger, _model(2), [HumanMessage("Read the notes, twice over.")])
    new = ledger.as_record()
    for ask, served_by in (("Read the notes.", old), ("Read the notes, twice over.", new)):
        silent = ScriptedChatModel(script=[], name="notes")
        replay = CallLedger([new, old], "strict", "the cell")
        _run(replay, silent, [HumanMessage(ask)])
        assert silent.requests == [] and replay.outcome == "replayed"
        assert replay.replayed_recording().record is served_by  # type: ignore[union-attr]


def test_a_changed_request_says_what_changed() -> None:
    ledger = CallLedger([_record(2)], "strict", "the cell")
    with pytest.raises(ReplayMismatch) as caught:
        _run(ledger, ScriptedChatModel(script=[], name="notes"), [HumanMessage("Read notes.")])

    assert "-[human] Read the notes." in str(caught.value)
    assert "+[human] Read notes." in str(caught.value)


def _request(*messages: Any) -> dict[str, Any]:
    return {"messages": [canonical_message(m) for m in messages], "tools": [],
            "model": "m", "params": {}}


@pytest.mark.parametrize(
    ("before", "after", "shown"),
    [
        (ToolMessage("ok", tool_call_id="call-1", status="success"),
         ToolMessage("ok", tool_call_id="call-1", status="error"), '"status": "error"'),
        (ToolMessage("ok", tool_call_id="call-1"), ToolMessage("ok", tool_call_id="call-2"),
         '"tool_call_id": "call-2"'),
        (AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "call-1"}]),
         AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "call-9"}]), '"id": "call-9"'),
    ],
)
def test_a_difference_the_text_does_not_show_is_shown_as_json(
    before: Any, after: Any, shown: str
) -> None:
    text = describe_difference(_request(before), _request(after))

    assert "message 1 of 1 differs" in text
    assert any(line.startswith("+") and shown in line for line in text.splitlines()), text


def test_the_run_s_cached_fingerprints_equal_the_fingerprint_of_each_whole_request() -> None:
    """`RequestCanon` reuses what the conversation's last request hashed; whatever it reuses, a
    request's fingerprint is the one its whole canonical form gives (so a replay matches)."""
    from jupyter_deepagent.trace.research_log.canon import RequestCanon, tool_schema
    from jupyter_deepagent.trace.research_log.fingerprint import canonical_request, fingerprint

    def secret(text: str) -> str:
        return text.replace("s3cr3t", "***")

    canon = RequestCanon(secret)
    conversation: list[Any] = [HumanMessage("Read the notes, key s3cr3t.", id="h1")]
    for step in range(6):
        call_id = uuid.uuid4().hex  # random, as providers make them
        conversation += [
            AIMessage("", tool_calls=[{"name": "fetch", "args": {"number": step}, "id": call_id}],
                      id=f"a{step}"),
            ToolMessage(f"note {step}", tool_call_id=call_id, name="fetch", id=f"t{step}"),
        ]
        if step == 3:  # a tool result shown anew (compression rebuilds it), its text changed
            old = conversation[2]
            conversation[2] = ToolMessage("moved to /large_tool_results/x", id=old.id,
                                          tool_call_id=old.tool_call_id, name="fetch")
        if step == 4:  # the same message made again alike: a new object, equal content
            conversation[1] = conversation[1].model_copy()
        for tools in ([], [fetch]):
            request = [HumanMessage("You survey notes."), *conversation]  # a new system prompt
            got = canon.request(request, tools, "scripted:notes", {"temperature": 0})
            whole = canonical_request(request, [tool_schema(t) for t in tools], "scripted:notes",
                                      {"temperature": 0}, secret)
            assert got.fingerprint == fingerprint(whole), (step, len(tools))
    assert not any("s3cr3t" in json.dumps(m) for m in canon.messages.values())
