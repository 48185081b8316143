"""One file of a `DiskBackend`, once its folder is open: read it, replace it atomically, and keep
the temporary files of writes out of sight; every `OSError` becomes a `BackendError`.

A write goes to a temporary `.deepagent-<hex>.tmp` file, created with `O_EXCL | O_NOFOLLOW` in the
root (in the target's folder when the root is on another filesystem), written, fsynced and renamed
over the target relative to the open folder. A file with any execute bit is never replaced, and
a new one gets `0o666` less the umask, so nothing the agent writes is executable.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import re
import secrets
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from jupyter_deepagent._exceptions import (
    BackendError,
    BinaryFile,
    FileTooLarge,
    InvalidPath,
    PermissionDenied,
)
from jupyter_deepagent.backends._paths import folder_prefix, not_found
from jupyter_deepagent.backends._rooted_tree import RootedTree, Spot, close_quietly

__all__ = [
    "existing_file",
    "is_temporary_name",
    "megabytes",
    "os_errors",
    "read_text_at",
    "refuse_executable",
    "remove_stale_temporaries",
    "replace_at",
    "too_large",
]

_STALE_TEMPORARY_SECONDS = 60.0
"""A temporary file older than this is left over from a killed write, and removed at start."""

_SNIFF_BYTES = 8192
_TEMPORARY = re.compile(r"\.deepagent-[^/]*\.tmp")
_READ_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC


def is_temporary_name(name: str) -> bool:
    """Tell whether a file name is one of the atomic write's temporary files (never shown)."""
    return _TEMPORARY.fullmatch(name) is not None


def megabytes(size: int) -> str:
    """A size in bytes as megabytes for messages (`12.3 MB`)."""
    return f"{size / 1_000_000:.1f} MB"


def too_large(path: str, size: int, limit: int) -> FileTooLarge:
    """The error for a file of `size` bytes over the folder's `limit`."""
    msg = (
        f"{path} is {megabytes(size)}, over this folder's limit of {megabytes(limit)} "
        "(max_file_bytes). Work on a smaller file, or raise max_file_bytes."
    )
    return FileTooLarge(msg, path=path)


def _not_regular(path: str, verb: str) -> InvalidPath:
    msg = f"{path} is not a regular file (a device, pipe or socket); it cannot be {verb}."
    return InvalidPath(msg, path=path)


def refuse_executable(path: str, st: os.stat_result) -> None:
    """Refuse to change a regular file with any execute bit.

    Raises:
        PermissionDenied: The file is executable.
    """
    if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
        msg = (
            f"Cannot change {path}: it is an executable file (mode {stat.S_IMODE(st.st_mode):04o})."
            " An executable can run without anyone reading it, so the agent never replaces, "
            "edits or deletes one. Ask the user to change it."
        )
        raise PermissionDenied(msg, path=path)


def read_text_at(path: str, spot: Spot, limit: int, *, change: bool = False) -> tuple[str, int]:
    """The UTF-8 text of the file at `spot` and its permission bits.

    Args:
        path: The virtual path, for messages.
        spot: Where the file is; its name is opened without following a symlink.
        limit: The largest size read, in bytes.
        change: The file is about to be changed: refuse it if it is executable.

    Raises:
        IsADirectoryError: The path is a folder.
        OSError: The file cannot be opened (ELOOP if it was swapped for a symlink).
        InvalidPath: Not a regular file.
        PermissionDenied: Executable, and `change` is set.
        FileTooLarge: Over `limit`.
        BinaryFile: Not UTF-8 text.
    """
    if spot.name is None:
        raise IsADirectoryError
    fd = os.open(spot.name, _READ_FLAGS, dir_fd=spot.folder_fd)
    with os.fdopen(fd, "rb") as handle:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError
        if not stat.S_ISREG(st.st_mode):
            raise _not_regular(path, "read")
        if change:
            refuse_executable(path, st)
        if st.st_size > limit:
            raise too_large(path, st.st_size, limit)
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise too_large(path, len(data), limit)
    try:
        if b"\x00" in data[:_SNIFF_BYTES]:
            raise UnicodeError
        return data.decode("utf-8"), stat.S_IMODE(st.st_mode)
    except UnicodeError:
        mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
        msg = (
            f"{path} is a binary file ({len(data):,} bytes, {mime}); it cannot be read as "
            "text. Open it with a tool that understands this format."
        )
        raise BinaryFile(msg, path=path) from None


