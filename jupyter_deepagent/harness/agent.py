"""`create_research_agent`: a LangGraph deep agent whose whole context is inspectable data.

Built on `langchain.agents.create_agent`. Parameter names follow deepagents' `create_deep_agent`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.assembly import AssemblyConfig, build_assembly, tool_names_of
from jupyter_deepagent.harness.profile import HarnessProfile
from jupyter_deepagent.harness.prompt import PromptAssembly

__all__ = ["assemble_prompt", "create_research_agent"]

_FILESYSTEM_TOOLS = ("ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep")


@dataclass(frozen=True)
class _Plan:
    """What the harness will put together, derived once from the arguments."""

    backend: BackendProtocol
    profile: HarnessProfile
    filesystem_tools: tuple[str, ...]
    todos: bool
    config: AssemblyConfig


def _plan(
    tools: Sequence[Any],
    *,
    system_prompt: str | None,
    memory: Sequence[str],
    skills: Sequence[str],
    backend: BackendProtocol | None,
    interrupt_on: Mapping[str, Any] | None,
    profile: HarnessProfile | None,
) -> _Plan:
    from jupyter_deepagent.backends.state import StateBackend
    from jupyter_deepagent.harness.tools.filesystem import filesystem_prompt

    if isinstance(memory, str) or isinstance(skills, str):
        msg = "memory and skills take a list of paths, e.g. memory=['/AGENTS.md']"
        raise TypeError(msg)
    profile = profile or HarnessProfile()
    backend = backend if backend is not None else StateBackend()
    excluded = set(profile.excluded_tools)
    fs_tools = tuple(name for name in _FILESYSTEM_TOOLS if name not in excluded)
    todos = "write_todos" not in excluded
    names = (*tool_names_of(tools), *fs_tools, *(("write_todos",) if todos else ()))
    config = AssemblyConfig(
        system_prompt=system_prompt,
        memory=tuple(memory),
        skills=tuple(skills),
        profile=profile,
        tool_names=tuple(n for n in names if n not in excluded),
        filesystem_text=filesystem_prompt(fs_tools) if fs_tools else "",
        interrupt_on=dict(interrupt_on) if interrupt_on else None,
    )
    return _Plan(backend, profile, fs_tools, todos, config)


def assemble_prompt(
    model: Any = None,
    tools: Sequence[Any] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[Any] = (),
    backend: BackendProtocol | None = None,
    interrupt_on: Mapping[str, Any] | None = None,
    profile: HarnessProfile | None = None,
    **_: Any,
) -> PromptAssembly:
    """The system prompt `create_research_agent` with the same arguments would send, without
    running anything. Memory and skills are read from `backend` as it is now.

    Raises:
        TypeError: memory or skills given as one string instead of a list.
    """
    plan = _plan(
        tools,
        system_prompt=system_prompt,
        memory=memory,
        skills=skills,
        backend=backend,
        interrupt_on=interrupt_on,
        profile=profile,
    )
    return build_assembly(plan.config, plan.backend).assembly


def create_research_agent(
    model: Any,
    tools: Sequence[Any] = (),
    *,
    system_prompt: str | None = None,
    memory: Sequence[str] = (),
    skills: Sequence[str] = (),
    subagents: Sequence[Any] = (),
    backend: BackendProtocol | None = None,
    store: Any = None,
    checkpointer: Any = None,
    context_schema: type | None = None,
    state_schema: type | None = None,
    middleware: Sequence[Any] = (),
    interrupt_on: Mapping[str, Any] | None = None,
    profile: HarnessProfile | None = None,
    name: str | None = None,
) -> Any:
    """Create a research agent: a compiled LangGraph graph (`invoke`, `stream`, `ainvoke`).

    Args:
        model: a chat model, or a "provider:model" string (`google_genai:` by default,
            `scripted:path.yaml` for a scripted offline model).
        tools: extra tools, besides the filesystem tools and `write_todos`.
        system_prompt: your instructions; the first section of the system prompt.
        memory: AGENTS.md-style files (virtual paths) loaded into every model call.
        skills: folders (virtual paths) holding `<skill>/SKILL.md`; listed, loaded on demand.
        subagents: subagent specs for the `task` tool.
        backend: where the files live; default a `StateBackend` (files in the thread's state).
        store: a LangGraph store (long-term memory), handed to the graph.
        checkpointer: a LangGraph checkpointer; needed for threads and `interrupt_on`.
        context_schema: the type of the runtime context passed as `context=` at invoke.
        state_schema: extra state fields (an `AgentState` subclass) that are checkpointed.
        middleware: your own `AgentMiddleware`; prompt text they add becomes section 8.
        interrupt_on: tool name -> True or an `InterruptOnConfig`: ask a person first.
        profile: a `HarnessProfile` (base prompt, suffix, tool descriptions, excluded tools).
        name: the graph's name.

    Returns:
        The compiled agent graph. Its custom stream (`stream_mode="custom"`) carries run events.

    Raises:
        ValueError: `interrupt_on` without a checkpointer.
        ModelConfigurationError: the model string cannot be resolved (e.g. missing API key).
    """
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware

    from jupyter_deepagent.harness.context_middleware import ResearchContextMiddleware
    from jupyter_deepagent.harness.filesystem_middleware import FilesystemMiddleware
    from jupyter_deepagent.harness.model_resolution import resolve_model
    from jupyter_deepagent.harness.run_events_middleware import RunEventsMiddleware
    from jupyter_deepagent.harness.todo_middleware import TodoMiddleware

    if interrupt_on and checkpointer is None:
        msg = (
            "interrupt_on needs a checkpointer to pause a run and resume it: pass "
            "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver."
        )
        raise ValueError(msg)
    plan = _plan(
        tools,
        system_prompt=system_prompt,
        memory=memory,
        skills=skills,
        backend=backend,
        interrupt_on=interrupt_on,
        profile=profile,
    )
    chat_model = resolve_model(model)
    stack: list[Any] = []
    if plan.todos:
        stack.append(TodoMiddleware())
    stack.append(
        FilesystemMiddleware(
            plan.backend, exclude=tuple(set(plan.profile.excluded_tools) & set(_FILESYSTEM_TOOLS))
        )
    )
    stack.extend(middleware)
    if interrupt_on:
        stack.append(HumanInTheLoopMiddleware(interrupt_on=dict(interrupt_on)))
    stack.append(ResearchContextMiddleware(plan.config, plan.backend))
    stack.append(RunEventsMiddleware())
    return create_agent(
        chat_model,
        tools=list(tools),
        middleware=stack,
        context_schema=context_schema,
        state_schema=state_schema,
        checkpointer=checkpointer,
        store=store,
        name=name,
    )
