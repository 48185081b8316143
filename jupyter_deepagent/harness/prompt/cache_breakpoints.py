"""Anthropic prompt-cache breakpoints: LangChain's `AnthropicPromptCachingMiddleware`, for every
request of an agent whose model is Anthropic's.

Anthropic caches a request's prefix only up to an explicit breakpoint (`cache_control`), and bills
a read from the cache at a tenth of the price (and a write at 1.25 times). The middleware marks
the last tool schema and the last block of the system message. LangChain's would also ask the
chat model for a breakpoint on the request's last message; here compression marks the messages
instead (`harness/compression/cache_marks.py`): the last one, unless its results age at the
next call (a write nothing would read), and the last compressed message before anything the
request changed, so a request that ages a batch still reads everything before it.

LangChain's middleware applies itself only when the request's model is a `ChatAnthropic`; a
research agent's model may be the research log's `ReplayChatModel` around one, so here the
agent decides once, from the model's "provider:model" label (`anthropic:...`), and a recorded
run and its replay are tagged alike. This module imports `langchain_anthropic`: import it only
for an Anthropic model (see `anthropic_cache_breakpoints`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_anthropic.middleware import AnthropicPromptCachingMiddleware

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest

__all__ = ["AnthropicCacheBreakpoints"]


class AnthropicCacheBreakpoints(AnthropicPromptCachingMiddleware):
    """`AnthropicPromptCachingMiddleware` applied to every request: the agent chose it for its
    Anthropic model, whatever wrapper (a replay of the research log) the request names."""

    def __init__(self) -> None:
        super().__init__(ttl="5m", unsupported_model_behavior="ignore")

    def _should_apply_caching(self, request: ModelRequest) -> bool:
        return True

    def _apply_caching(self, request: ModelRequest) -> ModelRequest:
        """The system message and tool breakpoints; the request's messages were marked by
        compression (`compression/cache_marks.py`), which knows which ones later requests
        will repeat, so no `cache_control` setting for the model to put on the last one."""
        marked = super()._apply_caching(request)
        settings = {k: v for k, v in marked.model_settings.items() if k != "cache_control"}
        return marked.override(model_settings=settings)
