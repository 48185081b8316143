"""`RunTrace`: the record of one agent run, built from its run events (and, live, its final
state); `trace_run` and `atrace_run` run an agent and collect it.

A `RunTrace` is rebuilt from events alone (`from_events`, `read_jsonl`): its prompts, results
frame, status and final text come from the events, so a run written to JSONL and read back in
another process shows the same views.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jupyter_deepagent.events import (
    ANSWER,
    MODEL_CALL,
    PROMPT,
    RUN_FINISHED,
    RUN_STARTED,
    WARNING,
    ModelCallEvent,
    RunEvent,
    RunFinishedEvent,
)
from jupyter_deepagent.harness.budget.ledger import as_ledger, budget_scope
from jupyter_deepagent.harness.pricing.run_prices import prices_scope
from jupyter_deepagent.harness.prompt.sections import PromptAssembly
from jupyter_deepagent.harness.run_events.event_stream import emit_event, event_sink, run_scope
from jupyter_deepagent.trace._run_sink import (
    RunSink,
    emit_approval_decisions,
    emit_approval_requests,
    input_text,
)
from jupyter_deepagent.trace.run_totals import RunCost, finished_totals, run_cost

if TYPE_CHECKING:
    import pandas as pd
    from langchain_core.messages import BaseMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.pregel import Pregel
    from langgraph.types import Interrupt

    from jupyter_deepagent.harness.budget.ledger import BudgetLedger
    from jupyter_deepagent.harness.budget.limit import Budget
    from jupyter_deepagent.harness.pricing.table import PriceTable
    from jupyter_deepagent.trace._run_sink import StatefulAgent

__all__ = ["RunTrace", "atrace_run", "trace_run", "traced"]


@dataclass
class RunTrace:
    """Events of a run in order, the final state, any pending interrupts and the budget ledger
    (the last three only for a run traced in this process)."""

    events: list[RunEvent] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    interrupts: list[Interrupt] = field(default_factory=list)
    ledger: BudgetLedger | None = None
    """The run's budget ledger: give it to the resume of a paused run (`budget=trace.ledger`),
    so what was spent before the pause still counts."""

    @classmethod
    def from_events(cls, events: Iterable[RunEvent]) -> RunTrace:
        """A trace of these events alone (no state, no interrupts)."""
        return cls(events=[cast("RunEvent", dict(event)) for event in events])

    def to_jsonl(self, path: str | Path) -> None:
        """Write the events to `path`, one JSON object per line (UTF-8)."""
        with Path(path).open("w", encoding="utf-8") as file:
            for event in self.events:
                file.write(json.dumps(event, ensure_ascii=False, allow_nan=False) + "\n")

    @classmethod
    def read_jsonl(cls, path: str | Path) -> RunTrace:
        """The trace of the events `to_jsonl` wrote to `path`.

        Raises:
            OSError: The file cannot be read.
            ValueError: A line is not a JSON object; the message names the file and line.
        """
        events: list[RunEvent] = []
        with Path(path).open(encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except json.JSONDecodeError as exc:
                    msg = f"{path}, line {number}: not JSON ({exc.msg})"
                    raise ValueError(msg) from None
                if not isinstance(event, dict):
                    msg = f"{path}, line {number}: a run event is a JSON object"
                    raise ValueError(msg)
                events.append(cast("RunEvent", event))
        return cls.from_events(events)

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
        finished = _run_finished(self.events)
        return finished["status"] if finished is not None else None

    @property
    def prompts(self) -> list[PromptAssembly]:
        """The system prompt of each of the main agent's model calls, in order (a `prompt` event
        without an assembly repeats the last one with the same hash)."""
        known: dict[str | None, PromptAssembly] = {}
        prompts = []
        for event in self.events:
            if event["type"] != PROMPT or event.get("task_id") is not None:
                continue
            digest = event.get("hash")
            given = event.get("assembly")
            if given is not None:
                assembly = PromptAssembly.from_dict(given)
                known[digest] = assembly
            elif digest in known:
                assembly = known[digest]
            else:  # the run's events start after the prompt was first sent
                continue
            prompts.append(assembly)
        return prompts

    @property
    def messages(self) -> list[BaseMessage]:
        """The conversation as checkpointed at the end of the run (live traces only)."""
        return list(self.state.get("messages", []))

    @property
    def final_text(self) -> str:
        """The final answer's text, from `run_finished` ("" when the run ended on an interrupt or
        a tool); before the run finished, from the state so far."""
        finished = _run_finished(self.events)
        if finished is not None:
            return str(finished.get("final_text") or "")
        return _state_final_text(self.state)

    @property
    def cost(self) -> RunCost:
        """What the run's model calls cost (`RunCost`: US dollars or "price unknown", by part)."""
        return run_cost(self.events)

    @property
    def warnings(self) -> list[str]:
        """Messages of the run's warning events."""
        return [event["message"] for event in self.events if event["type"] == WARNING]

    # -- display: the inspector, not a dump of the state -------------------------------------------
    def __repr__(self) -> str:
        from jupyter_deepagent.trace.inspector import trace_line

        return trace_line(self.events, len(self.messages))

    def _repr_mimebundle_(self, include: object = None, exclude: object = None) -> dict[str, str]:
        """The inspector as static HTML and plain text (a notebook shows the live widget)."""
        from jupyter_deepagent.trace.inspector import static_bundle

        return static_bundle(self.events)

    def results_frame(self) -> pd.DataFrame:
        """The run's subagent tasks as a pandas DataFrame, one row per task in call order
        (see `jupyter_deepagent.trace.results.results_frame`)."""
        from jupyter_deepagent.trace.results import results_frame

        return results_frame(self.events)


