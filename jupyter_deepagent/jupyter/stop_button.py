"""The stop button reaches tools too, not only the model call.

LangGraph runs a model call in the kernel's main thread, where the stop button's KeyboardInterrupt
lands at once; but the tool node runs each tool in a worker thread and, when interrupted, waits
for it to finish. While a run is going, `StopButton` replaces the SIGINT handler: on an interrupt
it raises KeyboardInterrupt inside every tool still running (at its next Python instruction),
then in the main thread as usual. A tool blocked inside one C call (a long `time.sleep`, a socket
read without timeout) still finishes that call first; pressing stop again leaves it behind.
"""

from __future__ import annotations

import ctypes
import signal
import threading
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

__all__ = ["StopButton", "StopButtonMiddleware"]


class StopButton:
    """Tracks the threads running tools and stops them on an interrupt while `armed()`."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._tool_threads: set[int] = set()

    @contextmanager
    def running_tool(self) -> Iterator[None]:
        """Mark the current thread as running a tool for the duration of the block."""
        ident = threading.get_ident()
        main = ident == threading.main_thread().ident
        if not main:
            with self._lock:
                self._tool_threads.add(ident)
        try:
            yield
        finally:
            if not main:
                with self._lock:
                    self._tool_threads.discard(ident)

    def stop_tools(self) -> int:
        """Raise KeyboardInterrupt in every thread running a tool; returns how many."""
        with self._lock:
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
        previous = signal.getsignal(signal.SIGINT)

        def interrupt(signum: int, frame: Any) -> None:
            self.stop_tools()
            if callable(previous):
                previous(signum, frame)
            else:
                raise KeyboardInterrupt

        signal.signal(signal.SIGINT, interrupt)
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)



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
