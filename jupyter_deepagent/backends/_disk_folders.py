"""The folders of a `DiskBackend`: what a listing shows, and every file a search walks.

In-root symlinks are followed (and judged where they lead); symlinks out of the root, broken
ones, special files, the temporary files of writes and whatever the guard hides are left out.
A search does not descend into a symlinked folder.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import TypeAlias

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends._disk_files import is_temporary_name
from jupyter_deepagent.backends._paths import folder_prefix
from jupyter_deepagent.backends._rooted_tree import RootedTree, close_quietly
from jupyter_deepagent.backends.protocol import FileInfo

__all__ = ["Allowed", "Found", "entry_info", "files_under", "listed_entries"]

Allowed: TypeAlias = Callable[[str, tuple[str, ...]], bool]
"""Whether the guard lets the agent see a virtual path with these real components."""

Found: TypeAlias = tuple[str, tuple[str, ...], os.stat_result]
"""A file found: its virtual path, its real components below the root, its stat."""


def entry_info(path: str, st: os.stat_result) -> FileInfo:
    """The `FileInfo` of a file or folder at virtual `path`."""
    modified = datetime.fromtimestamp(st.st_mtime, tz=UTC)
    if stat.S_ISDIR(st.st_mode):
        return FileInfo(path=folder_prefix(path), modified_at=modified, is_dir=True)
    return FileInfo(path=path, size=st.st_size, modified_at=modified)


def _follow(
    tree: RootedTree, real: tuple[str, ...]
) -> tuple[tuple[str, ...], os.stat_result] | None:
    """Where an in-root symlink leads and what is there, or None (outside, broken, loop)."""
    try:
        with tree.locate("/" + "/".join(real)) as spot:
            if spot.name is None:
                return spot.real, os.fstat(spot.folder_fd)
            if is_temporary_name(spot.name):
                return None
            st = os.stat(spot.name, dir_fd=spot.folder_fd, follow_symlinks=False)
            return spot.real, st
    except (OSError, BackendError):
        return None


def listed_entries(
    tree: RootedTree, fd: int, real: tuple[str, ...], virtual: str, allowed: Allowed
) -> Iterator[tuple[str, tuple[str, ...], os.stat_result, bool]]:
    """The listable entries of an open folder: `(virtual, real target, stat, is_symlink)`.

    Raises:
        OSError: The folder cannot be listed.
    """
    with os.scandir(fd) as entries:
        listed = list(entries)
    for entry in listed:
        name = entry.name
        try:
            name.encode("utf-8")
            st = entry.stat(follow_symlinks=False)
        except (OSError, UnicodeEncodeError):
            continue
        child_virtual, child_real = folder_prefix(virtual) + name, (*real, name)
        if is_temporary_name(name) or not allowed(child_virtual, child_real):
            continue
        linked = stat.S_ISLNK(st.st_mode)
        if linked:
            followed = _follow(tree, child_real)
            if followed is None or not allowed(child_virtual, followed[0]):
                continue
            child_real, st = followed
        if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode):
            yield child_virtual, child_real, st, linked


def files_under(
    tree: RootedTree, real: tuple[str, ...], virtual: str, allowed: Allowed
) -> Iterator[Found]:
    """Every file under a folder, not entering symlinked folders; unreadable folders are
    skipped."""
    pending = [(real, virtual)]
    while pending:
        real_dir, virtual_dir = pending.pop()
        try:
            fd = tree.open_folder(real_dir)
        except OSError:
            continue
        try:
            entries = list(listed_entries(tree, fd, real_dir, virtual_dir, allowed))
        except OSError:
            continue
        finally:
            close_quietly(fd)
        for child_virtual, child_real, st, linked in entries:
            if not stat.S_ISDIR(st.st_mode):
                yield child_virtual, child_real, st
            elif not linked:
                pending.append((child_real, child_virtual))
