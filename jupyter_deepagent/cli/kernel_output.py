"""The kernel's own stdout and stderr during a headless run, kept out of the progress bar.

A kernel started by nbclient writes to the terminal it inherits: the log lines of jupyter_client
and ipykernel (`[IPKernelApp] WARNING | Kernel is running over TCP without encryption...`) and
whatever C code prints. Written straight to the terminal, such a line lands inside the progress
bar. `KernelOutput` gives the kernel one end of a pipe instead (`fd`, passed as the kernel
process's stdout and stderr) and hands each line it writes to a callback, which prints it on a
line of its own.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

__all__ = ["KernelOutput"]

_JOIN_SECONDS = 2.0


class KernelOutput:
    """A pipe for a kernel's output, read line by line in a thread of its own.

    Args:
        on_line: Called with each line the kernel writes (without its line break).
    """

    def __init__(self, on_line: Callable[[str], None]) -> None:
        self.on_line = on_line
        self._read, self._write = os.pipe()
        self._open = True
        self._thread = threading.Thread(target=self._pump, name="kernel-output", daemon=True)
        self._thread.start()

    @property
    def fd(self) -> int:
        """The pipe's end to give the kernel process as its stdout and stderr."""
        return self._write

    def _pump(self) -> None:
        with os.fdopen(self._read, encoding="utf-8", errors="replace") as reader:
            for line in reader:
                try:
                    self.on_line(line.rstrip("\r\n"))
                except Exception:  # a line that cannot be shown must not stop the reading
                    continue

    def close(self) -> None:
        """Close this process's end of the pipe and wait (briefly) for the last lines: they
        end when the kernel, which holds the other copy, has exited."""
        if self._open:
            self._open = False
            os.close(self._write)
        self._thread.join(_JOIN_SECONDS)
