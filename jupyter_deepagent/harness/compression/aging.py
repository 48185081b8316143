"""Which whole tool results age (are sent as pointers to their files) at this model call.

Results age in batches, so the request's prefix changes once per batch and a provider's prompt
cache keeps everything before it. A whole result over the age limit is eligible once the model
has replied to it `keep_recent_turns` times; the eligible results all age together when they pass
the batch limit (`CompressionSettings.age_batch`), or, every result the model has replied to,
when those pass `recent_results_fraction` of the window. The plan also says whether the newest
results will age at the next call, which decides where a cache breakpoint is worth writing.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from jupyter_deepagent.harness.compression.state import CompressionSettings
from jupyter_deepagent.harness.compression.tokens import ContextWindow

__all__ = ["AgingPlan", "ConversationIndex", "RepliesAfter", "plan_aging"]


class RepliesAfter:
    """For each checkpoint message, how many model replies follow it (from the AI messages
    counted before each position, so it costs nothing to make)."""

    __slots__ = ("_before", "_total")

    def __init__(self, ai_before: Sequence[int]) -> None:
        self._before, self._total = ai_before, ai_before[-1]

    def __getitem__(self, index: int) -> int:
        if index < 0:  # from the end, as a list
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._total - self._before[index + 1]

    def __len__(self) -> int:
        return len(self._before) - 1


@dataclass(frozen=True, slots=True)
class ConversationIndex:
    """What aging reads of a conversation, kept between model calls and extended by the new
    messages only: the messages indexed, how many AI messages come before each position, and
    the tool results not sent as pointers (in order)."""

    messages: tuple[BaseMessage, ...]
    ai_before: list[int]
    """`ai_before[i]`: AI messages among `messages[:i]` (one more entry than messages)."""
    whole: list[int]
    """Indexes of the tool results whose key was not among the pointers."""
    pointers_seen: int

    @classmethod
    def of(
        cls,
        messages: Sequence[BaseMessage],
        pointers: Collection[str],
        last: ConversationIndex | None = None,
    ) -> ConversationIndex:
        """The index of `messages`, from `last` when `messages` starts with its very messages
        (and the pointers only grew, as they do within a conversation); else from scratch."""
        known = 0
        ai_before, whole = [0], []
        if (
            last is not None
            and len(last.messages) <= len(messages)
            and len(pointers) >= last.pointers_seen
            and all(map(operator.is_, last.messages, messages))
        ):
            known, ai_before = len(last.messages), list(last.ai_before)
            whole = [i for i in last.whole if _key(messages[i], i) not in pointers]
        for index in range(known, len(messages)):
            message = messages[index]
            ai_before.append(ai_before[-1] + isinstance(message, AIMessage))
            if isinstance(message, ToolMessage) and _key(message, index) not in pointers:
                whole.append(index)
        return cls(tuple(messages), ai_before, whole, len(pointers))


def _key(message: BaseMessage, index: int) -> str:
    return message.id or f"#{index}"


@dataclass
class AgingPlan:
    """What one call decided: the results due to age, the model replies after each message."""

    replies_after: RepliesAfter
    """For each checkpoint message, how many model replies follow it."""
    due: set[int] = field(default_factory=set)
    """Checkpoint indices of the whole results to send as pointers from this call on."""
    newest_ages_next: bool = False
    """Whether the results at the end of the request, not replied to yet, age at the next call
    (a cache breakpoint after them would write what no later request reads)."""


def plan_aging(
    messages: Sequence[BaseMessage],
    start: int,
    index: ConversationIndex,
    count: Callable[[BaseMessage], int],
    settings: CompressionSettings,
    window: ContextWindow,
) -> AgingPlan:
    """One pass over the whole tool results of `messages[start:]`, newest first (see the module
    docstring).

    Args:
        messages: the checkpoint's messages.
        start: the first one the request carries (after the summary).
        index: `messages` indexed (`ConversationIndex.of`, with the pointers of this call).
        count: tokens of a message.
        settings: the limits.
        window: the window the request must fit.
    """
    plan = AgingPlan(replies_after=RepliesAfter(index.ai_before))
    age_limit, keep = settings.age_limit(window), settings.keep_recent_turns
    if age_limit is None:
        return plan
    eligible: list[int] = []
    replied: list[int] = []
    eligible_tokens = replied_tokens = 0
    for position in reversed(index.whole):
        if position < start:
            break
        seen = plan.replies_after[position]
        if not seen:
            continue
        tokens = count(messages[position])
        if tokens <= age_limit:
            continue
        replied.append(position)
        replied_tokens += tokens
        if seen >= keep:
            eligible.append(position)
            eligible_tokens += tokens
    budget = window.fraction(settings.recent_results_fraction)
    batch = settings.age_batch(window)
    if replied_tokens > budget:
        plan.due.update(replied)
        replied_tokens = eligible_tokens = 0
    elif eligible_tokens > batch:
        plan.due.update(eligible)
        replied_tokens -= eligible_tokens
        eligible_tokens = 0
    unread = 0  # the results after the last model reply
    for position in range(len(messages) - 1, start - 1, -1):
        message = messages[position]
        if not isinstance(message, ToolMessage):
            break
        if (tokens := count(message)) > age_limit:
            unread += tokens
    if unread:
        eligible_tokens += unread if keep <= 1 else 0
        plan.newest_ages_next = replied_tokens + unread > budget or eligible_tokens > batch
    return plan
