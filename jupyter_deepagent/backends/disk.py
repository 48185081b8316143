"""Real files under one folder on disk, sandboxed: no path, `..` or symlink leads out of it.

Every virtual path is normalized, then opened one component at a time relative to the folder
holding it, never following a symlink on its own (see `_rooted_tree`): what is checked is what is
used, so a symlink flipped by another process between two steps cannot lead a read or a write out
of the folder. Writes are atomic (a temporary `.deepagent-*.tmp` file, fsync, rename), so a failed
write leaves the old file as it was; the temporary files are never shown, and ones left behind by
a killed process are removed when the backend starts. Every `OSError` becomes a `BackendError`.
"""

from __future__ import annotations

import copy
import os
import shutil
import stat
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeAlias

from jupyter_deepagent._exceptions import (
    BackendError,
    BinaryFile,
    FileTooLarge,
    InvalidPath,
    PermissionDenied,
)
from jupyter_deepagent.backends._disk_files import (
    existing_file,
    is_temporary_name,
    megabytes,
    os_errors,
    read_text_at,
    refuse_executable,
    remove_stale_temporaries,
    replace_at,
    too_large,
)
from jupyter_deepagent.backends._disk_folders import (
    Found,
    entry_info,
    files_under,
    listed_entries,
)
from jupyter_deepagent.backends._paths import (
    folder_prefix,
    normalize_virtual_path,
    not_found,
    parent_folder,
)
from jupyter_deepagent.backends._rooted_tree import HeldFolder, RootedTree, Spot, close_quietly
from jupyter_deepagent.backends.matching._matching import (
    file_filter_matches,
    glob_matches,
    grep_texts,
    replace_exact,
)
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.skipped_files import note_skipped_file

__all__ = ["DiskBackend", "PathGuard"]

PathGuard: TypeAlias = Callable[[str, tuple[str, ...], bool], PermissionDenied | None]
"""Decides on a path once it is resolved: called with the virtual path, its real components
below the root (after symlinks) and whether the call would change it; returns the error that
refuses it, or None. Listings leave out what it refuses to read."""


