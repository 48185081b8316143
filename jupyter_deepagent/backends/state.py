"""Files of one conversation thread, kept in the LangGraph graph state (checkpointed with it).

The graph state's `files` channel holds `{path: FileData}` and merges updates with `merge_files`.
A tool opens `bind_state_files(state["files"])` around its backend call; every `StateBackend`
inside the block reads those files and records its writes and deletes in the yielded dict, which
the tool returns as its state update. Outside any block a `StateBackend` keeps its own files.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypedDict

from jupyter_deepagent._exceptions import InvalidPath, PermissionDenied
from jupyter_deepagent.backends._paths import (
    child_name,
    folder_prefix,
    is_within,
    normalize_virtual_path,
    not_found,
    parent_folder,
)
from jupyter_deepagent.backends.matching._matching import glob_matches, grep_texts, replace_exact
from jupyter_deepagent.backends.protocol import (
    DEFAULT_READ_LIMIT,
    AsyncBackendMixin,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)

__all__ = [
    "FileData",
    "FileMapBackend",
    "StateBackend",
    "bind_state_files",
    "merge_files",
    "state_files",
]


class FileData(TypedDict):
    """One file as stored in the graph state (and in a LangGraph store)."""

    content: str
    modified_at: str  # ISO-8601 UTC


def merge_files(
    left: Mapping[str, FileData] | None, right: Mapping[str, FileData | None] | None
) -> dict[str, FileData]:
    """Reducer for the graph state's `files` channel: right wins per path, a None value deletes.

    Args:
        left: The files so far.
        right: An update: new or changed files, and `None` for each deleted path.

    Returns:
        A new dict; neither argument is changed.
    """
    merged = dict(left or {})
    for path, data in (right or {}).items():
        if data is None:
            merged.pop(path, None)
        else:
            merged[path] = data
    return merged


@dataclass
class _Binding:
    base: Mapping[str, FileData]
    changes: dict[str, FileData | None] = field(default_factory=dict)


_BOUND: ContextVar[_Binding | None] = ContextVar("jupyter_deepagent_state_files", default=None)


@contextmanager
def bind_state_files(files: Mapping[str, FileData] | None) -> Iterator[dict[str, FileData | None]]:
    """Bind every StateBackend in this block (and threads it starts) to a thread's files.

    Inside the block a StateBackend sees `files` plus the changes made in the block, and records
    each write (path -> FileData) and delete (path -> None) in the yielded dict. `files` itself
    is never changed. Blocks nest: the innermost binding wins and the outer one is restored.

    Args:
        files: The graph state's `files`, or None for none.

    Yields:
        The changes made in the block, ready to return as `{"files": changes}`.
    """
    binding = _Binding(base=files if files is not None else {})
    token = _BOUND.set(binding)
    try:
        yield binding.changes
    finally:
        _BOUND.reset(token)


def state_files(state: object) -> Mapping[str, FileData] | None:
    """The thread's files in a graph state (its `files` channel), or None when it has none."""
    files = state.get("files") if isinstance(state, Mapping) else None
    return files if isinstance(files, Mapping) else None


def _now() -> str:
    return datetime.now(UTC).isoformat()


def _parse_time(value: object) -> datetime | None:
    try:
        return datetime.fromisoformat(str(value))
    except ValueError:
        return None


