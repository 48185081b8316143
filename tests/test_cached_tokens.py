"""The input tokens a provider says it read from its prompt cache reach what a user sees: the
`model_call` events, the run's totals, the inspector (the summary line and each model call), the
research log and `jupyter-deepagent log`, and a replayed run shows the same cached share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.cli import main
from jupyter_deepagent.trace.inspector.html import static_html
from jupyter_deepagent.trace.inspector.snapshot import build_snapshot
from jupyter_deepagent.trace.inspector.text import summary_text
from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for
from jupyter_deepagent.trace.research_log.record import run_record
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

ASK = {"messages": [{"role": "user", "content": "Write the notes."}]}


def usage(tokens_in: int, cached: int, written: int | None = None) -> dict[str, Any]:
    details = {"cache_read": cached} | ({} if written is None else {"cache_creation": written})
    return {"input_tokens": tokens_in, "output_tokens": 10, "input_token_details": details}


def script() -> list[object]:
    # 3,000 input tokens in all, 2,130 read from the cache (71%), 800 written to it
    return [
        {
            "tool_calls": [{"name": "write_file", "args": {"file_path": "/a.md", "content": "a"}}],
            "usage": usage(1000, 0, 800),
        },
        {
            "tool_calls": [{"name": "write_file", "args": {"file_path": "/b.md", "content": "b"}}],
            "usage": usage(1000, 1000),
        },
        {"content": "Both notes written.", "usage": usage(1000, 1130)},
    ]


def scripted(steps: list[object] | None = None) -> ScriptedChatModel:
    return ScriptedChatModel(
        script=script() if steps is None else steps,
        name="cache",
        profile={"max_input_tokens": 100_000},
    )


def wrapped(inner: ScriptedChatModel, ledger: CallLedger) -> ReplayChatModel:
    return ReplayChatModel(
        inner=inner, ledger=ledger, label="scripted:cache", profile=inner.profile
    )


def test_each_model_call_and_the_run_carry_the_cached_tokens() -> None:
    trace = trace_run(create_research_agent(scripted()), ASK)

    calls = trace.of_type("model_call")
    assert [c["tokens_in_cached"] for c in calls] == [0, 1000, 1130]
    assert [c.get("tokens_in_cache_write") for c in calls] == [800, None, None]
    finished = trace.of_type("run_finished")[-1]
    assert (finished["tokens_in"], finished["tokens_in_cached"]) == (3000, 2130)
    assert finished["tokens_in_cache_write"] == 800


def test_the_inspector_says_what_share_of_the_input_was_cached() -> None:
    trace = trace_run(create_research_agent(scripted()), ASK)

    snap = build_snapshot(trace.events)
    html = static_html(snap)
    summary = html.split("</summary>", 1)[0]
    assert "cached 71% of input tokens, 800 written to the cache" in summary
    assert "cached 71% of input tokens" in summary_text(snap)
    # each call, in the Context tab's list of model calls
    assert "3 model calls · cached 71% of input tokens" in html
    assert "1,000 tokens in · 10 tokens out · cached 100% of input tokens" in html
    assert "1,000 tokens in · 10 tokens out · cached 0% of input tokens, 800 written" in html


def test_a_provider_that_reports_no_cache_shows_no_cached_share() -> None:
    trace = trace_run(create_research_agent(scripted(["Hello."])), ASK)

    assert "tokens_in_cached" not in trace.of_type("model_call")[0]
    assert "tokens_in_cached" not in trace.of_type("run_finished")[0]
    assert "cached" not in static_html(build_snapshot(trace.events))


def test_a_replayed_run_shows_the_cached_share_it_recorded() -> None:
    recording = CallLedger([], "off", "the cell")
    live = trace_run(create_research_agent(wrapped(scripted(), recording)), ASK)
    silent = scripted([])
    replay = CallLedger([json.loads(json.dumps(recording.as_record()))], "strict", "the cell")
    replayed = trace_run(create_research_agent(wrapped(silent, replay)), ASK)

    assert silent.requests == [] and replay.outcome == "replayed"
    fields = ("tokens_in", "tokens_in_cached", "tokens_in_cache_write")
    assert [[c.get(f) for f in fields] for c in replayed.of_type("model_call")] == [
        [c.get(f) for f in fields] for c in live.of_type("model_call")
    ]
    html = static_html(build_snapshot(replayed.events)).split("</summary>", 1)[0]
    assert "cached 71% of input tokens" in html


def test_jupyter_deepagent_log_prints_the_cached_share(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ledger = CallLedger([], "off", "the cell")
    trace = trace_run(create_research_agent(wrapped(scripted(), ledger)), ASK)
    record = run_record(
        events=trace.events,
        calls=ledger.calls,
        messages=ledger.canon.messages,
        tools=ledger.canon.tools,
        cell_id="c1",
        source_key="k",
        thread="t",
        mode="off",
        outcome=ledger.outcome,
        model="scripted:cache",
        profile=None,
    )
    notebook = tmp_path / "study.ipynb"
    ResearchLog(log_path_for(notebook)).append(record)

    assert main(["log", str(notebook)]) == 0
    out = capsys.readouterr().out
    assert "3.0k tokens in (71% cached, 800 written to the cache) · 30 tokens out · " in out
    assert main(["log", str(notebook), "--format", "json"]) == 0
    [entry] = json.loads(capsys.readouterr().out)
    assert (entry["tokens_in_cached"], entry["tokens_in_cache_write"]) == (2130, 800)