def existing_file(path: str, spot: Spot) -> os.stat_result | None:
    """The file a write at `spot` would replace (None if there is none).

    Raises:
        IsADirectoryError: The path is a folder.
        OSError: ELOOP if it was swapped for a symlink after it was resolved.
        InvalidPath: Not a regular file.
        PermissionDenied: The file is executable.
    """
    if spot.name is None:
        raise IsADirectoryError
    try:
        st = os.stat(spot.name, dir_fd=spot.folder_fd, follow_symlinks=False)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError
    if stat.S_ISLNK(st.st_mode):
        raise OSError(errno.ELOOP, "swapped for a symlink")
    if not stat.S_ISREG(st.st_mode):
        raise _not_regular(path, "written")
    refuse_executable(path, st)
    return st


def replace_at(tree: RootedTree, spot: Spot, data: bytes, mode: int | None) -> None:
    """Atomically put `data` at `spot`; `mode` None gives a new file `0o666` less the umask.

    Raises:
        OSError: The temporary file cannot be written or renamed (it is removed again).
    """
    root_fd = tree.open_root()
    try:
        try:
            _replace_via(root_fd, spot, data, mode)
        except OSError as exc:
            if exc.errno != errno.EXDEV:
                raise
            _replace_via(spot.folder_fd, spot, data, mode)  # the folder is on another disk
    finally:
        close_quietly(root_fd)


def _replace_via(temporary_fd: int, spot: Spot, data: bytes, mode: int | None) -> None:
    if spot.name is None:
        raise IsADirectoryError
    temporary = f".deepagent-{secrets.token_hex(8)}.tmp"
    fd = os.open(temporary, _CREATE_FLAGS, 0o666, dir_fd=temporary_fd)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            if mode is not None:
                os.fchmod(stream.fileno(), mode & 0o666)
            os.fsync(stream.fileno())
        os.rename(temporary, spot.name, src_dir_fd=temporary_fd, dst_dir_fd=spot.folder_fd)
    except BaseException:
        with suppress(OSError):
            os.unlink(temporary, dir_fd=temporary_fd)
        raise


def remove_stale_temporaries(tree: RootedTree) -> int:
    """Remove temporary files a killed write left in the root; return how many went.

    Only files older than `_STALE_TEMPORARY_SECONDS` go, so a write still running in another
    process keeps its file. Errors are ignored: a leftover is hidden from the agent anyway.
    """
    try:
        fd = tree.open_root()
    except OSError:
        return 0
    removed = 0
    try:
        now = time.time()
        with os.scandir(fd) as entries:
            for entry in entries:
                if not is_temporary_name(entry.name):
                    continue
                with suppress(OSError):
                    st = entry.stat(follow_symlinks=False)
                    if stat.S_ISREG(st.st_mode) and now - st.st_mtime > _STALE_TEMPORARY_SECONDS:
                        os.unlink(entry.name, dir_fd=fd)
                        removed += 1
    except OSError:
        pass
    finally:
        close_quietly(fd)
    return removed


@contextmanager
def os_errors(path: str, action: str) -> Iterator[None]:
    """Turn OSError into the BackendError family, naming the virtual path."""
    try:
        yield
    except BackendError:
        raise
    except FileNotFoundError as exc:
        raise not_found(path) from exc
    except PermissionError as exc:
        msg = f"Cannot {action} {path}: the operating system denied access."
        raise PermissionDenied(msg, path=path) from exc
    except IsADirectoryError as exc:
        msg = f"{path} is a folder, not a file. Use ls({folder_prefix(path)!r}) to list it."
        raise InvalidPath(msg, path=path) from exc
    except (NotADirectoryError, FileExistsError) as exc:
        msg = f"Cannot {action} {path}: a part of the path is a file, not a folder."
        raise InvalidPath(msg, path=path) from exc
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            msg = (
                f"Cannot {action} {path}: it was swapped for a symlink while being opened. "
                "Try again, or use another path."
            )
            raise InvalidPath(msg, path=path) from exc
        if exc.errno == errno.ENAMETOOLONG:
            msg = f"Cannot {action} {path}: {exc.strerror}. Use another path."
            raise InvalidPath(msg, path=path) from exc
        msg = f"Cannot {action} {path}: {exc.strerror or exc}."
        raise BackendError(msg, path=path) from exc
