"""The pieces a `ContextView` is made of: entries (one message as sent), the cache the middleware
keeps between model calls (with the last build of each conversation, so the next call builds only
what changed), and the description of a summarization to run."""

from __future__ import annotations

import operator
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from langchain_core.messages import AIMessage, BaseMessage

from jupyter_deepagent.harness.compression.aging import ConversationIndex
from jupyter_deepagent.harness.compression.tokens import message_tokens

__all__ = ["Build", "Entry", "SummaryJob", "ViewCache", "message_key"]

_Kept = TypeVar("_Kept")

_SUMMARY_PAYOFF = 10  # fold only what is at least a tenth of the tokens over the trigger
_BUILDS_KEPT = 8
"""Conversations whose last build the cache keeps: the main one and subagent tasks running in
parallel. Few, since a build holds its conversation's messages until it is dropped."""


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


@dataclass(frozen=True, slots=True)
class Build:
    """One call's entries for checkpoint messages [start, len(messages)) and everything they were
    made from, so the next call of the same conversation rebuilds only the entries whose inputs
    changed (`reusable`, `stale`) and gets exactly what a build from scratch gives.

    An entry is a function of its message (the same object at the same index), the record's
    pointer, bare pointer and cut arguments touching it, whether it is due to age, and the human
    message limit: nothing else.
    """

    messages: list[BaseMessage]
    start: int
    entries: list[Entry]
    pointers: dict[str, str]
    bare: frozenset[str]
    cut_args: frozenset[str]
    human_limit: int
    keys: dict[str, int]
    """Record key (`message_key`) -> index, for every message."""
    calls: dict[str, int]
    """Tool-call id -> index of the AI message making the call."""

    @classmethod
    def of(
        cls,
        messages: list[BaseMessage],
        start: int,
        entries: list[Entry],
        record: tuple[Mapping[str, str], Collection[str], Collection[str], int],
        previous: Build | None = None,
    ) -> Build:
        """The build of `entries` (for `messages[start:]`) under `record` = (pointers, bare,
        cut_args, human_limit); the key and call maps are extended from `previous` when it was
        built on a prefix of `messages`."""
        pointers, bare, cut_args, human_limit = record
        known = 0
        keys: dict[str, int] = {}
        calls: dict[str, int] = {}
        if previous is not None and previous.same_prefix(messages) == len(previous.messages):
            known, keys, calls = len(previous.messages), dict(previous.keys), dict(previous.calls)
        for index in range(known, len(messages)):
            message = messages[index]
            keys[message.id or f"#{index}"] = index
            if isinstance(message, AIMessage):
                for call in message.tool_calls:
                    if call.get("id"):
                        calls[str(call["id"])] = index
        return cls(
            list(messages),
            start,
            list(entries),
            dict(pointers),
            frozenset(bare),
            frozenset(cut_args),
            human_limit,
            keys,
            calls,
        )

    @staticmethod
    def reuse(
        last: Build | None,
        messages: list[BaseMessage],
        start: int,
        record: tuple[Mapping[str, str], Collection[str], Collection[str], int],
        due: Collection[int],
    ) -> tuple[list[Entry], list[int], int]:
        """What the `last` build gives a new one of `messages[start:]` under `record` (as in
        `of`), with the results `due` to age: the entries of messages [start, kept), the indexes
        among them to build again (their inputs changed), in order, and `kept`; the messages from
        `kept` on are to be built."""
        pointers, bare, cut_args, human_limit = record
        kept = last.reusable(messages, start, human_limit) if last is not None else 0
        if last is None or kept <= start:
            return [], [], start
        stale = last.stale(pointers, bare, cut_args).union(due)
        return (
            last.entries[start - last.start : kept - last.start],
            sorted(index for index in stale if start <= index < kept),
            kept,
        )

    def reusable(self, messages: Sequence[BaseMessage], start: int, human_limit: int) -> int:
        """How many leading checkpoint messages are the very ones this build was made from (0
        when its entries cannot serve: an earlier cut, another human message limit)."""
        if start < self.start or human_limit != self.human_limit:
            return 0
        return self.same_prefix(messages)

    def same_prefix(self, messages: Sequence[BaseMessage]) -> int:
        """How many leading messages are the very objects this build was made from."""
        same = min(len(messages), len(self.messages))
        if all(map(operator.is_, messages[:same], self.messages[:same])):
            return same
        return next(i for i in range(same) if messages[i] is not self.messages[i])

    def stale(
        self, pointers: Mapping[str, str], bare: Collection[str], cut_args: Collection[str]
    ) -> set[int]:
        """Indexes whose pointer, bare pointer or cut arguments differ in the record now."""
        keys = {key for key, _ in self.pointers.items() ^ pointers.items()}
        keys |= self.bare.symmetric_difference(bare)
        found = {self.keys[key] for key in keys if key in self.keys}
        calls = self.cut_args.symmetric_difference(cut_args)
        return found | {self.calls[call] for call in calls if call in self.calls}


