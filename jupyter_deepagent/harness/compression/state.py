"""What context compression is told (`CompressionSettings`) and what it remembers between model
calls (the `context_compression` record in the graph state, checkpointed with the thread).

The record is private state: it never appears in the graph's input or output, only in the
checkpoint. It holds which messages the model now sees as pointers to files, which tool-call
arguments it sees cut, the current summary and where it cuts the history, and the last request's
size (for calibration, the compaction tool and the gauge). Updates merge key by key, so a tool and
the model node can both write it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Final, NotRequired, TypedDict, cast

from langchain.agents.middleware import AgentState
from langchain.agents.middleware.types import PrivateStateAttr

from jupyter_deepagent.harness.compression.tokens import ContextWindow

__all__ = [
    "COMPRESSION_KEY",
    "CompressionRecord",
    "CompressionSettings",
    "CompressionState",
    "LastRequest",
    "SummaryRecord",
]

COMPRESSION_KEY: Final = "context_compression"
"""The graph state key of the compression record."""


class SummaryRecord(TypedDict):
    """The summary that now stands for the folded start of the conversation."""

    content: str
    """The summary message's text, as the model is sent it."""
    cutoff: int
    """Index of the first checkpoint message kept after the summary."""
    cutoff_id: str
    """That message's id (or position), to find the cut again if the history was edited."""
    count: int
    """How many summaries the thread has had (this is the nth)."""
    transcript: str
    """The `/conversation_history/` file holding every folded message in full."""


class LastRequest(TypedDict):
    """Size of the last request the model was sent."""

    raw: int
    """Approximate tokens of the checkpoint messages as they are, uncompressed."""
    tokens: int
    """Tokens actually sent (compressed, calibrated)."""
    trigger: int
    """Tokens above which summarization started, for that request's window."""
    at: int
    """How many checkpoint messages there were then."""


class CompressionRecord(TypedDict, total=False):
    """What compression decided so far in a thread; every key is optional (a new thread has none).

    Each decision is made once and kept, so every later request looks the same as far back as it
    can (which keeps a provider's prompt cache warm).
    """

    pointers: dict[str, str]
    """Message key -> file: messages sent as pointers to the file now holding them (merged)."""
    bare: list[str]
    """Message keys of aged results sent as a bare pointer, without a preview (merged set)."""
    cut_args: list[str]
    """Tool-call ids whose long `write_file`/`edit_file` arguments are sent cut (merged set)."""
    summary: SummaryRecord
    """The current summary and where it cuts the history."""
    last: LastRequest
    """The last request's size (calibration, the compaction tool, the gauge)."""
    factor: float
    """Calibration: provider-reported tokens over the approximate count (1.0 until known)."""
    compact: bool
    """True when `compact_conversation` asked the next model call to summarize."""
    thread: str
    """The transcript's name under `/conversation_history/` (fixed at the first request)."""
    learned_window: int
    """A window learned from a provider's "request too long" error, smaller than configured."""


_SMALLEST_HISTORY = 2_000
"""Tokens of history below which it is never summarized for its size alone: a summarizer
request costs about the tokens it folds plus its prompt, and then a reply billed as output, so
folding less than this saves about what it costs."""

_MERGED_MAPS = ("pointers",)
_MERGED_SETS = ("cut_args", "bare")


def _merge_record(
    left: CompressionRecord | None, right: CompressionRecord | None
) -> CompressionRecord:
    """Reducer of the record: maps and sets merge, every other key takes the newer value."""
    merged: dict[str, Any] = dict(left or {})
    newer: dict[str, Any] = dict(right or {})
    for key, value in newer.items():
        if key in _MERGED_MAPS:
            merged[key] = {**merged.get(key, {}), **value}
        elif key in _MERGED_SETS:
            merged[key] = sorted({*merged.get(key, ()), *value})
        else:
            merged[key] = value
    return cast("CompressionRecord", merged)


class CompressionState(AgentState):
    """Agent state with the compression record (private: not part of input or output)."""

    context_compression: Annotated[NotRequired[CompressionRecord], PrivateStateAttr, _merge_record]


