"""Answering a run that waits for approval, from a button or `%agent resume`.

The decision is a fact of the resumed run: an `approval_decided` event, emitted right after its
`run_started` through the run's own event path (so the cell view, the research log and every
other view see it with its `run_id` and `seq`). A button shown for a pause that was answered
since (in another cell, or dropped by a new request) refuses to act.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict

from jupyter_deepagent.events import APPROVAL_DECIDED, RUN_STARTED

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Interrupt

    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.jupyter.session.thread_state import PendingCall, ThreadAgent

__all__ = [
    "DecisionFields",
    "decision_fields",
    "interrupt_ids",
    "recording_decision",
    "still_waiting",
]


class DecisionFields(TypedDict):
    """The fields of an `approval_decided` event (see `decision_fields`)."""

    decision: str
    via: str
    tools: list[str]
    tool_call_ids: list[str | None]
    message: str | None
    edits: dict[str, object] | None


def interrupt_ids(interrupts: Sequence[Interrupt] | None) -> tuple[str, ...]:
    """The ids of a thread's pending interrupts, in order."""
    return tuple(str(getattr(interrupt, "id", "")) for interrupt in interrupts or ())


def still_waiting(agent: ThreadAgent, config: RunnableConfig, shown: Sequence[str]) -> None:
    """Check that the pause the buttons were shown for is the one the thread waits on now.

    Raises:
        ValueError: It was answered already (or a new request dropped it); nothing must run.
    """
    current = interrupt_ids(agent.get_state(config).interrupts)
    if not shown or tuple(shown) != current:
        msg = (
            "this approval was already answered (or a newer request replaced it); nothing was "
            "run. Run a new %%agent cell to continue."
        )
        raise ValueError(msg)


def decision_fields(
    agent: ThreadAgent,
    config: RunnableConfig,
    pending: Sequence[PendingCall],
    decision: str,
    *,
    message: str = "",
    edits: Mapping[str, object] | None = None,
    via: str,
) -> DecisionFields:
    """The fields of the `approval_decided` event for a decision on `pending`.

    `tools` and `tool_call_ids` name the calls answered, in order; `edits` holds the changed
    arguments (long strings cut as in `tool_call` events); `via` says who answered: "button" or
    "%agent resume".
    """
    from jupyter_deepagent.harness.run_events.event_stream import summarize_args

    return {
        "decision": decision,
        "via": via,
        "tools": [str(request.get("name")) for request in pending],
        "tool_call_ids": _call_ids(agent, config, pending),
        "message": message or None,
        "edits": summarize_args(dict(edits)) if edits else None,
    }


def recording_decision(
    on_event: Callable[[RunEvent], None] | None, fields: DecisionFields
) -> Callable[[RunEvent], None]:
    """`on_event`, emitting the `approval_decided` event right after the run's `run_started`."""
    from jupyter_deepagent.harness.run_events.event_stream import emit_event

    done = False

    def take(event: RunEvent) -> None:
        nonlocal done
        if on_event is not None:
            on_event(event)
        if not done and event.get("type") == RUN_STARTED:
            done = True
            emit_event(APPROVAL_DECIDED, **fields)

    return take


def _call_ids(
    agent: ThreadAgent, config: RunnableConfig, pending: Sequence[PendingCall]
) -> list[str | None]:
    """The tool call ids of the pending requests: unanswered calls of the last AI message,
    matched by name and arguments."""
    try:
        messages = list(agent.get_state(config).values.get("messages", []))
    except Exception:
        return [None] * len(pending)
    answered = {getattr(m, "tool_call_id", None) for m in messages if m.type == "tool"}
    last_ai = next((m for m in reversed(messages) if m.type == "ai"), None)
    calls = [c for c in getattr(last_ai, "tool_calls", []) or [] if c.get("id") not in answered]
    ids: list[str | None] = []
    for request in pending:
        wanted = (request.get("name"), request.get("args"))
        match = next((c for c in calls if (c["name"], c["args"]) == wanted), None)
        if match is not None:
            calls.remove(match)
        ids.append(match.get("id") if match is not None else None)
    return ids
