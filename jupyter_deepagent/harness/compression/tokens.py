"""Token accounting: how much of the context window a text, a message list or a tool schema takes.

Counts are approximate (about four characters per token, the rule of thumb most providers publish).
When a provider reports real usage (`usage_metadata` on its last reply), the compression layer
scales the approximation up with `calibration_factor`, so it never trusts a count it knows is low.

The context window comes, in order, from `context_window=` on `create_research_agent`, from the
model's profile (`max_input_tokens`), or from `DEFAULT_CONTEXT_WINDOW` with a warning event; a
provider's context-overflow error teaches the harness a smaller window ("learned").
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_CONTEXT_WINDOW",
    "ContextWindow",
    "approx_tokens",
    "calibration_factor",
    "message_tokens",
    "messages_tokens",
    "request_tokens",
    "resolve_context_window",
    "tools_tokens",
]

CHARS_PER_TOKEN = 4.0
"""Characters per token assumed when no provider count is available."""

DEFAULT_CONTEXT_WINDOW = 200_000
"""Window assumed for a model whose profile has no `max_input_tokens`: summarization then starts at
170,000 tokens (85%). A warning event says so; pass `context_window=` to set the real one."""

_MESSAGE_OVERHEAD = 4  # role markers and separators each message costs
_MAX_CALIBRATION = 3.0
_SCHEMA_CACHE: dict[tuple[Any, ...], int] = {}
_SCHEMA_CACHE_SIZE = 1024

WindowSource = Literal["option", "profile", "default", "learned"]


def approx_tokens(text: str) -> int:
    """Approximate token count of a text: ceil(chars / 4)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                parts.append(str(block.get("text") or block.get("content") or ""))
        return "".join(parts)
    return str(content)


def message_tokens(message: Any) -> int:
    """Approximate tokens of one LangChain message: its text, its tool calls' arguments, overhead."""
    total = approx_tokens(_content_text(getattr(message, "content", message)))
    for call in getattr(message, "tool_calls", None) or ():
        total += approx_tokens(call.get("name", "")) + approx_tokens(
            json.dumps(call.get("args", {}), ensure_ascii=False, default=str)
        )
    return total + _MESSAGE_OVERHEAD


def messages_tokens(messages: Iterable[Any]) -> int:
    """Approximate tokens of a message list."""
    return sum(message_tokens(m) for m in messages)


def _schema_key(tool: Any) -> tuple[Any, ...] | None:
    if isinstance(tool, dict):
        return None
    return (
        type(tool),
        getattr(tool, "name", None),
        getattr(tool, "description", None),
        id(getattr(tool, "args_schema", None)),
    )


def tools_tokens(tools: Sequence[Any]) -> int:
    """Approximate tokens the tool schemas add to a request (schemas are cached per tool)."""
    if not tools:
        return 0
    from langchain_core.utils.function_calling import convert_to_openai_tool

    total = 0
    for tool in tools:
        key = _schema_key(tool)
        cached = _SCHEMA_CACHE.get(key) if key is not None else None
        if cached is None:
            schema = tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
            cached = approx_tokens(json.dumps(schema, ensure_ascii=False, default=str))
            if key is not None:
                if len(_SCHEMA_CACHE) >= _SCHEMA_CACHE_SIZE:
                    _SCHEMA_CACHE.clear()
                _SCHEMA_CACHE[key] = cached
        total += cached
    return total


def request_tokens(system: Any, messages: Iterable[Any], tools: Sequence[Any] = ()) -> int:
    """Approximate tokens of one model request: system message, messages and tool schemas."""
    head = message_tokens(system) if system is not None else 0
    return head + messages_tokens(messages) + tools_tokens(tools)


@dataclass(frozen=True)
class ContextWindow:
    """A model's input limit in tokens and where the number came from."""

    tokens: int
    source: WindowSource

    def fraction(self, share: float) -> int:
        """`share` of the window, in whole tokens (at least 1)."""
        return max(1, int(self.tokens * share))


def _profile_limit(model: Any) -> int | None:
    try:
        profile = getattr(model, "profile", None)
    except Exception:
        return None
    if not isinstance(profile, Mapping):
        return None
    limit = profile.get("max_input_tokens")
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else None


def resolve_context_window(model: Any, context_window: int | None = None) -> ContextWindow:
    """The window to keep requests inside: the option, else the model's profile, else the default.

    Raises:
        ValueError: `context_window` is not a positive integer.
    """
    if context_window is not None:
        if isinstance(context_window, bool) or not isinstance(context_window, int):
            msg = f"context_window must be an int number of tokens, got {context_window!r}"
            raise ValueError(msg)
        if context_window <= 0:
            msg = f"context_window must be positive, got {context_window}"
            raise ValueError(msg)
        return ContextWindow(context_window, "option")
    limit = _profile_limit(model)
    if limit is not None:
        return ContextWindow(limit, "profile")
    return ContextWindow(DEFAULT_CONTEXT_WINDOW, "default")


def calibration_factor(reported: int | None, estimated: int, previous: float = 1.0) -> float:
    """How much to scale approximate counts, given what the provider reported for a request we
    estimated at `estimated` tokens. Never below 1: a provider counting fewer tokens than the
    approximation only makes compression start a little early, while trusting a low count
    would overflow. Capped at 3x so one odd report cannot stall a run.
    """
    if not reported or estimated <= 0:
        return previous
    return min(_MAX_CALIBRATION, max(1.0, reported / estimated))
