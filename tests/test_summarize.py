"""Summarization near the window limit, the transcript, the overflow fallback and the compaction
tool, driven end to end with ScriptedChatModel and a small window."""

from __future__ import annotations

import asyncio

import pytest
from langchain.tools import tool
from langchain_core.exceptions import ContextOverflowError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from jupyter_deepagent import ContextOverflow, ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.history import find_cutoff, transcript_section
from jupyter_deepagent.harness.compression.overflow import is_context_overflow
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.harness.compression.tokens import messages_tokens, tools_tokens
from jupyter_deepagent.harness.run_events.event_stream import event_sink

SUMMARY = "## Session intent\nStudy glaciers.\n## Next steps\nKeep reading."


@tool
def fetch(key: str) -> str:
    """Return a chunk of research notes named `key`."""
    return chunk(key)


def chunk(key: str, count: int = 70) -> str:
    """~5k characters (~1.3k tokens): under the offload limit of an 8k window."""
    return "\n".join(f"{key} line {i:03d} " + "y" * 55 for i in range(count))


def fetches(*keys: str) -> dict:
    return {"tool_calls": [{"name": "fetch", "args": {"key": k}} for k in keys]}


def ask(text: str = "survey the notes") -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def model_for(script: list, window: int | None = 8_000, rules: list | None = None):
    profile = {"max_input_tokens": window} if window else None
    rules = rules if rules is not None else [
        {"when": SUMMARY_MARKER, "reply": SUMMARY, "repeat": True}]
    return ScriptedChatModel(script=script, rules=rules, profile=profile)


def agent_requests(model: ScriptedChatModel) -> list:
    return [r for r in model.requests if r.tools]


def summary_requests(model: ScriptedChatModel) -> list:
    return [r for r in model.requests if not r.tools]


def run(script: list, *, window: int | None = 8_000, rules: list | None = None, config=None,
        **options):
    model = model_for(script, window, rules)
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None, **options)
    return model, trace_run(agent, ask(), config={"recursion_limit": 300, **(config or {})})


def test_past_the_trigger_older_messages_are_summarized_keeping_recent_ones() -> None:
    keys = [f"n{i}" for i in range(6)]
    model, trace = run([*(fetches(k) for k in keys), "done"])
    event = trace.of_type("summarized")[0]
    assert event["reason"] == "trigger" and event["count"] == 1
    assert event["tokens_after"] < event["tokens_before"]
    before = [e for e in trace.of_type("context") if e["step"] == event["step"] - 1][0]
    assert before["tokens"] <= before["trigger"] < event["tokens_before"]
    summarizer = summary_requests(model)[0]
    assert SUMMARY_MARKER in summarizer.last.text and "n0 line 000" in summarizer.last.text
    after = agent_requests(model)[event["step"] - 1]
    first = after.messages[1]
    assert isinstance(first, HumanMessage) and SUMMARY in first.text
    assert event["transcript_path"] in first.text
    assert isinstance(after.messages[2], AIMessage)  # the kept part starts at a turn
    kept = after.messages[2:]
    # 10% of the window (800 tokens) is less than the last turn, which is kept whole, never split
    folded = event["messages_folded"]
    assert [m.id for m in kept] == [m.id for m in trace.messages[folded : folded + 2]]
    assert kept[0].tool_calls and isinstance(kept[1], ToolMessage)
    assert messages_tokens(kept) > 800
    assert "n0 line 000" not in "".join(m.text for m in after.messages)
    assert trace.final_text == "done"


