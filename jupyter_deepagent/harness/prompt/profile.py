"""Harness profiles: change the base prompt, add a suffix, rename or hide tools without forking."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["HarnessProfile"]


@dataclass(frozen=True)
class HarnessProfile:
    """How the harness presents itself to the model.

    Attributes:
        base_system_prompt: replaces the base agent prompt (section 2) when set.
        system_prompt_suffix: appended as the very last section.
        tool_description_overrides: tool name -> the description the model sees instead.
        excluded_tools: tools removed from the schemas sent to the model; their prompt sections
            go with them (all filesystem tools -> no filesystem section; `write_todos` -> no todo
            section; `task` -> no subagents section).
        general_purpose_subagent: whether the `general-purpose` subagent is offered.

    Raises:
        TypeError: `excluded_tools` is one string, not a sequence of tool names.
    """

    base_system_prompt: str | None = None
    system_prompt_suffix: str | None = None
    tool_description_overrides: Mapping[str, str] = field(default_factory=dict)
    excluded_tools: tuple[str, ...] = ()
    general_purpose_subagent: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.excluded_tools, str):
            msg = (
                "excluded_tools must be a sequence of tool names, not one string: write "
                f"excluded_tools=({self.excluded_tools!r},)"
            )
            raise TypeError(msg)
        object.__setattr__(self, "excluded_tools", tuple(self.excluded_tools))
        overrides = dict(self.tool_description_overrides)
        object.__setattr__(self, "tool_description_overrides", overrides)
