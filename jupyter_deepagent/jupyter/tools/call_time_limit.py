"""A time limit for one block of code, enforced the way the stop button stops a tool.

When the limit passes, a watcher thread raises `TimeLimitExceeded` inside the thread running the
block, at its next Python instruction (the same asynchronous exception the stop button uses for
KeyboardInterrupt). It derives from BaseException, so user code's `except Exception:` does not
swallow it; if the code catches it anyway, it is raised again every half second. Code blocked in
one long C call (`time.sleep(600)`) is stopped when that call returns.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["TimeLimitExceeded", "time_limit"]

_RETRY_SECONDS = 0.5
_RETRIES = 20


class TimeLimitExceeded(BaseException):
    """Raised inside code that ran past its time limit."""


class _Watch:
    def __init__(self, ident: int) -> None:
        self.ident = ident
        self.lock = threading.Lock()
        self.running = True
        self.fired = False
        self.done = threading.Event()

    def run(self, seconds: float) -> None:
        wait = seconds
        for _ in range(_RETRIES + 1):
            if self.done.wait(wait):
                return
            with self.lock:
                if not self.running:
                    return
                self.fired = True
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(self.ident), ctypes.py_object(TimeLimitExceeded)
                )
            wait = _RETRY_SECONDS

    def finish(self) -> bool:
        with self.lock:
            self.running = False
            fired = self.fired
            if fired:  # drop an exception raised too late to land inside the block
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident), None)
        self.done.set()
        return fired


@contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise `TimeLimitExceeded` in this thread if the block runs longer than `seconds`.

    None or 0 means no limit.

    Raises:
        TimeLimitExceeded: The block ran out of time (also when the exception landed just
            after the block's own code ended).
    """
    if not seconds or seconds <= 0:
        yield
        return
    watch = _Watch(threading.get_ident())
    watcher = threading.Thread(target=watch.run, args=(seconds,), name="time-limit", daemon=True)
    watcher.start()
    timed_out = False
    try:
        yield
    except TimeLimitExceeded:
        timed_out = True
    finally:
        while True:  # the exception may land here too, before the watch is told to end
            try:
                timed_out = _finish(watch) or timed_out
                break
            except TimeLimitExceeded:
                timed_out = True
    if timed_out:
        raise TimeLimitExceeded


def _finish(watch: _Watch) -> bool:
    while True:
        try:
            return watch.finish()
        except TimeLimitExceeded:
            continue
