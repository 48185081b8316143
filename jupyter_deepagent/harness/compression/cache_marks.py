"""Prompt-cache breakpoints for providers that cache only where they are told (Anthropic).

Gemini and OpenAI cache a request's longest prefix seen before by themselves; Anthropic caches
the prefix up to each `cache_control` breakpoint (at most four). LangChain's Anthropic
prompt-caching middleware marks the tool schemas, the system prompt and the end of the request;
compression adds the fourth where it keeps the most: at the last compressed message before
anything this call changed (`ContextView.cache_boundary`). When a batch of results ages, the
request still reads everything up to there from the cache, where a breakpoint at the end alone
would find nothing within the 20 blocks Anthropic looks back.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage

from jupyter_deepagent.harness.models.label import model_label

__all__ = ["CACHE_CONTROL", "places_cache_marks", "with_cache_mark"]

CACHE_CONTROL = {"type": "ephemeral", "ttl": "5m"}
"""The breakpoint compression adds, as LangChain's middleware writes its own."""


def places_cache_marks(model: Any) -> bool:
    """Whether `model` caches only at breakpoints: an Anthropic chat model, known by its
    "provider:model" label, so through the research log's replay wrapper around one too."""
    return model_label(model).startswith("anthropic:")


def with_cache_mark(message: BaseMessage) -> BaseMessage:
    """A copy of `message` whose last content block carries a cache breakpoint (text content
    becomes one text block; the text is unchanged)."""
    content = message.content
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    )
    if not blocks:
        return message
    last = blocks[-1]
    if isinstance(last, str):
        last = {"type": "text", "text": last}
    blocks[-1] = {**last, "cache_control": dict(CACHE_CONTROL)}
    return message.model_copy(update={"content": blocks})