def test_a_long_history_is_summarized_below_the_trigger() -> None:
    # what a summary would fold (all but the most recent 10%) may take a sixteenth of the window
    # (2,500 tokens here): past that it is summarized, though the request is far from the
    # trigger (34,000 tokens here)
    model, trace = run([*(fetches(f"h{i}") for i in range(12)), "done"], window=40_000)
    event = trace.of_type("summarized")[0]
    assert event["reason"] == "history" and event["count"] == 1
    assert 6_000 < event["tokens_before"] < 34_000
    assert event["tokens_after"] < event["tokens_before"] - 2_000
    folded = trace.state["files"][event["transcript_path"]]["content"]
    assert "h0 line 000" in folded  # nothing is lost: the transcript has it
    assert all(r["tokens"] < 20_000 for r in trace.of_type("context"))
    # a window that is a guess (200,000 by default) is never summarized for this
    model, trace = run([*(fetches(f"g{i}") for i in range(12)), "done"], window=None)
    assert not trace.of_type("summarized")


def test_a_long_summary_is_not_summarized_again_for_its_own_size() -> None:
    # the summary (up to a tenth of the window) is folded into the next one, but only the history
    # since then counts toward its share: a summary near its limit does not refold every other call
    long_summary = "## Session intent\n" + "Study the glaciers of the range. " * 420  # ~3.5k
    rules = [{"when": SUMMARY_MARKER, "reply": long_summary, "repeat": True}]
    model, trace = run([*(fetches(f"s{i}") for i in range(20)), "done"], window=40_000,
                       rules=rules)
    summaries = trace.of_type("summarized")
    assert summaries and {event["reason"] for event in summaries} == {"history"}
    steps = [event["step"] for event in summaries]
    # each fold needs 2,500 tokens of new history: two results of ~1.3k tokens or more (were
    # the summary counted, every call would fold again)
    assert all(later - earlier >= 2 for earlier, later in zip(steps, steps[1:])), steps
    assert trace.final_text == "done"


def test_transcript_holds_every_folded_message_and_the_summary() -> None:
    keys = [f"t{i}" for i in range(6)]
    model, trace = run([*(fetches(k) for k in keys), "done"], config={
        "configurable": {"thread_id": "glacier/42"}}, checkpointer=InMemorySaver())
    event = trace.of_type("summarized")[0]
    assert event["transcript_path"] == "/conversation_history/glacier_42.md"
    text = trace.state["files"][event["transcript_path"]]["content"]
    assert text.startswith("# Conversation history")
    assert "## Summarization 1 (trigger)" in text and f"### Summary 1\n{SUMMARY}" in text
    assert "survey the notes" in text
    folded = trace.messages[: event["messages_folded"]]
    results = [m for m in folded if isinstance(m, ToolMessage)]
    assert results and all(m.text in text for m in results)  # in full, not a preview
    assert f"[tool fetch {results[0].tool_call_id}]" in text
    assert trace.messages[-2].text not in text  # the last result was never folded


def test_summarizing_again_folds_the_old_summary_in() -> None:
    rules = [{"when": SUMMARY_MARKER, "reply": "FIRST-SUMMARY"},
             {"when": SUMMARY_MARKER, "reply": "SECOND-SUMMARY", "repeat": True}]
    keys = [f"r{i}" for i in range(12)]
    model, trace = run([*(fetches(k) for k in keys), "done"], rules=rules)
    events = trace.of_type("summarized")
    assert [e["count"] for e in events][:2] == [1, 2]
    assert "FIRST-SUMMARY" in summary_requests(model)[1].last.text
    second = agent_requests(model)[events[1]["step"] - 1]
    sent = "".join(m.text for m in second.messages)
    assert "SECOND-SUMMARY" in sent and "FIRST-SUMMARY" not in sent
    assert "Summary 2 of the conversation" in second.messages[1].text
    transcript = trace.state["files"][events[0]["transcript_path"]]["content"]
    assert transcript.index("## Summarization 1") < transcript.index("## Summarization 2")
    assert "r0 line 000" in transcript and "r3 line 000" in transcript
    assert len(trace.messages) == 2 + 2 * len(keys)  # the checkpoint keeps every message


