"""A folder the agent reads with its secrets masked, as it reads `/notebook/` and `/workspace/`.

`/outputs/` holds what the cell shows when the run ends: files the agent wrote, and figures
and displays its `python` calls made (`display(JSON(cfg))` saves `/outputs/display-1.json`).
The user sees them as they are; the agent reads them through a `MaskedFolder`, so a key the
kernel put into a display reaches the model as `***`. Every way of reading goes through the
mask: `read_file` pages the masked text, `grep` matches in it, and `edit_file` finds its text
in it and is refused on a line that holds a mask (see `masked_text`). A file the agent wrote
itself is given back as written (it knows the text; masking it would only be an oracle).
`ls` and `glob` list names and sizes, which hold no secret text.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Protocol

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends import every_file, normalize_virtual_path
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.project.secrets.masked_text import MaskedTexts, masked_grep
from jupyter_deepagent.project.secrets.redaction import Redactor

__all__ = ["MaskedFolder", "TextFolder"]


class TextFolder(Protocol):
    """What a `MaskedFolder` needs of the backend it wraps: the protocol's listing and writing
    calls, and the whole real text of a file."""

    def read_text(self, path: str) -> str:
        """The whole text of the file at `path`, as stored."""

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder."""

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files matching `pattern` under `path`."""

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a file."""

    def delete(self, path: str) -> None:
        """Delete a file or folder."""


class MaskedFolder(AsyncBackendMixin):
    """`backend` as the agent sees it: texts masked by `redact`, except the agent's own.

    Args:
        backend: The folder's files (an `OutputsBackend`).
        redact: Masks secrets (a `Redactor` masks exactly the secret; any other function masks
            whole lines it would change).
    """

    def __init__(self, backend: TextFolder, redact: Callable[[str], str]) -> None:
        self.backend = backend
        self.redact = redact
        self._masked = MaskedTexts()
        self._changing = threading.Lock()
        """Held over a change and its record, so the kernel's display saved while the agent
        writes the same file cannot be recorded as the agent's text."""

    def __repr__(self) -> str:
        return f"MaskedFolder({self.backend!r})"

    def _redactor(self) -> Callable[[str], str]:
        """The masking of one call: a `Redactor` gathers its secret values once for all files."""
        return self.redact.frozen() if isinstance(self.redact, Redactor) else self.redact

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder (names and sizes)."""
        return self.backend.ls(path)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` matching `pattern`."""
        return self.backend.glob(pattern, path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines from line `offset` of the masked text."""
        virtual = normalize_virtual_path(path)
        raw = self.backend.read_text(virtual)
        text = self._masked.get(virtual, raw, self._redactor()).text
        return ReadResult.from_text(virtual, text, offset, limit)

    def write(self, path: str, content: str) -> WriteResult:
        """Write a file for the agent: it reads this text back as it wrote it."""
        with self._changing:
            result = self.backend.write(path, content)
            self._masked.wrote(normalize_virtual_path(path), content)
        return result

    def save_output(self, path: str, content: str) -> WriteResult:
        """Write a file the kernel made (a figure, a display of a `python` call): the agent
        reads it masked, since it may show what the user's variables hold."""
        with self._changing:
            result = self.backend.write(path, content)
            self._masked.forget(normalize_virtual_path(path))
        return result

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace `old`, found in the masked text; refused on a line that holds a mask.

        Raises:
            EditConflict: If `old` is empty, missing or not unique (in the masked text).
            PermissionDenied: If a line the edit touches holds a masked secret.
        """
        virtual = normalize_virtual_path(path)
        with self._changing:
            shown = self._masked.get(virtual, self.backend.read_text(virtual), self._redactor())
            text, count = shown.edited(virtual, old, new, replace_all)
            own = self._masked.owns(virtual, shown.raw)  # the agent's own text stays its own
            self.backend.write(virtual, text)
            if own:
                self._masked.wrote(virtual, text)
        return EditResult(path=virtual, replacements=count)

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything under it."""
        virtual = normalize_virtual_path(path)
        with self._changing:
            try:
                gone = every_file(self.backend, virtual)
            except BackendError:  # nothing there: the delete says so
                gone = []
            for info in gone:
                self._masked.forget(info.path)
            self.backend.delete(virtual)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines matching `pattern` in the masked texts of the files under `path`.

        Raises:
            BackendError: If `regex` and the pattern is invalid or over its time budget.
        """
        virtual = normalize_virtual_path(path)
        listed = every_file(self.backend, virtual)
        single = len(listed) == 1 and listed[0].path == virtual
        root = (virtual.rsplit("/", 1)[0] or "/") if single else virtual
        redact = self._redactor()

        def files() -> Iterator[tuple[str, str]]:
            for info in listed:
                yield info.path, self.backend.read_text(info.path)

        def mask(file_path: str, raw: str) -> str:
            return self._masked.get(file_path, raw, redact).text

        return masked_grep(pattern, files(), root, mask, file_glob=glob, regex=regex)
