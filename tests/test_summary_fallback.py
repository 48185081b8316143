"""A summary is never empty: a summarizer that replies without text is asked once more for text
only, and if it still gives none, the summary lists the folded messages and names the transcript."""

from __future__ import annotations

import asyncio

from langchain.tools import tool
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.summarize import (
    SUMMARY_MARKER,
    TEXT_ONLY_RETRY,
    asummarize,
    mechanical_summary,
    summarize,
)

TRANSCRIPT = "/conversation_history/t.md"
TOOL_CALL = {"tool_calls": [{"name": "write_file", "args": {"file_path": "/s.md", "content": "x"}}]}
FOLDED = [
    HumanMessage(content="Survey the glacier papers.\nStart with the 2020 ones."),
    AIMessage(content="", tool_calls=[{"name": "fetch", "args": {"key": "g1"}, "id": "c1"}]),
    ToolMessage(content="g1 line 000 ice\ng1 line 001", tool_call_id="c1", name="fetch"),
    AIMessage(content="Read g1: the ice shelf thinned 3 m a year."),
]


def summarize_with(script: list) -> tuple[str, ScriptedChatModel]:
    summarizer = ScriptedChatModel(script=script)
    text, _ = summarize(summarizer, None, FOLDED, 10_000, TRANSCRIPT)
    return text, summarizer


def test_a_reply_without_text_is_retried_once_asking_for_text_only() -> None:
    text, summarizer = summarize_with([TOOL_CALL, "## Session intent\nGlaciers."])
    assert text == "## Session intent\nGlaciers."
    first, retry = (r.last.text for r in summarizer.requests)
    assert SUMMARY_MARKER in retry and retry == first + TEXT_ONLY_RETRY


def test_two_replies_without_text_give_a_mechanical_summary() -> None:
    text, summarizer = summarize_with([TOOL_CALL, {"content": "  "}])
    assert len(summarizer.requests) == 2
    assert text == mechanical_summary(FOLDED, TRANSCRIPT)
    assert TRANSCRIPT in text
    assert "- [user] Survey the glacier papers." in text
    assert '- [assistant] -> fetch({"key": "g1"}) id=c1' in text
    assert "- [tool fetch c1] g1 line 000 ice" in text
    assert "- [assistant] Read g1: the ice shelf thinned 3 m a year." in text


def test_a_callable_that_returns_nothing_gives_the_mechanical_summary() -> None:
    calls: list[int] = []

    def silent(messages: list) -> str:
        calls.append(len(messages))
        return ""

    text, _ = summarize(silent, None, FOLDED, 10_000, TRANSCRIPT)
    assert calls == [4] and text == mechanical_summary(FOLDED, TRANSCRIPT)


def test_the_async_twin_retries_and_falls_back_alike() -> None:
    retried = ScriptedChatModel(script=[TOOL_CALL, "Async summary."])
    text, _ = asyncio.run(asummarize(retried, None, FOLDED, 10_000, TRANSCRIPT))
    assert text == "Async summary." and len(retried.requests) == 2

    async def silent(messages: list) -> str:
        return ""

    text, _ = asyncio.run(asummarize(silent, None, FOLDED, 10_000, TRANSCRIPT))
    assert text == mechanical_summary(FOLDED, TRANSCRIPT)


def test_a_long_conversation_is_listed_by_its_ends_with_a_count_in_between() -> None:
    many = [HumanMessage(content=f"question {i}") for i in range(100)]
    text = mechanical_summary(many, TRANSCRIPT)
    assert "question 0" in text and "question 9\n" in text and "question 99" in text
    assert "question 10\n" not in text and "60 messages left out here" in text


def test_a_run_whose_summarizer_only_calls_tools_goes_on_with_the_mechanical_summary() -> None:
    @tool
    def fetch(key: str) -> str:
        """Return research notes named `key`."""
        return "\n".join(f"{key} line {i:03d} " + "y" * 55 for i in range(70))

    script = [{"tool_calls": [{"name": "fetch", "args": {"key": f"n{i}"}}]} for i in range(6)]
    model = ScriptedChatModel(
        script=[*script, "done"],
        rules=[{"when": SUMMARY_MARKER, "reply": TOOL_CALL, "repeat": True}],
        profile={"max_input_tokens": 8_000},
    )
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None)
    trace = trace_run(agent, {"messages": [{"role": "user", "content": "survey the notes"}]},
                      config={"recursion_limit": 300})
    assert trace.final_text == "done"
    event = trace.of_type("summarized")[0]
    after = [r for r in model.requests if r.tools][event["step"] - 1]
    summary = after.messages[1].text
    assert "The summarizer returned no text" in summary
    assert event["transcript_path"] in summary and "- [user] survey the notes" in summary