def test_active_todo_list_survives_summarization() -> None:
    todos = [{"content": "read every note", "status": "in_progress"},
             {"content": "write the report", "status": "pending"}]
    script = [{"tool_calls": [{"name": "write_todos", "args": {"todos": todos}}]},
              *(fetches(f"d{i}") for i in range(6)), "done"]
    model, trace = run(script)
    event = trace.of_type("summarized")[0]
    after = agent_requests(model)[event["step"] - 1]
    assert not any(c["name"] == "write_todos" for m in after.messages[2:]
                   for c in getattr(m, "tool_calls", []))
    summary = after.messages[1].text
    assert "[in_progress] read every note" in summary and "[pending] write the report" in summary


def test_tool_calls_and_results_are_never_split() -> None:
    script = [fetches("p0", "p1"), fetches("p2"), fetches("p3", "p4"), fetches("p5"),
              fetches("p6", "p7"), fetches("p8"), "done"]
    model, trace = run(script)
    assert trace.of_type("summarized")
    for request in agent_requests(model):
        called = set()
        for message in request.messages:
            if isinstance(message, AIMessage):
                called |= {c["id"] for c in message.tool_calls}
            if isinstance(message, ToolMessage):
                assert message.tool_call_id in called
        answered = {m.tool_call_id for m in request.messages if isinstance(m, ToolMessage)}
        assert called == answered


def test_with_no_known_window_it_warns_triggers_at_170k_and_keeps_six_messages() -> None:
    big = 18_000 * 4  # ~17k tokens each: under the 20k offload limit
    script = [fetches(f"w{i}") for i in range(11)] + ["done"]
    model = model_for(script, window=None)

    @tool
    def fetch(key: str) -> str:
        """Return a big chunk."""
        return key + " " + "xxx " * (big // 4)  # short words: about four characters a token

    trace = trace_run(create_research_agent(model, tools=[fetch], age_token_limit=None), ask(),
                      config={"recursion_limit": 300})
    [warning] = [e for e in trace.of_type("warning") if e["source"] == "context_window"]
    assert "200,000" in warning["message"] and "context_window=" in warning["message"]
    contexts = trace.of_type("context")
    assert {(e["window"], e["trigger"], e["window_source"]) for e in contexts} == {
        (200_000, 170_000, "default")}
    [event] = trace.of_type("summarized")
    assert event["tokens_before"] > 170_000
    after = agent_requests(model)[event["step"] - 1]
    assert len(after.messages) == 2 + 6  # system, summary, six kept messages


def small(key: str) -> str:
    return chunk(key, 20)  # ~1.5k characters


@tool
def fetch_small(key: str) -> str:
    """Return a short chunk of notes named `key`."""
    return small(key)


def test_overflow_summarizes_and_retries_once() -> None:
    script = [{"tool_calls": [{"name": "fetch_small", "args": {"key": f"o{i}"}}]}
              for i in range(4)] + ["done"]
    script.insert(3, {"raise": "context_overflow"})
    model = model_for(script)
    trace = trace_run(create_research_agent(model, tools=[fetch_small]), ask())
    [overflow] = trace.of_type("context_overflow")
    assert overflow["action"] == "retry" and "ContextOverflowError" in overflow["error"]
    event = trace.of_type("summarized")[0]
    assert event["reason"] == "overflow" and event["step"] == 4
    attempts = [e for e in trace.of_type("context") if e["step"] == 4]
    assert [e["attempt"] for e in attempts] == [1, 2]
    assert attempts[1]["tokens"] < attempts[0]["tokens"]
    assert attempts[1]["window_source"] == "learned" and attempts[1]["window"] < 8_000
    retried = agent_requests(model)[-2]
    assert SUMMARY in retried.messages[1].text
    later = [e for e in trace.of_type("context") if e["step"] == 5]
    assert [(e["window"], e["window_source"]) for e in later] == [
        (attempts[1]["window"], "learned")]  # the learned window stays for the thread
    assert trace.final_text == "done"


def test_a_second_overflow_raises_a_clear_error() -> None:
    script = [fetches("f0"), fetches("f1"), fetches("f2"),
              {"raise": "context_overflow"}, {"raise": "context_overflow"}, "never"]
    model = model_for(script)
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None)
    events: list = []
    with pytest.raises(ContextOverflow) as raised:
        trace_run(agent, ask(), on_event=events.append)
    message = str(raised.value)
    assert "longer than its context window" in message and "window 8,000 tokens" in message
    assert "summarized older messages" in message and "context_window=" in message
    assert isinstance(raised.value.__cause__, ContextOverflowError)
    assert [e["action"] for e in events if e["type"] == "context_overflow"] == ["retry", "raise"]
    assert model.remaining == 1


