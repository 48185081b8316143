"""`RunTrace`: the record of one agent run, built only from its run events and final state."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from jupyter_deepagent.harness.event_stream import RunEvent, emit_event, event_sink, run_scope
from jupyter_deepagent.harness.prompt.sections import PromptAssembly

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
    def run_id(self) -> str | None:
        """The id `trace_run` gave the run (None for events gathered some other way)."""
        return self.events[0].get("run_id") if self.events else None

    @property
    def status(self) -> str | None:
        """How the run ended (`run_finished`'s status: ok, interrupted, stopped, error)."""
        finished = self.of_type("run_finished")
        return finished[-1]["status"] if finished else None

    @property
    def prompts(self) -> list[PromptAssembly]:
        """The system prompt of each of the main agent's model calls, in order (a `prompt` event
        without an assembly repeats the last one with the same hash)."""
        known: dict[str, PromptAssembly] = {}
        prompts = []
        for event in self.of_type("prompt"):
            if event.get("task_id") is not None:
                continue
            digest = event.get("hash")
            if event.get("assembly") is not None:
                assembly = PromptAssembly.from_dict(event["assembly"])
                known[digest] = assembly
            elif digest in known:
                assembly = known[digest]
            else:  # the run's events start after the prompt was first sent
                continue
            prompts.append(assembly)
        return prompts

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

    The events are stamped with the run's `run_id` and their `seq` (0, 1, 2, ...), open with
    `run_started` and close with `run_finished`. `on_event` is called with each event as it
    arrives, in `seq` order, for live views.

    Events are collected through `event_sink` rather than LangGraph's custom stream: with only
    "values"/"updates" streaming, LangGraph runs each node in the calling thread, so a
    KeyboardInterrupt (the notebook's stop button) arrives at once instead of after the running
    node finishes.

    Raises:
        BaseException: whatever the run raised (a KeyboardInterrupt, a provider error, ...),
            after `run_finished` (status "stopped" or "error") is recorded; the partial
            `RunTrace` is attached to it as `exc.trace`.
    """
    trace = RunTrace()
    run_id = uuid.uuid4().hex
    lock = threading.RLock()  # an on_event that emits an event must not deadlock

    def collect(event: RunEvent) -> None:
        with lock:
            event["run_id"], event["seq"] = run_id, len(trace.events)
            trace.events.append(event)
            if on_event is not None:
                on_event(event)

    started = time.perf_counter()
    with event_sink(collect), run_scope(run_id):
        emit_event("run_started", input=_input_text(input), thread_id=_thread_id(config),
                   model=_model_label(agent))
        try:
            for mode, chunk in _stream(agent, input, context=context, config=config):
                if not isinstance(chunk, dict):
                    continue
                if "__interrupt__" in chunk:
                    if mode == "updates":
                        trace.interrupts.extend(chunk["__interrupt__"])
                elif mode == "values":
                    trace.state = chunk
        except BaseException as exc:
            status = "stopped" if isinstance(exc, KeyboardInterrupt) else "error"
            _finished(trace, status, time.perf_counter() - started, f"{type(exc).__name__}: {exc}")
            try:
                exc.trace = trace  # type: ignore[attr-defined]
            except AttributeError:  # an exception type without a __dict__
                pass
            raise
        status = "interrupted" if trace.interrupts else "ok"
        _finished(trace, status, time.perf_counter() - started, None)
    return trace


def _finished(trace: RunTrace, status: str, seconds: float, error: str | None) -> None:
    model_calls = trace.of_type("model_call")
    steps = [e["step"] for e in model_calls if e.get("task_id") is None]
    emit_event(
        "run_finished",
        step=max(steps, default=0),
        status=status,
        error=error,
        final_text=trace.final_text,
        tokens_in=sum(int(e.get("tokens_in") or 0) for e in model_calls),
        tokens_out=sum(int(e.get("tokens_out") or 0) for e in model_calls),
        model_calls=len(model_calls),
        tool_calls=len(trace.of_type("tool_call")),
        seconds=round(seconds, 6),
    )


def _input_text(payload: Any) -> str:
    """The text of the last human message of a run's input; "resume" for a `Command` or None."""
    messages = payload.get("messages") if isinstance(payload, dict) else None
    if not messages:
        return "resume" if payload is None or not isinstance(payload, dict) else ""
    from langchain_core.messages import convert_to_messages

    try:
        converted = convert_to_messages(messages)
    except (ValueError, TypeError, NotImplementedError):
        return ""
    for message in reversed(converted):
        if message.type == "human":
            return str(message.text)
    return ""


def _thread_id(config: dict[str, Any] | None) -> str | None:
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _model_label(agent: Any) -> str | None:
    """The main model's label, as `create_research_agent` put it in the graph's config metadata."""
    from jupyter_deepagent.harness.models.label import MODEL_METADATA_KEY

    metadata = (getattr(agent, "config", None) or {}).get("metadata") or {}
    label = metadata.get(MODEL_METADATA_KEY)
    return label if isinstance(label, str) else None


def _stream(
    agent: Any, input: Any, *, context: Any, config: dict[str, Any] | None  # noqa: A002
) -> Iterable[tuple[str, Any]]:
    kwargs: dict[str, Any] = {"stream_mode": ["values", "updates"]}
    if context is not None:
        kwargs["context"] = context
    yield from agent.stream(input, config, **kwargs)
