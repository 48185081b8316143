"""Run events: the one stream every view reads (cell output, inspector, sidebar, research log).

Each event is a plain JSON-serializable dict written to LangGraph's custom stream
(`stream_mode="custom"`), or to the sink `trace_run` installs. Every event carries:

- `type`: one of `EVENT_TYPES`
- `time`: seconds since the epoch (every time in every event is epoch seconds)
- `agent`: the agent's name (`"main"`, or the subagent's name)
- `task_id`: None for the main agent; the task id for events of a subagent's own steps
- `step`: the model call of this run the event belongs to (1-based; 0 before the first call)
- `run_id`, `seq`: the run (a uuid4 hex, one per `trace_run` call) and the event's position in it
  (0, 1, 2, ... in arrival order). Only `trace_run` adds them: events read straight from
  `agent.stream(..., stream_mode="custom")` have neither.

and its own fields (sizes of text are `chars`, token counts `tokens` or `tokens_*`, errors are
None or a plain string):

| type | fields |
|---|---|
| `run_started` | first event of a `trace_run`: `input` (text of the last human message; "resume" for a `Command`), `thread_id` (None without a checkpointer thread), `model` ("provider:model", None if unknown) |
| `run_finished` | last event of a `trace_run`: `status` (ok, interrupted: paused for approval, stopped: KeyboardInterrupt, error), `error`, `final_text`, totals over every model and tool call of the run, subagents included: `tokens_in`, `tokens_out`, `model_calls`, `tool_calls`, `seconds` |
| `prompt` | one per model call, before it: `hash` (first 16 hex digits of the sha256 of the prompt text), `tokens`, `assembly` (`PromptAssembly.as_dict()`; None when the prompt is the one this agent and task sent last in this run: look it up by `hash`) |
| `model_call` | `model` ("provider:model"), `tokens_in`, `tokens_in_estimated` (True: counted here, the provider reported none), `tokens_out`, `seconds`, `messages` (how many were sent), `tool_calls` (names), `reply` (the AI message as `message_to_dict` gives it: `{"type": "ai", "data": {content, tool_calls with ids and full args, usage_metadata, ...}}`; `messages_from_dict([reply])` rebuilds it; None if the model gave no AI message) |
| `tool_call` | `tool`, `tool_call_id`, `args` (`summarize_args`: JSON values, long strings as `{"chars", "head"}`, long lists as `{"items", "head"}`) |
| `tool_result` | `tool`, `tool_call_id`, `content` (the tool message text as the tool returned it, before any offloading), `chars`, `seconds`, `error` |
| `skill_loaded` | `skill`, `path` |
| `memory_loaded` | `path`, `tokens` (the whole file) |
| `todos` | `todos` (list of {content, status}) |
| `warning` | `message`, `source` (a file, an option; `context_window` for the default-window warning) |
| `subagent_started` | `description`, `parent_task_id`, `turn_id` (the calling AI message), `call_index` (its position among that message's tool calls); `agent` and `task_id` are the subagent's, `time` is when it started |
| `subagent_finished` | the same, plus `status` (ok, error, interrupted), `result` (the report text), `structured` (dict or None), `tokens_in`, `tokens_out` (summed over the task's model calls), `seconds`, `files_written`, `transcript_path`, `error` |
| `context` | one per model request, before it is sent: `tokens` (what is sent: system prompt, messages, tool schemas; calibrated), `window`, `trigger` (tokens where summarization starts), `window_source` (option, profile, default, learned), `messages`, `summaries` (how many summaries the history has), `pointers` (messages sent as pointers to files), `attempt` (2 on the retry after an overflow) |
| `offloaded` | a tool result too large for the conversation, saved when it arrived: `path`, `tool`, `tool_call_id`, `tokens`, `lines`, `chars` |
| `aged` | a tool result now sent as a pointer to its file: `path`, `tool`, `tool_call_id`, `tokens`, `lines`, `replies` (model replies since it arrived), `reason` (consumed; window: moved early to fit) |
| `input_offloaded` | `kind` (human: a long user message saved to `path`, with `message_id`; tool_args: an old write_file/edit_file call sent without its long arguments, with `tool`, `tool_call_id`, `path` of the file), `tokens` |
| `summarized` | `reason` (trigger, compact, overflow), `count` (the nth summary), `tokens_before`, `tokens_after`, `messages_folded`, `transcript_path`, `tokens_summary`, `tokens_summarizer` (size of the summarizer's request) |
| `context_overflow` | the provider rejected a request as too long: `tokens`, `window`, `error`, `action` (retry, raise) |
| `compaction_refused` | `compact_conversation` called too early: `tokens`, `threshold` |

A warning that would say the same thing again (the default window for a subagent, an oversized
memory file at every model call) is emitted once per run (`first_in_run`); on a plain custom
stream, which has no runs, only the main agent gives it.
"""

from __future__ import annotations

import contextvars
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "EVENT_TYPES",
    "RunEvent",
    "RunScope",
    "agent_scope",
    "current_agent",
    "current_run",
    "current_sink",
    "emit_event",
    "event_sink",
    "first_in_run",
    "prompt_changed",
    "run_scope",
    "run_step",
    "summarize_args",
]

RunEvent = dict[str, Any]

EVENT_TYPES = (
    "run_started",
    "run_finished",
    "prompt",
    "model_call",
    "tool_call",
    "tool_result",
    "skill_loaded",
    "memory_loaded",
    "todos",
    "warning",
    "context",
    "offloaded",
    "aged",
    "input_offloaded",
    "summarized",
    "context_overflow",
    "compaction_refused",
    "subagent_started",
    "subagent_finished",
)

_MAX_ITEMS = 50  # list items (and dict keys) `summarize_args` keeps
_MAX_DEPTH = 6

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
    """The (agent name, task id) the events of this context are stamped with."""
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


def current_run() -> RunScope | None:
    """The run being traced here, or None outside `trace_run`."""
    return _run_scope.get()


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


def emit_event(event_type: str, step: int = 0, **fields: Any) -> RunEvent:
    """Build an event with the common fields and write it to the current run's custom stream.

    Outside a graph run (a plain function call in a test or script) the event is only returned.
    """
    agent, task_id = _agent_scope.get()
    event: RunEvent = {
        "type": event_type,
        "time": time.time(),
        "agent": agent,
        "task_id": task_id,
        "step": step,
        **fields,
    }
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


def run_step(messages: Sequence[Any]) -> int:
    """Number of model replies since the last human message: the step of the current run."""
    steps = 0
    for message in reversed(messages):
        kind = getattr(message, "type", None)
        if kind == "human":
            break
        if kind == "ai":
            steps += 1
    return steps


def summarize_args(args: Any, limit: int = 200) -> dict[str, Any]:
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


def _short(value: Any, limit: int, depth: int) -> Any:
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
