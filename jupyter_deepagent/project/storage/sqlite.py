"""What a notebook's agent keeps on disk: conversations (a SQLite checkpointer) and long-term
memory (a SQLite store), in `.deepagent/` beside the notebook, so both survive a kernel restart.

Opening checks the folder (see `claim_state_folder`) and both databases (see `check_database`): a
missing database is a new, empty one; a damaged one stops with `StateDamaged` and is left as it
is. The store is LangGraph's `SqliteStore`, made at the first memory read or written (see
`LazySqliteStore`: it imports numpy for a vector search nothing here uses). Each thread has a
lock (see `ThreadLock`), so one process at a time runs it.

Thread ids here are the keys of `ThreadOwner` (`<project>/<user>/<thread>`); conversations and
memories an earlier version kept without an owner are adopted by the first user who opens them.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from jupyter_deepagent._exceptions import InputError, StateDamaged, StateNotWritten
from jupyter_deepagent.project.storage.file_lock import ThreadLock
from jupyter_deepagent.project.storage.lazy_store import LazySqliteStore, has_store_table
from jupyter_deepagent.project.storage.owners import ThreadOwner
from jupyter_deepagent.project.storage.sqlite_health import check_database, damage_of, damaged
from jupyter_deepagent.project.storage.state_folder import claim_state_folder

__all__ = ["SqliteStorage", "open_sqlite_storage"]

CHECKPOINTS_FILE = "checkpoints.sqlite"
STORE_FILE = "store.sqlite"
_ROLES = {CHECKPOINTS_FILE: "conversations", STORE_FILE: "long-term memories (/memories/)"}


class SqliteStorage:
    """The checkpointer and store of one state folder; open until `close()`.

    Args:
        folder: The state folder: created if missing (with a `.gitignore` so its databases of
            conversations stay out of version control), else it must be one or be empty.
        setting: The `state_dir` value as configured, for messages.

    Raises:
        InputError: The folder holds files that are not the tool's (see `claim_state_folder`).
        StateDamaged: A database exists but is damaged or truncated.
        OSError: The folder cannot be created.
        sqlite3.Error: A database cannot be opened (for example in a read-only folder).
    """

    def __init__(self, folder: Path, setting: str = "") -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver

        self.folder = folder
        self.location = self.identity = str(folder)
        claim_state_folder(folder, setting or str(folder))
        for name, role in _ROLES.items():
            check_database(folder / name, role)
        self._checkpoints = sqlite3.connect(folder / CHECKPOINTS_FILE, check_same_thread=False)
        self.store = LazySqliteStore(folder / STORE_FILE, self.damage)
        try:
            self.checkpointer: Any = SqliteSaver(self._checkpoints)
            self.checkpointer.setup()
        except sqlite3.DatabaseError as exc:
            self.close()
            raise self.damage(exc) from None

    def close(self) -> None:
        """Close both databases."""
        self._checkpoints.close()
        self.store.close()

    def thread_lock(self, thread: str, key: str | None = None) -> ThreadLock:
        """The lock a process holds while it runs `thread` (kept as `key`; see `ThreadLock`)."""
        return ThreadLock(self.folder, thread, key=key)

    @contextmanager
    def writing(self, thread: str, key: str | None = None) -> Iterator[None]:
        """Hold `thread`'s lock for the block; a database error in it names the damaged file.

        Raises:
            ThreadBusy: Another process is running the thread; the block did not run.
            StateDamaged: A database turned out damaged.
        """
        try:
            with self.thread_lock(thread, key).held():
                yield
        except sqlite3.DatabaseError as exc:
            raise self.damage(exc) from None

    def damage(self, exc: sqlite3.DatabaseError) -> Exception:
        """The error to show for `exc`, raised by a database of this folder: `StateDamaged`
        naming the damaged file when one is, else `StateNotWritten` saying why the intact
        databases could not be written now (a full disk, a lock, no permission)."""
        for name, role in _ROLES.items():
            problem = damage_of(self.folder / name)
            if problem is not None:
                return damaged(self.folder / name, role, problem)
        if isinstance(exc, sqlite3.OperationalError):
            return not_written(self.folder, exc)
        message = (
            f"A database of the state folder {self.folder} failed: {exc}. Neither "
            f"{CHECKPOINTS_FILE} nor {STORE_FILE} fails SQLite's check now; run the cell again, "
            "and if this repeats, move the state folder aside to start afresh."
        )
        return StateDamaged(message, path=str(self.folder))

    def thread_keys(self) -> list[str]:
        """Every thread id with at least one checkpoint, sorted.

        Raises:
            StateDamaged: The conversations database turned out damaged.
        """
        try:
            with self.checkpointer.lock:
                rows = self._checkpoints.execute(
                    "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
                ).fetchall()
        except sqlite3.DatabaseError as exc:
            raise self.damage(exc) from None
        return [str(row[0]) for row in rows]

    def latest(self, key: str) -> Any:
        """The latest checkpoint of thread id `key` (a `CheckpointTuple`), or None.

        Raises:
            StateDamaged: The conversations database turned out damaged.
        """
        try:
            return self.checkpointer.get_tuple({"configurable": {"thread_id": key}})
        except sqlite3.DatabaseError as exc:
            raise self.damage(exc) from None

    def adopt_earlier_state(self, owner: ThreadOwner) -> None:
        """Give `owner` the threads and memories an earlier version kept without an owner
        (thread ids without a "/", the `("memories",)` namespace), so an upgrade loses nothing.

        Raises:
            StateDamaged: A database turned out damaged.
        """
        try:
            with self.checkpointer.lock, self._checkpoints:
                for (thread,) in self._checkpoints.execute(
                    "SELECT DISTINCT thread_id FROM checkpoints WHERE instr(thread_id, '/') = 0"
                ).fetchall():
                    for table in ("checkpoints", "writes"):
                        self._checkpoints.execute(
                            f"UPDATE {table} SET thread_id = ? WHERE thread_id = ?",
                            (owner.key(thread), thread),
                        )
            if not self.store.path.exists() or not has_store_table(self.store.connection):
                return  # no memory was ever kept here
            earlier = self.store.connection.execute(
                "SELECT key FROM store WHERE prefix = 'memories'"
            )
            for (key,) in earlier.fetchall():
                item = self.store.get(("memories",), key)
                if item is not None:
                    self.store.put(owner.memory_namespace, key, item.value)
                    self.store.delete(("memories",), key)
        except sqlite3.DatabaseError as exc:
            raise self.damage(exc) from None


def open_sqlite_storage(folder: Path, setting: str) -> SqliteStorage:
    """Open the state folder's databases, with an error a notebook user can act on.

    Args:
        folder: The resolved state folder.
        setting: The `state_dir` value as configured, for messages.

    Raises:
        InputError: The folder is a folder of other files, or cannot be created or written.
        StateDamaged: A database of the folder is damaged or truncated.
    """
    try:
        return SqliteStorage(folder, setting)
    except (OSError, sqlite3.OperationalError) as exc:
        why = getattr(exc, "strerror", None) or str(exc)
        msg = (
            f"state_dir {setting!r}: cannot keep conversations in {folder}: {why}. Set state_dir "
            "to a folder you can write (in .deepagent.toml or with %agent config state_dir=...)."
        )
        raise InputError(msg, source="state_dir") from None


_CAUSES = (
    (("SQLITE_FULL", "disk is full"), "the disk is full", "free some disk space"),
    (
        ("SQLITE_BUSY", "SQLITE_LOCKED", "locked"),
        "another program holds a lock on it (a second kernel or a sync or backup tool)",
        "wait for it, or close it",
    ),
    (
        ("SQLITE_READONLY", "readonly"),
        "it is read-only",
        "make the folder and its files writable, or set state_dir to another folder",
    ),
    (
        ("SQLITE_IOERR", "disk I/O error"),
        "the disk reported an I/O error (a full disk gives it too)",
        "free some disk space and check the disk",
    ),
    (
        ("SQLITE_CANTOPEN", "unable to open"),
        "the file cannot be opened",
        "check that the folder exists and is yours to write",
    ),
)


def not_written(folder: Path, exc: sqlite3.OperationalError) -> StateNotWritten:
    """`StateNotWritten` for an intact database of `folder` that SQLite could not use (`exc`):
    the cause in words, where, and what to do."""
    said = f"{getattr(exc, 'sqlite_errorname', '')} {exc}"
    cause, remedy = "SQLite refused the write", "check the disk and the folder's permissions"
    for marks, *words in _CAUSES:
        if any(mark in said for mark in marks):
            cause, remedy = words
            break
    message = (
        f"The agent's state could not be saved in {folder} ({exc}): {cause}. Nothing is "
        "damaged: the conversation keeps every step saved before this one. To go on, "
        f"{remedy}, then run the cell again."
    )
    return StateNotWritten(message, path=str(folder))
