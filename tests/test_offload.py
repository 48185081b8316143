"""Offloading: large tool results go to files at once, consumed ones age into pointers, long human
messages and old file-writing arguments leave the conversation, and nothing is lost."""

from __future__ import annotations

import json

import pytest
from langchain.agents.middleware.types import ToolCallRequest
from langchain.tools import tool
from langchain_core.messages import AIMessage, ToolMessage

from jupyter_deepagent import ScriptedChatModel, StateBackend, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.middleware import ContextCompressionMiddleware
from jupyter_deepagent.harness.compression.offload import (
    line_count,
    safe_name,
    short_id,
    sniff_extension,
)

SUMMARY_RULE = {"when": "<conversation_to_summarize>", "reply": "## Session intent\nx",
                "repeat": True}
OUTPUTS: dict[str, str] = {}


@tool
def fetch(key: str) -> str:
    """Return the stored output named `key`."""
    return OUTPUTS[key]


def lines(prefix: str, count: int, width: int = 60) -> str:
    """`count` numbered lines of about `width` / 4 tokens each (short words: four characters
    a token, as real tokenizers count them; a run of one letter would count far fewer)."""
    filler = ("xxx " * (width // 4 + 1))[:width]
    return "\n".join(f"{prefix} {i:05d} " + filler for i in range(count))


def calls(*keys: str, ids: tuple[str, ...] = ()) -> dict:
    made = []
    for position, key in enumerate(keys):
        call = {"name": "fetch", "args": {"key": key}}
        if position < len(ids):
            call["id"] = ids[position]
        made.append(call)
    return {"tool_calls": made}


def ask(text: str = "research this") -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def run(script: list, window: int, **options):
    model = ScriptedChatModel(script=script, rules=[SUMMARY_RULE],
                              profile={"max_input_tokens": window})
    agent = create_research_agent(model, tools=[fetch], **options)
    return model, trace_run(agent, ask(), config={"recursion_limit": 200})


def test_result_over_20k_tokens_is_offloaded_with_a_ten_line_preview() -> None:
    OUTPUTS["big"] = lines("big", 1_200)  # ~86k chars, ~21.6k tokens
    OUTPUTS["under"] = lines("under", 1_000)[:79_000]  # just under 20k tokens
    model, trace = run([calls("big"), calls("under"), "done"], 1_000_000)
    [event] = trace.of_type("offloaded")
    assert event["tool"] == "fetch" and event["tokens"] > 20_000
    assert event["path"] == f"/large_tool_results/fetch-{event['tool_call_id']}.txt"
    files = trace.state["files"]
    assert files[event["path"]]["content"] == OUTPUTS["big"]
    stub = model.requests[1].messages[-1]
    assert isinstance(stub, ToolMessage) and event["path"] in stub.text
    assert f"{event['tokens']:,} tokens" in stub.text and "1,200 lines" in stub.text
    preview = stub.text.split("First 10 lines:\n", 1)[1].splitlines()
    assert preview == OUTPUTS["big"].splitlines()[:10]
    assert "big 00010" not in stub.text
    assert OUTPUTS["under"] in model.requests[2].messages[-1].text  # under the limit: kept whole
    checkpointed = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert checkpointed[0].text == stub.text  # the stub replaced the result in the conversation


@pytest.mark.parametrize(
    ("content", "ext"),
    [
        (json.dumps([{"id": i, "text": "y" * 50} for i in range(200)]), "json"),
        ("a,b,c\n" + "\n".join(f"{i},{i * 2},word" for i in range(2_000)), "csv"),
        ("# Report\n\n" + "\n".join(f"- finding {i} with **bold** text" for i in range(600)), "md"),
        (lines("plain", 300), "txt"),
    ],
)
def test_offloaded_file_extension_comes_from_the_content(content: str, ext: str) -> None:
    OUTPUTS["typed"] = content
    model, trace = run([calls("typed"), "done"], 8_000)
    [event] = trace.of_type("offloaded")
    assert event["path"].endswith(f".{ext}")
    assert trace.state["files"][event["path"]]["content"] == content


@pytest.mark.parametrize(
    ("text", "ext"),
    [("{not json", "txt"), ('{"a": 1}', "json"), ("x,y\n1,2\n3", "txt"), ("x,y\n1,2\n3,4", "csv"),
     ("## Title\n\nSee [the docs](http://x).", "md"), ("", "txt"),
     ("[" * 100_000 + "]" * 100_000, "txt")],  # deeper than the JSON parser goes: not an error
)
def test_sniff_extension(text: str, ext: str) -> None:
    assert sniff_extension(text) == ext


@pytest.mark.parametrize(
    ("text", "ext"),
    [
        ("# Notes\nglacier melt " * 40, "txt"),  # one heading in prose is one mark
        ("# Notes\n\n- a finding\nmore prose", "md"),
        ("# Notes\n\n\n  \u0663. an Arabic-Indic numbered item", "md"),
        ("intro\n> a quote\n```\ncode\n```", "md"),
        ("| a | b |\n|---|---|", "md"),
        ("| a table row with **bold** in it |", "txt"),  # one mark: the row takes the bold in
        ("prose\n\n\t\n- item after blank lines\n#not a heading\n", "txt"),
    ],
)
def test_markdown_is_told_by_two_marks_at_line_starts_or_inline(text: str, ext: str) -> None:
    assert sniff_extension(text) == ext


@pytest.mark.parametrize(
    "text",
    ["", "one", "one\n", "a\nb", "a\r\nb\r\n", "a\rb", "a\x0cb\n", "é\u2028b", "\n\n", "x\n" * 500],
)
def test_a_pointer_counts_the_lines_as_read_file_pages_them(text: str) -> None:
    assert line_count(text) == len(text.splitlines())


def test_unsafe_long_and_empty_ids_become_safe_distinct_names() -> None:
    assert short_id("call_123", "a") == "call_123"
    for raw in ("", "../../etc/passwd", "x" * 300, "id with spaces/and\\slashes", "é中"):
        name = short_id(raw, "content")
        assert name and all(c.isascii() and (c.isalnum() or c in "-_") for c in name)
        assert len(name) <= 24 + 9
    assert short_id("", "one") != short_id("", "two")
    assert short_id("../a", "x") != short_id("../b", "x")
    assert safe_name("", "tool") == "tool" and safe_name("a/b c", "tool") == "a_b_c"


def test_two_results_with_the_same_unsafe_id_never_collide() -> None:
    OUTPUTS["one"], OUTPUTS["two"] = lines("one", 500), lines("two", 500)
    unsafe = "../../" + "z" * 200
    model, trace = run(
        [calls("one", ids=(unsafe,)), calls("two", ids=(unsafe,)), calls("one", ids=("same",)),
         calls("one", ids=("same",)), "done"],
        8_000,
    )
    paths = [event["path"] for event in trace.of_type("offloaded")]
    assert len(paths) == len(set(paths)) == 4
    assert all(p.startswith("/large_tool_results/fetch-") and ".." not in p for p in paths)
    files = trace.state["files"]
    expected = [OUTPUTS[key] for key in ("one", "two", "one", "one")]
    assert [files[p]["content"] for p in paths] == expected
    assert paths[3] == paths[2].replace(".txt", "-2.txt")


def test_parallel_results_with_empty_ids_get_their_own_files() -> None:
    """Providers sometimes send empty tool-call ids; parallel calls see the same files."""
    middleware = ContextCompressionMiddleware(
        StateBackend(), ScriptedChatModel(profile={"max_input_tokens": 8_000})
    )
    state = {"messages": [], "files": {}}
    updates = []
    for text in (lines("a", 500), lines("b", 500)):
        request = ToolCallRequest(
            tool_call={"name": "fetch", "args": {}, "id": "", "type": "tool_call"},
            tool=None, state=state, runtime=None,
        )
        result = ToolMessage(content=text, tool_call_id="", name="fetch")
        updates.append(middleware.wrap_tool_call(request, lambda _, r=result: r).update)
    paths = [next(iter(update["files"])) for update in updates]
    assert len(set(paths)) == 2 and all(p.startswith("/large_tool_results/fetch-noid-")
                                        for p in paths)
    assert [u["files"][p]["content"][:5] for u, p in zip(updates, paths)] == ["a 000", "b 000"]
    assert [u["messages"][0].text.count(p) > 0 for u, p in zip(updates, paths)] == [True, True]


def test_filesystem_tools_are_never_offloaded() -> None:
    big = lines("file", 400, 200)
    model = ScriptedChatModel(
        script=[{"tool_calls": [{"name": "read_file", "args": {"file_path": "/big.txt"}}]}, "ok"],
        profile={"max_input_tokens": 200_000},
    )
    agent = create_research_agent(model, offload_token_limit=1_000, age_token_limit=None)
    trace = trace_run(agent, {**ask(), "files": {"/big.txt": {"content": big,
                                                             "modified_at": "2024-01-01"}}})
    assert not trace.of_type("offloaded")
    assert "file 00000" in model.requests[1].messages[-1].text


def test_consumed_result_ages_into_a_pointer_after_keep_recent_turns() -> None:
    OUTPUTS["mid"] = lines("mid", 40)  # ~2.7k chars: under the offload limit, over 500 tokens
    OUTPUTS["small"] = "ok"
    script = [calls("mid"), calls("small"), calls("small"), calls("small"), calls("small"), "done"]
    model, trace = run(script, 8_000, age_token_limit=500, keep_recent_turns=3)
    whole = [OUTPUTS["mid"] in r.messages[3].text for r in model.requests[1:]]
    assert whole == [True, True, True, False, False]  # seen whole by three model calls
    [event] = trace.of_type("aged")
    assert event["reason"] == "consumed" and event["replies"] == 3 and event["step"] == 5
    pointer = model.requests[4].messages[3]
    assert event["path"] in pointer.text and "mid 00000" in pointer.text  # path + first lines
    assert "mid 00003" not in pointer.text
    assert trace.state["files"][event["path"]]["content"] == OUTPUTS["mid"]
    assert OUTPUTS["mid"] in [m.text for m in trace.messages]  # the checkpoint keeps it whole


def test_results_age_together_in_one_batch_and_the_request_repeats_the_one_before() -> None:
    # a provider's prompt cache bills again whatever follows the first changed message: results
    # age in one batch (a sixteenth of the window: 4,000 tokens here), not one by one
    for number in range(8):
        OUTPUTS[f"m{number}"] = lines(f"m{number}", 40)  # ~680 tokens each
    script = [calls(f"m{number}") for number in range(8)] + ["done"]
    model, trace = run(script, 64_000, age_token_limit=500)
    aged = trace.of_type("aged")
    assert len(aged) == 6 and len({event["step"] for event in aged}) == 1
    batch = aged[0]["step"] - 1  # the request that ages them
    sent = [[message.text for message in request.messages] for request in model.requests]
    for before, after in zip(sent[: batch - 1], sent[1:batch], strict=True):
        assert after[: len(before)] == before  # until then, each request extends the last
    assert sum("[Already read" in text for text in sent[batch]) == 6
    for later in sent[batch + 1 :]:  # the pointers, once written, are sent byte for byte
        assert later[: len(sent[batch])] == sent[batch]


def test_aging_can_be_turned_off_or_made_faster() -> None:
    OUTPUTS["mid"], OUTPUTS["small"] = lines("mid", 40), "ok"
    script = [calls("mid"), calls("small"), calls("small"), "done"]
    model, trace = run(script, 8_000, age_token_limit=None)
    assert not trace.of_type("aged")
    model, trace = run(script, 8_000, age_token_limit=500, keep_recent_turns=1)
    assert [e["step"] for e in trace.of_type("aged")] == [3]
    assert OUTPUTS["mid"] in model.requests[1].messages[3].text


def test_human_message_over_the_limit_goes_to_conversation_history() -> None:
    text = lines("human", 2_900)  # ~203k chars, ~51k tokens
    model = ScriptedChatModel(script=["read it"], profile={"max_input_tokens": 1_000_000})
    trace = trace_run(create_research_agent(model), ask(text))
    [event] = trace.of_type("input_offloaded")
    assert event["kind"] == "human" and event["path"].startswith("/conversation_history/human-")
    assert trace.state["files"][event["path"]]["content"] == text
    sent = model.requests[0].messages[-1].text
    assert event["path"] in sent and "human 00009" in sent and "human 00010" not in sent
    small = ScriptedChatModel(script=["ok"], profile={"max_input_tokens": 1_000_000})
    assert not trace_run(create_research_agent(small), ask(text[:190_000])).of_type(
        "input_offloaded")


def test_a_long_file_write_is_cut_before_the_history_it_lengthens_is_summarized() -> None:
    # ~50k tokens of write_file arguments in a 100k window: over the older history's 15%, under
    # the trigger. Cutting them (the file has them) needs no model call; summarizing would
    body = "x" * 200_000
    OUTPUTS["small"] = "ok"
    script = [{"tool_calls": [{"name": "write_file",
                               "args": {"file_path": "/big.md", "content": body}}]},
              calls("small"), calls("small"), "done"]
    model, trace = run(script, 100_000)
    assert not trace.of_type("summarized")
    [cut] = [e for e in trace.of_type("input_offloaded") if e["kind"] == "tool_args"]
    assert cut["path"] == "/big.md" and trace.state["files"]["/big.md"]["content"] == body
    sent = [json.dumps(getattr(m, "tool_calls", [])) for m in model.requests[-1].messages]
    assert all(body not in text for text in sent)


def test_old_file_writes_keep_only_a_pointer_once_past_the_trigger() -> None:
    body = lines("note", 60)  # ~4k characters
    OUTPUTS["chunk"] = lines("chunk", 55)  # ~4k chars, ~1k tokens: the 4th call passes 85%
    script = [{"tool_calls": [{"name": "write_file",
                               "args": {"file_path": "/notes.md", "content": body}}]},
              calls("chunk"), calls("chunk"), calls("chunk"), "done"]
    model, trace = run(script, 8_000, age_token_limit=None)
    [event] = [e for e in trace.of_type("input_offloaded") if e["kind"] == "tool_args"]
    assert event["tool"] == "write_file" and event["path"] == "/notes.md"
    assert trace.state["files"]["/notes.md"]["content"] == body
    before, after = model.requests[event["step"] - 2], model.requests[event["step"] - 1]
    def written(request) -> str:
        [call] = [c for m in request.messages if isinstance(m, AIMessage) for c in m.tool_calls
                  if c["name"] == "write_file"]
        return call["args"]["content"]

    assert written(before) == body
    assert "already applied to /notes.md" in written(after) and len(written(after)) < 200
    # cutting the arguments was enough to come under the trigger (the older history, past its
    # 2,000 tokens, may still be folded for its own size)
    assert not [e for e in trace.of_type("summarized") if e["reason"] == "trigger"]


def test_results_too_big_together_for_the_window_are_moved_out_even_if_recent() -> None:
    for key in "abcd":
        OUTPUTS[key] = lines(key, 100)  # ~7k chars each: each under the limit, all four too many
    model, trace = run([calls("a", "b", "c", "d"), "done"], 8_000)
    assert not trace.of_type("offloaded")
    moved = trace.of_type("aged")
    assert moved and {e["reason"] for e in moved} == {"window"} and moved[0]["replies"] == 0
    context = trace.of_type("context")[-1]
    assert context["tokens"] <= 8_000 and context["pointers"] == len(moved)
    files = trace.state["files"]
    assert all(files[e["path"]]["content"] in OUTPUTS.values() for e in moved)
    sent = "\n".join(m.text for m in model.requests[-1].messages)
    for key in "abcd":
        assert OUTPUTS[key] in sent or OUTPUTS[key] in [f["content"] for f in files.values()]
