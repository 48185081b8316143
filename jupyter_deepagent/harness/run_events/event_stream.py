"""Emitting run events from inside the agent: the sink or stream they go to, the agent and task
they are stamped with, and what one run remembers (warnings given, prompts sent).

What each event holds is defined in `jupyter_deepagent.events`; every event is built there by
`build_event`, so an unknown type or a missing field fails where it is emitted. Events go to
LangGraph's custom stream (`stream_mode="custom"`), or to the sink `trace_run` installs.

A warning that would say the same thing again is emitted once per run (`first_in_run`); on a
plain custom stream, which has no runs, only the main agent gives it.
"""

from __future__ import annotations

import contextvars
import itertools
import operator
import threading
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from jupyter_deepagent.events import RunEvent, build_event

__all__ = [
    "RunScope",
    "agent_scope",
    "current_agent",
    "current_sink",
    "emit_event",
    "event_sink",
    "first_in_run",
    "prompt_changed",
    "run_scope",
    "run_step",
    "summarize_args",
]

_MAX_ITEMS = 50  # list items (and dict keys) `summarize_args` keeps
_MAX_DEPTH = 6
_Counted = tuple[Sequence[object], int, tuple[object, ...], int]
_counted: list[_Counted] = [((), 0, (), 0)]
"""`run_step`'s last answer: (the list, its length, its items, steps), shared by every thread (the
tools run in another thread than the model), replaced whole."""

_agent_scope: contextvars.ContextVar[tuple[str, str | None]] = contextvars.ContextVar(
    "jupyter_deepagent_agent_scope", default=("main", None)
)
_extra_sink: contextvars.ContextVar[Callable[[RunEvent], None] | None] = contextvars.ContextVar(
    "jupyter_deepagent_event_sink", default=None
)


@dataclass
class RunScope:
    """What the harness remembers during one `trace_run`: its id, the warnings already given and
    the last prompt of each agent (so an unchanged prompt is sent as its hash alone)."""

    run_id: str
    seen: set[Hashable] = field(default_factory=set)
    prompts: dict[tuple[str, str | None], str] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_run_scope: contextvars.ContextVar[RunScope | None] = contextvars.ContextVar(
    "jupyter_deepagent_run_scope", default=None
)


def current_agent() -> tuple[str, str | None]:
    """The (agent name, task id) the events emitted here are stamped with."""
    return _agent_scope.get()


@contextmanager
def agent_scope(name: str, task_id: str | None) -> Iterator[None]:
    """Stamp events emitted inside the block with a subagent's name and task id."""
    token = _agent_scope.set((name, task_id))
    try:
        yield
    finally:
        _agent_scope.reset(token)


def current_sink() -> Callable[[RunEvent], None] | None:
    """The sink events emitted here go to, or None when they go to LangGraph's custom stream."""
    return _extra_sink.get()


@contextmanager
def event_sink(sink: Callable[[RunEvent], None]) -> Iterator[None]:
    """Send events emitted inside the block to `sink` instead of LangGraph's custom stream.

    Used to forward a subagent's events into its parent's stream.
    """
    token = _extra_sink.set(sink)
    try:
        yield
    finally:
        _extra_sink.reset(token)


@contextmanager
def run_scope(run_id: str) -> Iterator[RunScope]:
    """Mark the block as one run (as `trace_run` does) for `first_in_run` and `prompt_changed`."""
    scope = RunScope(run_id)
    token = _run_scope.set(scope)
    try:
        yield scope
    finally:
        _run_scope.reset(token)


def first_in_run(key: Hashable, *, otherwise: bool) -> bool:
    """True the first time `key` is seen in the current run; outside `trace_run`, `otherwise`."""
    scope = _run_scope.get()
    if scope is None:
        return otherwise
    with scope.lock:
        if key in scope.seen:
            return False
        scope.seen.add(key)
        return True


def prompt_changed(digest: str) -> bool:
    """Whether this agent's prompt differs from the one it sent last in this run (always True
    outside `trace_run`, so every event of a plain custom stream stands on its own)."""
    scope = _run_scope.get()
    if scope is None:
        return True
    key = _agent_scope.get()
    with scope.lock:
        changed = scope.prompts.get(key) != digest
        scope.prompts[key] = digest
        return changed


def emit_event(event_type: str, step: int = 0, **fields: object) -> RunEvent:
    """Build an event (`build_event`) and write it to the current sink or custom stream.

    Outside a graph run (a plain function call in a test or script) the event is only returned.

    Raises:
        ValueError: `event_type` is not in the schema, or `fields` miss or add a field.
    """
    agent, task_id = _agent_scope.get()
    event = build_event(event_type, agent=agent, task_id=task_id, step=step, **fields)
    sink = _extra_sink.get()
    if sink is not None:
        sink(event)
        return event
    try:
        from langgraph.config import get_stream_writer

        writer = get_stream_writer()
    except (RuntimeError, ImportError):  # not inside a graph run
        return event
    writer(event)
    return event


def run_step(messages: Sequence[object]) -> int:
    """Number of model replies since the last human message: the step of the current run.

    Every middleware asks it at every model and tool call, so the last answer is remembered with
    the messages it counted: the same list again is answered at once, and a list that starts with
    the very same messages (one step later, say) only has its new tail counted.
    """
    last = _counted[0]
    if last[0] is messages and last[1] == len(messages):
        return last[3]  # the very list asked about last, unchanged: the layers of one call
    seen, steps = last[2], last[3]
    known = len(seen)
    if not (known <= len(messages) and all(map(operator.is_, seen, messages))):
        known, steps = 0, 0
    for message in itertools.islice(messages, known, None):
        kind = getattr(message, "type", None)
        if kind == "human":
            steps = 0
        elif kind == "ai":
            steps += 1
    _counted[0] = (messages, len(messages), tuple(messages), steps)
    return steps


def summarize_args(args: object, limit: int = 200) -> dict[str, object]:
    """A short, display-safe copy of a tool call's arguments, as JSON values.

    Lists and dicts stay lists and dicts. A string longer than `limit` becomes
    `{"chars": <its length>, "head": <its first limit characters>}`; a list of more than 50 items
    becomes `{"items": <its length>, "head": <its first 50 items>}`; a dict keeps its first 50 keys
    and nesting stops 6 levels down (deeper values become text). Anything that is not JSON
    (rare in model output) becomes its `str`. The whole arguments are in the `model_call` reply.
    """
    if not isinstance(args, dict):
        return {"value": _short(args, limit, 0)}
    return {str(key): _short(value, limit, 0) for key, value in args.items()}


def _short(value: object, limit: int, depth: int) -> object:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if not isinstance(value, (str, list, tuple, dict)) or depth >= _MAX_DEPTH:
        value = str(value)
    if isinstance(value, str):
        return value if len(value) <= limit else {"chars": len(value), "head": value[:limit]}
    if isinstance(value, dict):
        return {str(k): _short(v, limit, depth + 1) for k, v in list(value.items())[:_MAX_ITEMS]}
    items = [_short(v, limit, depth + 1) for v in value[:_MAX_ITEMS]]
    return items if len(value) <= _MAX_ITEMS else {"items": len(value), "head": items}
