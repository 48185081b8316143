"""The agent's filesystem in a notebook: one `CompositeBackend` and the prompt text describing it.

| path | backend |
|---|---|
| `/notebook/` | `NotebookBackend`: cells, outputs and variables of the live notebook (read-only) |
| `/outputs/` | `OutputsBackend`: this cell's files, displayed when the run ends |
| `/workspace/` | `GuardedFolder`: the notebook's folder, `.env*` and state hidden, settings read-only |
| `/memories/` | `StoreBackend` on the session's SQLite store (survives restarts) |
| `/large_tool_results/`, `/conversation_history/`, `/subagents/` | disk, under `.deepagent/artifacts/` |
| anything else | `StateBackend`: the thread's scratch files, checkpointed |
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

from jupyter_deepagent._exceptions import PermissionDenied
from jupyter_deepagent.backends import normalize_virtual_path
from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    BackendProtocol,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.backends.store import StoreBackend
from jupyter_deepagent.jupyter.config import CONFIG_FILE_NAMES
from jupyter_deepagent.jupyter.redaction import Redactor

__all__ = [
    "ARTIFACT_MOUNTS",
    "PROTECTED_NAMES",
    "GuardedFolder",
    "notebook_filesystem",
    "notebook_prompt",
]

ARTIFACT_MOUNTS = ("large_tool_results", "conversation_history", "subagents")
"""Folders the harness writes to, kept on disk under `<state_dir>/artifacts/`."""

_Listed = TypeVar("_Listed", FileInfo, GrepMatch)

PROTECTED_NAMES = CONFIG_FILE_NAMES
"""Files the agent may read but never write, edit or delete: they hold the agent's settings."""


def _is_secret_name(name: str) -> bool:
    name = name.casefold()
    return name.startswith(".env") or name == ".deepagent"


def _same_or_within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _key(real: str) -> str:
    """A real path compared without regard to case (a case-insensitive disk accepts `.ENV`)."""
    return os.path.normcase(real).casefold()


