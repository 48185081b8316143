"""Run events: the one stream every view reads (cell output, inspector, sidebar, research log).

Each event is a plain JSON-serializable dict written to LangGraph's custom stream
(`stream_mode="custom"`). Every event carries:

- `type`: one of `EVENT_TYPES`
- `time`: seconds since the epoch
- `agent`: the agent's name (`"main"`, or the subagent's name)
- `task_id`: None for the main agent; the task id for events of a subagent's own steps
- `step`: the model call of this run the event belongs to (1-based; 0 before the first call)

and its own fields:

| type | fields |
|---|---|
| `prompt` | `assembly` (PromptAssembly.as_dict(): sections with name, source, text, tokens) |
| `model_call` | `tokens_in`, `tokens_out`, `seconds`, `messages`, `tool_calls` (names) |
| `tool_call` | `tool`, `tool_call_id`, `args` (summary) |
| `tool_result` | `tool`, `tool_call_id`, `size` (chars), `seconds`, `error` (None or text) |
| `skill_loaded` | `skill`, `path` |
| `memory_loaded` | `path`, `tokens` |
| `todos` | `todos` (list of {content, status}) |
| `warning` | `message`, `source` (a file, an option) |
| `subagent_started` | `task_id`, `subagent`, `description`, `started_at` (ISO time), `parent_task_id`, `turn_id` (the calling AI message), `call_index` (its position among that message's tool calls) |
| `subagent_finished` | the same, plus `status` (ok, error, interrupted), `result` (the report text), `structured` (dict or None), `tokens_in`, `tokens_out` (summed over the task's model calls), `seconds`, `files_written`, `transcript_path`, `error` (None or text) |

| `context` | one per model request, before it is sent: `tokens` (what is sent: system prompt, messages, tool schemas; calibrated), `window`, `trigger` (tokens where summarization starts), `window_source` (option, profile, default, learned), `messages`, `summaries` (how many summaries the history has), `pointers` (messages sent as pointers to files), `attempt` (2 on the retry after an overflow) |
| `offloaded` | a tool result too large for the conversation, saved when it arrived: `path`, `tool`, `tool_call_id`, `tokens`, `lines`, `chars` |
| `aged` | a tool result now sent as a pointer to its file: `path`, `tool`, `tool_call_id`, `tokens`, `lines`, `replies` (model replies since it arrived), `reason` (consumed; window: moved early to fit) |
| `input_offloaded` | `kind` (human: a long user message saved to `path`, with `message_id`; tool_args: an old write_file/edit_file call sent without its long arguments, with `tool`, `tool_call_id`, `path` of the file), `tokens` |
| `summarized` | `reason` (trigger, compact, overflow), `count` (the nth summary), `tokens_before`, `tokens_after`, `messages_folded`, `transcript` (path), `summary_tokens`, `summarizer_tokens` (size of the summarizer's request) |
| `context_overflow` | the provider rejected a request as too long: `tokens`, `window`, `error`, `action` (retry, raise) |
| `compaction_refused` | `compact_conversation` called too early: `tokens`, `threshold` |

The default-window warning has `source="context_window"`. The subagent
events are stamped with the subagent's name and task id, like every event of its own steps.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

__all__ = [
    "EVENT_TYPES",
    "RunEvent",
    "agent_scope",
    "current_agent",
    "current_sink",
    "emit_event",
    "event_sink",
    "run_step",
    "summarize_args",
]

RunEvent = dict[str, Any]

EVENT_TYPES = (
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

_agent_scope: contextvars.ContextVar[tuple[str, str | None]] = contextvars.ContextVar(
    "jupyter_deepagent_agent_scope", default=("main", None)
)
_extra_sink: contextvars.ContextVar[Callable[[RunEvent], None] | None] = contextvars.ContextVar(
    "jupyter_deepagent_event_sink", default=None
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
    """A short, display-safe copy of a tool call's arguments: long strings are cut."""
    if not isinstance(args, dict):
        return {"value": _short(args, limit)}
    return {key: _short(value, limit) for key, value in args.items()}


def _short(value: Any, limit: int) -> Any:
    if isinstance(value, str) and len(value) > limit:
        return f"{value[:limit]}… [{len(value) - limit:,} more characters]"
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    if isinstance(value, str):
        return value
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}…"
