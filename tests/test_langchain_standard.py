"""LangChain's standard chat-model tests (`langchain-tests`), unit and integration, for the
project's two chat models: `ScriptedChatModel`, and `ReplayChatModel` wrapping one (live calls,
recorded by its ledger). Offline: the integration tests' prompts are answered by scripts, one
per test (`SCRIPTS`), as a notebook's scripted model plays the script written for it.

The suite's own switches leave out what neither model has (image, audio and PDF inputs, JSON
mode, VCR cassettes): those tests skip with the suite's own reasons. No test is marked here.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_tests.integration_tests import ChatModelIntegrationTests
from langchain_tests.unit_tests import ChatModelUnitTests

from jupyter_deepagent import ScriptedChatModel
from jupyter_deepagent.trace.research_log.replay import CallLedger, ReplayChatModel

NAME = "scripted-standard"
OVERRIDE = "scripted-override"
GREETINGS = ["Hello! How can I help you today?", "Hi there, what shall we look at?"]
JOKE = {"setup": "Why did the cat sit on the laptop?", "punchline": "To keep an eye on the mouse."}


def calls(name: str, **args: object) -> dict[str, object]:
    """A scripted reply calling one tool."""
    return {"tool_calls": [{"name": name, "args": args}]}


MAGIC = calls("magic_function", input=3)
JOKE_SCHEMAS = {"pydantic": "Joke", "typeddict": "JokeDict", "json_schema": "Joke"}
SCRIPTS: dict[str, list[object]] = {
    "test_tool_calling": [MAGIC],
    "test_tool_calling_async": [MAGIC],
    "test_tool_calling_with_no_arguments": [calls("magic_function_no_args")],
    "test_tool_choice": [MAGIC, MAGIC],  # `any`, then `magic_function` by name
    "test_bind_runnables_as_tools": [calls("greeting_generator", answer_style="pirate")],
    "test_tool_message_histories_string_content": ["1 + 2 is 3."],
    "test_tool_message_histories_list_content": ["1 + 2 is 3."],
    "test_tool_message_error_status": [calls("my_adder_tool", a=1, b=2)],
    "test_structured_few_shot_examples": [calls("my_adder_tool", a=3, b=4)],
    # a pydantic v1 class, then its JSON schema: two schemas, one name
    "test_structured_output_pydantic_2_v1": [calls("Joke", **JOKE), calls("Joke", **JOKE)],
    "test_structured_output_optional_param": [
        calls("Joke", setup=JOKE["setup"]),
        calls("Joke", **JOKE),
        calls("Joke", **JOKE),
        calls("JokeDict", **JOKE),  # the same prompt as the step before, another schema
    ],
    "test_agent_loop": [calls("get_weather", location="San Francisco, CA"), "It's sunny."],
    "test_unicode_tool_call_integration": [
        calls("unicode_customer", customer_name="你好啊集团", description="中国科技公司"),
        calls("unicode_customer", customer_name="こんにちは株式会社", description="日本の会社"),
    ],
    "test_usage_metadata_streaming": ["Old pond, a frog leaps.\n\nWinter wind, bare trees."],
}


def script_for(node: pytest.Item) -> list[object]:
    """The script of the standard test `node` (greetings for those that only chat)."""
    test = getattr(node, "originalname", node.name)
    schema = getattr(node, "callspec", None)
    schema_type = schema.params.get("schema_type") if schema is not None else None
    if isinstance(schema_type, str):  # test_structured_output[_async]
        return [calls(JOKE_SCHEMAS[schema_type], **JOKE)]
    return list(SCRIPTS.get(test, GREETINGS))


class ScriptedCapabilities:
    """What both models do, said where the suite cannot tell from the class."""

    @property
    def has_tool_choice(self) -> bool:
        # `bind_tools(..., tool_choice=...)` reaches the model (kept in `.requests`) through
        # **kwargs, which the suite's signature check does not see
        return True

    @property
    def model_override_value(self) -> str:
        return OVERRIDE


class ScriptedParams(ScriptedCapabilities):
    @property
    def chat_model_class(self) -> type[ScriptedChatModel]:
        return ScriptedChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return {"name": NAME, "script": list(GREETINGS)}

    @pytest.fixture
    def model(self, request: pytest.FixtureRequest) -> BaseChatModel:
        extra = getattr(request, "param", None) or {}
        params = {**self.standard_chat_model_params, **self.chat_model_params, **extra}
        return ScriptedChatModel(**{**params, "script": script_for(request.node)})


class ReplayParams(ScriptedCapabilities):
    @property
    def chat_model_class(self) -> type[ReplayChatModel]:
        return ReplayChatModel

    @property
    def chat_model_params(self) -> dict[str, Any]:
        return replay_params(list(GREETINGS))

    @pytest.fixture
    def model(self, request: pytest.FixtureRequest) -> BaseChatModel:
        extra = getattr(request, "param", None) or {}
        own = replay_params(script_for(request.node))
        return ReplayChatModel(**{**self.standard_chat_model_params, **own, **extra})


def replay_params(script: list[object]) -> dict[str, Any]:
    """A `ReplayChatModel` over a scripted model, with a ledger of no recordings (auto mode):
    every call reaches the scripted model and is recorded."""
    inner = ScriptedChatModel(name=NAME, script=script)
    return {
        "inner": inner,
        "ledger": CallLedger([], "auto", "standard tests"),
        "label": f"scripted:{NAME}",
    }


class TestScriptedChatModelUnit(ScriptedParams, ChatModelUnitTests):
    pass


class TestScriptedChatModelIntegration(ScriptedParams, ChatModelIntegrationTests):
    pass


class TestReplayChatModelUnit(ReplayParams, ChatModelUnitTests):
    pass


class TestReplayChatModelIntegration(ReplayParams, ChatModelIntegrationTests):
    pass


# -- what the standard tests do not look at: the values --------------------------------------


def test_a_scripted_models_settings_are_reported_and_reach_each_request() -> None:
    model = ScriptedChatModel(
        name=NAME, script=["Noted.", "Again."], temperature=0.2, max_tokens=50, stop=["END"]
    )
    assert model._get_ls_params() == {
        "ls_provider": "scripted",
        "ls_model_name": NAME,
        "ls_model_type": "chat",
        "ls_temperature": 0.2,
        "ls_max_tokens": 50,
        "ls_stop": ["END"],
    }
    model.invoke("hi")
    model.invoke("hello", temperature=0.9, model=OVERRIDE, thinking_budget=128)
    first, second = model.requests
    assert first.params == {"temperature": 0.2, "max_tokens": 50, "stop": ["END"]}
    assert second.params == {
        "temperature": 0.9, "max_tokens": 50, "stop": ["END"], "model": OVERRIDE,
        "thinking_budget": 128,
    }  # fmt: skip
    assert ScriptedChatModel(script=[])._get_ls_params() == {
        "ls_provider": "scripted",
        "ls_model_name": "scripted",
        "ls_model_type": "chat",
    }  # nothing set, nothing reported: fingerprints of earlier research logs unchanged


def test_a_scripted_reply_ends_before_a_stop_sequence() -> None:
    model = ScriptedChatModel(
        script=["The answer is 42. END of story.", "Fine, 7 then."], stop=["END"]
    )
    assert model.invoke("question").text == "The answer is 42. "
    assert model.invoke("another", stop=["then", ","]).text == "Fine"
    streamed = "".join(str(chunk.text) for chunk in model.stream("question"))
    assert streamed == "The answer is 42. "  # the same conversation, the same reply


def test_one_prompt_with_two_schemas_gets_each_its_own_call() -> None:
    from pydantic import BaseModel

    class Station(BaseModel):
        name: str

    class Reading(BaseModel):
        celsius: float

    model = ScriptedChatModel(
        script=[
            {"tool_calls": [{"name": "Station", "args": {"name": "Abisko"}}]},
            calls("Reading", celsius=-0.6),
        ]
    )
    prompt = "What does the logger say?"
    assert model.with_structured_output(Station).invoke(prompt) == Station(name="Abisko")
    assert model.with_structured_output(Reading).invoke(prompt) == Reading(celsius=-0.6)
    again = model.with_structured_output(Station).invoke(prompt)  # seen before: replayed
    assert again == Station(name="Abisko") and model.remaining == 0


def test_the_replay_wrapper_reports_and_sends_the_calls_settings() -> None:
    inner = ScriptedChatModel(name=NAME, script=["Stop here. Not this.", "Other."])
    ledger = CallLedger([], "auto", "cell 1")
    wrapper = ReplayChatModel(
        inner=inner, ledger=ledger, label=f"scripted:{NAME}", params={"temperature": 0.3},
        stop=["Not"],
    )  # fmt: skip
    assert wrapper._get_ls_params(model=OVERRIDE, max_tokens=20) == {
        "ls_provider": "scripted",
        "ls_model_name": OVERRIDE,
        "ls_model_type": "chat",
        "ls_temperature": 0.3,
        "ls_max_tokens": 20,
        "ls_stop": ["Not"],
    }
    assert wrapper.invoke("go").text == "Stop here. "  # the wrapper's stop reached the model
    wrapper.invoke("go on", stop=["r."], model=OVERRIDE)
    assert [r.params.get("stop") for r in inner.requests] == [["Not"], ["r."]]
    assert inner.requests[1].params["model"] == OVERRIDE
    fingerprinted = [call["request"]["params"] for call in ledger.calls]
    assert fingerprinted == [
        {"temperature": 0.3, "stop": ["Not"]},
        {"temperature": 0.3, "stop": ["r."], "model": OVERRIDE},
    ]