class GuardedFolder(AsyncBackendMixin):
    """A folder on disk with some paths hidden from the agent and some it may not change.

    Hidden (refused by read, write, edit and delete; left out of ls, glob and grep): any `.env*`
    file or `.deepagent` folder, and the real paths in `hidden` (the configured env file and
    state folder). Protected (readable, but never written, edited or deleted): `.deepagent.toml`
    and `pyproject.toml`, whose settings every run reads. Both are decided on the real path, after
    symlinks, and without regard to case, so `config.txt -> .env` or `.ENV` stays hidden; a folder
    holding a hidden or protected file cannot be deleted. Text read or found is passed through
    `redact`.

    Args:
        backend: The `DiskBackend` on the folder.
        hidden: Real paths (files or folders) to hide besides the `.env*` and `.deepagent` names.
        redact: Applied to every line read or found (masks API keys); a `Redactor` masks all
            the lines of one read or grep together.
    """

    def __init__(
        self,
        backend: DiskBackend,
        hidden: tuple[str | os.PathLike[str], ...] = (),
        redact: Callable[[str], str] | None = None,
    ) -> None:
        self.backend = backend
        self.root = os.path.realpath(backend.root)
        self.hidden = tuple(_key(os.path.realpath(path)) for path in hidden)
        self.redact = redact

    # -- deciding --------------------------------------------------------------------------------
    def _real(self, virtual: str) -> str:
        return os.path.realpath(os.path.join(self.root, *virtual.split("/")[1:]))

    def _names(self, virtual: str) -> list[str]:
        """The names along the path as written and along its real path inside the folder."""
        names = [part for part in virtual.split("/") if part]
        real = self._real(virtual)
        if _same_or_within(real, self.root):
            names += [part for part in real[len(self.root) :].split(os.sep) if part]
        return names

    def _is_hidden(self, path: str) -> bool:
        virtual = normalize_virtual_path(path)
        if any(_is_secret_name(name) for name in self._names(virtual)):
            return True
        real = _key(self._real(virtual))
        return any(_same_or_within(real, hidden) for hidden in self.hidden)

    def _check(self, path: str) -> str:
        if self._is_hidden(path):
            shown = normalize_virtual_path(path)
            msg = (
                f"{shown} is off limits: .env files and the agent's own state folder are hidden "
                "from the agent."
            )
            raise PermissionDenied(msg, path=shown)
        return path

    def _check_change(self, path: str) -> str:
        self._check(path)
        virtual = normalize_virtual_path(path)
        if self._protected_file(virtual):
            msg = (
                f"Cannot change {virtual}: it holds the notebook agent's settings, and only the "
                "user can change settings (in the file, or with %agent config). Ask the user."
            )
            raise PermissionDenied(msg, path=virtual)
        return path

    def _protected_file(self, virtual: str) -> bool:
        written = virtual.rsplit("/", 1)[-1]
        real = os.path.basename(self._real(virtual))
        return written.casefold() in PROTECTED_NAMES or real.casefold() in PROTECTED_NAMES

    def _guarded_inside(self, virtual: str) -> list[str]:
        """What a delete of folder `virtual` would take with it that the agent may not touch."""
        real = self._real(virtual)
        if os.path.islink(os.path.join(self.root, *virtual.split("/")[1:])) or not os.path.isdir(
            real
        ):
            return []
        found = [
            os.path.relpath(hidden, _key(real)) for hidden in self.hidden
            if _same_or_within(hidden, _key(real))
        ]
        for folder, folders, files in os.walk(real):
            for name in [*folders, *files]:
                if _is_secret_name(name) or name.casefold() in PROTECTED_NAMES:
                    found.append(os.path.relpath(os.path.join(folder, name), real))
            folders[:] = [name for name in folders if not _is_secret_name(name)]
            if len(found) >= 5:
                break
        return sorted(set(found))

    def _visible(self, items: list[_Listed]) -> list[_Listed]:
        hidden: dict[str, bool] = {}  # one check per file, however many lines of it matched
        for item in items:
            if item.path not in hidden:
                hidden[item.path] = self._is_hidden(item.path)
        return [item for item in items if not hidden[item.path]]

    def _redacted_lines(self, lines: list[str]) -> list[str]:
        if self.redact is None:
            return lines
        if isinstance(self.redact, Redactor):  # gathers the secret values once, not per line
            return self.redact.lines(lines)
        return [self.redact(line) for line in lines]

    # -- the protocol ----------------------------------------------------------------------------
    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder, leaving hidden entries out."""
        return self._visible(self.backend.ls(self._check(path)))

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read a file unless it is hidden; secrets in it are masked."""
        result = self.backend.read(self._check(path), offset, limit)
        return replace(result, lines=self._redacted_lines(result.lines))

    def write(self, path: str, content: str) -> WriteResult:
        """Write a file unless it is hidden or protected."""
        return self.backend.write(self._check_change(path), content)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Edit a file unless it is hidden or protected."""
        return self.backend.edit(self._check_change(path), old, new, replace_all)

    def delete(self, path: str) -> None:
        """Delete a file or folder unless it is, or holds, something hidden or protected."""
        self._check_change(path)
        virtual = normalize_virtual_path(path)
        guarded = self._guarded_inside(virtual)
        if guarded:
            listed = ", ".join(guarded[:5])
            msg = (
                f"Cannot delete {virtual}: it holds files only the user may change or see "
                f"({listed}). Delete the other files in it one by one instead."
            )
            raise PermissionDenied(msg, path=virtual)
        self.backend.delete(path)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Matching files, hidden ones left out."""
        return self._visible(self.backend.glob(pattern, self._check(path)))

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Matching lines, never from hidden files; secrets in them are masked."""
        found = self._visible(self.backend.grep(pattern, self._check(path), glob, regex))
        lines = self._redacted_lines([match.line for match in found])
        return [replace(match, line=line) for match, line in zip(found, lines, strict=True)]


def notebook_filesystem(
    *,
    notebook: BackendProtocol,
    outputs: BackendProtocol,
    workspace: Path,
    workspace_read_only: bool,
    state_dir: Path,
    store: Any,
    env_file: Path | None = None,
    redact: Callable[[str], str] | None = None,
) -> CompositeBackend:
    """Mount the notebook's backends into the one tree the agent sees (see the module table).

    In `/workspace/`, the state folder and `env_file` are hidden wherever they are, and text read
    there passes through `redact`.
    """
    hidden = (state_dir, *([env_file] if env_file is not None else []))
    routes: dict[str, BackendProtocol] = {
        "/notebook/": notebook,
        "/outputs/": outputs,
        "/workspace/": GuardedFolder(
            DiskBackend(workspace, read_only=workspace_read_only), hidden=hidden, redact=redact
        ),
        "/memories/": StoreBackend(store, namespace=("memories",)),
    }
    for name in ARTIFACT_MOUNTS:
        routes[f"/{name}/"] = DiskBackend(state_dir / "artifacts" / name)
    return CompositeBackend(StateBackend(), routes)


def notebook_prompt(*, workspace_read_only: bool) -> str:
    """The notebook section of the system prompt: what each mount holds and how to use it."""
    workspace = (
        "the notebook's folder on disk, read-only"
        if workspace_read_only
        else "the notebook's folder on disk (data files, scripts, reports you are asked to save)"
    )
    return f"""\
## Working in a Jupyter notebook

You run inside the user's Jupyter kernel. Your files are mounted like this:
- `/notebook/` (read-only): the live notebook. `/notebook/cells/<n>.py` is the source of the cell \
with execution count n and `/notebook/outputs/<n>.txt` its output as text; \
`/notebook/vars/index.md` lists the kernel's variables, and `/notebook/vars/<name>.csv` (tables), \
`.json` or `.txt` holds each one. Read these instead of asking the user to paste data; page \
through large files with `offset` and `limit`.
- `/outputs/`: what you write here is shown under the user's cell when you finish: `.md` as \
Markdown, `.csv` as a table, `.svg` (or `.png` as base64 text) as an image, `.html`, `.json`. Put \
deliverables the user should see here.
- `/workspace/`: {workspace}.
- `/memories/`: long-term memory, kept across conversations and kernel restarts.
- Any other path is scratch space for this conversation."""

