"""Files in a LangGraph store: long-term memory that outlives threads and kernel restarts.

Each file is one store item: the key is its virtual path, the value `{"content", "modified_at"}`.
With `langgraph.store.sqlite.SqliteStore` on a file beside the notebook, memories survive a
kernel restart; with a Postgres store, a team shares them. LangGraph is imported on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends._paths import is_within
from jupyter_deepagent.backends.state import FileData, FileMapBackend

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

__all__ = ["StoreBackend"]

_PAGE = 100
_T = TypeVar("_T")


def _as_file_data(value: dict[str, Any]) -> FileData:
    """Read a stored value, also accepting deepagents' list-of-lines content."""
    content = value.get("content", "")
    if isinstance(content, list):
        content = "\n".join(str(line) for line in content)
    return FileData(content=str(content), modified_at=str(value.get("modified_at", "")))


class StoreBackend(FileMapBackend):
    """Files kept in a LangGraph `BaseStore` under one namespace.

    Args:
        store: Any LangGraph store; defaults to a new in-memory store (created on first use).
        namespace: The store namespace, or a callable returning it on each call (for example
            one namespace per user, read from the run's context).

    Raises:
        TypeError: If `namespace` is neither a tuple of strings nor a callable.
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        namespace: tuple[str, ...] | Callable[[], tuple[str, ...]] = ("filesystem",),
    ) -> None:
        if not callable(namespace) and not (
            isinstance(namespace, tuple) and all(isinstance(part, str) for part in namespace)
        ):
            msg = f"namespace must be a tuple of str or a callable, not {namespace!r}"
            raise TypeError(msg)
        self._store = store
        self._namespace = namespace

    @property
    def store(self) -> BaseStore:
        """The LangGraph store holding the files."""
        if self._store is None:
            from langgraph.store.memory import InMemoryStore

            self._store = InMemoryStore()
        return self._store

    @property
    def namespace(self) -> tuple[str, ...]:
        """The namespace the files live under right now."""
        namespace = self._namespace() if callable(self._namespace) else self._namespace
        return tuple(namespace)

    def _call(self, action: str, path: str, operation: Callable[[], _T]) -> _T:
        try:
            return operation()
        except BackendError:
            raise
        except Exception as exc:
            reason = str(exc).rstrip(".")
            msg = (
                f"The store failed to {action} {path}: {reason}. Check that the store is set up "
                "(SqliteStore needs setup()) and reachable, and that the namespace is valid."
            )
            raise BackendError(msg, path=path) from exc

    def _get(self, path: str) -> FileData | None:
        item = self._call("read", path, lambda: self.store.get(self.namespace, path))
        return None if item is None else _as_file_data(item.value)

    def _put(self, path: str, data: FileData) -> None:
        self._call("write", path, lambda: self.store.put(self.namespace, path, dict(data)))

    def _drop(self, path: str) -> None:
        self._call("delete", path, lambda: self.store.delete(self.namespace, path))

    def _files_under(self, folder: str) -> dict[str, FileData]:
        namespace = self._call("list", folder, lambda: self.namespace)
        files: dict[str, FileData] = {}
        offset = 0
        while True:
            page = self._call(
                "list",
                folder,
                partial(self.store.search, namespace, limit=_PAGE, offset=offset),
            )
            for item in page:
                key = item.key
                if tuple(item.namespace) == namespace and key != folder and is_within(key, folder):
                    files[key] = _as_file_data(item.value)
            if len(page) < _PAGE:
                return files
            offset += len(page)