class DiskBackend(AsyncBackendMixin):
    """Files in a folder on disk; virtual `/` is `root`.

    Symlinks are followed only while they stay inside `root`: one pointing out is refused by
    read/write/edit/delete/ls, and skipped by listings and searches (symlinked folders are
    listed but not descended into by glob and grep). Files are never made executable: a new
    file gets the mode `0o666` less the umask, and an existing file with any execute bit is
    never replaced, edited or deleted.

    Args:
        root: The folder to expose (created on first write if missing).
        read_only: Refuse write, edit and delete with PermissionDenied.
        max_file_bytes: Largest file read or written, in bytes.
        guard: Decides on each resolved path (see `PathGuard`); None allows every path.

    Raises:
        ValueError: If `root` exists and is not a folder.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        read_only: bool = False,
        max_file_bytes: int = 10_000_000,
        guard: PathGuard | None = None,
    ) -> None:
        self._root = os.path.realpath(os.fspath(root))
        if os.path.exists(self._root) and not os.path.isdir(self._root):
            msg = f"DiskBackend root {os.fspath(root)!r} is a file; give a folder."
            raise ValueError(msg)
        self.read_only = read_only
        self.max_file_bytes = max_file_bytes
        self.guard = guard
        self._tree = RootedTree(self._root)
        if not read_only:
            self.remove_stale_temporaries()

    def __repr__(self) -> str:
        return f"DiskBackend(root={self._root!r}, read_only={self.read_only})"

    @property
    def root(self) -> Path:
        """The resolved folder that virtual `/` maps onto."""
        return Path(self._root)

    def with_guard(self, guard: PathGuard | None) -> DiskBackend:
        """The same folder and settings, deciding on every resolved path with `guard`."""
        twin = copy.copy(self)
        twin.guard = guard
        return twin

    def remove_stale_temporaries(self) -> int:
        """Remove temporary files a killed write left in the root; return how many went.

        Only files older than a minute go, so a write still running elsewhere keeps its file.
        """
        return remove_stale_temporaries(self._tree)

    # -- deciding --------------------------------------------------------------------------------

    def _writable(self, path: str) -> str:
        """The normalized path of a change, refused first if this folder is read-only."""
        virtual = normalize_virtual_path(path)
        if self.read_only:
            msg = (
                f"Cannot change {virtual}: this folder is mounted read-only. Write somewhere else."
            )
            raise PermissionDenied(msg, path=virtual)
        return virtual

    def _allowed(self, virtual: str, real: tuple[str, ...]) -> bool:
        return self.guard is None or self.guard(virtual, real, False) is None

    def _refuse(self, virtual: str, real: tuple[str, ...], change: bool) -> None:
        """Raise the guard's refusal of a resolved path, if it has one."""
        if self.guard is not None:
            refusal = self.guard(virtual, real, change)
            if refusal is not None:
                raise refusal

    def _changeable(self, virtual: str, real: tuple[str, ...]) -> bool:
        return self.guard is None or self.guard(virtual, real, True) is None

    @contextmanager
    def _located(
        self,
        virtual: str,
        action: str,
        *,
        change: bool,
        follow_last: bool = True,
        make_folders: bool = False,
        real: tuple[str, ...] | None = None,
    ) -> Iterator[Spot]:
        """Resolve a path (or real components) and hold its folder open, after the guard agreed.

        Errors raised in the block are turned into the BackendError family too.
        """
        lookup = virtual if real is None else "/" + "/".join(real)
        with (
            os_errors(virtual, action),
            self._tree.locate(
                lookup,
                follow_last=follow_last,
                make_folders=make_folders,
                before_making=lambda folder: self._refuse(virtual, folder, change),
            ) as spot,
        ):
            if spot.name is not None and is_temporary_name(spot.name):
                if not change:
                    raise not_found(virtual)
                msg = (
                    f"Cannot {action} {virtual}: names like .deepagent-*.tmp are kept for the "
                    "temporary files of writes. Use another name."
                )
                raise InvalidPath(msg, path=virtual)
            self._refuse(virtual, spot.real, change)
            yield spot

    # -- entries -------------------------------------------------------------------------------

    def _scope(self, path: str) -> tuple[str, list[Found]]:
        """The folder searched from and its files (a file path searches only itself)."""
        virtual = normalize_virtual_path(path)
        if virtual == "/" and not os.path.isdir(self._root):
            return virtual, []
        with self._located(virtual, "search", change=False) as spot:
            if spot.name is not None:
                st = os.stat(spot.name, dir_fd=spot.folder_fd, follow_symlinks=False)
                return parent_folder(virtual), [(virtual, spot.real, st)]
            real = spot.real
        return virtual, list(files_under(self._tree, real, virtual, self._allowed))

    def _encode(self, path: str, text: str) -> bytes:
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError as exc:
            msg = f"Cannot write {path}: the text holds characters UTF-8 cannot store ({exc})."
            raise BackendError(msg, path=path) from exc
        if len(data) > self.max_file_bytes:
            raise too_large(path, len(data), self.max_file_bytes)
        return data

    def _guarded_inside(self, real: tuple[str, ...], virtual: str) -> list[str]:
        """What a delete of a folder would take with it that the agent may not change (<= 5)."""
        found: list[str] = []
        pending = [(real, virtual)]
        while pending and len(found) < 5:
            real_dir, virtual_dir = pending.pop()
            fd = self._tree.open_folder(real_dir)
            try:
                with os.scandir(fd) as entries:
                    listed = [(entry.name, entry.stat(follow_symlinks=False)) for entry in entries]
            finally:
                close_quietly(fd)
            for name, st in listed:
                child_real, child_virtual = (*real_dir, name), folder_prefix(virtual_dir) + name
                shown = child_virtual[len(folder_prefix(virtual)) :]
                if not self._changeable(child_virtual, child_real):
                    found.append(shown)
                elif stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
                    found.append(f"{shown} (executable)")
                elif stat.S_ISDIR(st.st_mode):
                    pending.append((child_real, child_virtual))
        return sorted(found)[:5]

    # -- the protocol --------------------------------------------------------------------------

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List the direct children of a folder (or the file itself), sorted by path."""
        virtual = normalize_virtual_path(path)
        if virtual == "/" and not os.path.isdir(self._root):
            return []
        with self._located(virtual, "list", change=False) as spot:
            if spot.name is not None:
                st = os.stat(spot.name, dir_fd=spot.folder_fd, follow_symlinks=False)
                return [entry_info(virtual, st)]
            found = list(
                listed_entries(self._tree, spot.folder_fd, spot.real, virtual, self._allowed)
            )
        return sorted((entry_info(v, st) for v, _, st, _ in found), key=lambda i: i.path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines of a text file starting at 0-based line `offset`."""
        virtual = normalize_virtual_path(path)
        with self._located(virtual, "read", change=False) as spot:
            text, _ = read_text_at(virtual, spot, self.max_file_bytes)
        return ReadResult.from_text(virtual, text, offset, limit)

    def read_text(self, path: str) -> str:
        """The whole text of a file, exactly as stored (line endings kept).

        Raises:
            InvalidPath: If the path is malformed, a folder, or leads outside this folder.
            FileNotFound: If the file does not exist.
            BackendError: If the file is too large or binary (`FileTooLarge`, `BinaryFile`).
        """
        virtual = normalize_virtual_path(path)
        with self._located(virtual, "read", change=False) as spot:
            text, _ = read_text_at(virtual, spot, self.max_file_bytes)
        return text

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file atomically (parent folders are created)."""
        virtual = self._writable(path)
        if not isinstance(content, str):
            msg = f"content must be a str, not {type(content).__name__}"
            raise TypeError(msg)
        data = self._encode(virtual, content)
        with self._located(virtual, "write", change=True, make_folders=True) as spot:
            existing = existing_file(virtual, spot)
            mode = None if existing is None else stat.S_IMODE(existing.st_mode)
            replace_at(self._tree, spot, data, mode)
        return WriteResult(path=virtual, size=len(data), created=existing is None)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace exact text; `old` must occur exactly once unless `replace_all`."""
        virtual = self._writable(path)
        with self._located(virtual, "edit", change=True) as spot:
            text, mode = read_text_at(virtual, spot, self.max_file_bytes, change=True)
            text, count = replace_exact(virtual, text, old, new, replace_all)
            replace_at(self._tree, spot, self._encode(virtual, text), mode)
        return EditResult(path=virtual, replacements=count)

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything under it (a symlink, not its target)."""
        virtual = self._writable(path)
        if virtual == "/":
            msg = "Cannot delete /, the root folder; delete the files or folders under it."
            raise PermissionDenied(msg, path=virtual)
        with self._located(virtual, "delete", change=True, follow_last=False) as spot:
            assert spot.name is not None
            st = os.stat(spot.name, dir_fd=spot.folder_fd, follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                guarded = self._guarded_inside(spot.real, virtual)
                if guarded:
                    msg = (
                        f"Cannot delete {virtual}: it holds files the agent may not change or see "
                        f"({', '.join(guarded)}). Delete the other files in it one by one instead."
                    )
                    raise PermissionDenied(msg, path=virtual)
                shutil.rmtree(spot.name, dir_fd=spot.folder_fd)
            else:
                refuse_executable(virtual, st)
                os.unlink(spot.name, dir_fd=spot.folder_fd)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` matching `pattern` (see `BackendProtocol.glob`)."""
        root, files = self._scope(path)
        found = [entry_info(v, st) for v, _, st in files if glob_matches(pattern, v, root)]
        return sorted(found, key=lambda info: info.path)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines of text files under `path` containing `pattern`; binary files are skipped, and
        files too large or unreadable are skipped and noted (see `note_skipped_file`)."""
        root, files = self._scope(path)
        folders = HeldFolder(self._tree)

        def texts() -> Iterator[tuple[str, str]]:
            for virtual, real, st in files:
                if glob and not file_filter_matches(glob, virtual, root):
                    continue  # filtered here, before the file is read, not again in grep_texts
                try:  # the walk already judged these real paths; each is opened without following
                    spot = Spot(folders.open(real[:-1]), real[-1], real[:-1])
                    text, _ = read_text_at(virtual, spot, self.max_file_bytes)
                except BinaryFile:
                    continue
                except FileTooLarge:
                    limit = megabytes(self.max_file_bytes)
                    note_skipped_file(virtual, f"{megabytes(st.st_size)}, over the {limit} limit")
                    continue
                except (OSError, BackendError):
                    note_skipped_file(virtual, "it could not be read")
                    continue
                yield virtual, text

        try:
            return grep_texts(pattern, texts(), root, regex=regex)
        finally:
            folders.close()
