"""The one protocol every backend implements, and the small typed results it returns.

Paths are virtual and absolute (`/notes/a.md`); folders end in `/` when listed. A backend never
raises anything but the `BackendError` family for a bad path or file, so tools can turn every
failure into a message for the model.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from jupyter_deepagent._exceptions import BackendError

__all__ = [
    "DEFAULT_READ_LIMIT",
    "AsyncBackendMixin",
    "BackendProtocol",
    "EditResult",
    "FileInfo",
    "GrepMatch",
    "ReadResult",
    "WriteResult",
]

DEFAULT_READ_LIMIT = 2000
"""Lines returned by `read` when no limit is given."""


@dataclass(frozen=True)
class FileInfo:
    """One entry of a listing: a file or a folder (folders' paths end in `/`)."""

    path: str
    size: int = 0
    modified_at: datetime | None = None
    is_dir: bool = False


@dataclass(frozen=True)
class ReadResult:
    """A page of a text file: `lines` (without newlines) starting at 0-based line `offset`."""

    path: str
    lines: list[str]
    offset: int
    total_lines: int

    @classmethod
    def from_text(
        cls, path: str, text: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> ReadResult:
        """Page `text` the way every backend does: `str.splitlines()` lines from `offset`.

        Raises:
            BackendError: If `offset` is negative or past the end of a non-empty file, or
                `limit` is below 1.
        """
        lines = text.splitlines()
        if offset < 0 or limit < 1:
            msg = (
                f"Cannot read {path} with offset={offset}, limit={limit}: "
                "use an offset of 0 or more and a limit of 1 or more."
            )
            raise BackendError(msg, path=path)
        if lines and offset >= len(lines):
            msg = (
                f"offset {offset} is past the end of {path}, which has {len(lines)} lines. "
                f"Use an offset below {len(lines)}."
            )
            raise BackendError(msg, path=path)
        page = lines[offset : offset + limit]
        return cls(path=path, lines=page, offset=offset, total_lines=len(lines))

    @property
    def next_offset(self) -> int | None:
        """Offset of the next page, or None when this page reaches the end of the file."""
        end = self.offset + len(self.lines)
        return end if end < self.total_lines else None


@dataclass(frozen=True)
class WriteResult:
    """A file written: its path, size in bytes and whether it was new."""

    path: str
    size: int
    created: bool


@dataclass(frozen=True)
class EditResult:
    """An exact-text edit applied: how many occurrences were replaced."""

    path: str
    replacements: int


@dataclass(frozen=True)
class GrepMatch:
    """One matching line (1-based line number)."""

    path: str
    line_number: int
    line: str


@runtime_checkable
class BackendProtocol(Protocol):
    """Where the agent's files live. Every method has an async twin prefixed with `a`.

    The async twins take the same arguments and raise the same errors as the sync methods.
    """

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List the direct children of a folder (or the file itself), sorted by path.

        Raises:
            InvalidPath: If the path is malformed or leads outside the backend.
            FileNotFound: If nothing exists at the path (the root `/` lists as empty).
        """
        ...

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines of a text file starting at 0-based line `offset`.

        Raises:
            InvalidPath: If the path is malformed or names a folder.
            FileNotFound: If the file does not exist.
            BackendError: If `offset` is negative or past the end, or `limit` is below 1; or
                (a `FileTooLarge` or `BinaryFile`) the file cannot be read as text.
        """
        ...

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file (parent folders are implied).

        Raises:
            TypeError: If `content` is not a str.
            InvalidPath: If the path is malformed, names a folder, or lies under a file.
            PermissionDenied: If the backend is read-only or the path is protected.
            BackendError: If the text cannot be stored (too large, or the storage failed).
        """
        ...

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace exact text; `old` must occur exactly once unless `replace_all`.

        Raises:
            EditConflict: If `old` is empty or not found, or found more than once without
                `replace_all`.
            FileNotFound: If the file does not exist.
            PermissionDenied: If the backend is read-only.
            BackendError: If the file cannot be read as text or written back.
        """
        ...

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything under it.

        Raises:
            FileNotFound: If nothing exists at the path.
            PermissionDenied: If the path is the root `/`, a mount point, or the backend is
                read-only.
        """
        ...

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` matching `pattern` (`*`, `**`, `?`, `[abc]`, `{a,b}`), as
        deepagents' glob matches: a pattern without `/` against each file's name at any depth,
        one with `/` against the path relative to `path` (a leading `/` anchors it there);
        names starting with `.` only where the pattern's level starts with `.` (see
        `glob_matches`; `every_file` lists those too).

        Raises:
            FileNotFound: If `path` does not exist (the root `/` searches as empty).
            BackendError: If `pattern` is not a valid glob.
        """
        ...

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines of text files under `path` containing `pattern` (a literal unless `regex`).

        Sorted by path, then line. Inside `limiting_matches(n)` (see `match_limit`), only the
        first `n`, and the limit is marked reached when more exist.

        Raises:
            FileNotFound: If `path` does not exist (the root `/` searches as empty).
            BackendError: If `regex` is true and `pattern` does not compile or takes too long,
                or `glob` is not a valid glob.
        """
        ...

    async def als(self, path: str = "/") -> list[FileInfo]: ...
    async def aread(
        self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> ReadResult: ...
    async def awrite(self, path: str, content: str) -> WriteResult: ...
    async def aedit(
        self, path: str, old: str, new: str, replace_all: bool = False
    ) -> EditResult: ...
    async def adelete(self, path: str) -> None: ...
    async def aglob(self, pattern: str, path: str = "/") -> list[FileInfo]: ...
    async def agrep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]: ...


class AsyncBackendMixin:
    """Async twins written once: each runs the sync method in a worker thread.

    `asyncio.to_thread` copies the caller's context, so a `StateBackend` bound to a run's state
    sees the same files from the async twin.
    """

    if TYPE_CHECKING:  # the sync methods of the backend this is mixed into

        def ls(self, path: str = "/") -> list[FileInfo]: ...
        def read(
            self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
        ) -> ReadResult: ...
        def write(self, path: str, content: str) -> WriteResult: ...
        def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult: ...
        def delete(self, path: str) -> None: ...
        def glob(self, pattern: str, path: str = "/") -> list[FileInfo]: ...
        def grep(
            self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
        ) -> list[GrepMatch]: ...

    async def als(self, path: str = "/") -> list[FileInfo]:
        return await asyncio.to_thread(self.ls, path)

    async def aread(
        self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT
    ) -> ReadResult:
        return await asyncio.to_thread(self.read, path, offset, limit)

    async def awrite(self, path: str, content: str) -> WriteResult:
        return await asyncio.to_thread(self.write, path, content)

    async def aedit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        return await asyncio.to_thread(self.edit, path, old, new, replace_all)

    async def adelete(self, path: str) -> None:
        await asyncio.to_thread(self.delete, path)

    async def aglob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        return await asyncio.to_thread(self.glob, pattern, path)

    async def agrep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        return await asyncio.to_thread(self.grep, pattern, path, glob, regex)
