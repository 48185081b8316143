"""The compression view is kept across model calls and only what changed is rebuilt: every request
must still be exactly what a view built from scratch gives (aging, cut arguments, long human
messages, window moves, summaries, a second turn on the same thread)."""

from __future__ import annotations

import itertools
import json
import re
import uuid
from typing import Any

import pytest
from langchain.tools import tool
from langgraph.checkpoint.memory import InMemorySaver

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.backends.state import bind_state_files, state_files
from jupyter_deepagent.harness.compression import middleware as compression_middleware
from jupyter_deepagent.harness.compression.middleware import ContextCompressionMiddleware
from jupyter_deepagent.harness.compression.view import ContextView
from jupyter_deepagent.harness.compression.view_entries import ViewCache
from jupyter_deepagent.harness.run_events.event_stream import run_scope

SUMMARY_RULE = {
    "when": "<conversation_to_summarize>",
    "reply": "## Session intent\nread",
    "repeat": True,
}
WINDOW = 8_000  # aging at 500 tokens, summarization at 6,800
COMPRESSION_EVENTS = ("aged", "input_offloaded", "summarized", "context")


def lines(prefix: str, count: int, width: int = 60) -> str:
    filler = ("xxx " * (width // 4 + 1))[:width]  # short words: about four characters a token
    return "\n".join(f"{prefix} {i:05d} " + filler for i in range(count))


@tool
def fetch(key: str) -> str:
    """Return the research note named `key`."""
    size = {"s": 1, "m": 40, "l": 100}[key[0]]
    return lines(key, size)


def fetches(*keys: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "fetch", "args": {"key": key}} for key in keys]}


def script() -> list[Any]:
    """Two turns: results that age, small ones, a long file write, four results together too big
    for the window, seventy at once, enough of it all to be summarized; then a long human message."""
    first: list[Any] = []
    for step in range(36):
        if step == 4:
            first.append(
                {
                    "tool_calls": [
                        {
                            "name": "write_file",
                            "args": {"file_path": "/notes.md", "content": lines("note", 60)},
                        }
                    ]
                }
            )
        elif step == 20:
            first.append(fetches("l1", "l2", "l3", "l4"))
        elif step == 28:  # so many that even their pointers only fit without previews
            first.append(fetches(*(f"m{step}-{n}" for n in range(70))))
        else:
            first.append(fetches(f"m{step}" if step % 3 else f"s{step}"))
    first.append("first turn done")
    second = [fetches(f"m{100 + step}") for step in range(8)]
    return [*first, *second, "second turn done"]


def play() -> tuple[ScriptedChatModel, list[dict[str, Any]]]:
    model = ScriptedChatModel(
        script=script(), rules=[SUMMARY_RULE], profile={"max_input_tokens": WINDOW}
    )
    agent = create_research_agent(model, tools=[fetch], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "t"}, "recursion_limit": 400}
    events = []
    for text in ("read the notes", "and now this: " + lines("human", 300)):
        trace = trace_run(agent, {"messages": [{"role": "user", "content": text}]}, config=config)
        assert trace.status == "ok"
        events.extend(trace.events)
    return model, events


