"""The stop button ends a running tool even when the interrupt lands in the tool's own thread."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from jupyter_deepagent.jupyter.session.stop_button import StopButton


def test_a_stop_taken_by_the_tools_thread_still_ends_the_tool_and_the_run() -> None:
    button = StopButton()
    started = threading.Event()
    idents: list[int] = []

    def crawl() -> str:
        with button.running_tool():
            idents.append(threading.get_ident())
            started.set()
            for _ in range(3000):  # 30 s unless stopped
                time.sleep(0.01)
        return "crawled"

    previous = signal.getsignal(signal.SIGINT)
    with ThreadPoolExecutor(1) as pool:
        began = time.monotonic()
        with pytest.raises(KeyboardInterrupt), button.armed():
            future = pool.submit(crawl)
            assert started.wait(5)
            # the operating system may hand the signal to any thread: here, the tool's
            threading.Timer(0.2, signal.pthread_kill, (idents[0], signal.SIGINT)).start()
            future.result()  # the main thread waits for the tool, as LangGraph's tool node does
        assert time.monotonic() - began < 3
    assert signal.getsignal(signal.SIGINT) is previous


def test_a_tool_that_starts_after_the_stop_is_stopped_as_it_starts() -> None:
    button = StopButton()
    button.stop_tools()
    ran: list[str] = []

    def late_tool() -> None:
        with button.running_tool():
            ran.append("ran")

    with ThreadPoolExecutor(1) as pool, pytest.raises(KeyboardInterrupt):
        pool.submit(late_tool).result()
    assert ran == []
