"""The inspector's data model: one JSON-ready snapshot of a run, built from its run events alone.

`InspectorBuilder` takes events one at a time (a live run: `add` is cheap, `snapshot` is called at
most a few times a second) or all at once (`build_snapshot(trace.events)`, for a finished run or a
`RunTrace` read back from a research log). The events of a run resumed after an approval may
follow those of the run that paused: the snapshot is then the whole turn's (the first run's model
and request, the last one's status, the totals and the duration summed over both). Nothing here reads harness internals or checkpoint
state, so the same snapshot feeds the cell widget, the static HTML of a saved notebook and the
JupyterLab sidebar.

The snapshot (every value JSON):

- `run`: model, thread, input, status, model and tool calls, tokens in/out, seconds, steps, and
  the input tokens read from and written to a provider's prompt cache (None when no call said)
- `calls`: each model call (agent, task, step, purpose, model, tokens in/out/cached, seconds)
- `prompt`: the main agent's last system prompt as ordered `sections` (name, source, tokens,
  share of the total, text, `change`: "new", "changed" or None against the prompt before it in
  this run, or the previous run's last prompt), `tokens`, `calls` (prompts sent), `removed`
- `skills`: `available` (name, description, path, `loaded_step`), `loaded` events, `skipped`
- `files`: artifacts and written files grouped by `mount` (see `files_tab`)
- `context`: the gauge (last request, window, trigger), its `breakdown`, per-step `steps` and the
  compression `marks` (see `context_tab`)
- `subagents`: the results table (`columns`, `rows`, as `results_frame()` has them) and each
  task's `transcript`
- `todos`, `warnings`
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeAlias, TypedDict, cast

from jupyter_deepagent.events import (
    BUDGET_DECIDED,
    BUDGET_REACHED,
    MODEL_CALL,
    PROMPT,
    RUN_FINISHED,
    RUN_STARTED,
    SKILL_LOADED,
    TODOS,
    TOOL_CALL,
    WARNING,
    ModelCallEvent,
    PromptEvent,
    RunEvent,
)
from jupyter_deepagent.trace.inspector.context_tab import ContextTracker
from jupyter_deepagent.trace.inspector.files_tab import FileTracker
from jupyter_deepagent.trace.inspector.tasks_tab import TaskTracker
from jupyter_deepagent.trace.run_totals import run_cost

__all__ = ["SNAPSHOT_VERSION", "InspectorBuilder", "RunSummary", "Snapshot", "build_snapshot"]

SNAPSHOT_VERSION = 1
"""Bumped when a field of the snapshot changes meaning."""

Snapshot: TypeAlias = dict[str, Any]
"""The inspector snapshot: JSON in the shape the module docstring gives, read by the views here,
the cell widget and the sidebar's TypeScript."""

_JSONDict: TypeAlias = dict[str, object]


class RunSummary(TypedDict):
    """The snapshot's `run`: what the run was and its totals so far."""

    model: str | None
    thread: str | None
    input: str
    status: str | None
    error: str | None
    model_calls: int
    tool_calls: int
    tokens_in: int
    tokens_out: int
    tokens_in_cached: int | None
    """Input tokens the providers read from their prompt caches; None: no call reported it."""
    tokens_in_cache_write: int | None
    """Input tokens written to a prompt cache (Anthropic); None: no call reported it."""
    seconds: float | None
    steps: int
    cost: float | None
    """US dollars of the calls with a known price (served replies at 0); None when calls were
    made and none had a known price."""
    cost_unpriced_calls: int
    """Calls of unknown price, left out of `cost`."""
    cost_by_part: dict[str, float]
    """`cost` by part: main, subagents, summarizer."""
    budget: str | None
    """What the budget did last: "paused at budget $0.50", "stopped at budget $0.50", "raised
    to $1.00", "continued past $0.50"; None while it did nothing."""


_TOTALS = (
    "tokens_in",
    "tokens_out",
    "tokens_in_cached",
    "tokens_in_cache_write",
    "model_calls",
    "tool_calls",
    "seconds",
)
"""The `run` fields that are the sums `run_finished` reports, added up over a turn's runs."""

_SKILL_LINE = re.compile(
    r"^- \*\*(?P<name>[^*]+)\*\*: (?P<description>.*) \(read `(?P<path>[^`]+)`\)$"
)
_SKIPPED = re.compile(r"^skill (folder )?\S+ skipped|^skill name ")


