"""Paths under one root folder, resolved one component at a time through folder file descriptors.

Each component is opened with `O_NOFOLLOW` relative to the folder that holds it (`openat`), so
the folder that was checked is the folder that is used: a symlink swapped in between two steps
cannot lead outside the root. A symlink met on the way is read (`readlinkat`) and its target is
walked the same way, from the folder holding it or from the root, and only while it stays inside
the root. The caller then opens, replaces or unlinks the final name relative to the folder's file
descriptor, again without following a symlink.
"""

from __future__ import annotations

import errno
import os
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass

from jupyter_deepagent._exceptions import InvalidPath

__all__ = ["HeldFolder", "RootedTree", "Spot", "close_quietly"]

_MAX_SYMLINKS = 40
"""Symlinks followed while resolving one path before it counts as a loop (Linux's own limit)."""

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NOT_A_FOLDER = (errno.ENOTDIR, errno.ELOOP)


@dataclass(frozen=True)
class Spot:
    """Where a path landed: an open real folder inside the root, and a name in it.

    Attributes:
        folder_fd: The open folder (closed when the `locate` block ends).
        name: The final name inside the folder (not a symlink when it was followed, or absent);
            None when the path is the folder itself.
        folder: The folder's real components below the root.
    """

    folder_fd: int
    name: str | None
    folder: tuple[str, ...]

    @property
    def real(self) -> tuple[str, ...]:
        """The real components of the path below the root."""
        return self.folder if self.name is None else (*self.folder, self.name)


def close_quietly(fd: int) -> None:
    """Close a file descriptor, ignoring an error (it is being dropped anyway)."""
    with suppress(OSError):
        os.close(fd)


class RootedTree:
    """Resolve paths below `root` (a real, absolute folder path) without ever leaving it."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._root_parts = tuple(part for part in root.split(os.sep) if part)

    def open_root(self, *, create: bool = False) -> int:
        """Open the root folder, creating it (and its parents) first if asked.

        Raises:
            OSError: The root is missing (and `create` is false) or cannot be opened.
        """
        if create:
            os.makedirs(self.root, exist_ok=True)
        return os.open(self.root, _DIR_FLAGS)

    def open_folder(self, real: tuple[str, ...]) -> int:
        """Open a real folder below the root, following no symlink on the way.

        Raises:
            OSError: A component is missing, a file, or a symlink.
        """
        fd = self.open_root()
        try:
            for name in real:
                child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
        except BaseException:
            close_quietly(fd)
            raise
        return fd

    @contextmanager
    def locate(
        self,
        virtual: str,
        *,
        follow_last: bool = True,
        make_folders: bool = False,
        before_making: Callable[[tuple[str, ...]], None] | None = None,
    ) -> Iterator[Spot]:
        """Resolve a normalized virtual path; the folder stays open while the block runs.

        Args:
            virtual: A normalized path (`/a/b`), or `/` joined real components.
            follow_last: Follow a symlink in the final component (False for delete, which
                removes the link itself).
            make_folders: Create the missing folders on the way (and the root), for a write.
            before_making: Called with a folder's real components before it is created; raise
                to refuse it.

        Raises:
            InvalidPath: A symlink on the way leads outside the root, or symlinks loop.
            OSError: A component is missing (except the last), a file, or cannot be opened.
        """
        fd, spot = self._resolve(
            virtual, follow_last=follow_last, make_folders=make_folders, before_making=before_making
        )
        try:
            yield spot
        finally:
            close_quietly(fd)

    def _escape(self, virtual: str) -> InvalidPath:
        msg = (
            f"{virtual} leads outside this folder through a symlink; only files inside it can "
            "be used."
        )
        return InvalidPath(msg, path=virtual)

    def _resolve(
        self,
        virtual: str,
        *,
        follow_last: bool,
        make_folders: bool,
        before_making: Callable[[tuple[str, ...]], None] | None,
    ) -> tuple[int, Spot]:
        pending = deque(part for part in virtual.split("/") if part)
        real: list[str] = []
        hops = 0
        fd = self.open_root(create=make_folders)
        try:
            while pending:
                name = pending.popleft()
                if name in ("", "."):
                    continue
                if name == "..":  # only from a symlink's target
                    if not real:
                        raise self._escape(virtual)
                    real.pop()
                    close_quietly(fd)
                    fd = -1
                    fd = self.open_folder(tuple(real))
                    continue
                last = all(part in ("", ".") for part in pending)
                if last and not follow_last:
                    return fd, Spot(fd, name, tuple(real))
                try:
                    child = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if last:
                        return fd, Spot(fd, name, tuple(real))
                    if not make_folders:
                        raise
                    if before_making is not None:
                        before_making((*real, name))
                    with suppress(FileExistsError):
                        os.mkdir(name, 0o777, dir_fd=fd)
                    pending.appendleft(name)
                    continue
                except OSError as exc:
                    if exc.errno not in _NOT_A_FOLDER:
                        raise
                    target = _link_target(fd, name)
                    if target is None:  # a file: fine at the end, a dead end before it
                        if last:
                            return fd, Spot(fd, name, tuple(real))
                        raise
                    hops += 1
                    if hops > _MAX_SYMLINKS:
                        msg = (
                            f"{virtual} cannot be resolved: it goes through a symlink loop. "
                            "Use another path."
                        )
                        raise InvalidPath(msg, path=virtual) from None
                    if target.startswith("/"):
                        target_parts = [part for part in target.split("/") if part]
                        if tuple(target_parts[: len(self._root_parts)]) != self._root_parts:
                            raise self._escape(virtual) from None
                        del target_parts[: len(self._root_parts)]
                        real.clear()
                        close_quietly(fd)
                        fd = -1
                        fd = self.open_root()
                    else:
                        target_parts = target.split("/")
                    pending.extendleft(reversed(target_parts))
                    continue
                close_quietly(fd)
                fd = child
                real.append(name)
            return fd, Spot(fd, None, tuple(real))
        except BaseException:
            if fd >= 0:
                close_quietly(fd)
            raise


class HeldFolder:
    """The folder of the files being read, kept open while consecutive files share it."""

    def __init__(self, tree: RootedTree) -> None:
        self._tree = tree
        self._real: tuple[str, ...] | None = None
        self._fd = -1

    def open(self, real: tuple[str, ...]) -> int:
        """A descriptor of the real folder (valid until the next call or `close`).

        Raises:
            OSError: The folder cannot be opened without following a symlink.
        """
        if real != self._real:
            self.close()
            self._fd = self._tree.open_folder(real)
            self._real = real
        return self._fd

    def close(self) -> None:
        """Close the folder held open, if any."""
        if self._fd >= 0:
            close_quietly(self._fd)
        self._fd, self._real = -1, None


def _link_target(folder_fd: int, name: str) -> str | None:
    """The target of symlink `name` in the folder, or None if `name` is not a symlink."""
    try:
        return os.readlink(name, dir_fd=folder_fd)
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            return None
        raise
