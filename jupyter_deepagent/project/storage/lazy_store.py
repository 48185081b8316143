"""`LazySqliteStore`: the state folder's store of long-term memories, opened when first used.

LangGraph's SQLite store module imports `sqlite_vec` for vector search, and `sqlite_vec` imports
numpy: a tenth of a second that a run touching no `/memories/` file (most runs: memory files
are not configured by default) never needs. This store stands in for `SqliteStore`: it opens the
database and creates the `SqliteStore`, with its tables, at the first read or write. Until then
the file is not created either (the tool never leaves an empty database: an empty one is damage).
Its async methods (an `ainvoke` reading `/memories/`) run the same calls in a worker thread.
"""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from langgraph.store.base import BaseStore, Op, Result

if TYPE_CHECKING:
    from langgraph.store.sqlite import SqliteStore

__all__ = ["LazySqliteStore", "has_store_table"]


def has_store_table(conn: sqlite3.Connection) -> bool:
    """Whether the store's tables were ever created in the database of `conn`."""
    found = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'store'")
    return found.fetchone() is not None


class LazySqliteStore(BaseStore):
    """A LangGraph store in a SQLite file; the connection and the `SqliteStore` behind it (and
    its tables) are made at the first operation.

    Args:
        path: The database file (created at the first operation if missing).
        damage: The error to raise for a database error while the tables are created (the
            storage's own, naming the damaged file).
    """

    supports_ttl = True  # as `SqliteStore`

    def __init__(self, path: Path, damage: Callable[[sqlite3.DatabaseError], Exception]) -> None:
        self.path = path
        self._damage = damage
        self._connection: sqlite3.Connection | None = None
        self._store: SqliteStore | None = None
        self._lock = threading.RLock()

    @property
    def opened(self) -> bool:
        """Whether the `SqliteStore` behind it was made (a memory was read or written)."""
        return self._store is not None

    @property
    def connection(self) -> sqlite3.Connection:
        """The database, opened on first use as `SqliteStore` wants it (any thread, autocommit).

        Raises:
            sqlite3.OperationalError: The file cannot be opened.
        """
        with self._lock:
            if self._connection is None:
                self._connection = sqlite3.connect(
                    self.path, check_same_thread=False, isolation_level=None
                )
            return self._connection

    def close(self) -> None:
        """Close the database, if it was opened."""
        with self._lock:
            if self._connection is not None:
                self._connection.close()
            self._connection = None
            self._store = None

    def _forget_if_empty(self) -> None:
        """After a setup that failed: close, and remove the file if opening it made it (empty),
        so the next open is not refused as a damaged database."""
        self.close()
        try:
            if self.path.stat().st_size == 0:
                self.path.unlink()
        except OSError:
            pass

    def _sqlite_store(self) -> SqliteStore:
        """The `SqliteStore`, made and set up on the first call.

        Raises:
            StateDamaged: The database turned out damaged (see `damage`).
            sqlite3.OperationalError: The database is locked or cannot be written.
        """
        with self._lock:
            if self._store is None:
                from langgraph.store.sqlite import SqliteStore

                store = SqliteStore(self.connection)
                try:
                    store.setup()
                except sqlite3.DatabaseError as exc:
                    self._forget_if_empty()
                    raise self._damage(exc) from None
                except BaseException:
                    self._forget_if_empty()
                    raise
                self._store = store
            return self._store

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the store operations (see `BaseStore.batch`)."""
        return self._sqlite_store().batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the store operations in a worker thread (see `BaseStore.abatch`): LangGraph's
        `SqliteStore` has no async methods of its own, and its connection serves any thread."""
        return await asyncio.to_thread(self.batch, list(ops))