def trace_run(
    agent: Pregel,
    input: object,
    *,
    context: object = None,
    config: dict[str, Any] | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    redact: Callable[[str], str] | None = None,
    trace: RunTrace | None = None,
    budget: BudgetLedger | Budget | str | float | None = None,
    prices: PriceTable | None = None,
) -> RunTrace:
    """Run `agent` on `input` and collect its run events and final state.

    The events open with `run_started` and close with `run_finished`; a resume `Command` adds its
    `approval_decided` (unless `on_event` already emitted one right after `run_started`, as the
    notebook does), a pause an `approval_requested` per waiting call, and a finished run its
    `answer`. Each event is built anew for the trace: masked by `redact` (every
    string in it, so a secret in a provider's error text is masked in every view), stamped with
    the run's `run_id` and its `seq` (0, 1, 2, ...), then kept and passed to `on_event`, in
    `seq` order, for live views.

    Events are collected through `event_sink` rather than LangGraph's custom stream: with only
    "values"/"updates" streaming, LangGraph runs each node in the calling thread, so a
    KeyboardInterrupt (the notebook's stop button) arrives at once instead of after the running
    node finishes.

    Each `model_call` is priced by `prices` (default: the shipped table). With a `budget` ("$0.50",
    0.5, "200k tokens", or the `RunTrace.ledger` of the paused run this one resumes) the run pauses
    before a call that would pass it (`harness.budget.middleware`).

    Raises:
        ValueError: `budget` is not a budget.
        BaseException: whatever the run raised (a KeyboardInterrupt, a provider error, ...),
            after `run_finished` (status "stopped" or "error") is recorded; the partial
            `RunTrace` is attached to it as `exc.trace`, and is in `trace` when one was given.
    """
    trace = trace if trace is not None else RunTrace()
    if budget is not None:
        trace.ledger = as_ledger(budget)
    with traced(trace, agent, input, config, on_event, redact, prices=prices) as absorb:
        chunks = agent.stream(input, _runnable(config), **_stream_options(context))
        for mode, chunk in cast("Iterator[tuple[str, object]]", chunks):
            absorb(mode, chunk)
    return trace


async def atrace_run(
    agent: Pregel,
    input: object,
    *,
    context: object = None,
    config: dict[str, Any] | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
    redact: Callable[[str], str] | None = None,
    budget: BudgetLedger | Budget | str | float | None = None,
    prices: PriceTable | None = None,
) -> RunTrace:
    """The async twin of `trace_run` (the agent runs with `astream`).

    Raises:
        ValueError: `budget` is not a budget.
        BaseException: as `trace_run` (a cancelled task records status "stopped").
    """
    trace = RunTrace(ledger=as_ledger(budget))
    with traced(trace, agent, input, config, on_event, redact, prices=prices) as absorb:
        chunks = agent.astream(input, _runnable(config), **_stream_options(context))
        async for mode, chunk in cast("AsyncIterator[tuple[str, object]]", chunks):
            absorb(mode, chunk)
    return trace


