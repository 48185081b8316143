"""Run events of the `task` tool: a subagent's start and end. Events of the subagent's own steps
come between them, with its name as `agent` and its task id as `task_id`."""

from typing import Any, Final, Literal

from jupyter_deepagent.events.common import EventStamp

__all__ = ["SUBAGENT_FINISHED", "SUBAGENT_STARTED", "SubagentFinishedEvent", "SubagentStartedEvent"]

SUBAGENT_STARTED: Final = "subagent_started"
SUBAGENT_FINISHED: Final = "subagent_finished"


class SubagentStartedEvent(EventStamp):
    """A `task` call started its subagent; `agent` and `task_id` are the subagent's and `time`
    is when it started."""

    type: Literal["subagent_started"]
    description: str
    """The task as the caller wrote it."""
    parent_task_id: str | None
    """The calling agent's task id (None when the main agent called)."""
    turn_id: str | None
    """The calling AI message."""
    call_index: int
    """The call's position among that message's tool calls."""


class SubagentFinishedEvent(EventStamp):
    """A subagent returned (or failed); `agent` and `task_id` are the subagent's."""

    type: Literal["subagent_finished"]
    description: str
    """The task as the caller wrote it."""
    parent_task_id: str | None
    """The calling agent's task id (None when the main agent called)."""
    turn_id: str | None
    """The calling AI message."""
    call_index: int
    """The call's position among that message's tool calls."""
    status: Literal["ok", "error", "interrupted"]
    """How the task ended."""
    result: str
    """The report text the caller gets."""
    structured: dict[str, Any] | None
    """The structured response as JSON data, or None."""
    tokens_in: int
    """Input tokens summed over the task's model calls."""
    tokens_out: int
    """Output tokens summed over the task's model calls."""
    seconds: float
    """Wall time of the task."""
    files_written: list[str]
    """Files the subagent wrote."""
    transcript_path: str | None
    """Its conversation under `/subagents/` (None if it could not be saved)."""
    error: str | None
    """The error text when it failed, else None."""