def test_overflow_with_nothing_to_fold_raises_without_a_pointless_retry() -> None:
    model = model_for([{"raise": "context_overflow"}, "never"])
    with pytest.raises(ContextOverflow, match="nothing more could be summarized"):
        trace_run(create_research_agent(model), ask())
    assert model.remaining == 1


def test_summarizer_can_be_another_model_or_a_callable() -> None:
    helper = ScriptedChatModel(rules=[{"when": SUMMARY_MARKER, "reply": "BY-HELPER",
                                       "repeat": True}])
    script = [*(fetches(f"s{i}") for i in range(6)), "done"]
    model, trace = run(script, rules=[], summarizer=helper)
    assert not summary_requests(model) and helper.requests
    assert "BY-HELPER" in agent_requests(model)[-1].messages[1].text

    seen: list = []

    def summarize(messages):
        seen.append(messages)
        return "BY-CALLABLE"

    model, trace = run(script, rules=[], summarizer=summarize)
    assert "BY-CALLABLE" in agent_requests(model)[-1].messages[1].text
    assert isinstance(seen[0][0], HumanMessage) and "survey the notes" in seen[0][0].text


def test_summarizer_tokens_are_tagged_so_a_ui_can_hide_them() -> None:
    model = model_for([*(fetches(f"m{i}") for i in range(6)), "done"])
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None)
    tagged, untagged = [], []
    for message, metadata in agent.stream(ask(), {"recursion_limit": 300},
                                          stream_mode="messages"):
        if metadata.get("lc_source") == "summarization":
            tagged.append(message.text)
        elif isinstance(message, AIMessage):
            untagged.append(message.text)
    assert "".join(tagged) == SUMMARY * len(summary_requests(model)) and tagged
    assert "done" in "".join(untagged) and SUMMARY not in "".join(untagged)


def test_compact_tool_refuses_politely_when_the_context_is_small() -> None:
    script = [{"tool_calls": [{"name": "compact_conversation", "args": {}}]}, "ok"]
    model, trace = run(script, window=20_000, compaction_tool=True)
    assert "compact_conversation" in agent_requests(model)[0].tool_names
    [refused] = trace.of_type("compaction_refused")
    assert refused["threshold"] == 17_000 // 2 and refused["tokens"] < refused["threshold"]
    reply = agent_requests(model)[1].messages[-1]
    assert reply.text.startswith("Not compacting yet") and "8,500" in reply.text
    assert not trace.of_type("summarized")
    model, _ = run(["ok"], window=20_000)
    assert "compact_conversation" not in agent_requests(model)[0].tool_names


def test_compact_tool_summarizes_before_the_next_step_when_worth_it() -> None:
    # 12k window: past half the trigger, short of the size at which history is summarized
    script = [*(fetches(f"c{i}") for i in range(3)),
              {"tool_calls": [{"name": "compact_conversation", "args": {}}]}, "ok"]
    model, trace = run(script, window=12_000, compaction_tool=True)
    assert not trace.of_type("compaction_refused")
    [event] = trace.of_type("summarized")
    assert event["reason"] == "compact" and event["step"] == 5
    assert event["tokens_before"] < 10_200  # under the trigger: only the tool asked for it
    assert SUMMARY in agent_requests(model)[-1].messages[1].text