@contextmanager
def traced(
    trace: RunTrace,
    agent: StatefulAgent,
    payload: object,
    config: dict[str, Any] | None,
    on_event: Callable[[RunEvent], None] | None,
    redact: Callable[[str], str] | None,
    *,
    prices: PriceTable | None = None,
) -> Iterator[Callable[[str, object], None]]:
    """Trace the run driven inside the block into `trace`: the sink, the first and last events,
    and what each streamed chunk adds. `trace_run`, `atrace_run` and `trace_remote_run` drive
    the run and hand every `(mode, chunk)` they stream to the function the block gets.

    Args:
        trace: The trace to fill (its events, state and interrupts).
        agent: The agent, read for its model's label and for the state a resume answers.
        payload: The run's input, or a resume `Command`.
        config: The run's config (its thread id goes in `run_started`).
        on_event: Called with each event once masked and stamped.
        redact: Masks secrets in every string of every event.
        prices: The table its calls are priced by (None: the shipped one); its budget is
            `trace.ledger`.

    Yields:
        The function that takes each streamed `(mode, chunk)`.

    Raises:
        BaseException: Whatever the block raised, after `run_finished` recorded it.
    """
    run_id = uuid.uuid4().hex
    started = time.perf_counter()

    def absorb(mode: str, chunk: object) -> None:
        if not isinstance(chunk, dict):
            return
        if "__interrupt__" in chunk:
            if mode == "updates":
                trace.interrupts.extend(chunk["__interrupt__"])
                emit_approval_requests(chunk["__interrupt__"], _main_step(trace))
        elif mode == "values":
            trace.state = chunk

    sink = RunSink(run_id, trace.events, on_event, redact)
    with event_sink(sink), run_scope(run_id), prices_scope(prices), budget_scope(trace.ledger):
        emit_event(
            RUN_STARTED,
            input=input_text(payload),
            thread_id=_thread_id(config),
            model=_model_label(agent),
        )
        emit_approval_decisions(agent, payload, config, trace.events)
        try:
            yield absorb
        except BaseException as exc:
            stopped = isinstance(exc, (KeyboardInterrupt, _cancelled()))
            _finished(
                trace,
                "stopped" if stopped else "error",
                time.perf_counter() - started,
                f"{type(exc).__name__}: {exc}",
            )
            try:
                exc.trace = trace  # type: ignore[attr-defined]
            except AttributeError:  # an exception type without a __dict__
                pass
            raise
        status = "interrupted" if trace.interrupts else "ok"
        _finished(trace, status, time.perf_counter() - started, None)


def _cancelled() -> type[BaseException]:
    import asyncio

    return asyncio.CancelledError


def _model_calls(trace: RunTrace) -> list[ModelCallEvent]:
    return [event for event in trace.events if event["type"] == MODEL_CALL]


def _run_finished(events: list[RunEvent]) -> RunFinishedEvent | None:
    """The last `run_finished` event, if the run finished."""
    finished = [event for event in events if event["type"] == RUN_FINISHED]
    return finished[-1] if finished else None


def _main_step(trace: RunTrace) -> int:
    steps = [e["step"] for e in _model_calls(trace) if e.get("task_id") is None]
    return max(steps, default=0)


def _finished(trace: RunTrace, status: str, seconds: float, error: str | None) -> None:
    text = _state_final_text(trace.state) if status == "ok" else ""
    if status == "ok" and text:
        from jupyter_deepagent.harness.subagents.outcome import structured_as_dict

        emit_event(
            ANSWER,
            step=_main_step(trace),
            text=text,
            structured=structured_as_dict(trace.state.get("structured_response")),
        )
    emit_event(
        RUN_FINISHED,
        step=_main_step(trace),
        status=status,
        error=error,
        final_text=_state_final_text(trace.state),
        **finished_totals(trace.events, trace.interrupts),
        seconds=round(seconds, 6),
    )


def _state_final_text(state: dict[str, Any]) -> str:
    """Text of the last AI message ("" when the run ended on an interrupt or a tool)."""
    for message in reversed(list(state.get("messages", []))):
        if getattr(message, "type", None) == "ai":
            return message.text if not getattr(message, "tool_calls", None) else ""
    return ""


def _thread_id(config: dict[str, Any] | None) -> str | None:
    thread = ((config or {}).get("configurable") or {}).get("thread_id")
    return None if thread is None else str(thread)


def _model_label(agent: object) -> str | None:
    """The main model's label, as `create_research_agent` put it in the graph's config metadata."""
    from jupyter_deepagent.harness.models.label import MODEL_METADATA_KEY

    metadata = (getattr(agent, "config", None) or {}).get("metadata") or {}
    label = metadata.get(MODEL_METADATA_KEY)
    return label if isinstance(label, str) else None


def _runnable(config: dict[str, Any] | None) -> RunnableConfig | None:
    """The run's config as LangGraph types it (a `RunnableConfig` is a plain dict)."""
    return cast("RunnableConfig | None", config)


def _stream_options(context: object) -> dict[str, Any]:
    """Pregel's stream options (its overloads type each option; the dict is loosely typed)."""
    options: dict[str, Any] = {"stream_mode": ["values", "updates"]}
    if context is not None:
        options["context"] = context
    return options
