"""One writer per thread: a process runs a thread only while it holds the thread's lock file.

Two kernels continuing one thread at once each read the same last checkpoint and write their own
turn after it, so one of the turns is lost, and tool calls can be left without results. While a
run goes on, its process holds an exclusive `flock` on `<state_dir>/locks/<key>.lock` (the
thread's key of `ThreadOwner`, as a file name) and
writes its pid and host there; another process that wants the thread gets `ThreadBusy`, naming
that process, before it changes anything. The operating system drops the lock when its process
ends, however it ends (a `kill -9` too), so a lock is never stale. Within one process the lock is
re-entrant. Where `fcntl` is missing (Windows), runs are not locked.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from jupyter_deepagent._exceptions import ThreadBusy
from jupyter_deepagent.project.names import check_thread_name

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]  # the module is absent there; checked before use

__all__ = ["ThreadLock", "thread_busy"]

_held: dict[Path, tuple[int, int]] = {}  # lock file -> (descriptor, depth), in this process
_held_guard = threading.Lock()


class ThreadLock:
    """The lock of one thread in one state folder.

    Args:
        folder: The state folder.
        thread: The thread's name, for messages.
        key: The thread's id in the checkpointer (`<project>/<user>/<thread>`); the name alone
            when not given.

    Raises:
        InputError: `thread` is not a valid thread name (see `check_thread_name`).
    """

    def __init__(self, folder: Path, thread: str, *, key: str | None = None) -> None:
        self.thread = check_thread_name(thread)
        self.path = folder / "locks" / f"{_lock_file_name(key or thread)}.lock"

    @contextmanager
    def held(self) -> Iterator[None]:
        """Hold the lock for the block (re-entrant within this process).

        Raises:
            ThreadBusy: Another process holds it; nothing was changed.
            OSError: The lock file cannot be created.
        """
        if fcntl is None:  # pragma: no cover - Windows
            yield
            return
        with _held_guard:
            if self.path in _held:
                descriptor, depth = _held[self.path]
                _held[self.path] = (descriptor, depth + 1)
            else:
                _held[self.path] = (self._acquire(), 1)
        try:
            yield
        finally:
            with _held_guard:
                descriptor, depth = _held[self.path]
                if depth > 1:
                    _held[self.path] = (descriptor, depth - 1)
                else:
                    del _held[self.path]
                    os.close(descriptor)  # closing the descriptor releases the flock

    def check(self) -> None:
        """Raise `ThreadBusy` if another process holds the lock now, without taking it.

        Raises:
            ThreadBusy: Another process is running the thread.
            OSError: The lock file cannot be created.
        """
        with self.held():
            pass

    def _acquire(self) -> int:
        self.path.parent.mkdir(exist_ok=True)
        descriptor = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(descriptor)
            os.close(descriptor)
            raise self._busy(holder) from None
        except BaseException:
            os.close(descriptor)
            raise
        record = {"pid": os.getpid(), "host": socket.gethostname(), "since": time.time()}
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, json.dumps(record).encode(), 0)
        return descriptor

    def _busy(self, holder: dict[str, object]) -> ThreadBusy:
        pid = holder.get("pid")
        host = holder.get("host")
        since = holder.get("since")
        return thread_busy(
            self.thread,
            pid=pid if isinstance(pid, int) else None,
            host=host if isinstance(host, str) else None,
            since=since if isinstance(since, (int, float)) else None,
        )


def thread_busy(
    thread: str,
    *,
    pid: int | None,
    host: str | None = None,
    since: float | None = None,
    holder: str = "",
) -> ThreadBusy:
    """The `ThreadBusy` error for `thread`, run by process `pid` on `host` since `since`.

    Args:
        thread: The thread's name.
        pid: The other process, when known.
        host: Its machine (named only when it is not this one).
        since: When its run started (seconds since the epoch).
        holder: More about the holder (for example its PostgreSQL backend).
    """
    who = f"process {pid}" if pid is not None else "another process"
    if host and host != socket.gethostname():
        who += f" on {host}"
    if since is not None:
        who += f", running since {time.strftime('%H:%M:%S', time.localtime(since))}"
    if holder:
        who += f", {holder}"
    end = f"end process {pid}" if pid is not None else "end that kernel"
    message = (
        f"thread {thread!r} is being run by another kernel ({who}); this cell did "
        "nothing, so no turn is lost. Two kernels writing one thread would drop each "
        "other's turns. Run the cell again once that run has finished, or stop it (the stop "
        f"button of its notebook, or {end}), or use another thread here: %%agent -t NAME or "
        "%%agent --new."
    )
    return ThreadBusy(message, thread=thread, pid=pid)


def _lock_file_name(key: str) -> str:
    """A plain file name for a thread key: readable, and distinct for distinct keys."""
    readable = re.sub(r"[^A-Za-z0-9_.\-]+", "_", key).strip("._")[:80]
    if readable == key:
        return key
    return f"{readable}-{hashlib.sha256(key.encode()).hexdigest()[:10]}"


def _read_holder(descriptor: int) -> dict[str, object]:
    """The pid, host and start time the holder wrote (empty if it has not written them yet)."""
    try:
        data = os.pread(descriptor, 4096, 0)
        record = json.loads(data.decode() or "{}")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}
