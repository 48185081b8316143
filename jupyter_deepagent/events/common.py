"""What every run event carries, whatever its type: the schema version and where it comes from."""

from typing import Final, NotRequired

from typing_extensions import TypedDict

__all__ = ["SCHEMA_VERSION", "EventStamp"]

SCHEMA_VERSION: Final = 1
"""The version of the event schema; a change that breaks a reader increases it."""


class EventStamp(TypedDict):
    """The fields every event has besides its `type`."""

    schema: int
    """The schema version the event follows (`SCHEMA_VERSION`)."""
    time: float
    """When it happened, in seconds since the epoch (every time in every event is epoch seconds)."""
    agent: str
    """The agent it belongs to: `"main"`, or the subagent's name."""
    task_id: str | None
    """None for the main agent; the task id for the events of a subagent's own steps."""
    step: int
    """The model call of the agent's run it belongs to (1-based; 0 before the first call)."""
    run_id: NotRequired[str]
    """The run (a uuid4 hex, one per `trace_run` call); only `trace_run` adds it."""
    seq: NotRequired[int]
    """The event's position in its run (0, 1, 2, ... in arrival order); only `trace_run` adds it."""