def test_each_call_sends_what_a_view_built_from_scratch_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    checked: list[tuple[int, int]] = []  # (entries built by the kept view, by a fresh one)
    built = {"kept": 0, "fresh": 0}
    fresh_caches: list[ViewCache] = []
    real_entry = ContextView._entry
    real_prepare = ContextCompressionMiddleware._prepare
    files: list[Any] = []  # the thread's files as the model call found them

    def prepare(self: ContextCompressionMiddleware, request: Any) -> Any:
        files.append(state_files(request.state))
        return real_prepare(self, request)

    def counting_entry(self: ContextView, index: int) -> Any:
        built["fresh" if any(self.cache is c for c in fresh_caches[-1:]) else "kept"] += 1
        return real_entry(self, index)

    def checked_view(messages: list[Any], **options: Any) -> ContextView:
        emitted: list[tuple[str, dict[str, Any]]] = []
        forward = options["emit"]

        def emit(event_type: str, /, **fields: Any) -> None:
            emitted.append((event_type, fields))
            forward(event_type, **fields)

        before = dict(built)
        view = ContextView(messages, **{**options, "emit": emit})
        building = list(emitted)
        fresh_events: list[tuple[str, dict[str, Any]]] = []
        fresh_caches.append(ViewCache())
        with run_scope("fresh"), bind_state_files(files[-1]):  # its own writes, unseen
            fresh = ContextView(
                messages,
                **{
                    **options,
                    "cache": fresh_caches[-1],
                    "emit": lambda event_type, /, **fields: fresh_events.append(
                        (event_type, fields)
                    ),
                },
            )
        assert view.sent == fresh.sent
        assert view.update == fresh.update
        assert building == fresh_events
        checked.append((built["kept"] - before["kept"], built["fresh"] - before["fresh"]))
        return view

    monkeypatch.setattr(ContextView, "_entry", counting_entry)
    monkeypatch.setattr(ContextCompressionMiddleware, "_prepare", prepare)
    monkeypatch.setattr(compression_middleware, "ContextView", checked_view)
    model, events = play()

    kinds = {e["type"] for e in events}
    assert {"aged", "summarized", "input_offloaded"} <= kinds
    assert {e["reason"] for e in events if e["type"] == "aged"} >= {"consumed", "window"}
    assert any(e["type"] == "context" and e["pointers"] > 70 for e in events)  # the seventy
    assert {e["kind"] for e in events if e["type"] == "input_offloaded"} == {"tool_args", "human"}
    assert len(checked) >= len(model.requests) - 5  # every agent request (not the summarizer's)
    kept, fresh = sum(c[0] for c in checked), sum(c[1] for c in checked)
    assert kept * 3 < fresh  # the kept view rebuilt only what changed


