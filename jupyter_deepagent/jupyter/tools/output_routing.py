"""Where printed and displayed output goes while a tool runs or a run resumes from a button.

`capture_thread_output()` collects what the current thread prints (stdout, stderr) and displays
while the block runs: a notebook tool's prints become part of its result, the python tool's
figures become `/outputs/` files. Other threads keep writing to the cell.

`route_output(sink)` sends what any other thread prints or displays during the block to `sink`:
the Output widget a run resumed by an approval button writes into (the cell that showed the
buttons has finished, so the kernel would otherwise have nowhere to put it).

While any route is active, one router stands in for `sys.stdout`, `sys.stderr` and the shell's
display publisher; the originals are put back when the last route ends. A thread's own capture
wins over a route.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from IPython.core.displaypub import DisplayPublisher

__all__ = ["CapturedOutput", "MimeBundle", "OutputSink", "capture_thread_output", "route_output"]

MimeBundle = dict[str, object]
"""A display's data (MIME type -> content), metadata or transient fields, as IPython sends them."""


class OutputSink(Protocol):
    """Receives output: text written to a stream, display data, clear requests."""

    def stream(self, name: str, text: str) -> None:
        """Text written to `name` ("stdout" or "stderr")."""

    def display(
        self,
        data: MimeBundle,
        metadata: MimeBundle,
        transient: MimeBundle,
        update: bool,
    ) -> None:
        """A display (or, with `update`, a new version of the display `transient` names)."""

    def clear(self, wait: bool) -> None:
        """`clear_output()`."""


@dataclass
class CapturedOutput:
    """What one thread printed and displayed during a capture."""

    parts: list[tuple[str, str]] = field(default_factory=list)
    displays: list[tuple[MimeBundle, MimeBundle]] = field(default_factory=list)

    @property
    def text(self) -> str:
        """Everything printed, stdout and stderr interleaved as written."""
        return "".join(text for _, text in self.parts)

    def stream(self, name: str, text: str) -> None:
        self.parts.append((name, text))

    def display(
        self,
        data: MimeBundle,
        metadata: MimeBundle,
        transient: MimeBundle,
        update: bool,
    ) -> None:
        self.displays.append((dict(data), dict(metadata or {})))

    def clear(self, wait: bool) -> None:
        self.displays.clear()


class _Stream:
    """Stands in for sys.stdout/sys.stderr: sends a routed thread's text to its sink."""

    def __init__(self, router: _Router, name: str, original: TextIO) -> None:
        self._router = router
        self._name = name
        self._original = original

    def write(self, text: str) -> int:
        sink = self._router.sink()
        if sink is None:
            return self._original.write(text)
        sink.stream(self._name, str(text))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if self._router.sink() is None:
            self._original.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._original, name)


class _Router:
    """The one router of the process (sys.stdout is process-wide)."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.threads: dict[int, list[OutputSink]] = {}
        self.routes: list[OutputSink] = []
        self._saved: tuple[TextIO, TextIO, DisplayPublisher | None] | None = None

    def sink(self) -> OutputSink | None:
        own = self.threads.get(threading.get_ident())
        if own:
            return own[-1]
        return self.routes[-1] if self.routes else None

    # -- the display publisher's methods, for a routed thread ---------------------------------
    def publish(
        self,
        data: MimeBundle,
        metadata: MimeBundle | None = None,
        *args: object,
        transient: MimeBundle | None = None,
        update: bool = False,
        **kwargs: object,
    ) -> None:
        sink = self.sink()
        if sink is None:
            publisher = self._saved[2] if self._saved else None
            if publisher is not None:
                type(publisher).publish(
                    publisher, data, metadata, *args, transient=transient, update=update, **kwargs
                )
            return
        sink.display(data, metadata or {}, transient or {}, update)

    def clear_output(self, wait: bool = False) -> None:
        sink = self.sink()
        if sink is None:
            publisher = self._saved[2] if self._saved else None
            if publisher is not None:
                type(publisher).clear_output(publisher, wait)
            return
        sink.clear(wait)

    # -- installing -----------------------------------------------------------------------------
    def acquire(self) -> None:
        if self._saved is not None:
            return
        publisher = _display_publisher()
        self._saved = (sys.stdout, sys.stderr, publisher)
        sys.stdout = _Stream(self, "stdout", sys.stdout)
        sys.stderr = _Stream(self, "stderr", sys.stderr)
        if publisher is not None:  # over the class's methods, on this instance: release pops them
            vars(publisher).update(publish=self.publish, clear_output=self.clear_output)

    def release(self) -> None:
        if self.threads or self.routes or self._saved is None:
            return
        stdout, stderr, publisher = self._saved
        self._saved = None
        if isinstance(sys.stdout, _Stream) and sys.stdout._router is self:
            sys.stdout = stdout
        if isinstance(sys.stderr, _Stream) and sys.stderr._router is self:
            sys.stderr = stderr
        if publisher is not None:
            for name in ("publish", "clear_output"):
                publisher.__dict__.pop(name, None)


def _display_publisher() -> DisplayPublisher | None:
    try:
        from IPython.core.interactiveshell import InteractiveShell
    except ImportError:  # pragma: no cover - IPython is a dependency
        return None
    if not InteractiveShell.initialized():
        return None
    return InteractiveShell.instance().display_pub


_ROUTER = _Router()


@contextmanager
def capture_thread_output() -> Iterator[CapturedOutput]:
    """Collect what this thread prints and displays inside the block (other threads: as usual)."""
    captured = CapturedOutput()
    ident = threading.get_ident()
    with _ROUTER.lock:
        _ROUTER.acquire()
        _ROUTER.threads.setdefault(ident, []).append(captured)
    try:
        yield captured
    finally:
        with _ROUTER.lock:
            stack = _ROUTER.threads.get(ident, [])
            if captured in stack:
                stack.remove(captured)
            if not stack:
                _ROUTER.threads.pop(ident, None)
            _ROUTER.release()


@contextmanager
def route_output(sink: OutputSink) -> Iterator[OutputSink]:
    """Send everything printed or displayed during the block (outside a thread's own capture)
    to `sink`."""
    with _ROUTER.lock:
        _ROUTER.acquire()
        _ROUTER.routes.append(sink)
    try:
        yield sink
    finally:
        with _ROUTER.lock:
            if sink in _ROUTER.routes:
                _ROUTER.routes.remove(sink)
            _ROUTER.release()
