"""Anthropic prompt-cache breakpoints: LangChain's `AnthropicPromptCachingMiddleware`, for every
request of an agent whose model is Anthropic's.

Anthropic caches a request's prefix only up to an explicit breakpoint (`cache_control`), and bills
a read from the cache at a tenth of the price. The middleware marks the last tool schema, the
last block of the system message, and asks the chat model for one more on the last message of
the request (the top-level `cache_control` of the Messages API), so the next request, which
repeats this one and adds to it, reads everything up to there from the cache.

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
