"""Token accounting: approximate counts, the context window's source, calibration from usage."""

from __future__ import annotations

import pytest
from langchain.tools import tool
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatResult

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.tokens import (
    DEFAULT_CONTEXT_WINDOW,
    MAX_CALIBRATION,
    ContextWindow,
    approx_tokens,
    calibration_factor,
    message_tokens,
    request_tokens,
    resolve_context_window,
    tools_tokens,
)


@tool
def lookup(query: str) -> str:
    """Look something up."""
    return "found: " + query


def test_counts_go_by_words_digits_and_characters_plus_overhead() -> None:
    assert approx_tokens("") == 0 and approx_tokens("a") == 1
    assert 5 <= approx_tokens("the cat sat on the mat") <= 7  # a short English word: a token
    assert approx_tokens("冰川物质平衡") >= 6  # a Chinese character is one or more
    assert approx_tokens("1234567") < approx_tokens("1 2 3 4 5 6 7")  # digits go in threes
    assert message_tokens(HumanMessage("x" * 400)) == approx_tokens("x" * 400) + 4
    call = AIMessage("", tool_calls=[{"name": "lookup", "args": {"query": "q" * 40}, "id": "1"}])
    assert message_tokens(call) > message_tokens(AIMessage(""))
    system, human = SystemMessage("s" * 40), HumanMessage("h" * 40)
    assert request_tokens(system, [human], [lookup]) == (
        message_tokens(system) + message_tokens(human) + tools_tokens([lookup])
    )


def test_tool_schemas_are_counted_once_and_cached_consistently() -> None:
    first = tools_tokens([lookup])
    assert first > 10 and tools_tokens([lookup, lookup]) == 2 * first
    assert tools_tokens([]) == 0
    schema = {"type": "function", "function": {"name": "f", "description": "Look it up. " * 40}}
    assert tools_tokens([schema]) > 100


def test_window_comes_from_the_option_then_the_profile_then_the_default() -> None:
    profiled = ScriptedChatModel(profile={"max_input_tokens": 32_000})
    bare = ScriptedChatModel()
    assert resolve_context_window(profiled) == ContextWindow(32_000, "profile")
    assert resolve_context_window(profiled, 8_000) == ContextWindow(8_000, "option")
    assert resolve_context_window(bare) == ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")
    assert ContextWindow(8_000, "option").fraction(0.85) == 6_800
    for wrong in (0, -5, 1.5, True):
        with pytest.raises(ValueError, match="context_window"):
            resolve_context_window(bare, wrong)


def test_calibration_only_scales_up_and_is_capped() -> None:
    assert calibration_factor(2_000, 1_000) == 2.0
    assert calibration_factor(500, 1_000) == 1.0  # a lower report never loosens the count
    assert calibration_factor(50_000, 1_000) == MAX_CALIBRATION
    assert calibration_factor(None, 1_000, previous=1.5) == 1.5


def test_context_window_option_overrides_the_profile_in_events() -> None:
    model = ScriptedChatModel(script=["ok"], profile={"max_input_tokens": 1_000_000})
    trace = trace_run(
        create_research_agent(model, context_window=50_000),
        {"messages": [{"role": "user", "content": "hi"}]},
    )
    [context] = trace.of_type("context")
    assert (context["window"], context["trigger"], context["window_source"]) == (
        50_000,
        42_500,
        "option",
    )
    assert not trace.warnings


class DoubleCounting(ScriptedChatModel):
    """A provider whose tokenizer counts twice what the approximation does."""

    def _generate(self, messages, stop=None, run_manager=None, **kwargs) -> ChatResult:
        result = super()._generate(messages, stop, run_manager, **kwargs)
        usage = dict(result.generations[0].message.usage_metadata)
        usage["input_tokens"] *= 2
        result.generations[0].message.usage_metadata = usage
        return result


def test_reported_usage_calibrates_the_gauge_upwards() -> None:
    model = DoubleCounting(
        script=[{"tool_calls": [{"name": "lookup", "args": {"query": "x"}}]}, "ok"],
        profile={"max_input_tokens": 100_000},
    )
    trace = trace_run(
        create_research_agent(model, tools=[lookup]),
        {"messages": [{"role": "user", "content": "hi"}]},
    )
    first, second = trace.of_type("context")
    raw_second = request_tokens(None, model.requests[1].messages, model.requests[1].tools)
    assert first["tokens"] == request_tokens(
        None, model.requests[0].messages, model.requests[0].tools
    )
    assert second["tokens"] >= 1.8 * raw_second


def _counted_one_byte_at_a_time(data: bytes) -> list[tuple[int, int]]:
    """Letters, digits and punctuation of `data` (bytes and runs), the plain way."""
    classes = [str.isalpha, str.isdigit, lambda c: not c.isalnum() and not c.isspace()]
    found = []
    for is_class in classes:
        marks = [byte < 0x80 and is_class(chr(byte)) for byte in data]
        runs = sum(mark and (i == 0 or not marks[i - 1]) for i, mark in enumerate(marks))
        found.append((sum(marks), runs))
    return found


@pytest.mark.parametrize("seed", range(4))
def test_a_long_text_is_counted_exactly_as_byte_by_byte(seed: int) -> None:
    """Long texts are counted with integer bit operations, short ones with a pass per class;
    both give the counts a byte-by-byte reading gives (a research log's pointer messages state
    these counts, so they must not move with the method)."""
    import random

    from jupyter_deepagent.harness.compression.tokens import _class_counts

    rng = random.Random(seed)
    for alphabet in ("ab Z9 0.,;\n\t\x1c-_", "ab Z9 0.,;\n\t\x1c-_中文é😀"):  # ASCII: bytes = chars
        for length in (0, 1, 2, 255, 256, 257, 1_000, 5_000):
            text = "".join(rng.choice(alphabet) for _ in range(length))
            data = text.encode("utf-8", "surrogatepass")
            assert list(_class_counts(data)) == _counted_one_byte_at_a_time(data), length
