"""The pieces a `ContextView` is made of: entries (one message as sent), the cache the middleware
keeps between model calls, and the description of a summarization to run."""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field

from langchain_core.messages import BaseMessage

from jupyter_deepagent.harness.compression.tokens import message_tokens, messages_tokens

__all__ = ["Entry", "SummaryJob", "ViewCache", "message_key"]

_SUMMARY_PAYOFF = 10  # fold only what is at least a tenth of the tokens over the trigger


def message_key(message: BaseMessage, index: int) -> str:
    """How the record names a message: its id, else its position."""
    return message.id or f"#{index}"


@dataclass(slots=True)
class Entry:
    """One message of the view: where it sits in the checkpoint (-1: the summary), as sent.

    Entries are shared between calls through `ViewCache`: replace them, never change them.
    """

    index: int
    message: BaseMessage
    tokens: int
    kind: str
    form: str = "whole"


@dataclass
class ViewCache:
    """Kept by the middleware between calls: token counts and pointer messages already built."""

    tokens: dict[str, tuple[int, int]] = field(default_factory=dict)
    stubs: dict[tuple[str, str, bool], Entry] = field(default_factory=dict)
    whole: dict[str, tuple[weakref.ref[BaseMessage], int, str]] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)

    def remember(self, message: BaseMessage, entry: Entry) -> None:
        """Remember a whole message's size and kind while the message itself lives."""
        if len(self.whole) > 50_000:
            self.whole.clear()
        self.whole[str(message.id)] = (weakref.ref(message), entry.tokens, entry.kind)

    def count(self, message: BaseMessage) -> int:
        """Tokens of a checkpointed message, remembered by its id."""
        content = message.content
        if message.id is None or not isinstance(content, str):
            return message_tokens(message)
        key, size = message.id, len(content)
        hit = self.tokens.get(key)
        if hit is not None and hit[0] == size:
            return hit[1]
        tokens = message_tokens(message)
        if len(self.tokens) > 50_000:
            self.tokens.clear()
        self.tokens[key] = (size, tokens)
        return tokens


@dataclass
class SummaryJob:
    """What a summarization folds: view positions [0, cut) = checkpoint messages [first, cutoff)."""

    cut: int
    first: int
    cutoff: int
    folded: list[BaseMessage]
    originals: list[BaseMessage]

    def tokens(self) -> int:
        """Tokens of what the summary folds, as sent."""
        return messages_tokens(self.folded)

    def worth_it(self, excess: int) -> bool:
        """Whether folding helps: not when what it would fold is tiny next to the `excess` tokens
        (one huge recent message, say), which the emergency step moves to a file without a
        model call."""
        return messages_tokens(self.folded) * _SUMMARY_PAYOFF >= excess
