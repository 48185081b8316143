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
from dataclasses import dataclass, field, replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.approval_policy import asked_approvals, subagent_approvals
from jupyter_deepagent.harness.prompt.profile import HarnessProfile
from jupyter_deepagent.harness.run_events.event_stream import current_agent, current_sink, run_step
from jupyter_deepagent.harness.subagents.run import TaskRun
from jupyter_deepagent.harness.subagents.specs import (
    GENERAL_PURPOSE,
    CompiledSubAgent,
    SubAgent,
    SubAgentSpec,
    TaskArgs,
    task_tool_description,
)
from jupyter_deepagent.harness.tools.filesystem_middleware import FilesState

__all__ = ["SubAgentMiddleware", "SubagentDefaults", "build_subagent"]


@dataclass(frozen=True)
class SubagentDefaults:
    """What a subagent takes from the agent that calls it, unless its spec says otherwise.

    `options` holds further `create_research_agent` keywords given to every subagent as they were
    given to the caller (compression settings, for instance).
    """

    model: Any
    tools: tuple[Any, ...] = ()
    skills: tuple[str, ...] = ()
    backend: BackendProtocol | None = None
    profile: HarnessProfile = field(default_factory=HarnessProfile)
    interrupt_on: Mapping[str, Any] | None = None
    checkpointer: Any = None
    store: Any = None
    context_schema: type | None = None
    options: Mapping[str, Any] = field(default_factory=dict)


def build_subagent(spec: SubAgentSpec, defaults: SubagentDefaults) -> Any:
    """The runnable behind a spec: a `CompiledSubAgent`'s own, or a research agent built from it.

    The subagent asks for every approval its caller asks for (of the tools it has), plus its
    own `interrupt_on`, and for every call of a code-running tool (see `approval_policy`).

    Raises:
        ValueError: the subagent may pause for approval (`interrupt_on`, or a tool that runs
            code) but the caller has no checkpointer to pause and resume the run with; or its
            `interrupt_on` turns off an approval its caller asks for.
        TypeError: its `interrupt_on` is not a mapping.
    """
    if isinstance(spec, CompiledSubAgent):
        return spec.runnable
    from jupyter_deepagent.harness.agent import create_research_agent

    tools = list(spec.tools) if spec.tools is not None else list(defaults.tools)
    # with the tools its own middleware brings, which may run code too
    offered = [*tools, *(t for layer in spec.middleware for t in getattr(layer, "tools", ()) or ())]
    interrupt_on = subagent_approvals(spec.name, defaults.interrupt_on, spec.interrupt_on, offered)
    may_ask = bool(asked_approvals(interrupt_on, offered) or (interrupt_on and interrupt_on.own))
    if may_ask and defaults.checkpointer is None:
        msg = (
            f"subagent {spec.name!r} has interrupt_on or a tool that runs code, so a run may "
            "pause for approval inside it: pass checkpointer= (e.g. InMemorySaver()) to "
            "create_research_agent"
        )
        raise ValueError(msg)
    skills = spec.skills
    if skills is None:
        skills = defaults.skills if spec.name == GENERAL_PURPOSE else ()
    return create_research_agent(
        spec.model if spec.model is not None else defaults.model,
        tools,
        system_prompt=spec.system_prompt,
        skills=skills,
        backend=defaults.backend,
        store=defaults.store,
        # a nested graph uses its caller's checkpointer; giving it here only states that it has one
        checkpointer=defaults.checkpointer if may_ask else None,
        context_schema=defaults.context_schema,
        middleware=spec.middleware,
        interrupt_on=interrupt_on,
        profile=replace(defaults.profile, general_purpose_subagent=False),
        name=spec.name,
        response_format=spec.response_format,
        **dict(defaults.options),
    )


class _Limiter:
    """At most `limit` subagents of one agent at once (threads and each event loop separately)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._threads = threading.BoundedSemaphore(limit)
        self._loops: weakref.WeakKeyDictionary[Any, asyncio.Semaphore] = weakref.WeakKeyDictionary()

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
    """Adds the `task` tool over a set of subagent specs.

    Args:
        specs: the subagents on offer (already normalized, general-purpose included if offered).
        defaults: what subagents take from the calling agent.
        max_parallel: how many subagents of this agent run at once; further calls wait.

    Raises:
        ValueError: `max_parallel` below 1, or a subagent cannot be built (see `build_subagent`).
    """

    state_schema = FilesState

    def __init__(
        self, specs: Sequence[SubAgentSpec], defaults: SubagentDefaults, *, max_parallel: int = 4
    ) -> None:
        super().__init__()
        if isinstance(max_parallel, bool) or not isinstance(max_parallel, int) or max_parallel < 1:
            msg = f"max_parallel_subagents must be a whole number, 1 or more, not {max_parallel!r}"
            raise ValueError(msg)
        self.specs = {spec.name: spec for spec in specs}
        self.runnables = {spec.name: build_subagent(spec, defaults) for spec in specs}
        self.backend = defaults.backend
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
