"""The chat-model boundary: a run's every model call (agent, subagent, summarizer) is recorded with
a fingerprint that is the same in any process, and replays with no model call."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from jupyter_deepagent import ReplayMismatch, ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.trace.research_log.canon import CanonicalRequest
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

SCENARIO = '''
from langchain.tools import tool
from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER


@tool
def fetch(key: str) -> str:
    """Return a chunk of research notes named `key`."""
    if key == "big":
        return "\\n".join(f"row {i}: " + "word " * 30 for i in range(400))
    return "\\n".join(f"{key} line {i:03d} " + "y" * 55 for i in range(70))


def fetches(*keys):
    return {"tool_calls": [{"name": "fetch", "args": {"key": k}} for k in keys]}


def scripted_model(script=True):
    steps = [
        {"tool_calls": [{"name": "task", "args": {
            "description": "Read the big table.", "subagent_type": "general-purpose"}}]},
        fetches("big"),
        "The big table has 400 rows.",
        *(fetches(f"n{i}") for i in range(6)),
        "Done: 400 rows, six notes.",
    ]
    return ScriptedChatModel(
        script=steps if script else [],
        rules=[{"when": SUMMARY_MARKER, "reply": "## Session intent\\nRead notes.", "repeat": True}],
        profile={"max_input_tokens": 8000},
        name="scenario",
    )


def research_run(model):
    # a thread, as in a notebook: the transcript of what is summarized is named after it
    from langgraph.checkpoint.memory import InMemorySaver

    agent = create_research_agent(model, tools=[fetch], age_token_limit=None,
                                  checkpointer=InMemorySaver())
    ask = {"messages": [{"role": "user", "content": "Survey the notes."}]}
    config = {"recursion_limit": 300, "configurable": {"thread_id": "survey"}}
    return trace_run(agent, ask, config=config)
'''

PRINT_FINGERPRINTS = SCENARIO + '''
import json
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

inner = scripted_model()
ledger = CallLedger([], "off", "scenario")
research_run(ReplayChatModel(inner=inner, ledger=ledger, label="scripted:scenario",
                             profile=inner.profile))
print(json.dumps([[c["agent"], c["fingerprint"]] for c in ledger.calls]))
'''


def _scenario() -> dict[str, Any]:
    namespace: dict[str, Any] = {}
    exec(compile(SCENARIO, "scenario", "exec"), namespace)  # the test's own code
    return namespace


def request_of(call: dict[str, Any]) -> CanonicalRequest:
    """A ledger call's request as the canonical request it names."""
    ref = call["request"]
    return CanonicalRequest(tuple(ref["messages"]), ref["tools"], ref["model"], ref["params"],
                            call["fingerprint"])


def _wrapped(inner: ScriptedChatModel, ledger: CallLedger) -> ReplayChatModel:
    return ReplayChatModel(inner=inner, ledger=ledger, label="scripted:scenario",
                           profile=inner.profile)


def test_fingerprints_are_equal_across_two_processes() -> None:
    runs = [
        subprocess.run([sys.executable, "-c", PRINT_FINGERPRINTS], capture_output=True,
                       text=True, check=True, timeout=300)
        for _ in range(2)
    ]
    first, second = (json.loads(run.stdout.strip().splitlines()[-1]) for run in runs)

    assert first == second
    assert len(first) >= 10
    assert {agent for agent, _ in first} == {"main", "general-purpose"}


def test_subagent_and_summarizer_calls_replay_without_a_model_call() -> None:
    scenario = _scenario()
    live_model = scenario["scripted_model"]()
    recording = CallLedger([], "off", "scenario")
    live = scenario["research_run"](_wrapped(live_model, recording))
    assert live.of_type("summarized") and live.of_type("subagent_finished")
    assert live.of_type("offloaded")

    silent = scenario["scripted_model"](script=False)
    replay = CallLedger([json.loads(json.dumps(recording.as_record()))], "strict", "scenario")
    replayed = scenario["research_run"](_wrapped(silent, replay))

    assert silent.requests == []
    assert replay.outcome == "replayed" and len(replay.calls) == len(recording.calls)
    assert replayed.final_text == live.final_text == "Done: 400 rows, six notes."
    assert any(call["agent"] == "general-purpose" for call in replay.calls)
    requests = [replay.canon.expand(request_of(c)) for c in replay.calls]
    summarizer = [r for r in requests if not r["tools"]]
    assert summarizer and SUMMARY_MARKER in json.dumps(summarizer[0])
    frame = replayed.results_frame()
    assert list(frame["task_id"]) == list(live.results_frame()["task_id"])


def test_strict_replay_names_the_step_and_shows_the_changed_tools() -> None:
    recording = CallLedger([], "off", "the cell")
    model = ScriptedChatModel(script=["Hello."], profile={"max_input_tokens": 100_000})
    trace_run(create_research_agent(_wrapped(model, recording)),
              {"messages": [{"role": "user", "content": "hi"}]})
    strict = CallLedger([recording.as_record()], "strict", "the cell")

    @__import__("langchain.tools").tools.tool
    def extra(text: str) -> str:
        """A tool the recording did not have."""
        return text

    agent = create_research_agent(_wrapped(ScriptedChatModel(script=[]), strict), tools=[extra])
    with pytest.raises(ReplayMismatch) as caught:
        trace_run(agent, {"messages": [{"role": "user", "content": "hi"}]})

    assert caught.value.step == 1 and caught.value.cell == "the cell"
    assert "the cell, model call 1: the request differs from the research log" in str(caught.value)
    assert "tools: recorded [" in str(caught.value) and "'extra'" in str(caught.value)