@dataclass(frozen=True)
class CompressionSettings:
    """How compression behaves; `create_research_agent` exposes the main knobs.

    Attributes:
        context_window: tokens the model accepts; None reads the model's profile.
        offload_token_limit: a tool result over this (or a quarter of the window, if smaller)
            goes to `/large_tool_results/` when it arrives.
        age_token_limit: a tool result over this (or a sixteenth of the window, if smaller)
            that the model has already replied to `keep_recent_turns` times is sent as a
            pointer to its file; None turns aging off.
        keep_recent_turns: model replies a result stays whole for before it may age.
        age_batch_tokens: results the model has replied to `keep_recent_turns` times stay
            whole until together they pass this (or a sixteenth of the window, if smaller); then
            they all age at once, so the request's prefix changes once per batch and a
            provider's prompt cache keeps the rest.
        recent_results_fraction: share of the window the whole results the model has already
            replied to may take together; past it the oldest age sooner (small windows).
        trigger_fraction: share of the window above which inputs are offloaded and, if still
            above, older messages are summarized.
        keep_fraction: share of the window kept as recent messages when summarizing.
        history_fraction: share of the window the older part of the conversation (what a
            summary would fold: all but the most recent `keep_fraction`) may take, even below
            the trigger (never less than 2,000 tokens; not when the window is a guess); past
            it, it is summarized. That older part (mostly pointers to results already read,
            and the calls that fetched them) is sent again, and billed at least at the cached
            price, with every request until a summary folds it, while the summary costs about
            the folded tokens once; so it is folded early, at a sixteenth of the window (as
            `age_limit` and `age_batch` scale), not left to grow towards the trigger.
        human_token_limit: a human message over this (or half the window) goes to
            `/conversation_history/`.
        tool_args_char_limit: past the trigger, old `write_file`/`edit_file` arguments over this
            many characters are sent as a pointer to the file.
        fallback_keep_messages: messages kept when summarizing with no known window.
        summarizer: the model or callable that writes summaries; None uses the agent's model.
        compaction_tool: offer the `compact_conversation` tool.
        call_policy: the timeout and retries of the summarizer's model calls (a
            `ModelCallPolicy`, as the agent's); None: no retries.
    """

    context_window: int | None = None
    offload_token_limit: int = 20_000
    age_token_limit: int | None = 2_000
    keep_recent_turns: int = 1
    age_batch_tokens: int = 25_000
    recent_results_fraction: float = 0.2
    trigger_fraction: float = 0.85
    keep_fraction: float = 0.10
    history_fraction: float = 1 / 16
    human_token_limit: int = 50_000
    tool_args_char_limit: int = 2_000
    fallback_keep_messages: int = 6
    summarizer: Any = None
    compaction_tool: bool = False
    call_policy: Any = None

    def __post_init__(self) -> None:
        """Reject settings that cannot work, naming the option.

        Raises:
            ValueError: a limit is not positive, or a fraction is outside (0, 1].
        """
        positive = {
            "offload_token_limit": self.offload_token_limit,
            "keep_recent_turns": self.keep_recent_turns,
            "age_batch_tokens": self.age_batch_tokens,
            "human_token_limit": self.human_token_limit,
            "tool_args_char_limit": self.tool_args_char_limit,
            "fallback_keep_messages": self.fallback_keep_messages,
        }
        if self.age_token_limit is not None:
            positive["age_token_limit"] = self.age_token_limit
        for name, value in positive.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                msg = f"{name} must be a positive int, got {value!r}"
                raise ValueError(msg)
        for name, share in (
            ("trigger_fraction", self.trigger_fraction),
            ("keep_fraction", self.keep_fraction),
            ("history_fraction", self.history_fraction),
            ("recent_results_fraction", self.recent_results_fraction),
        ):
            if not 0 < share <= 1:
                msg = f"{name} must be in (0, 1], got {share!r}"
                raise ValueError(msg)

    def offload_limit(self, window: ContextWindow) -> int:
        """Tokens above which a tool result is offloaded when it arrives."""
        return min(self.offload_token_limit, window.fraction(0.25))

    def age_limit(self, window: ContextWindow) -> int | None:
        """Tokens above which a consumed tool result ages (None: never). Scaled down for small
        windows, where `offload_token_limit` is too, so aging still has results to act on."""
        if self.age_token_limit is None:
            return None
        return min(self.age_token_limit, window.fraction(1 / 16))

    def age_batch(self, window: ContextWindow) -> int:
        """Tokens the results due to age may take before they all age at once."""
        return min(self.age_batch_tokens, window.fraction(1 / 16))

    def human_limit(self, window: ContextWindow) -> int:
        """Tokens above which a human message is offloaded."""
        return min(self.human_token_limit, window.fraction(0.5))

    def trigger(self, window: ContextWindow) -> int:
        """Tokens above which inputs are offloaded and then older messages summarized."""
        return window.fraction(self.trigger_fraction)

    def history_limit(self, window: ContextWindow) -> int | None:
        """Tokens the part of the conversation a summary would fold may take before it is
        summarized below the trigger: never under 2,000 (a summary and its call would cost as
        much as they save); None when the window is a guess."""
        if window.source == "default":
            return None
        return max(_SMALLEST_HISTORY, window.fraction(self.history_fraction))

    def keep_tokens(self, window: ContextWindow) -> int | None:
        """Tokens of recent messages kept when summarizing (None: keep messages by count)."""
        return None if window.source == "default" else window.fraction(self.keep_fraction)

    def summary_limit(self, window: ContextWindow) -> int:
        """Largest summary kept in the conversation, in tokens."""
        return max(200, min(8_000, window.fraction(0.1)))
