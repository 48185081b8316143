"""The agent's filesystem in a notebook: one `CompositeBackend` and the prompt text describing it.

| path | backend |
|---|---|
| `/notebook/` | `NotebookBackend`: cells, outputs and variables of the live notebook (read-only) |
| `/outputs/` | `OutputsBackend`: this cell's files, displayed when the run ends |
| `/workspace/` | `DiskBackend` on the notebook's folder; `.env` files and the state folder hidden |
| `/memories/` | `StoreBackend` on the session's SQLite store (survives restarts) |
| `/large_tool_results/`, `/conversation_history/`, `/subagents/` | disk, under `.deepagent/artifacts/` |
| anything else | `StateBackend`: the thread's scratch files, checkpointed |
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from jupyter_deepagent._exceptions import PermissionDenied
from jupyter_deepagent.backends._paths import is_within, normalize_virtual_path
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

__all__ = ["ARTIFACT_MOUNTS", "GuardedFolder", "notebook_filesystem", "notebook_prompt"]

ARTIFACT_MOUNTS = ("large_tool_results", "conversation_history", "subagents")
"""Folders the harness writes to, kept on disk under `<state_dir>/artifacts/`."""

_Listed = TypeVar("_Listed", FileInfo, GrepMatch)


def _is_secret(path: str) -> bool:
    return any(part == ".env" or part.startswith(".env.") for part in path.split("/"))


class GuardedFolder(AsyncBackendMixin):
    """A backend with some paths hidden: `.env` files (API keys) and folders listed in `hidden`.

    A hidden path is refused by read, write, edit and delete, and left out of ls, glob and grep,
    so neither a key nor the session's databases can reach the model.

    Args:
        backend: The backend to guard (a `DiskBackend` on the notebook's folder).
        hidden: Folders inside it, as virtual paths (e.g. `/.deepagent`).
    """

    def __init__(self, backend: BackendProtocol, hidden: tuple[str, ...] = ()) -> None:
        self.backend = backend
        self.hidden = tuple(normalize_virtual_path(folder) for folder in hidden)

    def _is_hidden(self, path: str) -> bool:
        path = normalize_virtual_path(path)
        return _is_secret(path) or any(is_within(path, folder) for folder in self.hidden)

    def _check(self, path: str) -> str:
        if self._is_hidden(path):
            msg = (
                f"{normalize_virtual_path(path)} is off limits: .env files and the agent's own "
                "state folder are hidden from the agent."
            )
            raise PermissionDenied(msg, path=normalize_virtual_path(path))
        return path

    def _visible(self, items: list[_Listed]) -> list[_Listed]:
        return [item for item in items if not self._is_hidden(item.path)]

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder, leaving hidden entries out."""
        return self._visible(self.backend.ls(self._check(path)))

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read a file unless it is hidden."""
        return self.backend.read(self._check(path), offset, limit)

    def write(self, path: str, content: str) -> WriteResult:
        """Write a file unless it is hidden."""
        return self.backend.write(self._check(path), content)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Edit a file unless it is hidden."""
        return self.backend.edit(self._check(path), old, new, replace_all)

    def delete(self, path: str) -> None:
        """Delete a file or folder unless it is hidden."""
        self.backend.delete(self._check(path))

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Matching files, hidden ones left out."""
        return self._visible(self.backend.glob(pattern, self._check(path)))

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Matching lines, never from hidden files."""
        return self._visible(self.backend.grep(pattern, self._check(path), glob, regex))


def _inside(child: Path, parent: Path) -> str | None:
    """`child` as a virtual path inside `parent`, or None when it lies elsewhere."""
    try:
        relative = child.resolve().relative_to(parent.resolve())
    except ValueError:
        return None
    return "/" + relative.as_posix() if relative.parts else None


def notebook_filesystem(
    *,
    notebook: BackendProtocol,
    outputs: BackendProtocol,
    workspace: Path,
    workspace_read_only: bool,
    state_dir: Path,
    store: Any,
) -> CompositeBackend:
    """Mount the notebook's backends into the one tree the agent sees (see the module table)."""
    hidden = _inside(state_dir, workspace)
    routes: dict[str, BackendProtocol] = {
        "/notebook/": notebook,
        "/outputs/": outputs,
        "/workspace/": GuardedFolder(
            DiskBackend(workspace, read_only=workspace_read_only),
            hidden=(hidden,) if hidden else (),
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