class FileMapBackend(AsyncBackendMixin):
    """A backend over a flat map of path -> FileData; folders are implied by the paths.

    Subclasses provide four primitives; every operation of the protocol is built on them.
    """

    def _get(self, path: str) -> FileData | None:
        raise NotImplementedError

    def _put(self, path: str, data: FileData) -> None:
        raise NotImplementedError

    def _drop(self, path: str) -> None:
        raise NotImplementedError

    def _files_under(self, folder: str) -> dict[str, FileData]:
        """Every file strictly under `folder` (`/` for all)."""
        raise NotImplementedError

    def _is_folder(self, path: str) -> bool:
        """Whether some file lies strictly under `path` (override it to answer without
        collecting them)."""
        return bool(self._files_under(path))

    @staticmethod
    def _info(path: str, data: FileData) -> FileInfo:
        size = len(data["content"].encode("utf-8", "surrogatepass"))
        return FileInfo(path=path, size=size, modified_at=_parse_time(data.get("modified_at")))

    def _text(self, path: str) -> str:
        data = self._get(path)
        if data is not None:
            return data["content"]
        if path == "/" or self._is_folder(path):
            msg = f"{path} is a folder, not a file. Use ls({folder_prefix(path)!r}) to list it."
            raise InvalidPath(msg, path=path)
        raise not_found(path)

    def _scope(self, path: str, what: str = "") -> tuple[str, dict[str, FileData]]:
        """The folder searched from and the files under it (a file path searches only itself).

        Raises:
            FileNotFound: If nothing exists at `path` (the root is never missing); `what` is
                the word naming it in the message.
        """
        data = self._get(path) if path != "/" else None
        if data is not None:
            return parent_folder(path), {path: data}
        if path != "/" and not self._is_folder(path):
            raise not_found(path, what=what)
        return path, self._files_under(path)

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List the direct children of a folder (or the file itself), sorted by path."""
        path = normalize_virtual_path(path)
        folder, files = self._scope(path, what="folder")
        if folder != path:  # `path` is a file
            return [self._info(path, files[path])]
        entries: dict[str, FileInfo] = {}
        for file_path, file_data in files.items():
            name, is_dir = child_name(file_path, path)
            child = folder_prefix(path) + name
            if is_dir:
                entries.setdefault(child + "/", FileInfo(path=child + "/", is_dir=True))
            else:
                entries[child] = self._info(child, file_data)
        return sorted(entries.values(), key=lambda entry: entry.path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines of a text file starting at 0-based line `offset`."""
        path = normalize_virtual_path(path)
        return ReadResult.from_text(path, self._text(path), offset, limit)

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file (parent folders are implied)."""
        path = normalize_virtual_path(path)
        if not isinstance(content, str):
            msg = f"content must be a str, not {type(content).__name__}"
            raise TypeError(msg)
        existing = self._get(path) if path != "/" else None
        if existing is None:
            if path == "/" or self._is_folder(path):
                msg = f"{path} is a folder; write to a file inside it, like {path.rstrip('/')}/a.md"
                raise InvalidPath(msg, path=path)
            parent = path.rsplit("/", 1)[0]
            while parent:
                if self._get(parent) is not None:
                    msg = f"{parent} is a file, so {path} cannot be created under it."
                    raise InvalidPath(msg, path=path)
                parent = parent.rsplit("/", 1)[0]
        self._put(path, FileData(content=content, modified_at=_now()))
        size = len(content.encode("utf-8", "surrogatepass"))
        return WriteResult(path=path, size=size, created=existing is None)

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace exact text; `old` must occur exactly once unless `replace_all`."""
        path = normalize_virtual_path(path)
        text, count = replace_exact(path, self._text(path), old, new, replace_all)
        self._put(path, FileData(content=text, modified_at=_now()))
        return EditResult(path=path, replacements=count)

    def delete(self, path: str) -> None:
        """Delete a file, or a folder with everything under it."""
        path = normalize_virtual_path(path)
        if path == "/":
            msg = "Cannot delete /, the root folder; delete the files or folders under it."
            raise PermissionDenied(msg, path=path)
        if self._get(path) is not None:
            self._drop(path)
            return
        files = self._files_under(path)
        if not files:
            raise not_found(path)
        for file_path in files:
            self._drop(file_path)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path` matching `pattern` (see `BackendProtocol.glob`)."""
        root, files = self._scope(normalize_virtual_path(path))
        found = [
            self._info(file_path, data)
            for file_path, data in files.items()
            if glob_matches(pattern, file_path, root)
        ]
        return sorted(found, key=lambda info: info.path)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines of text files under `path` containing `pattern` (a literal unless `regex`)."""
        root, files = self._scope(normalize_virtual_path(path))
        texts = ((file_path, data["content"]) for file_path, data in files.items())
        return grep_texts(pattern, texts, root, file_glob=glob, regex=regex)


_FileMapBackend = FileMapBackend  # the name it had before it was public


class StateBackend(FileMapBackend):
    """Files of one conversation thread, in the graph state (or its own dict when unbound).

    Args:
        files: Initial files for use outside `bind_state_files` (copied, not changed).
    """

    def __init__(self, files: dict[str, FileData] | None = None) -> None:
        self._own: dict[str, FileData] = dict(files or {})

    @property
    def files(self) -> dict[str, FileData]:
        """A copy of the files this backend sees right now."""
        return self._files_under("/")

    def _get(self, path: str) -> FileData | None:
        binding = _BOUND.get()
        if binding is None:
            return self._own.get(path)
        if path in binding.changes:
            return binding.changes[path]
        return binding.base.get(path)

    def _put(self, path: str, data: FileData) -> None:
        binding = _BOUND.get()
        if binding is None:
            self._own[path] = data
        else:
            binding.changes[path] = data

    def _drop(self, path: str) -> None:
        binding = _BOUND.get()
        if binding is None:
            self._own.pop(path, None)
        else:
            binding.changes[path] = None

    def _is_folder(self, path: str) -> bool:
        prefix = folder_prefix(path)
        binding = _BOUND.get()
        if binding is None:
            return _any_under(prefix, self._own)
        changes = binding.changes
        if any(name.startswith(prefix) and data is not None for name, data in changes.items()):
            return True
        base = binding.base or {}
        if not _any_under(prefix, base):  # the usual answer, found without a Python loop
            return False
        return any(name.startswith(prefix) and name not in changes for name in base)

    def _files_under(self, folder: str) -> dict[str, FileData]:
        binding = _BOUND.get()
        current = self._own if binding is None else merge_files(binding.base, binding.changes)
        return {
            path: data
            for path, data in current.items()
            if path != folder and is_within(path, folder)
        }


def _any_under(prefix: str, names: Iterable[str]) -> bool:
    """Whether any of `names` starts with `prefix` (a test on every file at each new path)."""
    return any(map(str.startswith, names, itertools.repeat(prefix)))
