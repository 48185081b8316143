"""The stop button reaches tools too, not only the model call.

LangGraph runs a model call in the kernel's main thread, where the stop button's KeyboardInterrupt
lands at once; but the tool node runs each tool in a worker thread and, when interrupted, waits
for it to finish. While a run is going, `StopButton` replaces the SIGINT handler: on an interrupt
it raises KeyboardInterrupt inside every tool still running (at its next Python instruction),
then in the main thread as usual. A tool blocked inside one C call (a long `time.sleep`, a socket
read without timeout) still finishes that call first; pressing stop again leaves it behind.

The operating system may hand SIGINT to any thread of the kernel. Python runs its handler only in
the main thread, and only once that thread wakes, which it does not while it waits for a tool
whose thread took the signal. So a watcher thread also listens on the signal wakeup file (written
whichever thread takes the signal) and stops the tools itself; their end wakes the main thread,
which then raises KeyboardInterrupt. A tool that starts after the stop is stopped as it starts.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from types import FrameType

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

__all__ = ["StopButton", "StopButtonMiddleware"]

_SIGINT_BYTE = signal.SIGINT.value.to_bytes(1, "little")
_QUIT_BYTE = b"\0"  # no signal has number 0: it tells the watcher to end


class StopButton:
    """Tracks the threads running tools and stops them on an interrupt while `armed()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tool_threads: set[int] = set()
        self._stopping = False

    @contextmanager
    def running_tool(self) -> Iterator[None]:
        """Mark the current thread as running a tool for the duration of the block.

        Raises:
            KeyboardInterrupt: The stop button was pressed already in this run.
        """
        ident = threading.get_ident()
        main = ident == threading.main_thread().ident
        if not main:
            with self._lock:
                if self._stopping:
                    raise KeyboardInterrupt
                self._tool_threads.add(ident)
        try:
            yield
        finally:
            if not main:
                with self._lock:
                    self._tool_threads.discard(ident)

    def stop_tools(self) -> int:
        """Raise KeyboardInterrupt in every thread running a tool (and any tool that starts
        later in this run); returns how many were running."""
        with self._lock:
            self._stopping = True
            threads = list(self._tool_threads)
            self._tool_threads.clear()
            for ident in threads:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(
                    ctypes.c_ulong(ident), ctypes.py_object(KeyboardInterrupt)
                )
        return len(threads)

    @contextmanager
    def armed(self) -> Iterator[None]:
        """Within the block, an interrupt stops the running tools, then the main thread."""
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        self._stopping = False
        previous = signal.getsignal(signal.SIGINT)

        def interrupt(signum: int, frame: FrameType | None) -> None:
            self.stop_tools()
            if callable(previous):
                previous(signum, frame)
            else:
                raise KeyboardInterrupt

        signal.signal(signal.SIGINT, interrupt)
        try:
            with self._watching():
                yield
        finally:
            signal.signal(signal.SIGINT, previous)

    @contextmanager
    def _watching(self) -> Iterator[None]:
        """Stop the tools from a watcher thread when SIGINT arrives, whichever thread takes it."""
        if os.name != "posix":  # the wakeup file must be a socket elsewhere; the handler suffices
            yield
            return
        read_end, write_end = os.pipe()
        os.set_blocking(write_end, False)
        try:
            earlier = signal.set_wakeup_fd(write_end, warn_on_full_buffer=False)
        except ValueError:  # not the main thread of the main interpreter
            os.close(read_end)
            os.close(write_end)
            yield
            return
        watcher = threading.Thread(
            target=self._watch, args=(read_end, earlier), name="stop-button", daemon=True
        )
        watcher.start()
        try:
            yield
        finally:
            signal.set_wakeup_fd(earlier)
            with contextlib.suppress(OSError):
                os.write(write_end, _QUIT_BYTE)
            watcher.join(timeout=1)
            os.close(write_end)
            if not watcher.is_alive():
                os.close(read_end)

    def _watch(self, read_end: int, earlier: int) -> None:
        while True:
            try:
                data = os.read(read_end, 64)
            except OSError:
                return
            if earlier != -1:  # whoever listened before (an event loop) still hears its signals
                with contextlib.suppress(OSError):
                    os.write(earlier, data.replace(_QUIT_BYTE, b""))
            if _SIGINT_BYTE in data:
                self.stop_tools()
            if not data or _QUIT_BYTE in data:
                return


class StopButtonMiddleware(AgentMiddleware):
    """Marks each tool call's thread, so `StopButton.stop_tools` can reach it."""

    def __init__(self, button: StopButton) -> None:
        super().__init__()
        self.button = button

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        with self.button.running_tool():
            return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        return await handler(request)
