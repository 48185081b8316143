"""A run as it appears in its cell: compact live lines, then the answer, files and results.

While the agent works, one display (updated in place through its display id, which JupyterLab,
VS Code and nbclient all honour) shows a line per tool call with its short arguments, status and
time, the todo list as it changes, subagents as they start and finish, and warnings. When the run
ends: the final answer, the `/outputs/` files, the subagent results, or the tool calls waiting
for approval. Terminal IPython gets the same as plain printed lines.

Text the model or agent wrote reaches the page only as HTML rendered and cleaned in the kernel
(`trace.safe_html`, shown through `jupyter.views.safe_display`), never as Markdown for the page to
render: the page would run its raw HTML.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from jupyter_deepagent.events import (
    MODEL_CALL,
    MODEL_RETRY,
    OFFLOADED,
    RUN_FINISHED,
    SUBAGENT_FINISHED,
    SUBAGENT_STARTED,
    SUMMARIZED,
    TODOS,
    TOOL_CALL,
    TOOL_RESULT,
    WARNING,
    RunEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
)
from jupyter_deepagent.jupyter.views.event_text import (
    compression_line,
    retry_line,
    short_args,
    short_text,
)
from jupyter_deepagent.jupyter.views.notebook_words import notebook_warning
from jupyter_deepagent.jupyter.views.output_files import show_files, written_order
from jupyter_deepagent.jupyter.views.prompt_view import prompt_markdown
from jupyter_deepagent.jupyter.views.safe_display import FrameDisplay, SafeHTML, code_span, markdown
from jupyter_deepagent.trace.figures import duration, figures_text, token_count
from jupyter_deepagent.trace.markdown_stream import MarkdownStream

if TYPE_CHECKING:
    from IPython.display import DisplayHandle

__all__ = [
    "CellView",
    "FrameDisplay",
    "SafeHTML",
    "code_span",
    "is_terminal",
    "markdown",
    "prompt_markdown",
    "show",
    "show_files",
    "show_pending",
    "written_order",
]

_REFRESH_SECONDS = 0.1
_STREAM_SECONDS = 0.25
"""A streamed answer is rendered again at most this often..."""
_STREAM_COST_SHARE = 10
"""... no sooner than ten times the last render took, so rendering stays a small share of a
stream's time however long the answer grows..."""
_STREAM_CHARS_PER_SECOND = 200_000
"""... and at most this much HTML a second on average (a 1 MB answer every 5 s), so the page is not
busy redrawing a long answer."""
_clock = time.perf_counter
_TODO_MARKS = {"completed": "✓", "in_progress": "▶", "pending": "○"}


def is_terminal(shell: object) -> bool:
    """True in terminal IPython, where output is printed text rather than updatable displays."""
    return type(shell).__name__ == "TerminalInteractiveShell"


def show(obj: object, *, display_id: bool = False) -> DisplayHandle | None:
    """`IPython.display.display`, imported when first needed; with `display_id`, the handle that
    updates the display in place."""
    from IPython.display import display

    if display_id:
        handle: DisplayHandle | None = display(obj, display_id=True)
        return handle
    display(obj)
    return None


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], dict[str, object]]:
        return {"text/plain": self.text}, {}


