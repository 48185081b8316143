"""A provider's "request too long" error: recognising it, and the error raised when a retry after
summarizing does not help either."""

from __future__ import annotations

import re

from langchain_core.exceptions import ContextOverflowError

from jupyter_deepagent._exceptions import ContextOverflow
from jupyter_deepagent.harness.compression.tokens import ContextWindow

__all__ = ["gave_up", "is_context_overflow", "learned_window"]

_OVERFLOW_TEXT = re.compile(
    r"context[ _-]?(length|window|limit)|maximum context|prompt is too long"
    r"|too many (input )?tokens|input (token count|is too long)|exceeds? the (maximum|max|model'?s?)",
    re.IGNORECASE,
)
_NOT_OVERFLOW = re.compile(r"rate.?limit|per minute|quota|too many requests", re.IGNORECASE)
_SOURCES = {
    "option": "context_window=",
    "profile": "the model's profile",
    "default": "the default for unknown models",
    "learned": "an earlier overflow",
}


def is_context_overflow(exc: BaseException) -> bool:
    """Whether a model call failed because the request is longer than the model accepts:
    LangChain's `ContextOverflowError`, or a provider error saying so (rate limits excluded)."""
    if isinstance(exc, ContextOverflowError):
        return True
    name = type(exc).__name__.lower()
    if "contextwindow" in name or "contextlength" in name or "contextoverflow" in name:
        return True
    text = str(exc)[:2_000]
    return bool(_OVERFLOW_TEXT.search(text)) and not _NOT_OVERFLOW.search(text)


def learned_window(sent: int, window: ContextWindow) -> ContextWindow:
    """The window to assume after a request of `sent` tokens overflowed: 90% of it, if smaller
    than what was assumed (the approximation undercounted, or the profile was wrong)."""
    learned = max(1_000, int(sent * 0.9))
    return ContextWindow(learned, "learned") if learned < window.tokens else window


def gave_up(
    sent: int, now: int, window: ContextWindow, transcript: str, *, retried: bool
) -> ContextOverflow:
    """The error for a request that overflowed and could not be brought inside the window."""
    tried = (
        f"summarized older messages into {transcript} and moved large messages to files, "
        f"bringing it to about {now:,} tokens; the retry overflowed too"
        if retried
        else "nothing more could be summarized or moved to files"
    )
    msg = (
        f"The model rejected the request as longer than its context window: about {sent:,} "
        f"tokens were sent (window {window.tokens:,} tokens, from {_SOURCES[window.source]}). "
        f"The harness {tried}. Set a smaller context_window= on create_research_agent, shorten "
        "the system prompt, tools or memory files, or use a model with a larger window."
    )
    return ContextOverflow(msg)
