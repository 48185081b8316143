"""The inspector's Context tab, from the main agent's events: the gauge of the last request, its
breakdown, the tokens sent at each step and where compression acted.

The gauge and the per-step figures are the harness's own (`context` events). The breakdown is
exact when a `context` event carries one (a `breakdown` dict of token counts); otherwise it is
derived from events: the system prompt from the `prompt` event, tool schemas from the first
request of a new thread (what it held beyond the prompt and the question), tool results from the
`tool_result` events still sent whole (pointers once offloaded or aged, dropped once summarized),
and the rest is messages. A derived breakdown is marked `estimated`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final, TypeAlias, cast

from jupyter_deepagent.events import (
    AGED,
    CONTEXT,
    CONTEXT_OVERFLOW,
    INPUT_OFFLOADED,
    OFFLOADED,
    RUN_STARTED,
    SUMMARIZED,
    TOOL_RESULT,
    AgedEvent,
    ContextEvent,
    ContextOverflowEvent,
    InputOffloadedEvent,
    OffloadedEvent,
    RunEvent,
    SummarizedEvent,
    ToolResultEvent,
)
from jupyter_deepagent.harness.compression.tokens import approx_tokens

__all__ = ["ContextTracker"]

_MARK_KINDS: Final = (OFFLOADED, AGED, INPUT_OFFLOADED, SUMMARIZED, CONTEXT_OVERFLOW)
"""Compression events drawn as marks on the step chart."""

_MarkEvent: TypeAlias = (
    OffloadedEvent | AgedEvent | InputOffloadedEvent | SummarizedEvent | ContextOverflowEvent
)
JSONDict: TypeAlias = dict[str, object]

_POINTER_TOKENS = 60  # the sentence a pointer message says, before its preview lines
_OFFLOAD_PREVIEW, _AGED_PREVIEW = 10, 3


def _head(text: str, lines: int, width: int | None = None) -> str:
    head = text.split("\n", lines)[:lines]
    return "\n".join(line[:width] if width else line for line in head)


class ContextTracker:
    """Follows the main agent's `context`, `prompt`, tool and compression events."""

    def __init__(self) -> None:
        self.system_tokens = 0
        self.schema_tokens: int | None = None
        self.last: ContextEvent | None = None
        self.steps: dict[int, JSONDict] = {}
        self.marks: list[JSONDict] = []
        self.peak = 0
        self._sorted, self._last_step = True, 0
        self._input = ""
        self._results: dict[str, list[int]] = {}  # tool_call_id -> [sent, offload ptr, aged ptr]
        self._forms: dict[str, str] = {}  # tool_call_id -> offloaded / aged, before its result

    def add(self, event: RunEvent) -> None:
        """Take one event of the main agent."""
        if event["type"] == RUN_STARTED:
            self._input = str(event.get("input") or "")
        elif event["type"] == CONTEXT:
            self._take_context(event)
        elif event["type"] == TOOL_RESULT:
            self._take_result(event)
        elif event["type"] in _MARK_KINDS:
            self.marks.append(_mark(event))
            if event["type"] in (OFFLOADED, AGED) and event.get("tool_call_id") is not None:
                call_id = str(event.get("tool_call_id"))
                self._forms[call_id] = event["type"]
                self._resize(call_id)
            elif event["type"] == SUMMARIZED:
                self._fold(int(event.get("tokens_after") or 0))

    def _take_context(self, event: ContextEvent) -> None:
        step = int(event.get("step") or 0)
        tokens = int(event.get("tokens") or 0)
        self.last = event
        self.steps[step] = {
            "step": step,
            "tokens": tokens,
            "attempt": event.get("attempt", 1),
            "messages": event.get("messages"),
            "pointers": event.get("pointers"),
        }
        self.peak = max(self.peak, tokens)
        self._sorted = self._sorted and (len(self.steps) < 2 or step >= self._last_step)
        self._last_step = step
        if self.schema_tokens is None and event.get("messages") == 1 and self.system_tokens:
            # the first request of a new thread: prompt + tool schemas + the question
            rest = tokens - self.system_tokens - approx_tokens(self._input) - 4
            self.schema_tokens = max(rest, 0)

    def _take_result(self, event: ToolResultEvent) -> None:
        call_id = str(event.get("tool_call_id"))
        content = str(event.get("content") or "")
        whole = approx_tokens(content)
        offload = min(whole, _POINTER_TOKENS + approx_tokens(_head(content, _OFFLOAD_PREVIEW)))
        aged = min(whole, _POINTER_TOKENS + approx_tokens(_head(content, _AGED_PREVIEW, 100)))
        self._results[call_id] = [whole, offload, aged]
        self._resize(call_id)

    def _resize(self, call_id: str) -> None:
        sizes = self._results.get(call_id)
        form = self._forms.get(call_id)
        if sizes is not None and form is not None:
            sizes[0] = sizes[1] if form == OFFLOADED else sizes[2]

    def _fold(self, tokens_after: int) -> None:
        """After a summary, only the most recent results that fit in what is left are sent."""
        room = max(tokens_after - self.system_tokens - (self.schema_tokens or 0), 0)
        kept, used = [], 0
        for call_id in reversed(list(self._results)):
            size = self._results[call_id][0]
            if used + size > room:
                break
            kept.append(call_id)
            used += size
        self._results = {call_id: self._results[call_id] for call_id in reversed(kept)}

    # -- the view ----------------------------------------------------------------------------------
    def view(self) -> JSONDict:
        """The Context tab's data: gauge, breakdown, steps and marks."""
        last = cast("Mapping[str, object]", self.last or {})  # read as damaged records may be
        window = _int(last.get("window"))
        tokens = _int(last.get("tokens"))
        return {
            "tokens": tokens,
            "window": window,
            "trigger": _int(last.get("trigger")),
            "window_source": last.get("window_source"),
            "share": tokens / window if window else 0.0,
            "step": last.get("step"),
            "peak": self.peak,
            "summaries": last.get("summaries", 0),
            "pointers": last.get("pointers", 0),
            "breakdown": self._breakdown(last, tokens),
            "steps": list(self.steps.values())
            if self._sorted
            else [self.steps[step] for step in sorted(self.steps)],
            "marks": list(self.marks),
        }

    def _breakdown(self, last: Mapping[str, object], tokens: int) -> JSONDict:
        given = last.get("breakdown")
        if isinstance(given, dict):
            parts = {str(k): _int(v) for k, v in given.items()}
            return {"parts": parts, "estimated": False}
        if not tokens:
            return {"parts": {}, "estimated": True}
        system = min(self.system_tokens, tokens)
        schemas = min(self.schema_tokens or 0, tokens - system)
        results = min(sum(sizes[0] for sizes in self._results.values()), tokens - system - schemas)
        parts = {
            "system prompt": system,
            "tool schemas": schemas,
            "messages": tokens - system - schemas - results,
            "tool results": results,
        }
        if self.schema_tokens is None:
            parts.pop("tool schemas")
            parts["messages + tool schemas"] = parts.pop("messages")
            parts["tool results"] = parts.pop("tool results")
        return {"parts": parts, "estimated": True}


def _int(value: object) -> int:
    """A count from an event field (0 when it is missing or not a number)."""
    return int(cast("int", value) or 0)


def _mark(event: _MarkEvent) -> JSONDict:
    """A compression event as a chart mark: its step, kind and a short label."""
    kind = str(event.get("type"))
    tokens: object
    if event["type"] == SUMMARIZED:
        label = (
            f"summarized ({event.get('reason', 'trigger')}): "
            f"{event.get('tokens_before', 0):,} → {event.get('tokens_after', 0):,} tokens"
        )
        tokens = event.get("tokens_before")
    elif event["type"] == CONTEXT_OVERFLOW:
        label = f"context overflow at {event.get('tokens', 0):,} tokens ({event.get('action')})"
        tokens = event.get("tokens") or None
    elif event["type"] == INPUT_OFFLOADED:
        label = f"{event.get('kind', 'input')} input moved to {event.get('path')}"
        tokens = event.get("tokens") or None
    else:
        label = f"{event.get('tool', 'result')} result {kind} to {event.get('path')}"
        tokens = event.get("tokens") or None
    return {
        "step": int(event.get("step") or 0),
        "kind": kind,
        "label": label,
        "tokens": tokens,
    }
