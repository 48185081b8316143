"""ScriptedChatModel: the deterministic model that tests, demos and CI run on."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path

import pytest
from langchain_core.exceptions import ContextOverflowError, ModelError
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from jupyter_deepagent import ScriptedChatModel, ScriptError
from jupyter_deepagent.harness.compression.tokens import approx_tokens, messages_tokens
from jupyter_deepagent.harness.models.scripted_model import ScriptedRequest

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
def write_file(file_path: str, content: str) -> str:
    """Write a file."""
    return f"wrote {len(content)} characters to {file_path}"


def test_plays_steps_in_order() -> None:
    model = ScriptedChatModel(script=["first", AIMessage(content="second"), {"content": "third"}])

    replies = [model.invoke(f"question {i}").content for i in range(3)]

    assert replies == ["first", "second", "third"]
    assert model.remaining == 0


def test_rule_beats_script_order_and_is_consumed() -> None:
    model = ScriptedChatModel(
        script=["step one", "step two"],
        rules=[{"when": "weather", "reply": "It is sunny."}],
    )

    assert model.invoke("what is the weather?").content == "It is sunny."
    assert model.invoke("what is the weather again?").content == "step one"
    assert model.invoke("hello").content == "step two"


def test_repeat_rule_answers_every_time() -> None:
    model = ScriptedChatModel(rules=[{"when": "ping", "reply": "pong", "repeat": True}])

    assert [model.invoke("ping").content for _ in range(3)] == ["pong"] * 3


def test_rule_matches_tool_message_text() -> None:
    model = ScriptedChatModel(script=["not this"], rules=[{"when": "42 rows", "reply": "Done."}])
    messages = [
        HumanMessage("load it"),
        AIMessage("", tool_calls=[{"name": "load", "args": {}, "id": "c1"}]),
        ToolMessage("loaded 42 rows", tool_call_id="c1"),
    ]

    assert model.invoke(messages).content == "Done."


def test_when_system_tells_a_subagent_from_the_parent() -> None:
    model = ScriptedChatModel(
        script=["parent answer"],
        rules=[{"when_system": "You are a subagent", "reply": "subagent report", "repeat": True}],
    )

    sub = model.invoke([SystemMessage("You are a subagent."), HumanMessage("research X")])
    parent = model.invoke([SystemMessage("You are the lead."), HumanMessage("research X")])

    assert (sub.content, parent.content) == ("subagent report", "parent answer")


def test_exhausted_script_says_which_call_and_what_to_do() -> None:
    model = ScriptedChatModel(script=["only reply"])
    model.invoke("first")

    with pytest.raises(ScriptError) as info:
        model.invoke("x" * 150 + "TAIL" + "y" * 300)

    message = str(info.value)
    assert "call 2" in message
    assert "1 steps" in message
    assert "x" * 150 + "TAIL" in message
    assert "y" * 300 not in message
    assert "add a step" in message.lower()
    assert "rule" in message


_TASK = {"subagent_type": "general-purpose", "description": "Research the Alps stations"}


def _research(model: ScriptedChatModel) -> None:
    from jupyter_deepagent import create_research_agent, trace_run

    trace_run(create_research_agent(model), {"messages": [{"role": "user", "content": "go"}]})


def test_a_subagent_without_a_rule_eats_the_main_step_and_the_error_says_so() -> None:
    # the main agent's answer was written as step 1, but the subagent asks first and takes it
    model = ScriptedChatModel(script=[{"tool_calls": [{"name": "task", "args": _TASK}]}, "Done."])

    with pytest.raises(ScriptError) as info:
        _research(model)

    message = str(info.value)
    assert "call 3 (the main agent): the script is exhausted" in message
    assert "step 0 by the main agent (call 1)" in message
    assert "step 1 by subagent 'general-purpose' (call 2, task 'Research the Alps stations')" in (
        message
    )
    assert "which was written for the main agent" in message
    assert "rules: [{when: 'Research the Alps stations', reply: '...'}]" in message
    assert "docs/scripted-models.md" in message


def test_a_rule_on_the_subagent_task_leaves_the_main_steps_to_the_main_agent() -> None:
    model = ScriptedChatModel(
        script=[{"tool_calls": [{"name": "task", "args": _TASK}]}, "Done."],
        rules=[{"when": "Research the Alps", "reply": "Alps: warming 0.51 per decade."}],
    )

    _research(model)

    assert model.remaining == 0
    subagent_request = model.requests[1]
    assert subagent_request.last.text == "Research the Alps stations"


def test_an_exhausted_main_agent_alone_is_told_to_add_a_step() -> None:
    model = ScriptedChatModel(script=[{"tool_calls": [{"name": "ls", "args": {"path": "/"}}]}])

    with pytest.raises(ScriptError) as info:
        _research(model)

    message = str(info.value)
    assert "call 2 (the main agent)" in message
    assert "Steps drawn: step 0 by the main agent (call 1)." in message
    assert "Add a step to the script or a rule matching this message." in message
    assert "subagent" not in message


def test_raise_steps_raise_langchain_errors() -> None:
    model = ScriptedChatModel(
        script=[
            {"raise": "context_overflow", "message": "prompt is too long: 5000 tokens"},
            {"raise": "error", "message": "server exploded"},
        ]
    )

    with pytest.raises(ContextOverflowError, match="prompt is too long"):
        model.invoke("hi")
    with pytest.raises(ModelError, match="server exploded"):
        model.invoke("hi")
    assert len(model.requests) == 2


def test_bound_tools_reach_the_request() -> None:
    model = ScriptedChatModel(script=["ok"])

    model.bind_tools([add, write_file], tool_choice="any").invoke("go")

    request = model.requests[0]
    assert request.tool_names == ["add", "write_file"]
    assert request.tools[0]["function"]["parameters"]["required"] == ["a", "b"]
    assert request.tool_choice == "any"


def test_requests_record_exactly_what_the_model_saw() -> None:
    model = ScriptedChatModel(script=["a", "b"])
    messages = [SystemMessage("Be brief."), HumanMessage("Summarize the data.")]

    model.invoke(messages)
    model.invoke("plain")

    first, second = model.requests
    assert isinstance(first, ScriptedRequest)
    assert first.messages == messages
    assert first.system == "Be brief."
    assert first.last.content == "Summarize the data."
    assert first.tools == []
    assert second.system == ""
    assert [m.content for m in second.messages] == ["plain"]


def test_missing_tool_call_ids_are_generated_and_unique() -> None:
    step = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}
    model = ScriptedChatModel(
        script=[step, {"tool_calls": [{"name": "add", "args": {}, "id": "mine"}]}],
        rules=[{"when": "again", "reply": step, "repeat": True}],
    )

    texts = ("go", "again", "again?", "go on")
    ids = [model.invoke(text).tool_calls[0]["id"] for text in texts]

    assert ids == ["call_1", "call_2", "call_3", "mine"]


def test_usage_metadata_is_plausible() -> None:
    model = ScriptedChatModel(script=["x" * 40], name="my-script")

    reply = model.bind_tools([add]).invoke("y" * 400)

    usage = reply.usage_metadata
    assert usage is not None
    assert usage["output_tokens"] == 10  # four characters a token
    assert usage["input_tokens"] > 100  # 400 chars of message plus the tool schema
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert reply.response_metadata["model_name"] == "my-script"


def test_usage_of_a_chinese_conversation_is_counted_as_the_gauge_counts_it() -> None:
    question = "请总结冻土升温的区域差异，并给出每个地区的站点数量。" * 20  # 500 characters
    model = ScriptedChatModel(script=["加拿大升温最快。"])

    reply = model.invoke(question)

    usage = reply.usage_metadata
    assert usage is not None
    assert usage["input_tokens"] == messages_tokens([HumanMessage(question)])  # the gauge's
    assert usage["input_tokens"] > len(question) / 2  # characters / 4 would say 125
    assert usage["output_tokens"] == approx_tokens("加拿大升温最快。")  # 9, not 2


def test_profile_carries_the_context_window() -> None:
    model = ScriptedChatModel(script=[], profile={"max_input_tokens": 4000})

    assert model.profile == {"max_input_tokens": 4000}
    assert ScriptedChatModel(script=[]).profile is None


def test_streaming_yields_words_then_tool_calls_and_usage() -> None:
    step = {
        "content": "Let me add  these numbers.",
        "tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}],
    }
    model = ScriptedChatModel(script=[step])

    chunks = list(model.bind_tools([add]).stream("add 2 and 3"))

    assert len(chunks) >= 4
    assert chunks[0].content == "Let "
    total = chunks[0]
    for chunk in chunks[1:]:
        total += chunk
    assert total.content == "Let me add  these numbers."
    assert total.tool_calls == [
        {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"}
    ]
    assert total.usage_metadata is not None and total.usage_metadata["output_tokens"] > 0
    assert len(model.requests) == 1
    assert model.requests[0].tool_names == ["add"]


def test_async_invoke_and_stream() -> None:
    model = ScriptedChatModel(script=["async reply", "streamed reply"])

    async def run() -> tuple[str, str]:
        reply = await model.ainvoke("hi")
        text = "".join([str(chunk.content) async for chunk in model.astream("again")])
        return str(reply.content), text

    assert asyncio.run(run()) == ("async reply", "streamed reply")
    assert len(model.requests) == 2


def test_from_file_yaml_with_tool_calls_rules_and_profile() -> None:
    model = ScriptedChatModel.from_file(SCRIPTS / "write_notes.yaml")

    sub = model.invoke([SystemMessage("You are a subagent."), HumanMessage("look")])
    first = model.invoke("take notes")

    assert sub.content == "Subagent report: found 3 sources."
    assert first.tool_calls[0]["name"] == "write_file"
    assert first.tool_calls[0]["args"]["file_path"] == "/workspace/notes.md"
    assert model.profile == {"max_input_tokens": 4000}
    assert model.invoke("next").content == "Saved the notes to /workspace/notes.md."


def test_from_file_json() -> None:
    model = ScriptedChatModel.from_file(str(SCRIPTS / "add_numbers.json"))

    assert model.invoke("add").tool_calls[0]["id"] == "call_add"
    with pytest.raises(ContextOverflowError):
        model.invoke("this prompt is too long")
    assert model.invoke("done?").content == "2 + 3 = 5"


def test_from_file_accepts_a_bare_list(tmp_path: Path) -> None:
    path = tmp_path / "bare.yml"
    path.write_text("- hello\n- content: bye\n", encoding="utf-8")

    model = ScriptedChatModel.from_file(path)

    assert [model.invoke(f"x{i}").content for i in range(2)] == ["hello", "bye"]


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        (
            [{"content": "ok"}, {"tool_calls": [{"args": {}}]}],
            "step 1: tool_calls[0] has no 'name'",
        ),
        (["ok", "ok", 42], "step 2 has type int, expected a string, an AIMessage or a mapping"),
        ([{"content": "ok", "toolcalls": []}], "step 0 has unknown key 'toolcalls'"),
        ([{"tool_calls": [{"name": "add", "args": [1, 2]}]}], "step 0: tool_calls[0] has 'args'"),
        ([{"content": 3}], "step 0 has 'content' of type int"),
        ([{"raise": "explode"}], "step 0 has unknown raise kind 'explode'"),
    ],
)
def test_malformed_script_file_names_file_and_step(
    tmp_path: Path, script: list[object], expected: str
) -> None:
    path = tmp_path / "broken.json"
    path.write_text(json.dumps({"script": script}), encoding="utf-8")

    with pytest.raises(ScriptError) as info:
        ScriptedChatModel.from_file(path)

    assert "broken.json" in str(info.value)
    assert expected in str(info.value)


def test_malformed_rules_and_files_are_reported(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"rule 0 has neither 'when' nor 'when_system'"):
        ScriptedChatModel(rules=[{"reply": "x"}])
    with pytest.raises(ScriptError, match="rule 0: reply is empty"):
        ScriptedChatModel(rules=[{"when": "x", "reply": {}}])
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("script: [unclosed\n", encoding="utf-8")
    with pytest.raises(ScriptError, match=r"bad\.yaml: cannot read"):
        ScriptedChatModel.from_file(bad_yaml)
    with pytest.raises(ScriptError, match=r"keys\.json has unknown key 'steps'"):
        (tmp_path / "keys.json").write_text('{"steps": []}', encoding="utf-8")
        ScriptedChatModel.from_file(tmp_path / "keys.json")
    with pytest.raises(ScriptError, match=r"missing\.yaml"):
        ScriptedChatModel.from_file(tmp_path / "missing.yaml")


def test_parallel_callers_each_get_a_distinct_step() -> None:
    model = ScriptedChatModel(script=[f"reply {i}" for i in range(100)])
    replies: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        for _ in range(10):
            text = str(model.invoke(f"go {threading.get_ident()} {time.perf_counter_ns()}").content)
            with lock:
                replies.append(text)

    threads = [threading.Thread(target=worker) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(replies) == sorted(f"reply {i}" for i in range(100))
    assert len(model.requests) == 100
    assert model.remaining == 0


def test_create_agent_runs_a_tool_call_then_answers() -> None:
    from langchain.agents import create_agent

    model = ScriptedChatModel.from_file(SCRIPTS / "add_numbers.json")
    agent = create_agent(model=model, tools=[add], system_prompt="You add numbers.")

    result = agent.invoke({"messages": [HumanMessage("What is 2 + 3?")]})

    assert result["messages"][-1].content == "2 + 3 = 5"
    first, second = model.requests
    assert first.system == "You add numbers."
    assert first.tool_names == ["add"]
    tool_message = second.last
    assert isinstance(tool_message, ToolMessage)
    assert tool_message.tool_call_id == "call_add"
    assert tool_message.content == "5"


def test_create_agent_streams_tool_calls_and_tokens_from_the_script() -> None:
    from langchain.agents import create_agent

    model = ScriptedChatModel(
        script=[{"tool_calls": [{"name": "add", "args": {"a": 2, "b": 3}}]}, "The sum is five."]
    )
    agent = create_agent(model=model, tools=[add])

    chunks = [
        chunk
        for chunk, _meta in agent.stream(
            {"messages": [HumanMessage("2 + 3?")]}, stream_mode="messages"
        )
    ]

    tokens = [str(c.content) for c in chunks if c.type == "AIMessageChunk" and c.content]
    assert tokens == ["The ", "sum ", "is ", "five."]
    tool_results = [c for c in chunks if isinstance(c, ToolMessage)]
    assert [t.content for t in tool_results] == ["5"]
    assert len(model.requests) == 2


class Answer(BaseModel):
    """The final answer."""

    value: int
    reason: str


def test_structured_output_through_a_tool_call() -> None:
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    call = {"name": "Answer", "args": {"value": 5, "reason": "2 + 3"}}
    model = ScriptedChatModel(script=[{"tool_calls": [call]}, {"tool_calls": [call]}])

    direct = model.with_structured_output(Answer).invoke("2 + 3?")
    agent = create_agent(model=model, tools=[add], response_format=ToolStrategy(Answer))
    result = agent.invoke({"messages": [HumanMessage("2 + 3?")]})

    assert direct == Answer(value=5, reason="2 + 3")
    assert result["structured_response"] == Answer(value=5, reason="2 + 3")
    assert "Answer" in model.requests[1].tool_names


def test_a_conversation_answered_before_gets_the_same_reply_as_a_rewound_notebook_needs() -> None:
    step = {"tool_calls": [{"name": "add", "args": {"a": 1, "b": 2}}]}
    model = ScriptedChatModel(script=[step, "3", "only once"])
    first = model.invoke([HumanMessage("add 1 and 2")])
    result = ToolMessage("3", tool_call_id=first.tool_calls[0]["id"], name="add")
    second = model.invoke([HumanMessage("add 1 and 2"), first, result])

    again = model.invoke([HumanMessage("add 1 and 2")])  # the thread was rewound
    changed = ToolMessage("3 (recomputed)", tool_call_id=again.tool_calls[0]["id"], name="add")
    again_second = model.invoke([HumanMessage("add 1 and 2"), again, changed])

    assert again.tool_calls == first.tool_calls  # the same step, the same call id
    assert again_second.content == second.content == "3"
    assert model.remaining == 1
    assert model.invoke([HumanMessage("something new")]).content == "only once"


def test_public_surface_is_the_model_and_its_request_record() -> None:
    from jupyter_deepagent.harness.models import scripted_model

    assert scripted_model.__all__ == ["ScriptedChatModel", "ScriptedRequest"]
    with pytest.raises(ScriptError, match=r"^step 1 has unknown raise kind 'boom'"):
        ScriptedChatModel(script=["ok", {"raise": "boom"}])
