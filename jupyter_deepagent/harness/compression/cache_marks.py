"""Prompt-cache breakpoints for providers that cache only where they are told (Anthropic).

Gemini and OpenAI cache a request's longest prefix seen before by themselves; Anthropic caches
the prefix up to each `cache_control` breakpoint (at most four), reads at 0.1x and writes at
1.25x. The agent's Anthropic middleware (`harness/prompt/cache_breakpoints.py`) marks the tool
schemas and the system prompt; compression marks the messages (`mark_positions`):

- the last compressed message before anything this call changed (the cache boundary): when a
  batch of results ages, the request still reads everything up to there from the cache, where a
  breakpoint at the end alone would find nothing within the 20 blocks Anthropic looks back;
- the last message, so the next request reads this one, unless the results there age at the
  next call: then they are sent at the plain price rather than written at 1.25x for nothing.
"""

from __future__ import annotations

from collections.abc import Container, Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage

from jupyter_deepagent.harness.models.label import model_label

if TYPE_CHECKING:
    from jupyter_deepagent.harness.compression.view_entries import Entry

__all__ = ["CACHE_CONTROL", "mark_positions", "places_cache_marks", "with_cache_mark"]

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


def mark_positions(
    entries: Sequence[Entry], changed: Container[int], *, newest_ages_next: bool
) -> list[int]:
    """Positions among a request's `entries` to mark: the cache boundary, and the last message;
    or, when the results at the end age at the next call (`newest_ages_next`), the last message
    before their turn, which still reads what the last request wrote. `changed` holds the
    checkpoint indices of messages this call sends differently from the last (-1: the summary).

    Only tool results and user messages with text are marked: LangChain's Anthropic formatter
    drops a mark on the empty text of a message that only calls tools, and on blank text.
    """
    marks = [] if (boundary := _boundary(entries, changed)) is None else [boundary]
    last = len(entries) - 1
    if newest_ages_next:
        while last >= 0 and entries[last].kind == "tool":
            last -= 1
    while last >= 0 and not _markable(entries[last]):
        last -= 1
    if last >= 0 and last not in marks:
        marks.append(last)
    return marks


def _boundary(entries: Sequence[Entry], changed: Container[int]) -> int | None:
    """The last compressed tool result, user message or summary before the first message this
    call changed: everything up to it repeats the previous request, and the next batch of aging
    begins after it. None when nothing before a change is compressed."""
    boundary = None
    for position, entry in enumerate(entries):
        if entry.index in changed:
            break
        if entry.form != "whole" and _markable(entry):
            boundary = position
    return boundary


def _markable(entry: Entry) -> bool:
    """A tool result, or a user message with some text: the formatter drops a mark on a tool
    call's empty text and on a blank text block."""
    if entry.kind == "ai":
        return False
    return entry.kind == "tool" or bool(entry.message.text.strip())
