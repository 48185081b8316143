"""One writer per thread on PostgreSQL: the thread's session-level advisory lock.

The same rule as `ThreadLock` for SQLite, kept by the server instead of a lock file: while a run
goes on, its process holds `pg_try_advisory_lock` on a stable 64-bit hash of the thread's key, on
a connection of its own. Another kernel that wants the thread, on any machine using the same
database, gets `ThreadBusy` naming the holder (its host and process, from the `application_name`
every connection of the tool carries, and its PostgreSQL backend pid). The server drops the lock
when the holder's connection ends, however the process ends. Within one process it is
re-entrant.
"""

from __future__ import annotations

import hashlib
import os
import re
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_deepagent.project.storage.file_lock import thread_busy

__all__ = ["AdvisoryLock", "application_name"]

_APPLICATION = "jupyter-deepagent"
_HOLDER = re.compile(rf"^{_APPLICATION}@(?P<host>.*):(?P<pid>\d+)$")
_held: dict[int, tuple[Any, int]] = {}  # advisory key -> (connection, depth), in this process
_held_guard = threading.Lock()


def application_name() -> str:
    """`jupyter-deepagent@<host>:<pid>`, the `application_name` of the tool's connections (at
    most 63 characters, PostgreSQL's limit)."""
    host = socket.gethostname()[:30]
    return f"{_APPLICATION}@{host}:{os.getpid()}"


def _advisory_key(key: str) -> int:
    """A stable signed 64-bit number for a thread key (the same in every process)."""
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big", signed=True)


class AdvisoryLock:
    """The advisory lock of one thread in one database.

    Args:
        connect: Opens a new connection to the database (autocommit).
        thread: The thread's name, for messages.
        key: The thread's id in the checkpointer (`<project>/<user>/<thread>`).
    """

    def __init__(self, connect: Callable[[], Any], thread: str, key: str) -> None:
        self.connect = connect
        self.thread = thread
        self.number = _advisory_key(key)

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block (re-entrant within this process).

        Raises:
            ThreadBusy: Another connection holds it; nothing was changed.
            DatabaseUnreachable: The database cannot be reached.
        """
        with _held_guard:
            if self.number in _held:
                connection, depth = _held[self.number]
                _held[self.number] = (connection, depth + 1)
            else:
                _held[self.number] = (self._acquire(), 1)
        try:
            yield
        finally:
            with _held_guard:
                connection, depth = _held[self.number]
                if depth > 1:
                    _held[self.number] = (connection, depth - 1)
                else:
                    del _held[self.number]
                    connection.close()  # ending the session releases its advisory locks

    def check(self) -> None:
        """Raise `ThreadBusy` if another process holds the lock now, without keeping it.

        Raises:
            ThreadBusy: Another process is running the thread.
            DatabaseUnreachable: The database cannot be reached.
        """
        with self.held():
            pass

    def _acquire(self) -> Any:
        connection = self.connect()
        try:
            row = connection.execute("SELECT pg_try_advisory_lock(%s)", (self.number,)).fetchone()
            if row is not None and _first(row):
                return connection
            holder = self._holder(connection)
        except BaseException:
            connection.close()
            raise
        connection.close()
        raise holder

    def _holder(self, connection: Any) -> Exception:
        """`ThreadBusy` naming who holds the lock (pg_locks splits the key in two 32-bit oids)."""
        unsigned = self.number & 0xFFFF_FFFF_FFFF_FFFF
        row = connection.execute(
            "SELECT a.pid, a.application_name, extract(epoch FROM a.backend_start) "
            "FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 "
            "AND l.classid::bigint = %s AND l.objid::bigint = %s",
            (unsigned >> 32, unsigned & 0xFFFF_FFFF),
        ).fetchone()
        if row is None:  # released in between: the next try will likely succeed
            return thread_busy(self.thread, pid=None, holder="it was just finishing")
        backend, name, since = _values(row)
        match = _HOLDER.match(name or "")
        pid = int(match.group("pid")) if match else None
        host = match.group("host") if match else None
        since = float(since) if since is not None else None
        return thread_busy(
            self.thread, pid=pid, host=host, since=since, holder=f"PostgreSQL backend {backend}"
        )


def _first(row: Any) -> Any:
    return next(iter(row.values())) if isinstance(row, dict) else row[0]


def _values(row: Any) -> tuple[Any, ...]:
    return tuple(row.values()) if isinstance(row, dict) else tuple(row)
