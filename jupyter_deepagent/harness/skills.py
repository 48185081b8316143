"""Skills with progressive disclosure: only each skill's name, description and path are in the
prompt; the agent reads the SKILL.md body when a task matches.

Sources are rescanned at every model call, so a skill added or fixed between runs is seen at once.
A SKILL.md with broken frontmatter is skipped with a problem naming the file and the field; on a
name clash the later source wins, with a problem noted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.harness.files import read_text
from jupyter_deepagent.harness.prompt import PromptSection

__all__ = ["SkillInfo", "SkillScan", "parse_skill_file", "scan_skills", "skills_section"]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_OPTIONAL_FIELDS = ("license", "compatibility", "metadata", "allowed-tools")


@dataclass(frozen=True)
class SkillInfo:
    """A skill as listed in the prompt: name, description, the SKILL.md path and its source."""

    name: str
    description: str
    path: str
    source: str
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class SkillScan:
    """The result of scanning skill sources: usable skills and the problems found."""

    skills: list[SkillInfo] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, message)

    def by_path(self, path: str) -> SkillInfo | None:
        """The skill whose SKILL.md is at `path`, if any."""
        return next((s for s in self.skills if s.path == path), None)


def parse_skill_file(text: str, path: str, source: str) -> SkillInfo:
    """Parse a SKILL.md's YAML frontmatter.

    Raises:
        ValueError: the frontmatter is missing or malformed; the message names the field.
    """
    if not text.startswith("---"):
        msg = "no YAML frontmatter: the file must start with a '---' line"
        raise ValueError(msg)
    end = text.find("\n---", 3)
    if end < 0:
        msg = "frontmatter is not closed by a '---' line"
        raise ValueError(msg)
    try:
        data = yaml.safe_load(text[3:end])
    except yaml.YAMLError as exc:
        msg = f"frontmatter is not valid YAML ({str(exc).splitlines()[0]})"
        raise ValueError(msg) from exc
    if not isinstance(data, dict):
        msg = "frontmatter must be a mapping with 'name' and 'description'"
        raise ValueError(msg)
    name = data.get("name")
    if not isinstance(name, str) or not name:
        msg = "field 'name' is missing"
        raise ValueError(msg)
    if len(name) > MAX_NAME or not _NAME_RE.match(name):
        msg = (
            f"field 'name' is {name!r}: use at most {MAX_NAME} lowercase letters, digits and "
            "single hyphens"
        )
        raise ValueError(msg)
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        msg = "field 'description' is missing"
        raise ValueError(msg)
    if len(description) > MAX_DESCRIPTION:
        msg = f"field 'description' has {len(description)} characters; at most {MAX_DESCRIPTION}"
        raise ValueError(msg)
    extra = {key: data[key] for key in _OPTIONAL_FIELDS if key in data}
    return SkillInfo(name, description.strip(), path, source, extra)


def scan_skills(backend: BackendProtocol, sources: Sequence[str]) -> SkillScan:
    """Find `<source>/<skill>/SKILL.md` files and parse their frontmatter."""
    scan = SkillScan()
    found: dict[str, SkillInfo] = {}
    for source in sources:
        try:
            entries = backend.ls(source)
        except BackendError as exc:
            scan.problems.append((source, f"skills folder {source} could not be listed: {exc}"))
            continue
        for entry in entries:
            if not entry.is_dir:
                continue
            path = entry.path.rstrip("/") + "/SKILL.md"
            try:
                text = read_text(backend, path)
            except BackendError:
                continue  # a folder without SKILL.md is not a skill
            try:
                skill = parse_skill_file(text, path, source)
            except ValueError as exc:
                scan.problems.append((path, f"skill {path} skipped: {exc}"))
                continue
            if skill.name in found:
                scan.problems.append(
                    (
                        path,
                        f"skill name {skill.name!r} defined in {found[skill.name].path} and "
                        f"{path}; the later one ({path}) is used",
                    )
                )
            found[skill.name] = skill
    scan.skills = list(found.values())
    return scan


def skills_section(scan: SkillScan, sources: Sequence[str]) -> PromptSection:
    """The skills section: what skills are, then one line per skill (name, description, path)."""
    lines = [
        "## Skills",
        "Skills are folders of instructions for specialised tasks. Only their names and "
        "descriptions are listed here. When a task matches a skill, read its SKILL.md with "
        "`read_file` before you start, then follow it; it may point to further files in its "
        "folder.",
        "",
    ]
    if scan.skills:
        lines += [f"- **{s.name}**: {s.description} (read `{s.path}`)" for s in scan.skills]
    else:
        lines.append(f"(No skills found in {', '.join(sources)}.)")
    return PromptSection("skills", f"skills: {', '.join(sources)}", "\n".join(lines))
