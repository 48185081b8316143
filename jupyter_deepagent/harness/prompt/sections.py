"""The system prompt as data: ordered, named sections with their source and token count.

The order is fixed (the seeds' order): custom system prompt, base agent prompt, todo list, memory,
skills, virtual filesystem, subagents, user middleware, human in the loop, then a profile suffix.
What the model receives as its system message is exactly `PromptAssembly.text`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from jupyter_deepagent.harness.compression.tokens import approx_tokens

__all__ = [
    "BASE_AGENT_PROMPT",
    "SECTION_ORDER",
    "PromptAssembly",
    "PromptSection",
]

SECTION_ORDER = (
    "system_prompt",
    "base",
    "todos",
    "memory",
    "skills",
    "filesystem",
    "subagents",
    "middleware",
    "human_in_the_loop",
    "suffix",
)
"""Section names in the order they appear in the system message."""

SECTION_SEPARATOR = "\n\n"

BASE_AGENT_PROMPT = """\
## How you work

You are a deep research agent. You take on open-ended questions that need several steps: reading \
material, running tools, comparing sources and writing up what you found.

- Plan before acting on anything that takes more than a few steps, and keep the plan current.
- Prefer reading to guessing: look at files and tool results before you draw conclusions, and say \
where each claim comes from.
- Keep your context lean. Large material belongs in files: write intermediate results, notes and \
drafts to files and refer to them by path instead of repeating them.
- When a tool fails, read the error, change what you send, and try again; do not repeat a call that \
failed in the same way.
- Be concise with the user. Lead with the answer or the result, then the evidence, then open \
questions. Say plainly what you could not do or verify."""


@dataclass(frozen=True)
class PromptSection:
    """One named part of the system prompt, with where it came from and what it costs."""

    name: str
    source: str
    text: str
    tokens: int = field(default=-1)

    def __post_init__(self) -> None:
        if self.tokens < 0:
            object.__setattr__(self, "tokens", approx_tokens(self.text))

    def as_dict(self) -> dict[str, Any]:
        """The section as a JSON-serializable dict."""
        return {"name": self.name, "source": self.source, "text": self.text, "tokens": self.tokens}


@dataclass(frozen=True)
class PromptAssembly:
    """The assembled system prompt: its sections in order and the joined text the model gets."""

    sections: tuple[PromptSection, ...]

    @classmethod
    def from_sections(cls, sections: Iterable[PromptSection]) -> PromptAssembly:
        """Order sections by `SECTION_ORDER`, dropping empty ones.

        Raises:
            ValueError: if a section has an unknown name or appears twice.
        """
        by_name: dict[str, PromptSection] = {}
        for section in sections:
            if section.name not in SECTION_ORDER:
                msg = f"unknown prompt section {section.name!r}; expected one of {SECTION_ORDER}"
                raise ValueError(msg)
            if section.name in by_name:
                msg = f"prompt section {section.name!r} given twice"
                raise ValueError(msg)
            if section.text.strip():
                by_name[section.name] = section
        return cls(tuple(by_name[name] for name in SECTION_ORDER if name in by_name))

    @property
    def text(self) -> str:
        """The system message text: sections joined by blank lines."""
        return SECTION_SEPARATOR.join(section.text for section in self.sections)

    @property
    def tokens(self) -> int:
        """Approximate tokens of the whole system message."""
        return approx_tokens(self.text)

    @property
    def names(self) -> list[str]:
        """Names of the sections present, in order."""
        return [section.name for section in self.sections]

    def __getitem__(self, name: str) -> PromptSection:
        for section in self.sections:
            if section.name == name:
                return section
        msg = f"no prompt section {name!r}; present: {self.names}"
        raise KeyError(msg)

    def __contains__(self, name: object) -> bool:
        return any(section.name == name for section in self.sections)

    def as_dict(self) -> dict[str, Any]:
        """The assembly as a JSON-serializable dict (what the `prompt` event carries)."""
        return {
            "sections": [section.as_dict() for section in self.sections],
            "tokens": self.tokens,
            "text": self.text,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> PromptAssembly:
        """Rebuild an assembly from `as_dict()` output (for example from a recorded event)."""
        return cls(tuple(PromptSection(**section) for section in data["sections"]))

    def to_markdown(self) -> str:
        """A readable outline: one heading per section with its source and token count."""
        lines = [f"System prompt: {len(self.sections)} sections, ~{self.tokens:,} tokens", ""]
        for index, section in enumerate(self.sections, 1):
            lines.append(
                f"### {index}. {section.name} ({section.tokens:,} tokens, {section.source})"
            )
            lines.append(section.text)
            lines.append("")
        return "\n".join(lines)