@dataclass
class ViewCache:
    """Kept by the middleware between calls: token counts, pointer and summary messages already
    built, and the last build of each conversation (by its transcript path)."""

    tokens: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    stubs: dict[tuple[str, str, bool], Entry] = field(default_factory=dict)
    summaries: dict[tuple[int, str], Entry] = field(default_factory=dict)
    whole: dict[str, tuple[weakref.ref[BaseMessage], int, str]] = field(default_factory=dict)
    failed: set[str] = field(default_factory=set)
    builds: dict[str, Build] = field(default_factory=dict)
    indexes: dict[str, ConversationIndex] = field(default_factory=dict)

    def keep(self, conversation: str, build: Build) -> None:
        """Remember `build` as the last one of `conversation` (the oldest others are dropped)."""
        _keep_newest(self.builds, conversation, build)

    def keep_index(self, conversation: str, index: ConversationIndex) -> None:
        """Remember `index` as the last one of `conversation` (the oldest others are dropped)."""
        _keep_newest(self.indexes, conversation, index)

    def remember(self, message: BaseMessage, entry: Entry) -> None:
        """Remember a whole message's size and kind while the message itself lives."""
        if len(self.whole) > 50_000:
            self.whole.clear()
        self.whole[str(message.id)] = (weakref.ref(message), entry.tokens, entry.kind)

    def count(self, message: BaseMessage) -> int:
        """Tokens of a checkpointed message, remembered by its id and its text (its length and
        hash: a `str` keeps its hash, so asking again costs nothing). A message with tool calls
        is counted each time: an edit can change its calls and not its text, which is often
        empty."""
        content = message.content
        if (
            message.id is None
            or not isinstance(content, str)
            or (isinstance(message, AIMessage) and message.tool_calls)
        ):
            return message_tokens(message)
        key, size, digest = message.id, len(content), hash(content)
        hit = self.tokens.get(key)
        if hit is not None and hit[0] == size and hit[1] == digest:
            return hit[2]
        tokens = message_tokens(message)
        if len(self.tokens) > 50_000:
            self.tokens.clear()
        self.tokens[key] = (size, digest, tokens)
        return tokens


def _keep_newest(kept: dict[str, _Kept], conversation: str, value: _Kept) -> None:
    kept.pop(conversation, None)
    for oldest in list(kept)[: max(0, len(kept) + 1 - _BUILDS_KEPT)]:
        kept.pop(oldest, None)
    kept[conversation] = value


@dataclass
class SummaryJob:
    """What a summarization folds: view positions [0, cut) = checkpoint messages [first, cutoff)."""

    cut: int
    first: int
    cutoff: int
    folded: list[BaseMessage]
    originals: list[BaseMessage]
    sizes: list[int] | None = None
    """Tokens of each folded message as sent (the view's entries know them); None: count them."""

    def tokens(self, *, besides_summary: bool = False) -> int:
        """Tokens of what the summary folds, as sent (`besides_summary`: not counting the
        previous summary, folded in too)."""
        sizes = self._sizes()
        folded = self.folded
        if (
            besides_summary
            and folded
            and folded[0].additional_kwargs.get("lc_source") == ("summarization")
        ):
            sizes = sizes[1:]
        return sum(sizes)

    def worth_it(self, excess: int) -> bool:
        """Whether folding helps: not when what it would fold is tiny next to the `excess` tokens
        (one huge recent message, say), which the emergency step moves to a file without a
        model call."""
        return sum(self._sizes()) * _SUMMARY_PAYOFF >= excess

    def _sizes(self) -> list[int]:
        if self.sizes is None:
            self.sizes = [message_tokens(message) for message in self.folded]
        return self.sizes
