"""One `task` call from start to finish: the subagent's input, its events, its report, its files and
its transcript. The sync and async tool functions drive the same `TaskRun`.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain.tools import ToolRuntime
from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.errors import GraphBubbleUp, GraphInterrupt
from langgraph.types import Command

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import FileData, bind_state_files, merge_files
from jupyter_deepagent.events import (
    MODEL_CALL,
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    WARNING,
    RunEvent,
)
from jupyter_deepagent.harness.artifact_folders import TRANSCRIPT_FOLDER
from jupyter_deepagent.harness.run_events.event_stream import agent_scope, emit_event, event_sink
from jupyter_deepagent.harness.subagents.outcome import (
    last_ai_text,
    structured_as_dict,
    written_paths,
)

__all__ = ["TaskRun"]


def _now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True)
class _Outcome:
    """What a finished task produced, before it is saved and reported."""

    report: str
    structured: dict[str, Any] | None
    written: list[str]
    files: dict[str, FileData]
    changed: dict[str, FileData | None]
    transcript: str


@dataclass
class TaskRun:
    """The state of one delegated task while it runs."""

    task_id: str
    subagent: str
    description: str
    runnable: Any
    backend: BackendProtocol | None
    runtime: ToolRuntime
    outer_sink: Callable[[RunEvent], None] | None
    parent_task_id: str | None
    step: int
    turn_id: str | None
    call_index: int
    structured_expected: bool = False
    started_at: str = ""  # ISO time, for the transcript's readers
    state: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    _clock: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- events -----------------------------------------------------------------------------------
    def forward(self, event: RunEvent) -> None:
        """The event sink of the subagent's steps: count its tokens, pass the event on."""
        if event["type"] == MODEL_CALL:
            with self._lock:
                self.tokens_in += int(event.get("tokens_in") or 0)
                self.tokens_out += int(event.get("tokens_out") or 0)
        if self.outer_sink is not None:
            self.outer_sink(event)

    def _common(self) -> dict[str, Any]:
        # `agent` and `task_id` come from the scope; the start is the subagent_started `time`
        return {
            "description": self.description,
            "parent_task_id": self.parent_task_id,
            "turn_id": self.turn_id,
            "call_index": self.call_index,
        }

    @contextmanager
    def running(self) -> Iterator[None]:
        """While the subagent runs: report the start, stamp and forward every event it emits."""
        with agent_scope(self.subagent, self.task_id), event_sink(self.forward):
            self.started_at = _now()
            self._clock = time.perf_counter()
            emit_event(SUBAGENT_STARTED, step=self.step, **self._common())
            yield

    @contextmanager
    def capturing_failure(self) -> Iterator[None]:
        """Turn the subagent's exception into the task's error; let a pause for approval (or any
        other LangGraph control flow) through to the caller's graph."""
        try:
            yield
        except GraphInterrupt as exc:
            self.interrupted(exc)
            raise
        except GraphBubbleUp:
            raise
        except Exception as exc:
            self.failed(exc)

    # -- running ----------------------------------------------------------------------------------
    def _input(self) -> dict[str, Any]:
        files = (self.runtime.state or {}).get("files")
        payload: dict[str, Any] = {"messages": [HumanMessage(content=self.description)]}
        if files:
            payload["files"] = files
        return payload

    def _is_graph(self) -> bool:
        from langgraph.pregel import Pregel

        return isinstance(self.runnable, Pregel)

    def _stream_options(self) -> dict[str, Any]:
        """Stream the graph's states, under the caller's runtime context if it has one."""
        options: dict[str, Any] = {"stream_mode": "values"}
        if self.runtime.context is not None:
            options["context"] = self.runtime.context
        return options

    def run(self) -> None:
        """Run the subagent, keeping its latest state (so a failure still leaves a transcript)."""
        if not self._is_graph():
            self.state = dict(self.runnable.invoke(self._input()))
            return
        for chunk in self.runnable.stream(self._input(), **self._stream_options()):
            if isinstance(chunk, dict):
                self.state = chunk

    async def arun(self) -> None:
        """The async twin of `run`."""
        if not self._is_graph():
            self.state = dict(await self.runnable.ainvoke(self._input()))
            return
        async for chunk in self.runnable.astream(self._input(), **self._stream_options()):
            if isinstance(chunk, dict):
                self.state = chunk

    def failed(self, exc: BaseException) -> None:
        """Record an exception from the subagent as the task's error."""
        self.status = "error"
        self.error = f"{type(exc).__name__}: {exc}"

    def interrupted(self, exc: BaseException) -> None:
        """The subagent paused for a person's approval; the caller's run pauses with it."""
        self.status = "interrupted"
        names = []
        for pending in exc.args[0] if exc.args and isinstance(exc.args[0], (list, tuple)) else ():
            value = getattr(pending, "value", None)
            if isinstance(value, dict):
                names += [str(r.get("name")) for r in value.get("action_requests", [])]
        what = f" for {', '.join(names)}" if names else ""
        result = (
            f"The subagent {self.subagent!r} needs a person's approval{what} before it can go on; "
            "the run is paused until the approval is given (resume it with a Command)."
        )
        self._finished_event(result, None, [], None)

    # -- finishing --------------------------------------------------------------------------------
    def _report(self, structured: dict[str, Any] | None) -> str:
        if self.status == "error":
            return (
                f"The subagent {self.subagent!r} failed: {self.error}. "
                f"Its transcript up to the failure is at {self.transcript_path}."
            )
        if structured is not None:
            return json.dumps(structured, ensure_ascii=False)
        if self.structured_expected:
            self.status, self.error = "error", "the subagent returned no structured response"
            return (
                f"The subagent {self.subagent!r} finished without the structured response "
                "asked for."
            )
        return last_ai_text(list(self.state.get("messages", []))) or (
            f"The subagent {self.subagent!r} finished without a final message."
        )

    @property
    def transcript_path(self) -> str:
        """Where the task's transcript is saved."""
        return f"{TRANSCRIPT_FOLDER}{self.task_id}.md"

    def _changes(self) -> tuple[dict[str, FileData], dict[str, FileData | None]]:
        """The caller's files as the subagent left them, and what changed (None = deleted)."""
        before = (self.runtime.state or {}).get("files") or {}
        after = self.state.get("files")
        if after is None:
            return dict(before), {}
        changed: dict[str, FileData | None] = {
            path: data for path, data in after.items() if before.get(path) != data
        }
        changed.update({path: None for path in before if path not in after})
        return merge_files(before, changed), changed

    def _conclude(self) -> _Outcome:
        structured = None
        if self.status == "ok":
            structured = structured_as_dict(self.state.get("structured_response"))
        report = self._report(structured)
        files, changed = self._changes()
        messages = list(self.state.get("messages", []))
        written = written_paths(messages, changed)
        from jupyter_deepagent.harness.subagents.transcript import render_transcript

        transcript = render_transcript(
            task_id=self.task_id,
            subagent=self.subagent,
            description=self.description,
            messages=messages,
            status=self.status,
            started_at=self.started_at,
            seconds=self._seconds(),
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            files_written=written,
            structured=structured,
            error=self.error,
        )
        return _Outcome(report, structured, written, files, changed, transcript)

    def _seconds(self) -> float:
        return round(time.perf_counter() - self._clock, 6)

    def finish(self) -> Command:
        """Save the transcript, report the end, and build the caller's state update."""
        outcome = self._conclude()
        try:
            with bind_state_files(outcome.files) as saved:
                if self.backend is not None:
                    self.backend.write(self.transcript_path, outcome.transcript)
        except BackendError as exc:
            self._not_saved(exc)
            return self._close(outcome, None)
        return self._close(outcome, saved)

    async def afinish(self) -> Command:
        """The async twin of `finish`."""
        outcome = self._conclude()
        try:
            with bind_state_files(outcome.files) as saved:
                if self.backend is not None:
                    await self.backend.awrite(self.transcript_path, outcome.transcript)
        except BackendError as exc:
            self._not_saved(exc)
            return self._close(outcome, None)
        return self._close(outcome, saved)

    def _not_saved(self, exc: BackendError) -> None:
        emit_event(WARNING, message=f"transcript not saved: {exc}", source=self.transcript_path)

    def _finished_event(
        self,
        result: str,
        structured: dict[str, Any] | None,
        written: list[str],
        transcript_path: str | None,
    ) -> None:
        emit_event(
            SUBAGENT_FINISHED,
            step=self.step,
            **self._common(),
            status=self.status,
            result=result,
            structured=structured,
            tokens_in=self.tokens_in,
            tokens_out=self.tokens_out,
            seconds=self._seconds(),
            files_written=written,
            transcript_path=transcript_path,
            error=self.error,
        )

    def _close(self, outcome: _Outcome, saved: Mapping[str, FileData | None] | None) -> Command:
        """Report the end; the update carries the report and every file change (None: the
        transcript could not be saved)."""
        transcript_path = self.transcript_path if saved is not None and self.backend else None
        self._finished_event(outcome.report, outcome.structured, outcome.written, transcript_path)
        message = ToolMessage(
            content=outcome.report,
            tool_call_id=self.runtime.tool_call_id,
            name="task",
            status="error" if self.status == "error" else "success",
            artifact={
                "task_id": self.task_id,
                "transcript_path": transcript_path,
                "structured": outcome.structured,
            },
        )
        update: dict[str, Any] = {"messages": [message]}
        files_update = {**outcome.changed, **(saved or {})}
        if files_update:
            update["files"] = files_update
        return Command(update=update)
