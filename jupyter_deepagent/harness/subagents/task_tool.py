"""The `task` tool: delegate work to a subagent that runs in a fresh context and returns one report.

Each call runs its subagent under the caller's runtime context, with the caller's files, and at most
`max_parallel` at once per agent; LangGraph runs the `task` calls of one model turn concurrently and
returns their results in call order. Every event of the subagent's own steps reaches the caller's
run events stamped with the task id, between a `subagent_started` and a `subagent_finished` event.
The subagent's files come back as a `files` update (merged per path, so parallel writers never
conflict) and its whole conversation is saved to `/subagents/<task-id>.md`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import uuid
import weakref
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING

from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.run_events.event_stream import current_agent, current_sink, run_step
from jupyter_deepagent.harness.subagents.run import TaskRun
from jupyter_deepagent.harness.subagents.specs import (
    SubAgent,
    SubAgentSpec,
    TaskArgs,
    task_tool_description,
)
from jupyter_deepagent.harness.tools.filesystem_middleware import FilesState

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

__all__ = ["SubAgentMiddleware", "check_max_parallel"]


def check_max_parallel(max_parallel: object) -> int:
    """`max_parallel` if it is a whole number, 1 or more.

    Raises:
        ValueError: it is not (a bool, a float, 0 or below).
    """
    if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
        msg = f"max_parallel_subagents must be a whole number, 1 or more, not {max_parallel!r}"
        raise ValueError(msg)
    return max_parallel


class _Limiter:
    """At most `limit` subagents of one agent at once (threads and each event loop separately)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._threads = threading.BoundedSemaphore(limit)
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    @contextmanager
    def hold(self) -> Iterator[None]:
        with self._threads:
            yield

    @asynccontextmanager
    async def ahold(self) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        semaphore = self._loops.get(loop)
        if semaphore is None:
            semaphore = self._loops[loop] = asyncio.Semaphore(self.limit)
        async with semaphore:
            yield


_RANDOM_IDS = re.compile(r":[0-9a-fA-F-]{32,36}")


def _task_id(name: str, runtime: ToolRuntime) -> str:
    """Short and path-safe; the same when a paused run resumes the same call, and when a notebook
    re-run replays it (thread, nesting without LangGraph's random task ids, position in the
    conversation, call id), so the task keeps its id and transcript path."""
    configurable = (runtime.config or {}).get("configurable", {})
    namespace = _RANDOM_IDS.sub("", str(configurable.get("checkpoint_ns") or ""))
    depth = len((runtime.state or {}).get("messages", []) or [])
    thread = configurable.get("thread_id") or ""
    seed = f"{thread}|{namespace}|{depth}|{runtime.tool_call_id or ''}"
    if not runtime.tool_call_id:
        seed += uuid.uuid4().hex
    return f"{name}-{hashlib.sha1(seed.encode()).hexdigest()[:8]}"


def _call_position(runtime: ToolRuntime) -> tuple[str | None, int]:
    """The id of the AI message that made this call and the call's index among its tool calls."""
    for message in reversed(list((runtime.state or {}).get("messages", []))):
        calls = getattr(message, "tool_calls", None) or []
        for index, call in enumerate(calls):
            if call.get("id") == runtime.tool_call_id:
                return getattr(message, "id", None), index
    return None, 0


class SubAgentMiddleware(AgentMiddleware):
    """Adds the `task` tool over a set of subagents, built by the caller.

    Args:
        specs: the subagents on offer (already normalized, general-purpose included if offered).
        runnables: the runnable of each spec, by name (`create_research_agent` builds them).
        backend: the calling agent's files, which a subagent's files are read from and merged
            into.
        max_parallel: how many subagents of this agent run at once; further calls wait.

    Raises:
        ValueError: `max_parallel` below 1, or a spec without a runnable.
    """

    state_schema = FilesState

    def __init__(
        self,
        specs: Sequence[SubAgentSpec],
        runnables: Mapping[str, Runnable[object, object]],
        backend: BackendProtocol | None,
        *,
        max_parallel: int = 4,
    ) -> None:
        super().__init__()
        check_max_parallel(max_parallel)
        missing = [spec.name for spec in specs if spec.name not in runnables]
        if missing:
            msg = f"no runnable for the subagents {', '.join(map(repr, missing))}"
            raise ValueError(msg)
        self.specs = {spec.name: spec for spec in specs}
        self.runnables = {spec.name: runnables[spec.name] for spec in specs}
        self.backend = backend
        self._limiter = _Limiter(max_parallel)
        self.tools = [self._task_tool(specs)]

    def _task_tool(self, specs: Sequence[SubAgentSpec]) -> StructuredTool:
        def task(
            runtime: ToolRuntime, description: str, subagent_type: str
        ) -> Command | ToolMessage:
            run = self._start(description, subagent_type, runtime)
            if isinstance(run, ToolMessage):
                return run
            with self._limiter.hold(), run.running():
                with run.capturing_failure():
                    run.run()
                return run.finish()

        async def atask(
            runtime: ToolRuntime, description: str, subagent_type: str
        ) -> Command | ToolMessage:
            run = self._start(description, subagent_type, runtime)
            if isinstance(run, ToolMessage):
                return run
            async with self._limiter.ahold():
                with run.running():
                    with run.capturing_failure():
                        await run.arun()
                    return await run.afinish()

        return StructuredTool(
            name="task",
            description=task_tool_description(specs),
            args_schema=TaskArgs,
            func=task,
            coroutine=atask,
        )

    def _start(
        self, description: str, subagent_type: str, runtime: ToolRuntime
    ) -> TaskRun | ToolMessage:
        spec = self.specs.get(subagent_type)
        if spec is None:
            known = ", ".join(f"'{name}'" for name in self.specs)
            return ToolMessage(
                content=f"There is no subagent {subagent_type!r}. Use one of: {known}.",
                tool_call_id=runtime.tool_call_id,
                name="task",
                status="error",
            )
        turn_id, call_index = _call_position(runtime)
        return TaskRun(
            task_id=_task_id(spec.name, runtime),
            subagent=spec.name,
            description=description,
            runnable=self.runnables[spec.name],
            backend=self.backend,
            runtime=runtime,
            outer_sink=current_sink() or runtime.stream_writer,
            parent_task_id=current_agent()[1],
            step=run_step((runtime.state or {}).get("messages", [])),
            turn_id=turn_id,
            call_index=call_index,
            structured_expected=isinstance(spec, SubAgent) and spec.response_format is not None,
        )
