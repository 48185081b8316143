"""Skills with progressive disclosure: only each skill's name, description and path are in the
prompt; the agent reads the SKILL.md body when a task matches.

Sources are rescanned at every model call, so a skill added or fixed between runs is seen at once;
a SKILL.md whose listed size and modification time have not changed is not read again. A SKILL.md
that cannot be used (broken frontmatter, not UTF-8 text, too large) is skipped with a problem
naming the file and why; on a name clash the later source wins, with a problem noted.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import yaml

from jupyter_deepagent._exceptions import BackendError, BinaryFile, FileTooLarge
from jupyter_deepagent.backends.protocol import BackendProtocol, FileInfo
from jupyter_deepagent.harness.files import read_text
from jupyter_deepagent.harness.prompt.sections import PromptSection

__all__ = [
    "MAX_SKILL_FILE_BYTES",
    "SkillInfo",
    "SkillScan",
    "scan_skills",
    "skills_section",
]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_SKILL_FILE_BYTES = 1_000_000
"""A larger SKILL.md is reported, not read: long material belongs in other files of the skill."""
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_OPTIONAL_FIELDS = ("license", "compatibility", "metadata", "allowed-tools")
_BOM = "\ufeff"


@dataclass(frozen=True)
class SkillInfo:
    """A skill as listed in the prompt: name, description, the SKILL.md path and its source."""

    name: str
    description: str
    path: str
    source: str
    extra: dict[str, object] = field(default_factory=dict)


@dataclass
class SkillScan:
    """The result of scanning skill sources: usable skills and the problems found."""

    skills: list[SkillInfo] = field(default_factory=list)
    problems: list[tuple[str, str]] = field(default_factory=list)  # (file, message)

    def by_path(self, path: str) -> SkillInfo | None:
        """The skill whose SKILL.md is at `path`, if any."""
        return next((s for s in self.skills if s.path == path), None)


def _parse_skill_file(text: str, path: str, source: str) -> SkillInfo:
    """Parse a SKILL.md's YAML frontmatter (a leading UTF-8 byte-order mark is ignored).

    Raises:
        ValueError: the frontmatter is missing or malformed; the message names the field.
    """
    text = text.removeprefix(_BOM)
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
    except RecursionError as exc:
        msg = "frontmatter is nested too deeply to parse; flatten it (its 'metadata', say)"
        raise ValueError(msg) from exc
    except Exception as exc:
        msg = f"frontmatter could not be parsed ({type(exc).__name__}: {exc})"
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


class _ParsedSkills:
    """One backend's parse outcomes (a SkillInfo or a problem) by `(path, size, modified_at)`.

    An entry is kept only for a file last modified a while before it was read: a same-size edit
    within one tick of the file's clock leaves the listing unchanged, so a file that was still
    being written is read again next time.
    """

    SETTLED = timedelta(seconds=2)
    CAPACITY = 256

    def __init__(self) -> None:
        self._entries: OrderedDict[tuple[str, int, datetime], SkillInfo | str] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(info: FileInfo) -> tuple[str, int, datetime] | None:
        when = info.modified_at
        if when is None:
            return None
        return info.path, info.size, when if when.tzinfo else when.replace(tzinfo=UTC)

    def get(self, info: FileInfo) -> SkillInfo | str | None:
        key = self._key(info)
        with self._lock:
            if key is None or key not in self._entries:
                return None
            self._entries.move_to_end(key)
            return self._entries[key]

    def put(self, info: FileInfo, outcome: SkillInfo | str) -> None:
        key = self._key(info)
        if key is None or datetime.now(UTC) - key[2] < self.SETTLED:
            return
        with self._lock:
            self._entries[key] = outcome
            while len(self._entries) > self.CAPACITY:
                self._entries.popitem(last=False)


_by_backend: weakref.WeakKeyDictionary[BackendProtocol, _ParsedSkills] = weakref.WeakKeyDictionary()
_by_backend_lock = threading.Lock()


def _parsed_for(backend: BackendProtocol) -> _ParsedSkills:
    """The parse cache of `backend` (a throwaway one if the backend cannot be weakly keyed)."""
    with _by_backend_lock:
        try:
            return _by_backend.setdefault(backend, _ParsedSkills())
        except TypeError:  # unhashable or not weakly referenceable: no caching
            return _ParsedSkills()


def _skill_file(backend: BackendProtocol, folder: str) -> FileInfo | None:
    """The listing entry of `folder`'s SKILL.md, or None when the folder has none.

    Raises:
        BackendError: the folder cannot be listed.
    """
    path = folder.rstrip("/") + "/SKILL.md"
    return next((e for e in backend.ls(folder) if e.path == path and not e.is_dir), None)


def _load_skill(backend: BackendProtocol, info: FileInfo, source: str) -> SkillInfo | str:
    """Parse one SKILL.md, or say in a sentence why it is skipped."""
    path = info.path
    if info.size > MAX_SKILL_FILE_BYTES:
        return (
            f"skill {path} skipped: the file is {info.size:,} bytes, over the "
            f"{MAX_SKILL_FILE_BYTES:,} a SKILL.md may have; keep the instructions short and move "
            "long material into other files of the skill folder"
        )
    try:
        text = read_text(backend, path)
    except BinaryFile:
        return (
            f"skill {path} skipped: it is not UTF-8 text (binary data or another encoding); "
            "save it as UTF-8"
        )
    except FileTooLarge as exc:
        return f"skill {path} skipped: the file is too large to read ({exc})"
    except BackendError as exc:
        return f"skill {path} skipped: it could not be read ({exc})"
    try:
        return _parse_skill_file(text, path, source)
    except ValueError as exc:
        return f"skill {path} skipped: {exc}"


def scan_skills(backend: BackendProtocol, sources: Sequence[str]) -> SkillScan:
    """Find `<source>/<skill>/SKILL.md` files and parse their frontmatter.

    Never raises for a broken skill or folder: each one becomes an entry of `problems`.
    """
    scan = SkillScan()
    parsed = _parsed_for(backend)
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
            try:
                info = _skill_file(backend, entry.path)
            except BackendError as exc:
                scan.problems.append((entry.path, f"skill folder {entry.path} skipped: {exc}"))
                continue
            if info is None:
                continue  # a folder without SKILL.md is not a skill
            outcome = parsed.get(info)
            if outcome is None:
                outcome = _load_skill(backend, info, source)
                parsed.put(info, outcome)
            if isinstance(outcome, str):
                scan.problems.append((info.path, outcome))
                continue
            skill = outcome if outcome.source == source else replace(outcome, source=source)
            if skill.name in found:
                scan.problems.append(
                    (
                        skill.path,
                        f"skill name {skill.name!r} defined in {found[skill.name].path} and "
                        f"{skill.path}; the later one ({skill.path}) is used",
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
