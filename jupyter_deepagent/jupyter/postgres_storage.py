"""Conversations and `/memories/` in a shared PostgreSQL database (the `database_url` setting).

LangGraph's own `PostgresSaver` and `PostgresStore` over one `psycopg_pool.ConnectionPool`; their
tables are created on first use (`setup()`, which also migrates them when the library adds
columns). Artifacts (`/large_tool_results/`, transcripts) stay in the state folder beside the
notebook, and research logs beside the notebook itself, in version control.

Opening connects once first, with a short timeout, so a server that is down, a wrong URL or a
refused login is one line naming the host and port (never the password) and what to check, and
the cell does not look hung. One writer per thread is kept by `AdvisoryLock`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from jupyter_deepagent._exceptions import DatabaseUnreachable, StateDamaged
from jupyter_deepagent.jupyter.advisory_lock import AdvisoryLock, application_name
from jupyter_deepagent.jupyter.database_url import database_address, mask_database_url

__all__ = ["CONNECT_TIMEOUT", "PostgresStorage"]

CONNECT_TIMEOUT = 5
"""Seconds to wait for the server to answer a new connection."""
_POOL_SIZE = 4


class PostgresStorage:
    """The checkpointer and store in the PostgreSQL database at `url`; open until `close()`.

    Args:
        url: A `postgresql://` URL (see `database_url`).
        source: Where the URL was set, for messages ("JUPYTER_DEEPAGENT_DATABASE_URL"...).
        connect_timeout: Seconds to wait for the server.

    Raises:
        DatabaseUnreachable: The server cannot be reached in time, or refuses the login.
        StateDamaged: The tables exist but cannot be used (a failed migration, a foreign
            schema).
    """

    def __init__(self, url: str, source: str = "database_url", *,
                 connect_timeout: float = CONNECT_TIMEOUT) -> None:
        import psycopg
        from langgraph.checkpoint.postgres import PostgresSaver
        from langgraph.store.postgres import PostgresStore
        from psycopg.rows import dict_row
        from psycopg_pool import ConnectionPool

        self._url = url
        self.source = source
        self.location = mask_database_url(url)
        self.address = database_address(url)
        self._options: dict[str, Any] = {
            "autocommit": True,
            "connect_timeout": max(1, round(connect_timeout)),
            "application_name": application_name(),
        }
        self.connect().close()  # fails fast, with the server's own reason
        self._pool = ConnectionPool(
            url, min_size=1, max_size=_POOL_SIZE, open=False, timeout=connect_timeout,
            kwargs={**self._options, "prepare_threshold": 0, "row_factory": dict_row},
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
            self.checkpointer: Any = PostgresSaver(self._pool)
            self.checkpointer.setup()
            self.store: Any = PostgresStore(self._pool)
            self.store.setup()
        except psycopg.OperationalError as exc:
            self._pool.close()
            raise self.unreachable(exc) from None
        except psycopg.DatabaseError as exc:
            self._pool.close()
            raise self.damage(exc) from None
        except Exception as exc:  # the pool's own timeout (PoolTimeout)
            self._pool.close()
            if type(exc).__module__.startswith("psycopg_pool"):
                raise self.unreachable(exc) from None
            raise

    @property
    def identity(self) -> str:
        """What makes two storages the same: the URL (kept private: it may hold a password)."""
        return self._url

    def connect(self) -> Any:
        """A new autocommit connection of its own (for an advisory lock).

        Raises:
            DatabaseUnreachable: The server cannot be reached in time, or refuses the login.
        """
        import psycopg

        try:
            return psycopg.connect(self._url, **self._options)
        except psycopg.Error as exc:
            raise self.unreachable(exc) from None

    def close(self) -> None:
        """Close the pool's connections."""
        self._pool.close()

    def thread_lock(self, thread: str, key: str | None = None) -> AdvisoryLock:
        """The advisory lock a process holds while it runs `thread` (kept as `key`)."""
        return AdvisoryLock(self.connect, thread, key or thread)

    @contextmanager
    def writing(self, thread: str, key: str | None = None) -> Iterator[None]:
        """Hold `thread`'s lock for the block; a database error in it is named.

        Raises:
            ThreadBusy: Another process is running the thread; the block did not run.
            DatabaseUnreachable: The connection to the server failed.
            StateDamaged: The server refused what the tables need.
        """
        import psycopg

        try:
            with self.thread_lock(thread, key).held():
                yield
        except psycopg.OperationalError as exc:
            raise self.unreachable(exc) from None
        except psycopg.DatabaseError as exc:
            raise self.damage(exc) from None

    def thread_keys(self) -> list[str]:
        """Every thread id with at least one checkpoint, sorted.

        Raises:
            DatabaseUnreachable: The connection to the server failed.
        """
        import psycopg

        try:
            with self._pool.connection() as connection:
                rows = connection.execute(
                    "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
                ).fetchall()
        except psycopg.OperationalError as exc:
            raise self.unreachable(exc) from None
        return [str(row["thread_id"]) for row in rows]

    def latest(self, key: str) -> Any:
        """The latest checkpoint of thread id `key` (a `CheckpointTuple`), or None.

        Raises:
            DatabaseUnreachable: The connection to the server failed.
        """
        import psycopg

        try:
            return self.checkpointer.get_tuple({"configurable": {"thread_id": key}})
        except psycopg.OperationalError as exc:
            raise self.unreachable(exc) from None

    def relation_bytes(self) -> int:
        """Bytes the checkpoint tables take on the server (with indexes and TOAST)."""
        with self._pool.connection() as connection:
            row = connection.execute(
                "SELECT sum(pg_total_relation_size(c.oid)) AS size FROM pg_class c "
                "WHERE c.relname IN ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes') "
                "AND c.relkind = 'r' AND pg_table_is_visible(c.oid)"
            ).fetchone()
        return int(row["size"] or 0) if row else 0

    def unreachable(self, exc: BaseException) -> DatabaseUnreachable:
        """The one-line error for a server that cannot be reached, naming host and port."""
        address = self.address
        reason = mask_database_url(" ".join(str(exc).split()))[:300] or type(exc).__name__
        for secret in (self._url,):
            reason = reason.replace(secret, self.location)
        message = (
            f"Cannot reach the PostgreSQL database {address.database!r} at {address} (user "
            f"{address.user or 'default'!r}) that keeps conversations and /memories/: {reason}. "
            f"Check that the server is running and reachable from here, and the URL "
            f"({self.source}); or set another with %agent config database_url=... (empty for "
            "the SQLite files beside the notebook)."
        )
        return DatabaseUnreachable(message, address=str(address))

    def damage(self, exc: BaseException) -> StateDamaged:
        """`StateDamaged` for tables the server refuses to use as LangGraph needs them."""
        reason = mask_database_url(" ".join(str(exc).split()))[:300]
        message = (
            f"The PostgreSQL database {self.address.database!r} at {self.address} "
            f"({self.location}) cannot be used for conversations and /memories/: {reason}. "
            "Nothing was changed by this cell. Check that its tables were made by "
            "langgraph-checkpoint-postgres (use a database of its own for the tool) and that "
            "your user may create and write tables there."
        )
        return StateDamaged(message, path=self.location)
