"""Where a notebook's agent keeps conversations (a checkpointer) and long-term memory (a store).

Two implementations of one small `Storage` protocol: `SqliteStorage`, files in `.deepagent/`
beside the notebook (the default, embedded), and `PostgresStorage`, a shared server named by
`database_url` (for a team). The session sees them through `OwnedStorage`, one user's view in
one project (see `ThreadOwner`): its own threads by their plain names, the project's
`/memories/`, and the other users' threads of the project to list, read-only.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from jupyter_deepagent._exceptions import InputError

if TYPE_CHECKING:
    from jupyter_deepagent.project.storage.owners import ThreadOwner

__all__ = ["OwnedStorage", "Storage", "ThreadInfo", "ThreadLockLike", "open_storage"]


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation kept in the checkpointer."""

    name: str
    messages: int
    updated: str
    owner: str = ""
    """The user whose thread it is."""


class ThreadLockLike(Protocol):
    """One writer per thread: a lock file (SQLite) or an advisory lock (PostgreSQL)."""

    def held(self) -> AbstractContextManager[None]:
        """Hold the lock for the block; `ThreadBusy` if another process holds it."""

    def check(self) -> None:
        """Raise `ThreadBusy` if another process holds the lock now."""


class Storage(Protocol):
    """What the session needs of a checkpointer and store, whatever keeps them."""

    location: str
    """Where it is, for messages (a folder, or a URL with its password masked)."""
    checkpointer: Any
    store: Any

    @property
    def identity(self) -> str:
        """Equal for the same database (to know when a setting moved it)."""

    def close(self) -> None:
        """Release files and connections."""

    def thread_lock(self, thread: str, key: str | None = None) -> ThreadLockLike:
        """The lock of `thread`, kept as checkpointer thread id `key`."""

    def writing(self, thread: str, key: str | None = None) -> AbstractContextManager[None]:
        """Hold the thread's lock for the block, naming database damage."""

    def thread_keys(self) -> list[str]:
        """Every checkpointer thread id, sorted."""

    def latest(self, key: str) -> Any:
        """The latest checkpoint of thread id `key`, or None."""


def open_storage(
    folder: Path, setting: str, database_url: str = "", source: str = "database_url"
) -> Storage:
    """The SQLite files in `folder`, or the PostgreSQL database of `database_url` when set.

    Args:
        folder: The resolved state folder (for SQLite).
        setting: The `state_dir` value as configured, for messages.
        database_url: A `postgresql://` URL, or empty for SQLite.
        source: Where `database_url` was set, for messages.

    Raises:
        InputError: The state folder is a folder of other files, or cannot be created or written.
        StateDamaged: A database is damaged or truncated.
        DatabaseUnreachable: The PostgreSQL server cannot be reached.
    """
    if database_url:
        from jupyter_deepagent.project.storage.postgres import PostgresStorage
        from jupyter_deepagent.project.storage.state_folder import claim_state_folder

        try:  # artifacts (offloaded results, transcripts) stay beside the notebook, ignored by git
            claim_state_folder(folder, setting or str(folder))
        except OSError as exc:
            msg = (
                f"state_dir {setting!r}: cannot keep artifacts in {folder}: "
                f"{exc.strerror or exc}. Set state_dir to a folder you can write."
            )
            raise InputError(msg, source="state_dir") from None
        return PostgresStorage(database_url, source)
    from jupyter_deepagent.project.storage.sqlite import open_sqlite_storage

    return open_sqlite_storage(folder, setting)


class OwnedStorage:
    """One user's view of a `Storage` within a project.

    Args:
        storage: The database(s).
        owner: The user and project.
    """

    def __init__(self, storage: Storage, owner: ThreadOwner) -> None:
        from jupyter_deepagent.project.storage.owned_checkpointer import OwnedCheckpointer

        self.raw = storage
        self.owner = owner
        adopt = getattr(storage, "adopt_earlier_state", None)
        if adopt is not None:
            adopt(owner)
        self.checkpointer = OwnedCheckpointer(storage.checkpointer, owner)
        self.store = storage.store

    @property
    def memory_namespace(self) -> tuple[str, ...]:
        """The store namespace of the project's `/memories/`."""
        return self.owner.memory_namespace

    def thread_lock(self, thread: str) -> ThreadLockLike:
        """The lock a process holds while it runs this user's `thread`."""
        return self.raw.thread_lock(thread, self.owner.key(thread))

    @contextmanager
    def writing(self, thread: str) -> Iterator[None]:
        """Hold this user's `thread`'s lock for the block (see the storage's `writing`).

        Raises:
            ThreadBusy: Another process is running the thread; the block did not run.
            StateDamaged: A database turned out damaged.
            DatabaseUnreachable: The PostgreSQL server went away.
        """
        with self.raw.writing(thread, self.owner.key(thread)):
            yield

    def thread_names(self) -> list[str]:
        """This user's threads with at least one checkpoint, sorted."""
        names = (self.owner.thread_of(key) for key in self.raw.thread_keys())
        return sorted(name for name in names if name is not None)

    def thread_info(self, name: str) -> ThreadInfo | None:
        """Message count and last update of this user's thread, or None if it has none."""
        return self._info(self.owner.key(name), name, self.owner.user)

    def project_threads(self) -> list[ThreadInfo]:
        """Every user's threads in the project (theirs to run; listed here read-only)."""
        infos = []
        for key in self.raw.thread_keys():
            found = self.owner.project_thread(key)
            if found is not None:
                info = self._info(key, found[1], found[0])
                if info is not None:
                    infos.append(info)
        return sorted(
            infos, key=lambda info: (info.owner != self.owner.user, info.owner, info.name)
        )

    def _info(self, key: str, name: str, user: str) -> ThreadInfo | None:
        saved = self.raw.latest(key)
        if saved is None:
            return None
        messages = saved.checkpoint.get("channel_values", {}).get("messages", [])
        return ThreadInfo(name, len(messages), str(saved.checkpoint.get("ts", ""))[:19], user)

    def delete_thread(self, name: str) -> None:
        """Forget this user's thread's conversation."""
        self.checkpointer.delete_thread(name)

    def close(self) -> None:
        """Close the storage underneath."""
        self.raw.close()
