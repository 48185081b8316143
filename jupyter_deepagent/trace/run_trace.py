"""`RunTrace`: the record of one agent run, built only from its run events and final state."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jupyter_deepagent.harness.events import RunEvent, event_sink
from jupyter_deepagent.harness.prompt import PromptAssembly

__all__ = ["RunTrace", "trace_run"]


@dataclass
class RunTrace:
    """Events of a run in order, the final state, and any pending interrupts."""

    events: list[RunEvent] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Any] = field(default_factory=list)

    def of_type(self, *types: str) -> list[RunEvent]:
        """Events of the given types, in order."""
        return [event for event in self.events if event["type"] in types]

    @property
    def prompts(self) -> list[PromptAssembly]:
        """The system prompt of each of the main agent's model calls, in order."""
        return [
            PromptAssembly.from_dict(event["assembly"])
            for event in self.of_type("prompt")
            if event.get("task_id") is None
        ]

    @property
    def messages(self) -> list[Any]:
        """The conversation as checkpointed at the end of the run."""
        return list(self.state.get("messages", []))

    @property
    def final_text(self) -> str:
        """Text of the last AI message ("" when the run ended on an interrupt or a tool)."""
        for message in reversed(self.messages):
            if getattr(message, "type", None) == "ai":
                return message.text if not getattr(message, "tool_calls", None) else ""
        return ""

    @property
    def warnings(self) -> list[str]:
        """Messages of the run's warning events."""
        return [event["message"] for event in self.of_type("warning")]

    def results_frame(self) -> Any:
        """The run's subagent tasks as a pandas DataFrame, one row per task in call order
        (see `jupyter_deepagent.trace.results.results_frame`)."""
        from jupyter_deepagent.trace.results import results_frame

        return results_frame(self.events)


def trace_run(
    agent: Any,
    input: Any,  # noqa: A002 - LangGraph's own name for it
    *,
    context: Any = None,
    config: dict[str, Any] | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
) -> RunTrace:
    """Run `agent` on `input` and collect its run events and final state.

    `on_event` is called with each event as it arrives, for live views. Events are collected
    through `event_sink` rather than LangGraph's custom stream: with only "values"/"updates"
    streaming, LangGraph runs each node in the calling thread, so a KeyboardInterrupt (the
    notebook's stop button) arrives at once instead of after the running node finishes.
    """
    trace = RunTrace()
    lock = threading.Lock()

    def collect(event: RunEvent) -> None:
        with lock:
            trace.events.append(event)
        if on_event is not None:
            on_event(event)

    with event_sink(collect):
        for mode, chunk in _stream(agent, input, context=context, config=config):
            if not isinstance(chunk, dict):
                continue
            if "__interrupt__" in chunk:
                if mode == "updates":
                    trace.interrupts.extend(chunk["__interrupt__"])
            elif mode == "values":
                trace.state = chunk
    return trace


def _stream(
    agent: Any, input: Any, *, context: Any, config: dict[str, Any] | None  # noqa: A002
) -> Iterable[tuple[str, Any]]:
    kwargs: dict[str, Any] = {"stream_mode": ["values", "updates"]}
    if context is not None:
        kwargs["context"] = context
    yield from agent.stream(input, config, **kwargs)
