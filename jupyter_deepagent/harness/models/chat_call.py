"""One call to the project's own chat models (`ScriptedChatModel`, the research log's
`ReplayChatModel`): its settings (the model's, under the call's own), what LangChain's tracing is
told of them (`ls_*`, as LangChain's standard tests require), where a stop sequence ends a text,
and the conversation a call continues (a scripted model answers a conversation it has seen again
with the same reply).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models.base import LangSmithParams
from langchain_core.messages import BaseMessage

__all__ = ["call_settings", "conversation_key", "langsmith_params", "text_before_stop", "with_stop"]


def with_stop(stop: list[str] | None, kwargs: Mapping[str, object]) -> Mapping[str, object]:
    """A call's keywords with its stop sequences among them (None: the model's own stay)."""
    return kwargs if stop is None else {**kwargs, "stop": list(stop)}


def call_settings(model: Mapping[str, object], kwargs: Mapping[str, object]) -> dict[str, object]:
    """The settings a call is made with: the model's (`temperature`, `max_tokens`, `stop`...)
    under the call's keywords (bound tools and the tool choice left out); `None` is not set."""
    settings = {k: v for k, v in model.items() if v is not None}
    settings.update(
        (k, v) for k, v in kwargs.items() if k not in ("tools", "tool_choice") and v is not None
    )
    return settings


def langsmith_params(provider: str, name: str, settings: Mapping[str, object]) -> LangSmithParams:
    """LangChain's tracing parameters of a call with `settings`: a per-call `model` names the
    model instead of `name`; temperature, max tokens and stop sequences when set."""
    model = settings.get("model")
    params = LangSmithParams(
        ls_provider=provider,
        ls_model_name=model if isinstance(model, str) else name,
        ls_model_type="chat",
    )
    temperature, max_tokens, stop = (settings.get(k) for k in ("temperature", "max_tokens", "stop"))
    if isinstance(temperature, int | float) and not isinstance(temperature, bool):
        params["ls_temperature"] = float(temperature)
    if isinstance(max_tokens, int) and not isinstance(max_tokens, bool):
        params["ls_max_tokens"] = max_tokens
    if isinstance(stop, list | tuple):
        params["ls_stop"] = [str(text) for text in stop]
    return params


def text_before_stop(text: str, stop: object) -> str:
    """`text` up to the first of the stop sequences (a list) it contains; all of it when none."""
    stops = [str(s) for s in stop if s] if isinstance(stop, list | tuple) else []
    ends = [found for s in stops if (found := text.find(s)) >= 0]
    return text[: min(ends)] if ends else text


def conversation_key(
    messages: Sequence[BaseMessage], tools: Sequence[Mapping[str, Any]], tool_choice: object
) -> str:
    """What makes two requests "the same conversation" for a scripted model: the user's and the
    assistant's turns with their tool calls, the system prompt, and which tools answered (not
    what they returned, which may differ on a re-run); and the tools bound (each one's name and
    parameters, not its description) with the tool choice, so the same prompt asked with another
    tool or structured-output schema is another conversation."""
    bound = []
    for tool in tools:
        function = tool.get("function", tool)
        bound.append([function.get("name"), function.get("parameters")])
    turns: list[object] = [["tools", bound, tool_choice]] if bound or tool_choice else []
    for message in messages:
        if message.type == "tool":
            turns.append(["tool", getattr(message, "name", None)])
            continue
        calls = [[c["name"], c["args"]] for c in getattr(message, "tool_calls", None) or []]
        turns.append([message.type, message.content, calls])
    text = json.dumps(turns, sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