class CellView:
    """Shows one run in the cell output.

    Args:
        rich: Update displays in place (Jupyter); False prints lines as they complete (terminal).
        quiet: Show no live lines, only the outcome.
    """

    def __init__(self, *, rich: bool = True, quiet: bool = False) -> None:
        self.rich = rich
        self.quiet = quiet
        self._header = ""
        self._lines: dict[str, str] = {}  # key -> line, in arrival order
        self._running: dict[str, None] = {}  # tool calls waiting for their result, in order
        self._todos: list[Mapping[str, object]] = []
        self._status = ""
        self._handle: DisplayHandle | None = None
        self._last_refresh = 0.0
        self._steps = 0  # the main agent's model calls
        self._model_calls = 0  # every model call: subagents' and the summarizer's too
        self._tokens_in = 0
        self._finished: Mapping[str, object] | None = None  # the run's `run_finished` totals
        self._started = time.perf_counter()
        self._stream = MarkdownStream()
        self._stream_handle: DisplayHandle | None = None
        self._stream_due = 0.0  # when the streamed answer may be rendered again
        self._midline = False
        self._tasks: dict[str, str] = {}  # task id -> "researcher #2"
        self._turns: dict[str, int] = {}  # model turn -> tasks numbered before it
        self._slot: DisplayHandle | None = None  # the display the first item below takes over
        self._pinned: object = None
        self._moved = False
        self._lock = threading.RLock()

    # -- live part --------------------------------------------------------------------------------
    def start(self, header: str, notes: Iterable[str] = ()) -> None:
        """Open the live display with a header line (thread, model) and any notes."""
        self._started = time.perf_counter()
        self._header = header
        for index, note in enumerate(notes):
            self._lines[f"note:{index}"] = f"  ! {note}"
        self._status = "working…"
        if self.quiet:
            return
        if self.rich:
            self._handle = show(_Text(self._text()), display_id=True)
            # the answer's place, kept above the inspector shown next; filled as it streams
            self._stream_handle = show(SafeHTML("", ""), display_id=True)
        else:
            print(header)
            for key, line in self._lines.items():
                if key.startswith("note:"):
                    print(line)

    @property
    def header(self) -> str:
        """The header line as shown now."""
        return self._header

    def retitle(self, header: str) -> None:
        """Replace the header line (the run's end says whether it was replayed or live)."""
        with self._lock:
            self._header = header

    def note(self, text: str) -> None:
        """Add a line such as "the interrupted call was marked as not completed"."""
        self._add(f"note:{len(self._lines)}", f"  ! {text}", final=True)

    def on_event(self, event: RunEvent) -> None:
        """Take one run event (from the main thread, or a subagent's worker thread)."""
        with self._lock:
            self._take(event)

    def _task_name(self, event: RunEvent) -> str:
        """A subagent task as the log names it: its subagent and number in this run ("researcher
        #2"), so two runs of one subagent can be told apart."""
        task_id = str(event.get("task_id"))
        if task_id not in self._tasks:
            # tasks of one model turn start in any order: number them by their place in the turn
            turn_id, index = None, 0  # a subagent's own step says neither
            if event["type"] in (SUBAGENT_STARTED, SUBAGENT_FINISHED):
                turn_id, index = event.get("turn_id"), event.get("call_index") or 0
            base = self._turns.setdefault(str(turn_id or f"task:{task_id}"), len(self._tasks))
            number = base + index + 1
            self._tasks[task_id] = f"{event.get('agent')} #{number}"
        return self._tasks[task_id]

    def _take(self, event: RunEvent) -> None:
        task = None if event.get("task_id") is None else self._task_name(event)
        prefix = "  " if task is None else f"    [{task}] "
        if event["type"] == RUN_FINISHED:  # the run's figures, as every view says them
            self._finished = dict(event)
        elif event["type"] == MODEL_CALL:  # counted as the run's totals count them
            self._model_calls += 1
            self._tokens_in += int(event.get("tokens_in") or 0)
            if event.get("task_id") is None and event.get("purpose") != "summarize":
                self._steps += 1
            self._status = f"step {self._steps} · {token_count(self._tokens_in)} tokens in"
            self._refresh()
        elif event["type"] == TOOL_CALL:
            line = f"{prefix}… {event['tool']} {short_args(event.get('args', {}))}".rstrip()
            self._running[f"tool:{event.get('tool_call_id')}"] = None
            self._add(f"tool:{event.get('tool_call_id')}", line, final=False)
        elif event["type"] == TOOL_RESULT:
            key = f"tool:{event.get('tool_call_id')}"
            self._running.pop(key, None)
            started = self._lines.get(key, f"{prefix}… {event['tool']}")
            mark = "✗" if event.get("error") else "✓"
            line = started.replace("… ", f"{mark} ", 1) + f" · {duration(event.get('seconds', 0))}"
            if event.get("error"):
                line += f" — {short_text(event['error'], 120)}"
            self._add(key, line, final=True)
        elif event["type"] == TODOS and event.get("task_id") is None:
            self._todos = list(event.get("todos", []))
            if not self.rich and not self.quiet:
                self._print(self._todo_text())
            self._refresh(force=True)
        elif event["type"] == SUBAGENT_STARTED:
            self._task_started(event, task)
        elif event["type"] == SUBAGENT_FINISHED:
            self._task_started(event, task)  # a resumed task: its start was in an earlier run
            status = event.get("status", "ok")
            line = f"  ⇠ {task} {status} · {duration(event.get('seconds', 0))}"
            if event.get("description"):
                line += f" · {short_text(event['description'], 50)}"
            if event.get("error"):
                line += f" — {short_text(event['error'], 100)}"
            self._add(f"subdone:{event.get('task_id')}", line, final=True)
        elif event["type"] == MODEL_RETRY:
            self._add(f"retry:{len(self._lines)}", f"{prefix}↻ {retry_line(event)}", True)
        elif event["type"] == WARNING:
            self._add(f"warn:{len(self._lines)}", f"{prefix}! {notebook_warning(event)}", True)
        elif event["type"] in (OFFLOADED, SUMMARIZED):
            line = f"{prefix}≡ {compression_line(event)}"
            self._add(f"{event['type']}:{len(self._lines)}", line, True)

    def _task_started(
        self, event: SubagentStartedEvent | SubagentFinishedEvent, task: str | None
    ) -> None:
        key = f"sub:{event.get('task_id')}"
        if key not in self._lines:
            line = f"  ⇢ {task} started: {short_text(event.get('description', ''))}"
            self._add(key, line, final=True)

    def _add(self, key: str, line: str, final: bool) -> None:
        self._lines[key] = line
        if not self.rich and final and not self.quiet:
            self._print(line)
        self._refresh(force=True)

    def _print(self, line: str) -> None:
        if self._midline:
            print()
            self._midline = False
        print(line)

    def _todo_text(self) -> str:
        if not self._todos:
            return ""
        items = [
            f"{_TODO_MARKS.get(str(t.get('status')), '·')} {t.get('content')}" for t in self._todos
        ]
        return "  todos: " + "\n         ".join(items)

    def _text(self) -> str:
        parts = [self._header, *self._lines.values()]
        todos = self._todo_text()
        if todos:
            parts.append(todos)
        parts.append(self._status)
        return "\n".join(part for part in parts if part)

    def _refresh(self, force: bool = False) -> None:
        if self._handle is None:
            return
        now = time.perf_counter()
        if force or now - self._last_refresh >= _REFRESH_SECONDS:
            self._last_refresh = now
            self._handle.update(_Text(self._text()))

    def end(self, status: str, todos: Sequence[Mapping[str, object]] | None = None) -> None:
        """Close the live part with a status line ("done · ...", "interrupted", ...).

        Tool calls still running are marked as stopped; `todos`, the todo list as the run left
        it in the thread's state, replaces the one the events last showed. The figures are the
        run's `run_finished` totals, its duration the run's own (`trace.figures`).
        """
        figures = self._finished or {"seconds": time.perf_counter() - self._started}
        if todos is not None:
            self._todos = list(todos)
        for key in self._running:  # calls whose result never came: the run stopped in them
            if key in self._lines:
                self._lines[key] = self._lines[key].replace("… ", "■ ", 1) + " · stopped, no result"
                if not self.rich and not self.quiet:
                    self._print(self._lines[key])
        self._running.clear()
        self._status = f"{status} · {figures_text(figures)}"
        if self.quiet:
            return
        if self.rich:
            self._refresh(force=True)
        else:
            self._print(self._status)

    # -- the answer, streamed ---------------------------------------------------------------------
    def on_token(self, piece: str | None) -> None:
        """Take a piece of the main agent's text as it is written; None starts a new model call.

        The text shown is rendered again at most every `_STREAM_SECONDS` (less often when a
        render takes long or the answer is long), only its last block each time
        (`MarkdownStream`); `answer` shows the whole text at the end.
        """
        if piece is None:
            self._stream = MarkdownStream()
            return
        self._stream.append(piece)
        if not self.rich:
            print(piece, end="", flush=True)
            self._midline = True
            return
        now = _clock()
        if now < self._stream_due:
            return
        shown = SafeHTML(self._stream.html(), self._stream.text)
        if self._stream_handle is None:
            self._stream_handle = show(shown, display_id=True)
        else:
            self._stream_handle.update(shown)
        spent = _clock() - now
        pause = max(
            _STREAM_SECONDS, _STREAM_COST_SHARE * spent, len(shown.html) / _STREAM_CHARS_PER_SECOND
        )
        self._stream_due = now + spent + pause

    def answer(self, text: str, provenance: Mapping[str, object] | None = None) -> None:
        """Show the final answer, rendered from Markdown in the kernel, in place of the streamed
        text if there was one; `provenance` (the run's research-log summary) goes into its
        output metadata."""
        streamed = self._stream.text
        if not self.rich:
            if streamed and text.strip() == streamed.strip():
                if self._midline:
                    print()
                    self._midline = False
            elif text.strip():
                self._print(text)
            return
        answer = text or streamed
        meta: dict[str, object] = {"kind": "answer"}
        if provenance:
            meta["run"] = provenance
        final = markdown(answer, {"jupyter_deepagent": meta})
        if self._stream_handle is not None:
            self._stream_handle.update(final)
        elif text.strip():
            show(final)

    # -- below the answer: files, approvals, results, then the inspector ---------------------------
    def pin(self, obj: object) -> None:
        """Show `obj` (the run's inspector) under the answer; it stays last in the cell."""
        self._pinned = obj
        if self.rich and not self.quiet:
            self._slot = show(obj, display_id=True)

    def below(self, obj: object) -> None:
        """Show `obj` under the answer and above the pinned inspector.

        The first such item takes over the inspector's place (shown there while the run went on),
        and `close` shows the inspector again after the last one.
        """
        if self._slot is not None:
            self._slot.update(obj)
            self._slot = None
            self._moved = True
        else:
            show(obj)

    def close(self) -> None:
        """Show the pinned inspector again, last, if items took its place; otherwise refresh its
        display, so a saved notebook keeps the final static fallback, not the one of the start."""
        if self._pinned is None or not self.rich:
            return
        if self._moved or self.quiet:
            show(self._pinned)
            self._moved = False
        elif self._slot is not None:
            self._slot.update(self._pinned)


def show_pending(
    pending: Sequence[Mapping[str, object]],
    thread: str,
    place: Callable[[object], None] | None = None,
    code_id: str | None = None,
) -> None:
    """The tool calls waiting for approval, and how to answer them (where there are no buttons:
    the same text as above the buttons, code and hidden characters shown the same way)."""
    from jupyter_deepagent.jupyter.views.approval_buttons import approval_markdown

    text = approval_markdown(pending, thread, buttons=False, code_id=code_id)
    (place or show)(markdown(text, {"jupyter_deepagent": {"kind": "approval"}}))
