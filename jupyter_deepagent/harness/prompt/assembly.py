"""Builds the `PromptAssembly` from the harness configuration and what the backend holds now.

The same function serves `assemble_prompt()` (no agent run) and the middleware (every model call),
so the prompt shown before a run is the prompt the model gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.prompt.memory import (
    MEMORY_TOKENS_UNKNOWN_WINDOW,
    MemoryFile,
    fit_memory,
    load_memory,
    memory_section,
)
from jupyter_deepagent.harness.prompt.profile import HarnessProfile
from jupyter_deepagent.harness.prompt.sections import (
    BASE_AGENT_PROMPT,
    PromptAssembly,
    PromptSection,
)
from jupyter_deepagent.harness.prompt.skills import SkillScan, scan_skills, skills_section

if TYPE_CHECKING:
    from jupyter_deepagent.harness.agent_inputs import AgentTool, Approvals

__all__ = ["AssemblyConfig", "AssemblyResult", "build_assembly"]

_TODO_PROMPT = """\
## Planning with `write_todos`

For work of three or more steps, keep a todo list with `write_todos`: write the plan first, \
mark a step `in_progress` when you start it and `completed` as soon as it is done, and revise the \
list when you learn something that changes the plan. Call it at most once per turn. Skip it for \
simple requests. Give your final answer in a message after your last `write_todos` call."""


@dataclass(frozen=True)
class AssemblyConfig:
    """Everything, besides the backend's files, that decides the system prompt."""

    system_prompt: str | None = None
    memory: tuple[str, ...] = ()
    skills: tuple[str, ...] = ()
    profile: HarnessProfile = field(default_factory=HarnessProfile)
    tool_names: tuple[str, ...] = ()
    filesystem_text: str = ""
    subagents_text: str = ""
    interrupt_on: Approvals | None = None
    memory_token_budget: int = MEMORY_TOKENS_UNKNOWN_WINDOW


@dataclass(frozen=True)
class AssemblyResult:
    """The assembly plus what was read to build it (for events)."""

    assembly: PromptAssembly
    memory: list[MemoryFile]
    skills: SkillScan
    memory_cut: list[tuple[str, int]] = field(default_factory=list)  # (path, tokens) cut to fit


def build_assembly(
    config: AssemblyConfig,
    backend: BackendProtocol,
    *,
    middleware_text: str = "",
    middleware_source: str = "user middleware",
) -> AssemblyResult:
    """Read memory and skills through `backend` and assemble the sections in the fixed order."""
    profile = config.profile
    sections: list[PromptSection] = []
    if config.system_prompt:
        sections.append(
            PromptSection("system_prompt", "system_prompt argument", config.system_prompt)
        )
    if profile.base_system_prompt is not None:
        base = PromptSection("base", "profile.base_system_prompt", profile.base_system_prompt)
    else:
        base = PromptSection("base", "jupyter_deepagent base prompt", BASE_AGENT_PROMPT)
    sections.append(base)
    if "write_todos" in config.tool_names:
        sections.append(PromptSection("todos", "write_todos tool", _TODO_PROMPT))
    memory_files: list[MemoryFile] = []
    memory_cut: list[tuple[str, int]] = []
    if config.memory:
        memory_files = load_memory(backend, config.memory)
        fitted, memory_cut = fit_memory(memory_files, config.memory_token_budget)
        sections.append(memory_section(fitted))
    scan = SkillScan()
    if config.skills:
        scan = scan_skills(backend, config.skills)
        sections.append(skills_section(scan, config.skills))
    if config.filesystem_text:
        text = f"## Virtual filesystem\n\n{config.filesystem_text}"
        sections.append(PromptSection("filesystem", "filesystem tools", text))
    if config.subagents_text and "task" in config.tool_names:
        sections.append(PromptSection("subagents", "task tool", config.subagents_text))
    if middleware_text.strip():
        sections.append(PromptSection("middleware", middleware_source, middleware_text.strip()))
    if config.interrupt_on:
        sections.append(_human_in_the_loop_section(config.interrupt_on))
    if profile.system_prompt_suffix:
        sections.append(
            PromptSection("suffix", "profile.system_prompt_suffix", profile.system_prompt_suffix)
        )
    return AssemblyResult(PromptAssembly.from_sections(sections), memory_files, scan, memory_cut)


def _human_in_the_loop_section(interrupt_on: Approvals) -> PromptSection:
    gated = sorted(name for name, setting in interrupt_on.items() if setting)
    text = (
        "## Approval\n\n"
        "A person reviews these tool calls before they run: "
        f"{', '.join(f'`{n}`' for n in gated)}. They may approve, edit or reject a call. If a "
        "call is rejected, the tool message says why: change your approach instead of repeating "
        "the same call."
    )
    return PromptSection("human_in_the_loop", "interrupt_on", text)


def tool_names_of(tools: Sequence[AgentTool]) -> tuple[str, ...]:
    """Names of tools given as BaseTool objects, functions or schema dicts."""
    names: list[str] = []
    for tool in tools:
        if isinstance(tool, dict):
            function = tool.get("function")
            name = tool.get("name") or (function.get("name") if isinstance(function, dict) else "")
        else:
            name = getattr(tool, "name", None) or getattr(tool, "__name__", "")
        names.append(name if isinstance(name, str) else "")
    return tuple(names)
