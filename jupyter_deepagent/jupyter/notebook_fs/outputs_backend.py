"""`/outputs/`: files the agent writes for the cell it runs in, shown there when the run ends.

Each `%%agent` cell gets a fresh `OutputsBackend`, kept in memory (not checkpointed: the files
live in the cell's output). When the run ends, `views.output_files` shows them under the cell.
"""

from __future__ import annotations

from jupyter_deepagent.backends import is_within, normalize_virtual_path
from jupyter_deepagent.backends.state import FileData, FileMapBackend

__all__ = ["OutputsBackend"]


class OutputsBackend(FileMapBackend):
    """Text files kept in memory for one cell (not checkpointed: they live in the cell's output)."""

    def __init__(self) -> None:
        self._files: dict[str, FileData] = {}

    @property
    def files(self) -> dict[str, str]:
        """Path (inside the mount, e.g. `/summary.md`) -> text, sorted by path."""
        return {path: self._files[path]["content"] for path in sorted(self._files)}

    def _get(self, path: str) -> FileData | None:
        return self._files.get(path)

    def _put(self, path: str, data: FileData) -> None:
        self._files[path] = data

    def _drop(self, path: str) -> None:
        self._files.pop(path, None)

    def _files_under(self, folder: str) -> dict[str, FileData]:
        return {p: d for p, d in self._files.items() if p != folder and is_within(p, folder)}

    def read_text(self, path: str) -> str:
        """The whole text of a file, as written (the agent reads it through a `MaskedFolder`).

        Raises:
            FileNotFound: If there is no file at `path`.
            InvalidPath: If `path` is malformed or a folder.
        """
        return self._text(normalize_virtual_path(path))
