"""Subagent specs: what the main agent may delegate to through `task`, and the words it reads.

A spec is a `SubAgent` (built by the harness from a prompt, tools and a model), a
`CompiledSubAgent` (any LangGraph runnable), or a plain dict with the same keys (as in deepagents).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from langchain_core.runnables import Runnable

    from jupyter_deepagent.harness.agent_inputs import (
        AgentTool,
        Approvals,
        ChatModelInput,
        Middleware,
    )

__all__ = [
    "GENERAL_PURPOSE",
    "CompiledSubAgent",
    "SubAgent",
    "TaskArgs",
    "normalize_subagents",
    "subagents_prompt",
    "task_tool_description",
]

GENERAL_PURPOSE = "general-purpose"
"""Name of the subagent that is always offered (unless the profile turns it off)."""

_GENERAL_PURPOSE_PROMPT = """\
You are a general-purpose subagent. Another agent gave you one task; it sees nothing of your work \
except your final message. Do the task completely with the tools you have, then reply with a \
self-contained report: the result first, then the evidence (files read, sources), then anything \
you could not do or verify. Save large material to files and give their paths instead of pasting \
it."""

_GENERAL_PURPOSE_DESCRIPTION = (
    "Has the same tools as you; for any self-contained job, such as researching a question or "
    "condensing many files."
)

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class SubAgent:
    """A subagent the harness builds with the full research-agent harness.

    Attributes:
        name: what the main agent passes as `subagent_type` (letters, digits, `-`, `_`).
        description: what the main agent reads to decide when to use it.
        system_prompt: its instructions (the first section of its system prompt).
        tools: its extra tools besides the file tools; None means the main agent's tools.
        model: a chat model or "provider:model" string; None means the main agent's model.
        middleware: its own `AgentMiddleware`.
        skills: skill folders it lists; None means none (the general-purpose one gets the main
            agent's skills).
        interrupt_on: further tools that need a person's approval, added to the calling agent's
            (which it always keeps, as every call of a code-running tool always asks).
        response_format: a pydantic model, TypedDict or JSON schema; its final report is then
            the structured response as JSON, and each field becomes a column of `results_frame`.

    Raises:
        ValueError: the name is not usable as a `subagent_type`, or the description is empty.
        TypeError: `skills` is one string, not a list of folders.
    """

    name: str
    description: str
    system_prompt: str | None = None
    tools: Sequence[AgentTool] | None = None
    model: ChatModelInput | None = None
    middleware: Sequence[Middleware] = ()
    skills: Sequence[str] | None = None
    interrupt_on: Approvals | None = None
    response_format: object = None

    def __post_init__(self) -> None:
        _check_name_and_description(self.name, self.description)
        if isinstance(self.skills, str):
            msg = f"subagent {self.name!r}: skills takes a list of folders, e.g. ['/skills/']"
            raise TypeError(msg)
        object.__setattr__(self, "middleware", tuple(self.middleware))


@dataclass(frozen=True)
class CompiledSubAgent:
    """Any LangGraph runnable used as a subagent.

    It is invoked with `{"messages": [the task description], "files": the main agent's files}`
    (keys its state does not have are ignored) and its last message is the report. A
    `structured_response` or `files` in its final state come back as they do for a `SubAgent`.

    Attributes:
        name: what the main agent passes as `subagent_type`.
        description: what the main agent reads to decide when to use it.
        runnable: a compiled graph (or any runnable taking and returning a state dict).

    Raises:
        ValueError: the name is not usable as a `subagent_type`, or the description is empty.
        TypeError: `runnable` has no `invoke()`.
    """

    name: str
    description: str
    runnable: Runnable

    def __post_init__(self) -> None:
        _check_name_and_description(self.name, self.description)
        if not callable(getattr(self.runnable, "invoke", None)):
            msg = (
                f"subagent {self.name!r}: runnable must be a LangGraph runnable with invoke(), "
                f"not {type(self.runnable).__name__}"
            )
            raise TypeError(msg)


SubAgentSpec = SubAgent | CompiledSubAgent


def _check_name_and_description(name: object, description: object) -> None:
    if not isinstance(name, str) or not _NAME.match(name):
        msg = (
            f"subagent name {name!r} is not usable as a subagent_type: use 1-64 letters, digits, "
            "'-' or '_', starting with a letter or digit (e.g. 'researcher')"
        )
        raise ValueError(msg)
    if not isinstance(description, str) or not description.strip():
        msg = f"subagent {name!r} needs a description: the main agent reads it to choose a subagent"
        raise ValueError(msg)


def _from_dict(raw: Mapping[str, Any]) -> SubAgentSpec:
    kind: type[SubAgent] | type[CompiledSubAgent] = (
        CompiledSubAgent if "runnable" in raw else SubAgent
    )
    known = [f.name for f in fields(kind)]
    unknown = sorted(set(raw) - set(known), key=str)
    if unknown:
        msg = (
            f"subagent {raw.get('name')!r} has unknown key {unknown[0]!r}; "
            f"a {kind.__name__} takes {', '.join(known)}"
        )
        raise ValueError(msg)
    missing = [key for key in ("name", "description") if key not in raw]
    if missing:
        msg = f"subagent spec {dict(raw)!r} has no {missing[0]!r}"
        raise ValueError(msg)
    return kind(**raw)


def normalize_subagents(
    subagents: Sequence[object], *, general_purpose: bool
) -> tuple[SubAgentSpec, ...]:
    """Turn the `subagents=` argument into specs, the general-purpose one first when offered.

    A spec of your own named `general-purpose` replaces the built-in one.

    Raises:
        TypeError: a spec is neither a SubAgent, a CompiledSubAgent nor a dict.
        ValueError: a name is unusable or given twice, a description is missing, a dict has an
            unknown key.
    """
    if isinstance(subagents, (str, Mapping)):
        msg = "subagents takes a list of SubAgent, CompiledSubAgent or dict specs"
        raise TypeError(msg)
    specs: list[SubAgentSpec] = []
    for raw in subagents:
        if isinstance(raw, (SubAgent, CompiledSubAgent)):
            specs.append(raw)
        elif isinstance(raw, Mapping):
            specs.append(_from_dict(raw))
        else:
            msg = (
                f"subagents[{len(specs)}] is a {type(raw).__name__}; give a SubAgent, a "
                "CompiledSubAgent or a dict with name, description and system_prompt"
            )
            raise TypeError(msg)
    names = [spec.name for spec in specs]
    for name in names:
        if names.count(name) > 1:
            msg = f"two subagents are named {name!r}; each subagent_type must be unique"
            raise ValueError(msg)
    if general_purpose and GENERAL_PURPOSE not in names:
        built_in = SubAgent(
            GENERAL_PURPOSE, _GENERAL_PURPOSE_DESCRIPTION, system_prompt=_GENERAL_PURPOSE_PROMPT
        )
        specs.insert(0, built_in)
    return tuple(specs)


def subagents_prompt(specs: Sequence[SubAgentSpec]) -> str:
    """Section 7 of the system prompt: when and how to delegate, and the subagents on offer."""
    listing = "\n".join(f"- `{spec.name}`: {' '.join(spec.description.split())}" for spec in specs)
    return f"""\
## Delegating with `task`

`task` gives one piece of work to a subagent, which starts in a fresh context with its own tools; \
only its final report comes back to you, and files it writes are visible to you.

- Use it for heavy work whose details you do not need (many files, long tool output, open-ended \
searching) and for independent pieces of work; not for a step of one or two tool calls.
- The subagent sees nothing of this conversation: give a complete, self-contained description \
(the goal, the inputs and file paths, where to save its output, what its report must contain).
- Call `task` several times in one turn to run tasks in parallel; the reports come back in the \
order you called them.

Subagents (`subagent_type`):
{listing}"""


def task_tool_description(specs: Sequence[SubAgentSpec]) -> str:
    """What the `task` tool says about itself in its schema."""
    names = ", ".join(f"'{spec.name}'" for spec in specs)
    return (
        "Launch a subagent to do one self-contained task in a fresh context and return its final "
        "report. `description` is everything the subagent will know: state the goal, the inputs "
        "and what the report must contain. `subagent_type` is one of: "
        f"{names}. Call task several times in one turn to run independent tasks in parallel."
    )


class TaskArgs(BaseModel):
    """Arguments of `task`."""

    description: str = Field(
        description=(
            "Everything the subagent needs to know, self-contained: the goal, the inputs (file "
            "paths, names, constraints), where to save output, and what the report must contain."
        )
    )
    subagent_type: str = Field(description="Which subagent does the task (its name).")