class InspectorBuilder:
    """Collects run events and returns the inspector snapshot of what it has seen so far.

    Args:
        previous_prompt: The last `PromptAssembly.as_dict()` of the run before this one on the
            same thread; sections of this run's first prompt are compared with it.
    """

    def __init__(self, previous_prompt: _JSONDict | None = None) -> None:
        self.run: RunSummary = {
            "model": None,
            "thread": None,
            "input": "",
            "status": None,
            "error": None,
            "model_calls": 0,
            "tool_calls": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "tokens_in_cached": None,
            "tokens_in_cache_write": None,
            "seconds": None,
            "steps": 0,
            "cost": 0.0,
            "cost_unpriced_calls": 0,
            "cost_by_part": {"main": 0.0, "subagents": 0.0, "summarizer": 0.0},
            "budget": None,
        }
        self._call_events: list[ModelCallEvent] = []  # what the run's cost is summed from
        self._runs = 0  # runs seen: a run resumed after an approval continues the one before
        self._carried: dict[str, object] = {}  # the totals of the turn's runs before this one
        self.calls: list[_JSONDict] = []
        self._assemblies: dict[str, Snapshot] = {}  # hash -> assembly
        self._prompt: Snapshot | None = None
        self._before: Snapshot | None = previous_prompt
        self._prompt_calls = 0
        self.skills_loaded: list[_JSONDict] = []
        self.warnings: list[_JSONDict] = []
        self.todos: list[_JSONDict] = []
        self.context = ContextTracker()
        self.files = FileTracker()
        self.tasks = TaskTracker()

    def extend(self, events: Iterable[RunEvent]) -> InspectorBuilder:
        """Add events in order; returns self."""
        for event in events:
            self.add(event)
        return self

    def add(self, event: RunEvent) -> None:
        """Take one run event (unknown types are ignored)."""
        if "type" not in event:  # not a run event
            return
        main = event.get("task_id") is None
        self.files.add(event)
        self.tasks.add(event)
        if main:
            self.context.add(event)
        run = self.run
        if event["type"] == RUN_STARTED:
            if self._runs:  # a resume continues the turn: the totals so far carry on
                self._carried = {key: cast("dict[str, object]", run)[key] for key in _TOTALS}
                run["status"] = run["error"] = None
            else:
                run["model"] = event.get("model")
                run["thread"] = event.get("thread_id")
                run["input"] = event.get("input") or ""
            self._runs += 1
        elif event["type"] == RUN_FINISHED:
            run["status"] = event.get("status", run["status"])
            run["error"] = event.get("error", run["error"])
            totals = cast("dict[str, object]", run)  # the keys of _TOTALS are RunSummary's
            for key in _TOTALS:
                value = cast("dict[str, object]", event).get(key)
                if not isinstance(value, (int, float)):
                    continue
                before = self._carried.get(key)
                total = (before if isinstance(before, (int, float)) else 0) + value
                totals[key] = round(total, 6) if key == "seconds" else total
        elif event["type"] == MODEL_CALL:
            self.run["model_calls"] += 1
            self.run["tokens_in"] += int(event.get("tokens_in") or 0)
            self.run["tokens_out"] += int(event.get("tokens_out") or 0)
            self._take_call(event)
            if main:
                self.run["steps"] = max(self.run["steps"], int(event.get("step") or 0))
                self.run["model"] = self.run["model"] or event.get("model")
        elif event["type"] == TOOL_CALL:
            self.run["tool_calls"] += 1
        elif event["type"] == BUDGET_REACHED:
            how = "paused" if event.get("paused") else "stopped"
            self.run["budget"] = f"{how} at budget {event.get('budget')}"
        elif event["type"] == BUDGET_DECIDED:
            action, budget = event.get("action"), event.get("budget")
            self.run["budget"] = {
                "continue": f"continued past {budget}",
                "raise": f"raised to {budget}",
            }.get(str(action), f"stopped at budget {budget}")
        elif event["type"] == PROMPT and main:
            self._take_prompt(event)
        elif event["type"] == SKILL_LOADED:
            self.skills_loaded.append(
                {
                    "skill": event.get("skill"),
                    "path": event.get("path"),
                    "step": event.get("step"),
                    "agent": event.get("agent"),
                    "task_id": event.get("task_id"),
                }
            )
        elif event["type"] == WARNING:
            self.warnings.append(
                {
                    "message": event.get("message", ""),
                    "source": event.get("source"),
                    "agent": event.get("agent"),
                }
            )
        elif event["type"] == TODOS and main:
            self.todos = list(event.get("todos") or [])

    def _take_call(self, event: ModelCallEvent) -> None:
        run = self.run
        cached, written = event.get("tokens_in_cached"), event.get("tokens_in_cache_write")
        if cached is not None:
            run["tokens_in_cached"] = (run["tokens_in_cached"] or 0) + cached
        if written is not None:
            run["tokens_in_cache_write"] = (run["tokens_in_cache_write"] or 0) + written
        self._call_events.append(event)
        cost = run_cost(self._call_events)
        run["cost"], run["cost_unpriced_calls"] = cost.usd, cost.unpriced_calls
        run["cost_by_part"] = {part: round(value, 6) for part, value in cost.by_part.items()}
        recorded = event.get("cost_recorded")
        self.calls.append(
            {
                "cost": event.get("cost"),
                "price": event.get("price"),
                "served": "cost_recorded" in event,
                "cost_recorded": recorded,
                "agent": event.get("agent"),
                "task_id": event.get("task_id"),
                "step": event.get("step"),
                "purpose": event.get("purpose"),
                "model": event.get("model"),
                "tokens_in": int(event.get("tokens_in") or 0),
                "tokens_in_estimated": bool(event.get("tokens_in_estimated")),
                "tokens_in_cached": cached,
                "tokens_in_cache_write": written,
                "tokens_out": int(event.get("tokens_out") or 0),
                "seconds": event.get("seconds"),
            }
        )

    def _take_prompt(self, event: PromptEvent) -> None:
        self._prompt_calls += 1
        digest = str(event.get("hash"))
        assembly = event.get("assembly")
        if assembly is not None:
            self._assemblies[digest] = assembly
        else:
            assembly = self._assemblies.get(digest)
        if assembly is None:  # the events start after the prompt was first sent
            return
        if self._prompt is not None and self._prompt is not assembly:
            self._before = self._prompt
        self._prompt = assembly
        self.context.system_tokens = int(event.get("tokens") or assembly.get("tokens") or 0)

    # -- the snapshot ------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """The snapshot of everything added so far (a new dict each call; JSON-ready)."""
        prompt = self._prompt_view()
        return {
            "version": SNAPSHOT_VERSION,
            "run": dict(self.run),
            "calls": [dict(call) for call in self.calls],
            "prompt": prompt,
            "skills": self._skills_view(prompt),
            "files": self.files.view(),
            "context": self.context.view(),
            "subagents": self.tasks.view(),
            "todos": [dict(todo) for todo in self.todos],
            "warnings": list(self.warnings),
        }

    def summary(self) -> Snapshot:
        """The part of the snapshot the summary line needs (`run` and `context`), cheaper to build
        while a run goes on."""
        return {"version": SNAPSHOT_VERSION, "run": dict(self.run), "context": self.context.view()}

    def _prompt_view(self) -> Snapshot:
        assembly = self._prompt
        if assembly is None:
            return {
                "sections": [],
                "tokens": 0,
                "calls": self._prompt_calls,
                "removed": [],
                "compared_with": None,
            }
        before = {s["name"]: s for s in (self._before or {}).get("sections", [])}
        sections = assembly.get("sections", [])
        total = sum(int(s.get("tokens") or 0) for s in sections) or 1
        rows = []
        for section in sections:
            old = before.get(section["name"])
            change = None
            if self._before is not None:
                change = (
                    "new"
                    if old is None
                    else ("changed" if old.get("text") != section.get("text") else None)
                )
            tokens = int(section.get("tokens") or 0)
            rows.append(
                {
                    "name": section["name"],
                    "source": section.get("source", ""),
                    "tokens": tokens,
                    "share": round(tokens / total, 4),
                    "text": section.get("text", ""),
                    "change": change,
                }
            )
        names = {s["name"] for s in sections}
        compared = None
        if self._before is not None:
            compared = (
                "previous model call"
                if self._prompt_calls > 1
                and any(a is self._before for a in self._assemblies.values())
                else "previous run"
            )
        return {
            "sections": rows,
            "tokens": int(assembly.get("tokens") or total),
            "calls": self._prompt_calls,
            "compared_with": compared,
            "removed": [name for name in before if name not in names],
        }

    def _skills_view(self, prompt: Snapshot) -> _JSONDict:
        loaded: dict[str, _JSONDict] = {}
        for item in self.skills_loaded:
            loaded.setdefault(str(item["path"]), item)
        available = []
        skills = next((s for s in prompt["sections"] if s["name"] == "skills"), None)
        for line in (skills or {}).get("text", "").splitlines():
            match = _SKILL_LINE.match(line.strip())
            if match is None:
                continue
            hit = loaded.get(match["path"])
            available.append(
                {
                    "name": match["name"],
                    "description": match["description"],
                    "path": match["path"],
                    "loaded_step": hit["step"] if hit else None,
                    "loaded_by": hit["agent"] if hit else None,
                }
            )
        listed = {item["path"] for item in available}
        for path, hit in loaded.items():  # a subagent's own skills are not in the main prompt
            if path not in listed:
                available.append(
                    {
                        "name": hit["skill"],
                        "description": "",
                        "path": path,
                        "loaded_step": hit["step"],
                        "loaded_by": hit["agent"],
                    }
                )
        skipped = [
            {"path": w["source"], "message": w["message"]}
            for w in self.warnings
            if _SKIPPED.match(str(w["message"]))
        ]
        return {
            "available": available,
            "loaded": list(self.skills_loaded),
            "skipped": skipped,
            "sources": (skills or {}).get("source", ""),
        }


def build_snapshot(
    events: Iterable[RunEvent], previous_prompt: _JSONDict | None = None
) -> Snapshot:
    """The inspector snapshot of a run's events (a finished run, or the events so far).

    Args:
        events: Run events in order, as `trace_run` collects them.
        previous_prompt: The previous run's last prompt (`PromptAssembly.as_dict()`), to mark
            what changed since then.

    Returns:
        A JSON-ready dict (see the module docstring).
    """
    return InspectorBuilder(previous_prompt).extend(events).snapshot()
