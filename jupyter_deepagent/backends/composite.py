"""One virtual filesystem made of several backends mounted at folder prefixes.

`/memories/` can live in a store, `/workspace/` on disk and everything else in the graph state,
while the agent sees one tree. The longest matching prefix owns a path; the mounted backend sees
it with the prefix replaced by `/`, and every result and error names the full path again.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TypeVar

from jupyter_deepagent._exceptions import (
    BackendError,
    EditConflict,
    FileNotFound,
    PermissionDenied,
)
from jupyter_deepagent.backends._paths import (
    folder_prefix,
    normalize_virtual_path,
    not_found,
    parent_folder,
)
from jupyter_deepagent.backends.matching._matching import (
    every_file,
    file_filter_matches,
    first_matches,
    glob_matches,
    regex_time_budget,
)
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
from jupyter_deepagent.backends.skipped_files import (
    SkippedFile,
    note_skipped_file,
    recording_skipped_files,
)

__all__ = ["CompositeBackend"]

_Result = TypeVar("_Result", FileInfo, GrepMatch, ReadResult, WriteResult, EditResult)


def _outer(prefix: str, inner: str) -> str:
    """Map a path seen by the backend mounted at `prefix` back to the full virtual path."""
    return prefix[:-1] + inner if prefix else inner


class CompositeBackend(AsyncBackendMixin):
    """Route each path to the backend mounted at its longest matching folder prefix.

    Args:
        default: The backend for every path outside the mounts.
        routes: Folder prefix (`"/memories/"`, `"/memories"` or `"memories"`) -> backend.

    Raises:
        ValueError: If a route is the root `/` (use `default` for that).
        InvalidPath: If a route's prefix is not a valid virtual path.
    """

    def __init__(self, default: BackendProtocol, routes: Mapping[str, BackendProtocol]) -> None:
        self.default = default
        self._routes: dict[str, BackendProtocol] = {}
        for prefix, backend in routes.items():
            normalized = normalize_virtual_path(prefix)
            if normalized == "/":
                msg = "a route cannot be '/': pass that backend as `default` instead"
                raise ValueError(msg)
            self._routes[folder_prefix(normalized)] = backend
        self._longest_first = sorted(self._routes, key=len, reverse=True)

    @property
    def routes(self) -> dict[str, BackendProtocol]:
        """The mounts, as normalized prefix (ending in `/`) -> backend."""
        return dict(self._routes)

    def _route(self, path: str) -> tuple[str, BackendProtocol, str]:
        """Return `(prefix, backend, inner path)`; the prefix is `""` for the default."""
        probe = folder_prefix(path)
        for prefix in self._longest_first:
            if probe.startswith(prefix):
                return prefix, self._routes[prefix], "/" + path[len(prefix) :]
        return "", self.default, path

    def backend_for(self, path: str) -> tuple[BackendProtocol, str]:
        """Return the backend that owns `path` and the path as that backend sees it.

        Args:
            path: A virtual path, e.g. `/memories/notes.md`.

        Returns:
            `(backend, inner_path)`, e.g. `(store_backend, "/notes.md")`.

        Raises:
            InvalidPath: If the path is malformed.
        """
        _, backend, inner = self._route(normalize_virtual_path(path))
        return backend, inner

    def _mounts_under(self, folder: str) -> list[str]:
        """Mount prefixes strictly below `folder`, e.g. `/a/b/` for `/a`."""
        base = folder_prefix(folder)
        return [prefix for prefix in self._routes if prefix != base and prefix.startswith(base)]

    @contextmanager
    def _errors_as(self, prefix: str) -> Iterator[None]:
        """Re-raise a mounted backend's error with full virtual paths in place of inner ones."""
        try:
            yield
        except BackendError as exc:
            if not prefix or exc.path is None:
                raise
            outer = _outer(prefix, exc.path) if exc.path != "/" else prefix
            if isinstance(exc, FileNotFound) and prefix not in str(exc):
                # the inner hint names inner folders; a mount-aware backend's hint is kept
                raise not_found(outer) from exc
            token = re.compile(r"(?<![^\s'\"(])" + re.escape(exc.path) + r"(?![\w\-]|\.[\w.])")
            message = token.sub(lambda _: outer, str(exc))
            if isinstance(exc, EditConflict):
                raise EditConflict(message, path=outer, matches=exc.matches) from exc
            raise type(exc)(message, path=outer) from exc

    def _call(self, path: str, operation: Callable[[BackendProtocol, str], _Result]) -> _Result:
        prefix, backend, inner = self._route(normalize_virtual_path(path))
        with self._errors_as(prefix):
            result = operation(backend, inner)
        return dataclasses.replace(result, path=_outer(prefix, result.path))

    def _protect_mounts(self, path: str, action: str) -> str:
        path = normalize_virtual_path(path)
        if folder_prefix(path) in self._routes:
            msg = f"{folder_prefix(path)} is a mount point; {action} the files under it instead."
            raise PermissionDenied(msg, path=path)
        inside = self._mounts_under(path)
        if inside:
            msg = f"{path} holds the mount point {inside[0]}; {action} the files under it instead."
            raise PermissionDenied(msg, path=path)
        return path

    def _from_owner(
        self, path: str, operation: Callable[[BackendProtocol, str], list[_Result]]
    ) -> tuple[str, list[str], list[_Result]]:
        """Run `operation` on the owner of normalized `path`, results still in its inner paths.

        Returns `(prefix, mounts below path, results)`. A folder the owner lacks counts as
        empty when mounts lie below it, since they make it exist.

        Raises:
            FileNotFound: If the owner lacks `path` and no mount lies below it.
        """
        prefix, backend, inner = self._route(path)
        mounts = self._mounts_under(path)
        try:
            with self._errors_as(prefix):
                return prefix, mounts, operation(backend, inner)
        except FileNotFound:
            if not mounts:
                raise
            return prefix, mounts, []

    def _spread(
        self, path: str, operation: Callable[[BackendProtocol, str], list[_Result]]
    ) -> tuple[list[_Result], bool]:
        """Run `operation` on the owner of `path` and every mount below it, in full paths.

        Returns the results, and whether `path` turned out to be a file.
        """
        path = normalize_virtual_path(path)
        with recording_skipped_files() as skipped:
            prefix, mounts, owned = self._from_owner(path, operation)
        results: list[_Result] = []
        for item in owned:
            full = _outer(prefix, item.path)
            if self._route(full.rstrip("/") or "/")[0] == prefix:  # drop paths shadowed by mounts
                results.append(dataclasses.replace(item, path=full))
        self._renote(prefix, skipped)
        is_file = len(results) == 1 and results[0].path == path
        for mount in mounts:
            with self._errors_as(mount), recording_skipped_files() as skipped:
                for item in operation(self._routes[mount], "/"):
                    results.append(dataclasses.replace(item, path=_outer(mount, item.path)))
            self._renote(mount, skipped)
        return results, is_file

    def _renote(self, prefix: str, skipped: list[SkippedFile]) -> None:
        """Pass on the files a mount's search skipped, under their full paths."""
        for item in skipped:
            full = _outer(prefix, item.path)
            if self._route(full)[0] == prefix:
                note_skipped_file(full, item.reason)

    def ls(self, path: str = "/") -> list[FileInfo]:
        """List a folder's children, including the mount points directly under it."""
        path = normalize_virtual_path(path)
        prefix, mounts, listed = self._from_owner(path, lambda backend, inner: backend.ls(inner))
        entries: dict[str, FileInfo] = {}
        for entry in listed:
            full = _outer(prefix, entry.path)
            if entry.is_dir or self._route(full)[0] == prefix:
                entries[full] = dataclasses.replace(entry, path=full)
        if len(entries) == 1 and path in entries:  # `path` is a file
            return list(entries.values())
        base = folder_prefix(path)
        for mount in mounts:
            child = base + mount[len(base) :].split("/", 1)[0] + "/"
            entries.setdefault(child, FileInfo(path=child, is_dir=True))
        return sorted(entries.values(), key=lambda entry: entry.path)

    def read(self, path: str, offset: int = 0, limit: int = DEFAULT_READ_LIMIT) -> ReadResult:
        """Read `limit` lines of a text file starting at 0-based line `offset`."""
        return self._call(path, lambda backend, inner: backend.read(inner, offset, limit))

    def write(self, path: str, content: str) -> WriteResult:
        """Create or overwrite a text file in the backend that owns the path."""
        path = self._protect_mounts(path, "write")
        return self._call(path, lambda backend, inner: backend.write(inner, content))

    def edit(self, path: str, old: str, new: str, replace_all: bool = False) -> EditResult:
        """Replace exact text; `old` must occur exactly once unless `replace_all`."""
        return self._call(path, lambda backend, inner: backend.edit(inner, old, new, replace_all))

    def delete(self, path: str) -> None:
        """Delete a file or folder; mount points and folders holding them are protected."""
        path = self._protect_mounts(path, "delete")
        prefix, backend, inner = self._route(path)
        with self._errors_as(prefix):
            backend.delete(inner)

    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]:
        """Files under `path`, across mounts, matching `pattern` (see `BackendProtocol.glob`)."""
        path = normalize_virtual_path(path)
        files, is_file = self._spread(path, every_file)
        root = parent_folder(path) if is_file else path
        found = [info for info in files if glob_matches(pattern, info.path, root)]
        return sorted(found, key=lambda info: info.path)

    def grep(
        self, pattern: str, path: str = "/", glob: str | None = None, regex: bool = False
    ) -> list[GrepMatch]:
        """Lines containing `pattern` in text files under `path`, across mounts."""
        path = normalize_virtual_path(path)
        by_name = glob if glob and "/" not in glob else None
        # one matching budget for the whole search, not one per mount
        with regex_time_budget(), recording_skipped_files() as skipped:
            matches, _ = self._spread(
                path, lambda backend, inner: backend.grep(pattern, inner, by_name, regex)
            )
        if glob and by_name is None:
            root = parent_folder(path) if self._is_file(path) else path
            matches = [match for match in matches if file_filter_matches(glob, match.path, root)]
            skipped = [item for item in skipped if file_filter_matches(glob, item.path, root)]
        for item in skipped:
            note_skipped_file(item.path, item.reason)
        return first_matches(sorted(matches, key=lambda match: (match.path, match.line_number)))

    def _is_file(self, path: str) -> bool:
        try:
            listed = self.ls(path)
        except BackendError:
            return False
        return len(listed) == 1 and listed[0].path == path and not listed[0].is_dir
