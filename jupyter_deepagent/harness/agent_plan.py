"""What `create_research_agent` and `assemble_prompt` will put together, derived once from their
arguments: the backend, the tools offered, the subagent specs, the approvals asked for, and the
prompt's assembly config."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.approval_policy import (
    InheritedApprovals,
    asked_approvals,
    code_running_tools,
)
from jupyter_deepagent.harness.prompt.assembly import AssemblyConfig, tool_names_of
from jupyter_deepagent.harness.prompt.profile import HarnessProfile

if TYPE_CHECKING:
    from jupyter_deepagent.harness.agent_inputs import (
        AgentTool,
        Approvals,
        ApprovalSetting,
        ChatModelInput,
        Middleware,
    )
    from jupyter_deepagent.harness.subagents.specs import SubAgentSpec

__all__ = [
    "AgentPlan",
    "middleware_tools",
    "needs_checkpointer",
    "plan_agent",
    "with_memory_budget",
]


@dataclass(frozen=True)
class AgentPlan:
    """What the harness will put together, derived once from the arguments."""

    backend: BackendProtocol
    profile: HarnessProfile
    filesystem_tools: tuple[str, ...]
    todos: bool
    config: AssemblyConfig
    subagents: tuple[SubAgentSpec, ...] = ()
    approvals: dict[str, ApprovalSetting] | None = None
    """What subagents inherit: every approval asked for, and the opt-outs (False) by name."""


def plan_agent(
    tools: Sequence[AgentTool],
    *,
    system_prompt: str | None,
    memory: Sequence[str],
    skills: Sequence[str],
    subagents: Sequence[object] = (),
    backend: BackendProtocol | None,
    interrupt_on: Approvals | None,
    profile: HarnessProfile | None,
    middleware: Sequence[Middleware] = (),
    compaction_tool: bool = False,
    name: str | None = None,
) -> AgentPlan:
    """The plan for an agent built from these arguments (see `create_research_agent`).

    Raises:
        TypeError: memory or skills given as one string; `interrupt_on` not a mapping.
        ValueError: `interrupt_on` names a tool the agent would not have; a subagent spec is
            not usable.
    """
    from jupyter_deepagent.backends.state import StateBackend
    from jupyter_deepagent.harness.subagents.specs import normalize_subagents, subagents_prompt
    from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES, filesystem_prompt

    if isinstance(memory, str) or isinstance(skills, str):
        msg = "memory and skills take a list of paths, e.g. memory=['/AGENTS.md']"
        raise TypeError(msg)
    profile = profile or HarnessProfile()
    backend = backend if backend is not None else StateBackend()
    excluded = set(profile.excluded_tools)
    fs_tools = tuple(name for name in FILESYSTEM_TOOL_NAMES if name not in excluded)
    todos = "write_todos" not in excluded
    specs: tuple[SubAgentSpec, ...] = ()
    if "task" not in excluded:
        specs = normalize_subagents(subagents, general_purpose=profile.general_purpose_subagent)
    names = (*tool_names_of(tools), *fs_tools, *(("write_todos",) if todos else ()))
    names += ("task",) if specs else ()
    tool_names = tuple(n for n in names if n not in excluded)
    offered = [*tool_names, *(("compact_conversation",) if compaction_tool else ())]
    own_tools = [*tools, *middleware_tools(middleware)]
    offered.extend(tool_names_of(middleware_tools(middleware)))
    checked = _checked_approvals(
        interrupt_on, [n for n in offered if n and n not in excluded], name, excluded
    )
    asked = asked_approvals(
        checked, [tool for tool in own_tools if tool_names_of([tool])[0] not in excluded]
    )
    config = AssemblyConfig(
        system_prompt=system_prompt,
        memory=tuple(memory),
        skills=tuple(skills),
        profile=profile,
        tool_names=tool_names,
        filesystem_text=filesystem_prompt(fs_tools) if fs_tools else "",
        subagents_text=subagents_prompt(specs) if specs else "",
        interrupt_on=asked or None,
    )
    return AgentPlan(backend, profile, fs_tools, todos, config, specs, {**(checked or {}), **asked})


def middleware_tools(middleware: Sequence[Middleware]) -> list[AgentTool]:
    """The tools the middleware bring (their `tools` attribute), in order."""
    return [tool for layer in middleware for tool in getattr(layer, "tools", None) or ()]


def needs_checkpointer(approvals: Approvals, tools: Sequence[AgentTool]) -> str:
    """Why an agent that asks for approvals cannot be built without a checkpointer."""
    code = [name for name in code_running_tools(tools) if name in approvals]
    if not code:
        return (
            "interrupt_on needs a checkpointer to pause a run and resume it: pass "
            "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver."
        )
    return (
        f"the tool {code[0]!r} runs code, so every call of it waits for a person's approval, "
        "which needs a checkpointer to pause the run and resume it: pass "
        "checkpointer=InMemorySaver() (from langgraph.checkpoint.memory) or a SqliteSaver, "
        f"or turn its approval off by name with interrupt_on={{{code[0]!r}: False}}."
    )


def _checked_approvals(
    interrupt_on: Approvals | None,
    available: Sequence[str],
    agent: str | None,
    hidden: Collection[str] = (),
) -> dict[str, ApprovalSetting] | None:
    """`interrupt_on` as a dict, refusing tool names the agent does not have.

    A misspelled name would otherwise switch approval off for the tool meant, without a word. A
    subagent's (`InheritedApprovals`) is its caller's for the tools it has, plus its own checked.

    Raises:
        TypeError: `interrupt_on` is not a mapping.
        ValueError: a name is not one of the agent's tools; the message lists the valid ones.
    """
    if not interrupt_on:
        return None
    if not isinstance(interrupt_on, Mapping):
        msg = (
            "interrupt_on takes a mapping of tool name -> True or an InterruptOnConfig, e.g. "
            f"{{'write_file': True}}, not a {type(interrupt_on).__name__}"
        )
        raise TypeError(msg)
    if isinstance(interrupt_on, InheritedApprovals):
        _checked_approvals(interrupt_on.own, available, agent, hidden)
        return interrupt_on.merged(available) or None
    unknown = [name for name in interrupt_on if name not in available]
    if unknown:
        whose = f"the agent {agent!r}" if agent else "the agent"
        listed = ", ".join(
            f"{name!r} (hidden by the profile's excluded_tools)" if name in hidden else repr(name)
            for name in unknown
        )
        msg = (
            f"interrupt_on names {'a tool' if len(unknown) == 1 else 'tools'} {whose} does not "
            f"have: {listed}, so no approval would ever be asked for "
            f"{'it' if len(unknown) == 1 else 'them'}. Valid names: {', '.join(sorted(available))}."
        )
        raise ValueError(msg)
    return dict(interrupt_on)


def with_memory_budget(
    config: AssemblyConfig, model: ChatModelInput | None, context_window: int | None
) -> AssemblyConfig:
    """The assembly config with the token budget of one memory file set from the window."""
    from jupyter_deepagent.harness.compression.tokens import resolve_context_window
    from jupyter_deepagent.harness.prompt.memory import memory_token_budget

    window = resolve_context_window(model if not isinstance(model, str) else None, context_window)
    known = window.tokens if window.source != "default" else None
    return replace(config, memory_token_budget=memory_token_budget(known))