def test_a_run_sends_the_same_requests_with_and_without_the_kept_view(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # each run's message ids are random, and so would be the tokens of the file names made of
    # them: both runs get the same ids
    def same_ids() -> None:
        numbers = itertools.count()
        monkeypatch.setattr(uuid, "uuid4", lambda: uuid.UUID(int=next(numbers)))

    same_ids()
    kept_model, kept_events = play()
    monkeypatch.setattr(ViewCache, "keep", lambda self, conversation, build: None)
    same_ids()
    fresh_model, fresh_events = play()

    def sent(model: ScriptedChatModel) -> str:
        return without_ids(
            [
                [
                    (
                        m.type,
                        m.content,
                        getattr(m, "tool_calls", None),
                        getattr(m, "tool_call_id", None),
                    )
                    for m in r.messages
                ]
                for r in model.requests
            ]
        )

    def compression(events: list[dict[str, Any]]) -> str:
        return without_ids(
            [
                {k: v for k, v in e.items() if k not in ("time", "run_id")}
                for e in events
                if e["type"] in COMPRESSION_EVENTS
            ]
        )

    assert sent(kept_model) == sent(fresh_model)
    assert compression(kept_events) == compression(fresh_events)


def without_ids(value: object) -> str:
    """`value` as JSON, each run's random message ids (and the file names made of them) masked."""
    return re.sub(
        r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[-0-9a-f]+",
        "<id>",
        json.dumps(value, default=str),
    )


def test_a_kept_view_follows_every_kind_of_change_to_the_record_and_the_messages() -> None:
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

    from jupyter_deepagent import StateBackend
    from jupyter_deepagent.harness.compression.state import CompressionSettings
    from jupyter_deepagent.harness.compression.tokens import ContextWindow

    def result(n: int) -> ToolMessage:
        return ToolMessage(lines(f"r{n}", 40), tool_call_id=f"c{n}", name="fetch", id=f"t{n}")

    def ask(n: int) -> AIMessage:
        return AIMessage(
            "", id=f"a{n}", tool_calls=[{"name": "fetch", "args": {"key": n}, "id": f"c{n}"}]
        )

    write = AIMessage(
        "",
        id="w",
        tool_calls=[
            {
                "name": "write_file",
                "id": "cw",
                "args": {"file_path": "/notes.md", "content": lines("note", 60)},
            }
        ],
    )
    messages: list[Any] = [
        HumanMessage(lines("human", 300), id="h"),
        write,
        ToolMessage("ok", tool_call_id="cw", id="tw"),
    ]
    for n in range(6):
        messages += [ask(n), result(n)]
    settings = CompressionSettings(age_token_limit=None)
    cache, backend, record = ViewCache(), StateBackend(), {}

    def check(messages: list[Any], window: int = 1_000_000) -> None:
        nonlocal record
        options = {
            "overhead": 0,
            "settings": settings,
            "window": ContextWindow(window, "option"),
            "emit": lambda event_type, /, **fields: None,
            "factor": 1.0,
            "transcript": "/conversation_history/t.md",
        }
        before = StateBackend(dict(backend.files))  # the files as both views find them
        view = ContextView(messages, record=record, backend=backend, cache=cache, **options)
        fresh = ContextView(messages, record=record, backend=before, cache=ViewCache(), **options)
        assert view.sent == fresh.sent
        update = view.update
        record = {
            **record,
            **update,
            "pointers": {**record.get("pointers", {}), **update.get("pointers", {})},
            "bare": sorted({*record.get("bare", ()), *update.get("bare", ())}),
            "cut_args": sorted({*record.get("cut_args", ()), *update.get("cut_args", ())}),
        }

    check(messages)
    record = {
        **record,
        "pointers": {
            "t1": "/large_tool_results/fetch-c1.txt",
            "t2": "/large_tool_results/fetch-c2.txt",
        },
    }
    check(messages)  # two results became pointers
    record = {**record, "bare": ["t1"]}
    check(messages)  # ... then lost its preview
    record = {**record, "cut_args": ["cw"]}
    check(messages)  # a file write's arguments were cut
    check(messages, window=8_000)  # a smaller window: the human message moves to a file
    messages = [*messages, ask(6), result(6)]
    check(messages, window=8_000)  # the run went on
    messages = [*messages[:5], result(9), *messages[6:]]
    check(messages, window=8_000)  # a message in the middle replaced
    messages = messages[:9]
    check(messages, window=8_000)  # rewound
    record = {**record, "pointers": {k: v for k, v in record["pointers"].items() if k != "t2"}}
    check(messages, window=8_000)  # a pointer gone (a record from elsewhere): t2 whole again
    record = {
        **record,
        "summary": {
            "content": "## Session intent\nx",
            "cutoff": 5,
            "cutoff_id": "t1",
            "count": 1,
            "transcript": "t.md",
        },
    }
    check(messages, window=8_000)  # summarized up to message 5
    record = {**record, "pointers": {}, "bare": []}
    check(messages, window=8_000)  # another record altogether


def test_an_edited_reply_keeping_its_id_and_empty_text_is_counted_again() -> None:
    """Editing a thread (a fork, `update_state`) can give a reply new tool calls under its id and
    its empty text: the request's size, and the summary decided from it, follow the new calls."""
    from langchain_core.messages import AIMessage

    from jupyter_deepagent.harness.compression.tokens import message_tokens

    def reply(content: str) -> AIMessage:
        call = {"name": "write_file", "args": {"file_path": "/a.md", "content": content}, "id": "c"}
        return AIMessage("", id="reply-1", tool_calls=[call])

    cache = ViewCache()
    short, long = reply("x"), reply(lines("note", 40))
    assert cache.count(short) < cache.count(long) == message_tokens(long)


def test_a_result_edited_to_another_text_of_its_length_is_counted_again() -> None:
    """A tool result edited under its id (a fork, `update_state`) to a text of the very same
    length, here prose become Chinese of as many characters, gets the new text's count, not
    the one remembered for the old text."""
    from langchain_core.messages import ToolMessage

    from jupyter_deepagent.harness.compression.tokens import message_tokens

    english = "word " * 400
    chinese = "冰川研究的资料" * (len(english) // 7) + "冰" * (len(english) % 7)
    assert len(chinese) == len(english)
    before = ToolMessage(english, id="result-1", tool_call_id="c", name="fetch")
    after = ToolMessage(chinese, id="result-1", tool_call_id="c", name="fetch")
    cache = ViewCache()
    assert cache.count(before) == message_tokens(before)
    assert cache.count(after) == message_tokens(after) > 2 * message_tokens(before)
