"""Which whole tool results age (are sent as pointers to their files) at this model call.

Results age in batches, so the request's prefix changes once per batch and a provider's prompt
cache keeps everything before it. A whole result over the age limit is eligible once the model
has replied to it `keep_recent_turns` times; the eligible results all age together when they pass
the batch limit (`CompressionSettings.age_batch`), or, every result the model has replied to,
when those pass `recent_results_fraction` of the window. The plan also says whether the newest
results will age at the next call, which decides where a cache breakpoint is worth writing.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass, field

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from jupyter_deepagent.harness.compression.state import CompressionSettings
from jupyter_deepagent.harness.compression.tokens import ContextWindow

__all__ = ["AgingPlan", "plan_aging"]


@dataclass
class AgingPlan:
    """What one call decided: the results due to age, the model replies after each message."""

    due: set[int] = field(default_factory=set)
    """Checkpoint indices of the whole results to send as pointers from this call on."""
    replies_after: list[int] = field(default_factory=list)
    """For each checkpoint message, how many model replies follow it."""
    newest_ages_next: bool = False
    """Whether the results at the end of the request, not replied to yet, age at the next call
    (a cache breakpoint after them would write what no later request reads)."""


def plan_aging(
    messages: Sequence[BaseMessage],
    start: int,
    pointers: Container[str],
    count: Callable[[BaseMessage], int],
    settings: CompressionSettings,
    window: ContextWindow,
) -> AgingPlan:
    """One pass over `messages[start:]`, newest first (see the module docstring).

    Args:
        messages: the checkpoint's messages.
        start: the first one the request carries (after the summary).
        pointers: keys (`id`, else `#index`) of messages already sent as pointers.
        count: tokens of a message.
        settings: the limits.
        window: the window the request must fit.
    """
    plan = AgingPlan(replies_after=[0] * len(messages))
    age_limit, keep = settings.age_limit(window), settings.keep_recent_turns
    eligible: list[int] = []
    replied: list[int] = []
    eligible_tokens = replied_tokens = seen = 0
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        plan.replies_after[index] = seen
        if isinstance(message, AIMessage):
            seen += 1
            continue
        if (
            age_limit is None
            or index < start
            or not seen
            or not isinstance(message, ToolMessage)
            or (message.id or f"#{index}") in pointers
        ):
            continue
        tokens = count(message)
        if tokens <= age_limit:
            continue
        replied.append(index)
        replied_tokens += tokens
        if seen >= keep:
            eligible.append(index)
            eligible_tokens += tokens
    if age_limit is None:
        return plan
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
    for index in range(len(messages) - 1, start - 1, -1):
        message = messages[index]
        if not isinstance(message, ToolMessage):
            break
        if (tokens := count(message)) > age_limit:
            unread += tokens
    if unread:
        eligible_tokens += unread if keep <= 1 else 0
        plan.newest_ages_next = replied_tokens + unread > budget or eligible_tokens > batch
    return plan
