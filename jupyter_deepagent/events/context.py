"""Run events of context compression: the window before each request, offloading, aging,
summaries, a provider's overflow error, and a compaction refused."""

from typing import Final, Literal

from jupyter_deepagent.events.common import EventStamp

__all__ = [
    "AGED",
    "COMPACTION_REFUSED",
    "CONTEXT",
    "CONTEXT_OVERFLOW",
    "INPUT_OFFLOADED",
    "OFFLOADED",
    "SUMMARIZED",
    "AgedEvent",
    "CompactionRefusedEvent",
    "ContextEvent",
    "ContextOverflowEvent",
    "InputOffloadedEvent",
    "OffloadedEvent",
    "SummarizedEvent",
]

CONTEXT: Final = "context"
OFFLOADED: Final = "offloaded"
AGED: Final = "aged"
INPUT_OFFLOADED: Final = "input_offloaded"
SUMMARIZED: Final = "summarized"
CONTEXT_OVERFLOW: Final = "context_overflow"
COMPACTION_REFUSED: Final = "compaction_refused"


class ContextEvent(EventStamp):
    """One per model request, before it is sent: how full the context window is."""

    type: Literal["context"]
    tokens: int
    """What is sent (system prompt, messages, tool schemas), calibrated."""
    window: int
    """Tokens the model accepts."""
    trigger: int
    """Tokens where summarization starts."""
    window_source: Literal["option", "profile", "default", "learned"]
    """Where the window size comes from."""
    messages: int
    """Messages sent."""
    summaries: int
    """How many summaries the history has."""
    pointers: int
    """Messages sent as pointers to files."""
    attempt: int
    """1; 2 on the retry after an overflow."""


class OffloadedEvent(EventStamp):
    """A tool result too large for the conversation, saved to a file when it arrived."""

    type: Literal["offloaded"]
    path: str
    """The file under `/large_tool_results/`."""
    tool: str
    """The tool that returned it."""
    tool_call_id: str | None
    """The call it answers."""
    tokens: int
    """Approximate tokens of the result."""
    lines: int
    """Its lines."""
    chars: int
    """Its characters."""


class AgedEvent(EventStamp):
    """A tool result now sent as a pointer to its file."""

    type: Literal["aged"]
    path: str
    """The file holding the result."""
    tool: str | None
    """The tool that returned it."""
    tool_call_id: str
    """The call it answers."""
    tokens: int
    """Approximate tokens of the result."""
    lines: int
    """Its lines."""
    replies: int
    """Model replies since it arrived."""
    reason: Literal["consumed", "window"]
    """consumed: replied to often enough; window: moved early to fit the window."""


class InputOffloadedEvent(EventStamp):
    """An input sent as a pointer: a long user message, or an old file write's long arguments."""

    type: Literal["input_offloaded"]
    kind: Literal["human", "tool_args"]
    """human: a long user message saved to `path`; tool_args: an old write_file/edit_file call
    sent without its long arguments (`path` is the file it wrote)."""
    path: str | None
    """The file."""
    tokens: int
    """Approximate tokens moved out."""
    message_id: str | None
    """The user message's id (human), else None."""
    tool: str | None
    """The tool of the call (tool_args), else None."""
    tool_call_id: str | None
    """The call's id (tool_args), else None."""


class SummarizedEvent(EventStamp):
    """Older messages were folded into a summary (the checkpoint keeps them all)."""

    type: Literal["summarized"]
    reason: Literal["trigger", "history", "compact", "overflow"]
    """trigger: the window's trigger was passed; history: the older part of the conversation
    passed its share of the window; compact: the agent asked; overflow: the provider refused a
    request as too long."""
    count: int
    """This is the thread's nth summary."""
    tokens_before: int
    """Tokens of the request before."""
    tokens_after: int
    """Tokens of the request after."""
    messages_folded: int
    """Messages the summary stands for."""
    transcript_path: str
    """The `/conversation_history/` file holding them in full."""
    tokens_summary: int
    """Approximate tokens of the summary."""
    tokens_summarizer: int
    """Approximate tokens of the summarizer's request."""


class ContextOverflowEvent(EventStamp):
    """The provider rejected a request as too long."""

    type: Literal["context_overflow"]
    tokens: int
    """Tokens of the rejected request, as counted here."""
    window: int
    """The window it was sent for."""
    error: str
    """The provider's error, shortened."""
    action: Literal["retry", "raise"]
    """retry: summarize, shrink and send again; raise: give up with `ContextOverflow`."""


class CompactionRefusedEvent(EventStamp):
    """`compact_conversation` was called while the conversation was still small."""

    type: Literal["compaction_refused"]
    tokens: int
    """Tokens of the last request."""
    threshold: int
    """Tokens needed before compacting is allowed."""
