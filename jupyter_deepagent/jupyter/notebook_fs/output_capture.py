"""Every executed cell's source and outputs, as text, in a running kernel, without saving.

In ipykernel, `OutputCapture` wraps the kernel's `Session.send`: every stream, result, display,
error and `clear_output` message of every cell after installation passes through it, tied to
its cell by the execute request's `msg_id` (learned from the `execute_input` message, which
carries the execution count; its parent, the request, carries the cell's id in its metadata,
`cellId`, when JupyterLab or the headless runner sent it). Cells run before installation, and
every cell in a shell without a kernel (terminal IPython, tests), come from IPython's own
history: raw inputs, and (IPython 9) `history_manager.outputs` (stdout, stderr, results,
displays) and `.exceptions`. The shell's `pre_run_cell`/`post_run_cell` events say which cell
is running now (`running_count`), so a view made during an agent's run can end at its cell.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from jupyter_deepagent.jupyter.notebook_fs._output_text import (
    LiveCell,
    LiveOutput,
    OutputContent,
    OutputRecord,
    clean_stream_text,
    format_outputs,
    history_outputs,
    joined,
    output_record,
)

__all__ = ["CellRecord", "Execution", "OutputCapture", "OutputRecord"]

if TYPE_CHECKING:
    from ipykernel.kernelbase import Kernel
    from IPython.core.history import HistoryManager
    from IPython.core.interactiveshell import InteractiveShell

    from jupyter_deepagent.jupyter.notebook_fs.paged_store import PagedTextStore

_log = logging.getLogger(__name__)

_OBSERVED = {
    "execute_input",
    "stream",
    "display_data",
    "update_display_data",
    "execute_result",
    "error",
    "clear_output",
}


@dataclass(frozen=True)
class Execution:
    """One execution of a cell: its count, raw source (magics as typed) and the cell's id when
    the execute request carried one (JupyterLab, the headless runner; not nbclient, papermill)."""

    execution_count: int
    source: str
    cell_id: str | None = None


@dataclass(frozen=True)
class CellRecord:
    """An executed cell: its execution count, raw source (magics as typed), outputs, cell id."""

    execution_count: int
    source: str
    outputs: list[OutputRecord] = field(default_factory=list)
    cell_id: str | None = None

    def outputs_text(self) -> str:
        """All outputs as one text, each under a `[kind]` label line."""
        return format_outputs(self.outputs)


def _cell_id(parent: object) -> str | None:
    """The `cellId` an execute request (a whole message) carries in its metadata, if any."""
    metadata = parent.get("metadata") if isinstance(parent, Mapping) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, Mapping) else None
    return cell_id if isinstance(cell_id, str) and cell_id else None


class OutputCapture:
    """Records each cell's outputs as text; one per shell, made by `OutputCapture.install`.

    Args:
        shell: The IPython shell (an ipykernel shell has `.kernel`; a plain one does not).
        max_chars_per_cell: Output characters kept per cell; the rest is counted, not kept.
    """

    _installed: ClassVar[weakref.WeakKeyDictionary[InteractiveShell, OutputCapture]] = (
        weakref.WeakKeyDictionary()
    )
    _install_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, shell: InteractiveShell, max_chars_per_cell: int = 1_000_000) -> None:
        self._shell = weakref.ref(shell)
        self.max_chars_per_cell = max_chars_per_cell
        self._lock = threading.Lock()
        self._live: dict[int, LiveCell] = {}
        self._requests: dict[str, int] = {}
        self._kernel_session: Any = None  # the kernel's jupyter_client Session, its `send` wrapped
        self._original_send: Callable[..., object] | None = None
        self._wrapped_send: Callable[..., object] | None = None
        self._texts: PagedTextStore | None = None
        self._in_cell = False  # between the shell's pre_run_cell and post_run_cell events
        self._running: int | None = None  # the cell that was running at install time

    @property
    def texts(self) -> PagedTextStore:
        """The masked texts `/notebook/` made of these outputs, kept for the whole session
        (every run's view shares them) and dropped, spill folder and all, by `uninstall`."""
        with self._lock:
            if self._texts is None:
                from jupyter_deepagent.jupyter.notebook_fs.paged_store import PagedTextStore

                self._texts = PagedTextStore()
            return self._texts

    @classmethod
    def install(cls, shell: InteractiveShell) -> OutputCapture:
        """Return the shell's capture, creating it (and wrapping its kernel's sends) once.

        Args:
            shell: The IPython shell to capture.

        Returns:
            The one capture of this shell.
        """
        with cls._install_lock:
            capture = cls._installed.get(shell)
            if capture is None:
                capture = cls(shell)
                capture._attach_kernel(getattr(shell, "kernel", None))
                capture._watch_cells(shell)
                cls._installed[shell] = capture
            return capture

    @property
    def captures_kernel_messages(self) -> bool:
        """True when the kernel's `Session.send` is wrapped (outputs seen as they are sent)."""
        return self._kernel_session is not None

    def uninstall(self) -> None:
        """Stop capturing: restore the kernel's `Session.send`, forget this shell's capture, and
        remove the masked texts kept for `/notebook/` (their spill folder with them)."""
        with self._lock:
            texts, self._texts = self._texts, None
        if texts is not None:
            texts.close()
        with self._install_lock:
            session, self._kernel_session = self._kernel_session, None
            if session is not None and vars(session).get("send") is self._wrapped_send:
                if self._original_send is None:
                    del session.send
                else:
                    session.send = self._original_send
            shell = self._shell()
            events = getattr(shell, "events", None)
            for name, callback in (("pre_run_cell", self._started), ("post_run_cell", self._ended)):
                with contextlib.suppress(ValueError):  # never registered (a shell without events)
                    if events is not None:
                        events.unregister(name, callback)
            if shell is not None and self._installed.get(shell) is self:
                del self._installed[shell]

    # -- the running cell ----------------------------------------------------------------------

    def _watch_cells(self, shell: InteractiveShell) -> None:
        events = getattr(shell, "events", None)
        if events is not None:
            events.register("pre_run_cell", self._started)
            events.register("post_run_cell", self._ended)

    def _started(self, info: object) -> None:
        if getattr(info, "store_history", False):  # a cell of the notebook, not a silent run
            self._in_cell = True

    def _ended(self, result: object) -> None:
        if getattr(getattr(result, "info", None), "store_history", False):
            self._in_cell, self._running = False, None

    def _count_now(self) -> int | None:
        """The running cell's count: its input is stored by then (IPython 9 has already
        raised `execution_count` past it), else the shell's count (fakes without history)."""
        sources = getattr(self._history(), "input_hist_raw", None)
        if sources:
            return len(sources) - 1 or None
        count = getattr(self._shell(), "execution_count", None)
        return count if isinstance(count, int) else None

    # -- kernel messages -----------------------------------------------------------------------

    def _attach_kernel(self, kernel: Kernel | None) -> None:
        session = getattr(kernel, "session", None)
        send = getattr(session, "send", None)
        if kernel is None or session is None or not callable(send):
            return
        self._original_send = vars(session).get("send")
        capture = self

        @functools.wraps(send)
        def send_and_record(
            stream: object,
            msg_or_type: OutputContent | str,
            content: object = None,
            parent: object = None,
            *args: object,
            **kwargs: object,
        ) -> object:
            sent = send(stream, msg_or_type, content, parent, *args, **kwargs)
            if capture._kernel_session is None:  # uninstalled while another wrapper sat on top
                return sent
            try:
                capture.observe(msg_or_type, content, parent)
            except Exception:  # recording must never break the kernel's own output
                _log.debug("could not record a kernel message", exc_info=True)
            return sent

        self._wrapped_send = send_and_record
        session.send = send_and_record
        self._kernel_session = session
        self._map_running_cell(kernel)

    def _map_running_cell(self, kernel: Kernel) -> None:
        """Tie the cell running now (its execute_input was sent before we wrapped) to its count."""
        try:
            parent = kernel.get_parent()
        except Exception:  # older kernels, fakes: not knowing the running cell is fine
            return
        header = (parent or {}).get("header") or {}
        count = self._count_now()
        msg_id = header.get("msg_id")
        if header.get("msg_type") == "execute_request" and msg_id and isinstance(count, int):
            self._requests[msg_id] = count
            self._live.setdefault(count, LiveCell()).cell_id = _cell_id(parent)
            self._running = count  # until its post_run_cell event

    def observe(
        self, msg_or_type: OutputContent | str, content: object = None, parent: object = None
    ) -> None:
        """Record one message, given as `Session.send` receives it (a dict, or type + content).

        Args:
            msg_or_type: A whole message dict, or a message type such as `"stream"`.
            content: The content when `msg_or_type` is a type.
            parent: The parent message or header (the execute request) when it is a type.
        """
        if isinstance(msg_or_type, Mapping):
            header = msg_or_type.get("header") or {}
            msg_type = msg_or_type.get("msg_type") or header.get("msg_type")
            content, parent = msg_or_type.get("content"), msg_or_type.get("parent_header")
        else:
            msg_type = msg_or_type
        if msg_type not in _OBSERVED:
            return
        content = content if isinstance(content, Mapping) else {}
        parent = parent if isinstance(parent, Mapping) else {}
        request_id = (parent.get("header") or parent).get("msg_id")
        with self._lock:
            if msg_type == "execute_input":
                count = content.get("execution_count")
                if isinstance(count, int) and request_id:
                    self._requests[request_id] = count
                    self._live[count] = LiveCell(
                        source=joined(content.get("code")),
                        cell_id=_cell_id(parent),
                        seen_input=True,
                    )
                return
            if msg_type == "update_display_data":
                self._update_display(content)
                return
            count = self._requests.get(request_id) if request_id else None
            if count is None:
                count = content.get("execution_count")
            if not isinstance(count, int):
                return  # output of no cell (a comm handler, a silent execution)
            cell = self._live.setdefault(count, LiveCell())
            if msg_type == "clear_output":
                if content.get("wait"):
                    cell.clear_pending = True
                else:
                    cell.outputs.clear()
                return
            self._append(cell, msg_type, content)

    def _append(self, cell: LiveCell, msg_type: str, content: OutputContent) -> None:
        if cell.clear_pending:
            cell.outputs.clear()
            cell.clear_pending = False
        record = output_record(msg_type, content)
        if record is None:
            return
        is_stream = msg_type == "stream"
        text = joined(content.get("text")) if is_stream else record.text
        if cell.chars + len(text) > self.max_chars_per_cell:
            cell.dropped += len(text)
            return
        cell.chars += len(text)
        last = cell.outputs[-1] if cell.outputs else None
        if is_stream and last is not None and last.kind == record.kind:
            last.parts.append(text)
            if "\r" in text:  # keep a progress bar's memory to its last state
                last.parts[:] = [clean_stream_text("".join(last.parts))]
            return
        display_id = (content.get("transient") or {}).get("display_id")
        cell.outputs.append(LiveOutput(record.kind, [text], display_id))

    def _update_display(self, content: OutputContent) -> None:
        display_id = (content.get("transient") or {}).get("display_id")
        record = output_record("display_data", content)
        if display_id is None or record is None:
            return
        for cell in self._live.values():
            for output in cell.outputs:
                if output.display_id == display_id:
                    output.parts[:] = [record.text]

    # -- reading -------------------------------------------------------------------------------

    def _history(self) -> HistoryManager | None:
        return getattr(self._shell(), "history_manager", None)

    def _sources(self) -> list[str]:
        history = self._history()
        return list(getattr(history, "input_hist_raw", None) or [""])

    def executions(self) -> list[Execution]:
        """Every execution (stored in history or seen by the kernel), by count, without outputs."""
        sources = self._sources()
        with self._lock:
            live = {count: (cell.source, cell.cell_id) for count, cell in self._live.items()}
        found = []
        for count in sorted(set(range(1, len(sources))) | set(live)):
            source, cell_id = live.get(count, (None, None))
            if count < len(sources):
                source = sources[count]
            found.append(Execution(count, source or "", cell_id))
        return found

    def running_count(self) -> int | None:
        """The execution count of the cell running now (None between cells, e.g. in a comm)."""
        if self._running is not None:
            return self._running
        return self._count_now() if self._in_cell else None

    def _records(self, wanted: Iterable[int] | None = None) -> list[CellRecord]:
        history = self._history()
        sources = self._sources()
        chosen = set(wanted) if wanted is not None else None
        with self._lock:
            live = {
                count: (cell.source, cell.seen_input, cell.records(), cell.cell_id)
                for count, cell in self._live.items()
                if chosen is None or count in chosen
            }
        counts = set(range(1, len(sources))) | set(live)
        if chosen is not None:
            counts &= chosen
        records = []
        for count in sorted(counts):
            source, seen_input, outputs, cell_id = live.get(count, (None, False, [], None))
            if count < len(sources):
                source = sources[count]
            if not seen_input and history is not None:
                outputs = history_outputs(history, count) or outputs
            records.append(CellRecord(count, source or "", outputs, cell_id))
        return records

    def cells(self, counts: Iterable[int] | None = None) -> list[CellRecord]:
        """Every executed cell (stored in history or seen by the kernel), by execution count;
        only those of `counts` when given."""
        return self._records(counts)

    def cell(self, execution_count: int) -> CellRecord | None:
        """The cell with this execution count, or None if no such cell ran."""
        found = self._records((execution_count,))
        return found[0] if found else None

    def outputs_text(self, execution_count: int) -> str:
        """A cell's outputs as text (`""` when it has none or never ran)."""
        record = self.cell(execution_count)
        return record.outputs_text() if record is not None else ""
