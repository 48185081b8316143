"""Which tool calls wait for a person: approvals only add up, and code always asks.

Two rules hold for every agent the harness builds, the main agent and each subagent alike:

1. **A code-running tool asks.** A tool whose `metadata` has `RUNS_CODE: True` (the notebook's
   `python` tool, a notebook function marked `@agent_tool(runs_code=True)`, or any LangChain tool
   you mark) waits for approval at every call, whoever calls it, unless the main agent's
   `interrupt_on` turns it off by name (`{"python": False}`). That opt-out reaches its
   subagents; nothing else turns the question off.
2. **A subagent's approvals add to its caller's.** A subagent keeps every approval its caller
   asks for (of the tools it has) and adds its own `interrupt_on`; its own settings never remove
   one. A subagent spec that sets a tool to False where the caller asks for it is refused.

A `CompiledSubAgent` is a graph of your own: it asks for what you built it to ask for.

Without these, a `[[subagents]]` entry with `interrupt_on = ["write_file"]` (or `[]`) handed the
subagent the caller's tools, `python` included, with only its own list of approvals: the model
could delegate code to it and the code ran without anyone seeing it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Final

from jupyter_deepagent.harness.prompt.assembly import tool_names_of

if TYPE_CHECKING:
    from jupyter_deepagent.harness.agent_inputs import AgentTool, Approvals, ApprovalSetting

__all__ = [
    "RUNS_CODE",
    "InheritedApprovals",
    "asked_approvals",
    "code_running_tools",
    "runs_code",
    "subagent_approvals",
]

RUNS_CODE: Final = "runs_code"
"""Key of a tool's `metadata`: True marks a tool that runs code the model sends (it always asks)."""


def runs_code(tool: object) -> bool:
    """Whether `tool` is marked as running code the model sends (`metadata[RUNS_CODE]`)."""
    if isinstance(tool, Mapping):
        metadata = tool.get("metadata")
    else:
        metadata = getattr(tool, "metadata", None)
    return isinstance(metadata, Mapping) and metadata.get(RUNS_CODE) is True


def code_running_tools(tools: Iterable[AgentTool]) -> list[str]:
    """The names of the tools marked as running code, in order."""
    return list(tool_names_of([tool for tool in tools if runs_code(tool)]))


def asked_approvals(
    approvals: Approvals | None, tools: Iterable[AgentTool]
) -> dict[str, ApprovalSetting]:
    """The calls that wait for a person: `approvals` that are on, plus every code-running tool
    of `tools` that `approvals` does not turn off by name."""
    approvals = approvals or {}
    asked: dict[str, ApprovalSetting] = {
        name: True for name in code_running_tools(tools) if name not in approvals
    }
    asked.update({name: value for name, value in approvals.items() if value})
    return asked


class InheritedApprovals(dict[str, "ApprovalSetting"]):
    """A caller's `interrupt_on` handed down to a subagent, with the subagent's own on top.

    The caller's entries apply to the tools the subagent has (one it lacks, `task` say, simply
    does not apply); a False entry is the user's opt-out of a code-running tool and carries on
    down. `own` is the subagent's spec, checked against its tools like a main agent's.
    """

    def __init__(self, caller: Approvals, own: Approvals | None = None) -> None:
        super().__init__(caller)
        self.own: dict[str, ApprovalSetting] = dict(own or {})

    def __bool__(self) -> bool:
        return bool(len(self) or self.own)

    def merged(self, available: Iterable[str]) -> dict[str, ApprovalSetting]:
        """The subagent's approvals for its tools `available`: the caller's, then its own added."""
        names = set(available)
        merged = {name: value for name, value in self.items() if name in names}
        for name, value in self.own.items():
            if value:
                merged[name] = merged.get(name) or value
        return merged


def subagent_approvals(
    subagent: str,
    caller: Approvals | None,
    own: Approvals | None,
    tools: Iterable[AgentTool],
) -> InheritedApprovals | None:
    """The approvals of the subagent `subagent`, which has `tools`: its caller's plus its own.

    Raises:
        TypeError: `own` is not a mapping.
        ValueError: `own` turns off an approval the caller asks for, or that a code-running
            tool has; the message says where to turn it off instead.
    """
    caller = caller or {}
    if own is not None and not isinstance(own, Mapping):
        msg = (
            f"subagent {subagent!r}: interrupt_on takes a mapping of tool name -> True or an "
            f"InterruptOnConfig, e.g. {{'write_file': True}}, not a {type(own).__name__}"
        )
        raise TypeError(msg)
    own = own or {}
    code = set(code_running_tools(tools))
    for name, value in own.items():
        if value:
            continue
        asks = bool(caller.get(name)) or (name in code and name not in caller)
        if asks:
            why = "runs code" if name in code else "needs approval in the agent that calls it"
            msg = (
                f"subagent {subagent!r}: interrupt_on={{{name!r}: False}} would let it call "
                f"{name!r} without approval, but {name!r} {why}. A subagent's approvals only add "
                "to its caller's: to stop asking for it everywhere, set "
                f"interrupt_on={{{name!r}: False}} on the main agent."
            )
            raise ValueError(msg)
    if not caller and not own:
        return None
    return InheritedApprovals(caller, {name: value for name, value in own.items() if value})