def test_async_run_offloads_and_ages_results() -> None:
    @tool
    async def fetch_big(key: str) -> str:
        """Return a large chunk of notes."""
        return chunk(key, 400)

    script = [{"tool_calls": [{"name": "fetch_big", "args": {"key": "big"}}]},
              *(fetches(f"a{i}") for i in range(4)), "done"]
    model = model_for(script, rules=[])
    agent = create_research_agent(model, tools=[fetch, fetch_big], age_token_limit=300)
    events: list = []
    with event_sink(events.append):
        state = asyncio.run(agent.ainvoke(ask(), {"recursion_limit": 300}))
    assert state["messages"][-1].text == "done"
    assert {"offloaded", "aged", "context"} <= {event["type"] for event in events}
    files = [data["content"] for data in state["files"].values()]
    assert chunk("big", 400) in files and chunk("a0") in files


def test_async_run_summarizes_with_an_async_summarizer() -> None:
    async def summarize(messages):
        return "ASYNC-SUMMARY"

    model = model_for([*(fetches(f"s{i}") for i in range(6)), "done"], rules=[])
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None,
                                  summarizer=summarize)
    state = asyncio.run(agent.ainvoke(ask(), {"recursion_limit": 300}))
    assert state["messages"][-1].text == "done"
    assert "ASYNC-SUMMARY" in agent_requests(model)[-1].messages[1].text


def test_summarizer_given_as_a_model_string(tmp_path) -> None:
    script = tmp_path / "summarizer.yaml"
    script.write_text(f"rules:\n  - when: '{SUMMARY_MARKER}'\n    reply: FROM-STRING\n"
                      "    repeat: true\n")
    model, _ = run([*(fetches(f"y{i}") for i in range(6)), "done"], rules=[],
                   summarizer=f"scripted:{script}")
    assert "FROM-STRING" in agent_requests(model)[-1].messages[1].text


def test_find_cutoff_keeps_whole_turns_within_the_budget() -> None:
    kinds = ["human", "ai", "tool", "tool", "ai", "tool", "ai", "tool"]
    tokens = [10, 5, 100, 100, 5, 50, 5, 50]
    assert find_cutoff(kinds, tokens, 120, 6) == 4  # the last two turns fit in 120
    assert find_cutoff(kinds, tokens, 10, 6) == 6  # the last turn is kept even over budget
    assert find_cutoff(kinds, tokens, None, 3) == 4  # by count: a turn start at or before
    assert find_cutoff(["tool", "tool"], [1, 1], 10, 2) == 0


def test_transcript_section_points_to_files_for_offloaded_text() -> None:
    messages = [HumanMessage("question"), ToolMessage("huge", tool_call_id="c1", name="fetch")]
    text = transcript_section(3, "trigger", messages, 10, {11: "/large_tool_results/x.txt"}, "S")
    assert "## Summarization 3 (trigger): messages 11 to 12" in text
    assert "question" in text and "(full text in /large_tool_results/x.txt)" in text
    assert "huge" not in text and text.endswith("### Summary 3\nS\n")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (ContextOverflowError("too long"), True),
        (ValueError("This model's maximum context length is 8192 tokens."), True),
        (RuntimeError("prompt is too long: 250000 tokens > 200000 maximum"), True),
        (RuntimeError("The input token count (1200000) exceeds the maximum number of tokens"),
         True),
        (RuntimeError("Rate limit: too many tokens per minute"), False),
        (RuntimeError("connection reset"), False),
    ],
)
def test_context_overflow_is_recognised_across_providers(error: Exception, expected: bool) -> None:
    assert is_context_overflow(error) is expected


def test_every_request_fits_the_window() -> None:
    model, _ = run([*(fetches(f"z{i}") for i in range(10)), "done"])
    for request in model.requests:
        assert messages_tokens(request.messages) + tools_tokens(request.tools) <= 8_000


def test_sync_and_async_summaries_of_the_same_messages_agree() -> None:
    from jupyter_deepagent.harness.compression.summarize import asummarize, summarize

    folded = [HumanMessage(content="Survey glaciers."), AIMessage(content="Read g1: it thinned.")]
    sync_model = ScriptedChatModel(script=[SUMMARY])
    async_model = ScriptedChatModel(script=[SUMMARY])
    sync = summarize(None, sync_model, folded, 4_000, "/conversation_history/t.md")
    done = asyncio.run(asummarize(None, async_model, folded, 4_000, "/conversation_history/t.md"))
    assert sync == done
    assert sync[0] == SUMMARY
    assert sync_model.requests[0].messages == async_model.requests[0].messages


