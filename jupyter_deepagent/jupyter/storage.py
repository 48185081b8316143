"""What a notebook's agent keeps on disk: conversations (a SQLite checkpointer) and long-term
memory (a SQLite store), in `.deepagent/` beside the notebook, so both survive a kernel restart.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Storage", "ThreadInfo"]

CHECKPOINTS_FILE = "checkpoints.sqlite"
STORE_FILE = "store.sqlite"


@dataclass(frozen=True)
class ThreadInfo:
    """One conversation kept in the checkpointer."""

    name: str
    messages: int
    updated: str


class Storage:
    """The checkpointer and store of one state folder; open until `close()`.

    Args:
        folder: The state folder (created if missing, with a `.gitignore` so its databases of
            conversations stay out of version control).
    """

    def __init__(self, folder: Path) -> None:
        from langgraph.checkpoint.sqlite import SqliteSaver
        from langgraph.store.sqlite import SqliteStore

        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        ignore = folder / ".gitignore"
        if not ignore.exists():
            ignore.write_text("# conversations and memories of the notebook's agent\n*\n")
        self._checkpoints = sqlite3.connect(folder / CHECKPOINTS_FILE, check_same_thread=False)
        self._store = sqlite3.connect(
            folder / STORE_FILE, check_same_thread=False, isolation_level=None
        )
        self.checkpointer: Any = SqliteSaver(self._checkpoints)
        self.checkpointer.setup()
        self.store: Any = SqliteStore(self._store)
        self.store.setup()

    def close(self) -> None:
        """Close both databases."""
        self._checkpoints.close()
        self._store.close()

    def thread_names(self) -> list[str]:
        """Every thread with at least one checkpoint, sorted."""
        with self.checkpointer.lock:
            rows = self._checkpoints.execute(
                "SELECT DISTINCT thread_id FROM checkpoints ORDER BY thread_id"
            ).fetchall()
        return [str(row[0]) for row in rows]

    def thread_info(self, name: str) -> ThreadInfo | None:
        """Message count and last update of a thread, or None if it has no checkpoint."""
        saved = self.checkpointer.get_tuple({"configurable": {"thread_id": name}})
        if saved is None:
            return None
        messages = saved.checkpoint.get("channel_values", {}).get("messages", [])
        return ThreadInfo(name, len(messages), str(saved.checkpoint.get("ts", ""))[:19])

    def delete_thread(self, name: str) -> None:
        """Forget a thread's conversation and scratch files."""
        self.checkpointer.delete_thread(name)
