"""Real files under one folder on disk, sandboxed: no path, `..` or symlink leads out of it.

Every virtual path is normalized, joined to the root, resolved with its symlinks and checked to
lie inside the resolved root before any file is touched. Writes are atomic (temporary file,
fsync, rename), so a failed write leaves the old file as it was.
"""

from __future__ import annotations

import errno
import mimetypes
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path

from jupyter_deepagent._exceptions import (
    BackendError,
    BinaryFile,
    FileTooLarge,
    InvalidPath,
    PermissionDenied,
)
from jupyter_deepagent.backends._matching import (
    file_filter_matches,
    glob_matches,
    grep_texts,
    replace_exact,
)
from jupyter_deepagent.backends._paths import (
    folder_prefix,
    normalize_virtual_path,
    not_found,
    parent_folder,
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

__all__ = ["DiskBackend"]

_SNIFF_BYTES = 8192


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_NEW_FILE_MODE = 0o666 & ~_read_umask()


def _megabytes(size: int) -> str:
    return f"{size / 1_000_000:.1f} MB"


class DiskBackend(AsyncBackendMixin):
    """Files in a folder on disk; virtual `/` is `root`.

    Symlinks are followed only while they stay inside `root`: one pointing out is refused by
    read/write/edit/delete/ls, and skipped by listings and searches (symlinked folders are
    listed but not descended into by glob and grep).

    Args:
        root: The folder to expose (created on first write if missing).
        read_only: Refuse write, edit and delete with PermissionDenied.
        max_file_bytes: Largest file read or written, in bytes.

    Raises:
        ValueError: If `root` exists and is not a folder.
    """

    def __init__(
        self,
        root: str | os.PathLike[str],
        read_only: bool = False,
        max_file_bytes: int = 10_000_000,
    ) -> None:
        self._root = os.path.realpath(os.fspath(root))
        if os.path.exists(self._root) and not os.path.isdir(self._root):
            msg = f"DiskBackend root {os.fspath(root)!r} is a file; give a folder."
            raise ValueError(msg)
        self.read_only = read_only
        self.max_file_bytes = max_file_bytes

    def __repr__(self) -> str:
        return f"DiskBackend(root={self._root!r}, read_only={self.read_only})"

    @property
    def root(self) -> Path:
        """The resolved folder that virtual `/` maps onto."""
        return Path(self._root)

    # -- paths ---------------------------------------------------------------------------------

    def _inside(self, real: str) -> bool:
        return os.path.commonpath([self._root, real]) == self._root

    def _resolve(self, path: str) -> tuple[str, str]:
        """Return `(virtual, real)` for a path, refusing anything that resolves outside root."""
        virtual = normalize_virtual_path(path)
        lexical = os.path.join(self._root, *virtual.split("/")[1:])
        try:
            real = os.fspath(Path(lexical).resolve(strict=False))
        except RuntimeError as exc:
            msg = f"{virtual} cannot be resolved: it goes through a symlink loop. Use another path."
            raise InvalidPath(msg, path=virtual) from exc
        except OSError as exc:
            msg = f"{virtual} cannot be resolved: {exc.strerror}. Use another path."
            raise InvalidPath(msg, path=virtual) from exc
        if not self._inside(real):
            msg = (
                f"{virtual} leads outside this folder through a symlink; only files inside it "
                "can be used."
            )
            raise InvalidPath(msg, path=virtual)
        return virtual, real

    def _resolve_writable(self, path: str) -> tuple[str, str]:
        """`_resolve` for a path about to change, refused first if this folder is read-only."""
        virtual = normalize_virtual_path(path)
        if self.read_only:
            msg = (
                f"Cannot change {virtual}: this folder is mounted read-only. "
                "Write somewhere else."
            )
            raise PermissionDenied(msg, path=virtual)
        return self._resolve(virtual)

    @contextmanager
    def _os_errors(self, path: str, action: str) -> Iterator[None]:
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
            if exc.errno in (errno.ELOOP, errno.ENAMETOOLONG):
                msg = f"Cannot {action} {path}: {exc.strerror}. Use another path."
                raise InvalidPath(msg, path=path) from exc
            msg = f"Cannot {action} {path}: {exc.strerror or exc}."
            raise BackendError(msg, path=path) from exc

    # -- entries -------------------------------------------------------------------------------

    @staticmethod
    def _info(path: str, st: os.stat_result) -> FileInfo:
        modified = datetime.fromtimestamp(st.st_mtime, tz=UTC)
        if stat.S_ISDIR(st.st_mode):
            return FileInfo(path=folder_prefix(path), modified_at=modified, is_dir=True)
        return FileInfo(path=path, size=st.st_size, modified_at=modified)

    def _entry_stat(self, entry: os.DirEntry[str]) -> os.stat_result | None:
        """Stat a folder entry, or None to hide it (outside symlink, broken, special file)."""
        try:
            entry.name.encode("utf-8")
            if entry.is_symlink():
                if not self._inside(os.path.realpath(entry.path)):
                    return None
                st = os.stat(entry.path)
            else:
                st = entry.stat(follow_symlinks=False)
        except (OSError, UnicodeEncodeError):
            return None
        return st if stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode) else None

    def _walk(self, real: str, virtual: str) -> Iterator[tuple[str, str, os.stat_result]]:
        """Yield `(virtual, real, stat)` of every file under a folder, not entering symlinks."""
        pending = [(real, virtual)]
        while pending:
            real_dir, virtual_dir = pending.pop()
            try:
                entries = list(os.scandir(real_dir))
            except OSError:
                continue
            for entry in entries:
                st = self._entry_stat(entry)
                if st is None:
                    continue
                child = folder_prefix(virtual_dir) + entry.name
                if not stat.S_ISDIR(st.st_mode):
                    yield child, entry.path, st
                elif not entry.is_symlink():
                    pending.append((entry.path, child))

    def _scope(self, path: str) -> tuple[str, list[tuple[str, str, os.stat_result]]]:
        """The folder searched from and its files (a file path searches only itself)."""
        virtual, real = self._resolve(path)
        if virtual == "/" and not os.path.exists(real):
            return virtual, []
        with self._os_errors(virtual, "search"):
            st = os.stat(real)
        if stat.S_ISDIR(st.st_mode):
            return virtual, list(self._walk(real, virtual))
        return parent_folder(virtual), [(virtual, real, st)]

    def _read_text(self, path: str, real: str) -> str:
        with self._os_errors(path, "read"):
            st = os.stat(real)
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError
            if not stat.S_ISREG(st.st_mode):
                msg = f"{path} is not a regular file (a device, pipe or socket); it cannot be read."
                raise InvalidPath(msg, path=path)
            if st.st_size > self.max_file_bytes:
                raise self._too_large(path, st.st_size)
            with open(real, "rb") as handle:
                data = handle.read(self.max_file_bytes + 1)
        if len(data) > self.max_file_bytes:
            raise self._too_large(path, len(data))
        try:
            if b"\x00" in data[:_SNIFF_BYTES]:
                raise UnicodeError
            return data.decode("utf-8")
        except UnicodeError:
            mime = mimetypes.guess_type(path)[0] or "application/octet-stream"
            msg = (
                f"{path} is a binary file ({len(data):,} bytes, {mime}); it cannot be read as "
                "text. Open it with a tool that understands this format."
            )
            raise BinaryFile(msg, path=path) from None

    def _too_large(self, path: str, size: int) -> FileTooLarge:
        msg = (
            f"{path} is {_megabytes(size)}, over this folder's limit of "
            f"{_megabytes(self.max_file_bytes)} (max_file_bytes). Work on a smaller file, or "
            "raise max_file_bytes."
        )
        return FileTooLarge(msg, path=path)

    @staticmethod
    def _encode(path: str, text: str) -> bytes:
        try:
            return text.encode("utf-8")
        except UnicodeEncodeError as exc:
            msg = f"Cannot write {path}: the text holds characters UTF-8 cannot store ({exc})."
            raise BackendError(msg, path=path) from exc

    def _write_bytes(self, path: str, real: str, data: bytes) -> None:
        """Atomically replace `real`: temporary file in the same folder, fsync, rename."""
        if len(data) > self.max_file_bytes:
            raise self._too_large(path, len(data))
        with self._os_errors(path, "write"):
            if os.path.isdir(real):
                raise IsADirectoryError
            folder = os.path.dirname(real)
            os.makedirs(folder, exist_ok=True)
            try:
                mode = stat.S_IMODE(os.stat(real).st_mode)
            except FileNotFoundError:
                mode = _NEW_FILE_MODE
            handle, temporary = tempfile.mkstemp(prefix=".deepagent-", suffix=".tmp", dir=folder)
            try:
                with os.fdopen(handle, "wb") as stream:
                    stream.write(data)
                    stream.flush()
                    os.fsync(stream.fileno())
                os.chmod(temporary, mode)
                os.replace(temporary, real)
            except BaseException:
                with suppress(OSError):
                    os.unlink(temporary)
                raise

    # -- the protocol --------------------------------------------------------------------------

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List the direct children of a folder (or the file itself), sorted by path."""
        virtual, real = self._resolve(path)
        if virtual == "/" and not os.path.exists(real):
            return []
        with self._os_errors(virtual, "list"):
            st = os.stat(real)
            if not stat.S_ISDIR(st.st_mode):
                return [self._info(virtual, st)]
            entries = list(os.scandir(real))
        infos = []
        for entry in entries:
            entry_stat = self._entry_stat(entry)
            if entry_stat is not None:
                infos.append(self._info(folder_prefix(virtual) + entry.name, entry_stat))
        return sorted(infos, key=lambda info: info.path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines of a text file starting at 0-based line `offset`."""
        virtual, real = self._resolve(path)
        return ReadResult.from_text(virtual, self._read_text(virtual, real), offset, limit)

    def read_text(self, path: str) -> str:
        """The whole text of a file, exactly as stored (line endings kept).

        Raises:
            InvalidPath: If the path is malformed, a folder, or leads outside this folder.
            FileNotFound: If the file does not exist.
            BackendError: If the file is too large or binary (`FileTooLarge`, `BinaryFile`).
        """
        virtual, real = self._resolve(path)
        return self._read_text(virtual, real)

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file atomically (parent folders are created)."""
        virtual, real = self._resolve_writable(path)
        if not isinstance(content, str):
            msg = f"content must be a str, not {type(content).__name__}"
            raise TypeError(msg)
        data = self._encode(virtual, content)
        existed = os.path.lexists(real)
        self._write_bytes(virtual, real, data)
        return WriteResult(path=virtual, size=len(data), created=not existed)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace exact text; `old` must occur exactly once unless `replace_all`."""
        virtual, real = self._resolve_writable(path)
        text, count = replace_exact(virtual, self._read_text(virtual, real), old, new, replace_all)
        self._write_bytes(virtual, real, self._encode(virtual, text))
        return EditResult(path=virtual, replacements=count)

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything under it (a symlink, not its target)."""
        virtual, _ = self._resolve_writable(path)
        if virtual == "/":
            msg = "Cannot delete /, the root folder; delete the files or folders under it."
            raise PermissionDenied(msg, path=virtual)
        _, real_parent = self._resolve(parent_folder(virtual))
        target = os.path.join(real_parent, virtual.rsplit("/", 1)[1])
        with self._os_errors(virtual, "delete"):
            if os.path.islink(target) or not os.path.isdir(target):
                os.unlink(target)
            else:
                shutil.rmtree(target)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` whose path relative to it matches `pattern` (`**`, `{a,b}`)."""
        root, files = self._scope(path)
        found = [self._info(v, st) for v, _, st in files if glob_matches(pattern, v, root)]
        return sorted(found, key=lambda info: info.path)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines of text files under `path` containing `pattern`; binary files are skipped, and
        files too large or unreadable are skipped and noted (see `note_skipped_file`)."""
        root, files = self._scope(path)

        def texts() -> Iterator[tuple[str, str]]:
            for virtual, real, st in files:
                if glob and not file_filter_matches(glob, virtual, root):
                    continue  # filtered here, before the file is read, not again in grep_texts
                try:
                    text = self._read_text(virtual, real)
                except BinaryFile:
                    continue
                except FileTooLarge:
                    limit = _megabytes(self.max_file_bytes)
                    note_skipped_file(virtual, f"{_megabytes(st.st_size)}, over the {limit} limit")
                    continue
                except BackendError:
                    note_skipped_file(virtual, "it could not be read")
                    continue
                yield virtual, text

        return grep_texts(pattern, texts(), root, regex=regex)