def test_an_async_summarizer_in_a_sync_run_says_to_use_ainvoke() -> None:
    from jupyter_deepagent.harness.compression.summarize import summarize

    async def summarizer(messages: list) -> str:
        return "never awaited"

    with pytest.raises(TypeError, match="ainvoke"):
        summarize(summarizer, None, [HumanMessage(content="hi")], 4_000, "/t.md")


def test_one_huge_recent_file_write_is_moved_to_a_file_without_a_summarization_call() -> None:
    content = "".join(f"row {i:05d} of the survey table\n" for i in range(6_000))
    model = ScriptedChatModel(
        script=[
            {"tool_calls": [{"name": "write_file",
                             "args": {"file_path": "/survey.md", "content": content}}]},
            "done",
        ],
        rules=[{"when": SUMMARY_MARKER, "reply": SUMMARY, "repeat": True}],
        profile={"max_input_tokens": 8_000},
    )
    trace = trace_run(create_research_agent(model), ask("hi"))
    assert trace.of_type("summarized") == []
    assert not any(SUMMARY_MARKER in r.last.text for r in model.requests)
    assert len(model.requests) == 2
    last = model.requests[-1]
    assert messages_tokens([SystemMessage(last.system), *last.messages]) + tools_tokens(
        last.tools
    ) <= 8_000
    assert trace.state["files"]["/survey.md"]["content"] == content
    assert trace.final_text == "done"


def test_the_summarizer_is_sent_each_aged_result_as_one_line_with_its_path() -> None:
    # results aged to pointers reach the summarizer as their path, size and first line, without
    # the reading instructions meant for the agent; the transcript names each file
    script = [*(fetches(f"p{i}") for i in range(45)), "done"]
    model = model_for(script)
    agent = create_research_agent(model, tools=[fetch], age_token_limit=500)
    trace = trace_run(agent, ask(), config={"recursion_limit": 300})
    aged = {event["path"] for event in trace.of_type("aged")}
    event = trace.of_type("summarized")[0]
    prompt = summary_requests(model)[0].last.text
    named = [path for path in aged if f"(in {path}, " in prompt]
    assert named and "read_file or grep it to see it again" not in prompt
    assert "p0 line 000" in prompt  # the first line of the result, the file's own
    transcript = trace.state["files"][event["transcript_path"]]["content"]
    assert all(f"(full text in {path})" in transcript for path in named)


@pytest.mark.parametrize("preview", [0, 1, 10])
def test_summarizer_text_reads_both_kinds_of_pointer(preview: int) -> None:
    from jupyter_deepagent.harness.compression.offload import (
        Offloaded,
        aged_pointer_text,
        pointer_text,
    )
    from jupyter_deepagent.harness.compression.summarize import render_message, summarizer_text

    text = chunk("q0", 200)
    stored = Offloaded("/large_tool_results/fetch-c1.txt", 4_321, 200, len(text))
    pointers = [
        aged_pointer_text(stored, "fetch", text, preview),
        "This result was too large for the conversation. "
        + pointer_text(stored, "The full result of fetch", text, preview),
    ]
    for pointer in pointers:
        message = ToolMessage(content=pointer, name="fetch", tool_call_id="c1")
        line = summarizer_text(message)
        assert line.startswith("[tool fetch c1] (in /large_tool_results/fetch-c1.txt, 4,321 tokens")
        assert "\n" not in line and len(line) < len(render_message(message))
        assert ("q0 line 000" in line) is (preview > 0)
    plain = ToolMessage(content=text, name="fetch", tool_call_id="c2")
    assert summarizer_text(plain) == render_message(plain)  # a whole result is sent whole
