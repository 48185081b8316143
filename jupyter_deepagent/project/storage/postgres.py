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

import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from jupyter_deepagent._exceptions import DatabaseUnreachable, InputError, StateDamaged
from jupyter_deepagent.project.storage.advisory_lock import AdvisoryLock, application_name
from jupyter_deepagent.project.storage.database_url import (
    database_address,
    database_secrets,
    mask_database_url,
)

if TYPE_CHECKING:
    from psycopg import Connection
    from psycopg.rows import DictRow
    from psycopg_pool import ConnectionPool

__all__ = ["PostgresStorage"]

_CONNECT_TIMEOUT = 5
"""Seconds to wait for the server to answer a new connection."""
_POOL_SIZE = 4
_SETUP_LOCK = 0x6A64_6173_6574_7570  # "jdasetup": kernels opening a new database at once
_SETUP_ATTEMPTS = 3
_SETUP_PATIENCE = 60  # seconds to wait for another kernel's table set-up


class PostgresStorage:
    """The checkpointer and store in the PostgreSQL database at `url`; open until `close()`.

    Args:
        url: A `postgresql://` URL (see `database_url`).
        source: Where the URL was set, for messages ("JUPYTER_DEEPAGENT_DATABASE_URL"...).
        connect_timeout: Seconds to wait for the server.

    Raises:
        InputError: The `postgres` extra (psycopg, LangGraph's PostgreSQL saver) is not installed.
        DatabaseUnreachable: The server cannot be reached in time, or refuses the login.
        StateDamaged: The tables exist but cannot be used (a failed migration, a foreign
            schema).
    """

    def __init__(
        self, url: str, source: str = "database_url", *, connect_timeout: float = _CONNECT_TIMEOUT
    ) -> None:
        try:  # the `postgres` extra: not installed with the package itself
            import psycopg
            from langgraph.checkpoint.postgres import PostgresSaver
            from langgraph.store.postgres import PostgresStore
            from psycopg.rows import dict_row
            from psycopg_pool import ConnectionPool
        except ImportError as exc:
            msg = (
                f"{source} is set, but the PostgreSQL drivers are not installed ({exc.name}): "
                "pip install 'jupyter-deepagent[postgres]'"
            )
            raise InputError(msg, source=source) from None

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
        self._pool: ConnectionPool[Connection[DictRow]] = ConnectionPool(  # dict rows, see kwargs
            url,
            min_size=1,
            max_size=_POOL_SIZE,
            open=False,
            timeout=connect_timeout,
            kwargs={**self._options, "prepare_threshold": 0, "row_factory": dict_row},
            check=ConnectionPool.check_connection,  # a server restart costs no failed cell
        )
        try:
            self._pool.open(wait=True, timeout=connect_timeout)
            self.checkpointer: Any = PostgresSaver(self._pool)
            self.store: Any = PostgresStore(self._pool)
            self._set_up()
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

    def _set_up(self) -> None:
        """Create or migrate the tables, one kernel at a time: kernels that open a new database
        together (a class starting at once, the first run after an upgrade) would otherwise
        race on the migrations. A lost race that slipped through is retried.

        Raises:
            psycopg.Error: The server refused the tables (after the retries).
        """
        import psycopg

        for attempt in range(_SETUP_ATTEMPTS):
            try:
                with self.connect() as guard:
                    # polled, not waited for: a session waiting in pg_advisory_lock holds a
                    # snapshot, which the migrations' CREATE INDEX CONCURRENTLY waits for
                    deadline = time.monotonic() + _SETUP_PATIENCE
                    while not guard.execute(
                        "SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK,)
                    ).fetchone()[0]:
                        if time.monotonic() > deadline:
                            break  # set up without it; a lost race is retried below
                        time.sleep(0.1)
                    self.checkpointer.setup()
                    self.store.setup()
                return
            except (psycopg.errors.UniqueViolation, psycopg.errors.DeadlockDetected):
                if attempt == _SETUP_ATTEMPTS - 1:
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

    def _reason(self, exc: BaseException) -> str:
        """The server's or the driver's words, on one line, without the URL's password."""
        reason = " ".join(str(exc).split()).replace(self._url, self.location)
        for secret in database_secrets(self._url):
            reason = reason.replace(secret, "***")
        return mask_database_url(reason)[:300] or type(exc).__name__

    def unreachable(self, exc: BaseException) -> DatabaseUnreachable:
        """The one-line error for a server that cannot be reached or refuses the login, naming
        host and port, with advice that fits the reason."""
        address, reason = self.address, self._reason(exc)
        message = (
            f"Cannot reach the PostgreSQL database {address.database!r} at {address} (user "
            f"{address.user or 'default'!r}) that keeps conversations and /memories/: {reason}. "
            f"{_advice(reason)} ({self.source}), or set another with %agent config "
            "database_url=... (empty for the SQLite files beside the notebook)."
        )
        return DatabaseUnreachable(message, address=str(address))

    def damage(self, exc: BaseException) -> StateDamaged:
        """`StateDamaged` for tables the server refuses to use as LangGraph needs them."""
        reason = self._reason(exc)
        message = (
            f"The PostgreSQL database {self.address.database!r} at {self.address} "
            f"({self.location}) cannot be used for conversations and /memories/: {reason}. "
            "Nothing was changed by this cell. Check that its tables were made by "
            "langgraph-checkpoint-postgres (use a database of its own for the tool) and that "
            "your user may create and write tables there (on PostgreSQL 15 and later, make the "
            "user the database's owner or GRANT CREATE ON SCHEMA public)."
        )
        return StateDamaged(message, path=self.location)


def _advice(reason: str) -> str:
    """What to check, from the server's or the driver's reason."""
    lowered = reason.lower()
    if "password authentication failed" in lowered or "no password supplied" in lowered:
        return (
            "Check the user and the password libpq is given (~/.pgpass, PGPASSWORD, or the "
            "URL in JUPYTER_DEEPAGENT_DATABASE_URL) and the URL"
        )
    if "does not exist" in lowered:
        return "Create the database (createdb) or correct its name in the URL"
    if "no pg_hba.conf entry" in lowered or "permission denied" in lowered:
        return "Ask the server's administrator to let this user connect from here; check the URL"
    return "Check that the server is running and reachable from here, and the URL"
