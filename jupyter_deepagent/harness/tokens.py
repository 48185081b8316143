"""Token accounting: how much of the context window a text, a message list or a tool schema takes.

Counts are approximate (about four characters per token, the rule of thumb most providers publish)
unless a provider has reported real usage, which the compression layer uses to calibrate.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["CHARS_PER_TOKEN", "approx_tokens", "message_tokens", "messages_tokens", "tools_tokens"]

CHARS_PER_TOKEN = 4.0
"""Characters per token assumed when no provider count is available."""

_MESSAGE_OVERHEAD = 4  # role markers and separators each message costs


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


def tools_tokens(tools: Sequence[Any]) -> int:
    """Approximate tokens the tool schemas add to a request."""
    if not tools:
        return 0
    from langchain_core.utils.function_calling import convert_to_openai_tool

    total = 0
    for tool in tools:
        schema = tool if isinstance(tool, dict) else convert_to_openai_tool(tool)
        total += approx_tokens(json.dumps(schema, ensure_ascii=False, default=str))
    return total
