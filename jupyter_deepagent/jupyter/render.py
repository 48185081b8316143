"""A run as it appears in its cell: compact live lines, then the answer, files and results.

While the agent works, one display (updated in place through its display id, which JupyterLab,
VS Code and nbclient all honour) shows a line per tool call with its short arguments, status and
time, the todo list as it changes, subagents as they start and finish, and warnings. When the run
ends: the final answer as Markdown, the `/outputs/` files, the subagent results, or the tool calls
waiting for approval. Terminal IPython gets the same as plain printed lines.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from typing import Any

from jupyter_deepagent.jupyter.event_text import (
    compression_line,
    duration,
    short_args,
    short_text,
    token_count,
)
from jupyter_deepagent.jupyter.markdown_safety import escape_raw_html

__all__ = [
    "CellView",
    "is_terminal",
    "markdown",
    "prompt_markdown",
    "show",
    "show_files",
    "show_pending",
]

_REFRESH_SECONDS = 0.1
_TODO_MARKS = {"completed": "✓", "in_progress": "▶", "pending": "○"}


def is_terminal(shell: Any) -> bool:
    """True in terminal IPython, where output is printed text rather than updatable displays."""
    return type(shell).__name__ == "TerminalInteractiveShell"


class _Markdown:
    """Markdown for rich frontends, the same text for terminals."""

    def __init__(
        self, text: str, metadata: dict[str, Any] | None = None, plain: str | None = None
    ) -> None:
        self.text = text
        self.metadata = metadata or {}
        self.plain = text if plain is None else plain

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        return {"text/markdown": self.text, "text/plain": self.plain}, self.metadata


def markdown(text: str) -> _Markdown:
    """An object `display()` shows as Markdown (plain text in a terminal)."""
    return _Markdown(text)


def show(obj: Any, **kwargs: Any) -> Any:
    """`IPython.display.display`, imported when first needed."""
    from IPython.display import display

    return display(obj, **kwargs)


class _Text:
    def __init__(self, text: str) -> None:
        self.text = text

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
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
        self._todos: list[dict[str, Any]] = []
        self._status = ""
        self._handle: Any = None
        self._last_refresh = 0.0
        self._model_calls = 0
        self._tokens_in = 0
        self._started = time.perf_counter()
        self._streamed = ""
        self._stream_handle: Any = None
        self._stream_refresh = 0.0
        self._midline = False
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
        else:
            print(header)
            for key, line in self._lines.items():
                if key.startswith("note:"):
                    print(line)

    def retitle(self, header: str) -> None:
        """Replace the header line (the run's end says whether it was replayed or live)."""
        with self._lock:
            self._header = header

    def note(self, text: str) -> None:
        """Add a line such as "the interrupted call was marked as not completed"."""
        self._add(f"note:{len(self._lines)}", f"  ! {text}", final=True)

    def on_event(self, event: dict[str, Any]) -> None:
        """Take one run event (from the main thread, or a subagent's worker thread)."""
        with self._lock:
            self._take(event)

    def _take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        prefix = "  " if event.get("task_id") is None else f"    [{event.get('agent')}] "
        if kind == "model_call" and event.get("task_id") is None:
            self._model_calls += 1
            self._tokens_in += int(event.get("tokens_in") or 0)
            self._status = f"step {self._model_calls} · {token_count(self._tokens_in)} tokens in"
            self._refresh()
        elif kind == "tool_call":
            line = f"{prefix}… {event['tool']} {short_args(event.get('args', {}))}".rstrip()
            self._add(f"tool:{event.get('tool_call_id')}", line, final=False)
        elif kind == "tool_result":
            key = f"tool:{event.get('tool_call_id')}"
            started = self._lines.get(key, f"{prefix}… {event['tool']}")
            mark = "✗" if event.get("error") else "✓"
            line = started.replace("… ", f"{mark} ", 1) + f" · {duration(event.get('seconds', 0))}"
            if event.get("error"):
                line += f" — {short_text(event['error'], 120)}"
            self._add(key, line, final=True)
        elif kind == "todos" and event.get("task_id") is None:
            self._todos = list(event.get("todos", []))
            if not self.rich and not self.quiet:
                self._print(self._todo_text())
            self._refresh(force=True)
        elif kind == "subagent_started":
            line = f"{prefix}⇢ {event.get('agent')} started: {short_text(event.get('description', ''))}"
            self._add(f"sub:{event.get('task_id')}", line, final=True)
        elif kind == "subagent_finished":
            status = event.get("status", "ok")
            line = f"{prefix}⇠ {event.get('agent')} {status} · {duration(event.get('seconds', 0))}"
            if event.get("error"):
                line += f" — {short_text(event['error'], 100)}"
            self._add(f"subdone:{event.get('task_id')}", line, final=True)
        elif kind == "warning":
            self._add(f"warn:{len(self._lines)}", f"{prefix}! {event.get('message')}", final=True)
        elif kind in ("offloaded", "summarized"):
            self._add(f"{kind}:{len(self._lines)}", f"{prefix}≡ {compression_line(event)}", True)

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
        items = [f"{_TODO_MARKS.get(t.get('status'), '·')} {t.get('content')}" for t in self._todos]
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

    def end(self, status: str) -> None:
        """Close the live part with a status line ("done · ...", "interrupted", ...)."""
        elapsed = time.perf_counter() - self._started
        summary = f"{self._model_calls} model calls · {token_count(self._tokens_in)} tokens in"
        self._status = f"{status} · {summary} · {duration(elapsed)}"
        if self.quiet:
            return
        if self.rich:
            self._refresh(force=True)
        else:
            self._print(self._status)

    # -- the answer, streamed ---------------------------------------------------------------------
    def on_token(self, piece: str | None) -> None:
        """Take a piece of the main agent's text as it is written; None starts a new model call."""
        if piece is None:
            self._streamed = ""
            return
        self._streamed += piece
        if not self.rich:
            print(piece, end="", flush=True)
            self._midline = True
            return
        now = time.perf_counter()
        if self._stream_handle is None:
            self._stream_handle = show(_Markdown(escape_raw_html(self._streamed)), display_id=True)
            self._stream_refresh = now
        elif now - self._stream_refresh >= _REFRESH_SECONDS:
            self._stream_refresh = now
            self._stream_handle.update(_Markdown(escape_raw_html(self._streamed)))

    def answer(self, text: str, provenance: dict[str, Any] | None = None) -> None:
        """Show the final answer as Markdown, in place of the streamed text if there was one;
        `provenance` (the run's research-log summary) goes into its output metadata."""
        if not self.rich:
            if self._streamed and text.strip() == self._streamed.strip():
                if self._midline:
                    print()
                    self._midline = False
            elif text.strip():
                self._print(text)
            return
        answer = escape_raw_html(text or self._streamed)  # the agent's HTML must not run
        meta: dict[str, Any] = {"kind": "answer"}
        if provenance:
            meta["run"] = provenance
        final = _Markdown(answer, {"jupyter_deepagent": meta})
        if self._stream_handle is not None:
            self._stream_handle.update(final)
        elif text.strip():
            show(final)


def show_files(displays: list[tuple[str, Any]], *, rich: bool) -> None:
    """The `/outputs/` files (from `output_displays`); a terminal gets a heading per file."""
    for path, obj in displays:
        if not rich:
            print(f"── {path} ──")
        show(obj)


def show_pending(pending: list[dict[str, Any]], thread: str) -> None:
    """The tool calls waiting for approval, and how to answer them."""
    lines = [f"**Waiting for your approval** (thread `{thread}`):", ""]
    for request in pending:
        args = json.dumps(request.get("args", {}), ensure_ascii=False, default=str)
        lines.append(f"- `{request['name']}` {escape_raw_html(short_text(args, 300))}")
    allowed = sorted({d for request in pending for d in request.get("allowed", [])})
    choices = {
        "approve": "`%agent resume approve`",
        "reject": "`%agent resume reject <why>`",
        "edit": "`%agent resume edit key=value ...`",
    }
    options = ", ".join(choices[d] for d in allowed if d in choices)
    lines += ["", f"Continue in a new cell with {options}."]
    show(_Markdown("\n".join(lines), {"jupyter_deepagent": {"kind": "approval"}}))


def prompt_markdown(assembly: Any, label: str, thread: str, size: tuple[int, int]) -> _Markdown:
    """`%agent show`: the system prompt as a table of sections, then each section's text."""
    messages, tokens = size
    lines = [
        f"**System prompt of thread `{thread}`** ({label}): {len(assembly.sections)} sections, "
        f"~{assembly.tokens:,} tokens. Conversation: {messages} messages, ~{tokens:,} tokens.",
        "",
        "| # | section | source | tokens |",
        "|---|---|---|---|",
    ]
    for index, section in enumerate(assembly.sections, 1):
        lines.append(f"| {index} | {section.name} | {section.source} | {section.tokens:,} |")
    for index, section in enumerate(assembly.sections, 1):
        fence = "````" if "```" in section.text else "```"
        lines += [
            "",
            f"<details><summary>{index}. {section.name} ({section.tokens:,} tokens)</summary>",
            "",
            f"{fence}text\n{section.text}\n{fence}",
            "",
            "</details>",
        ]
    markdown_text = "\n".join(lines)
    plain = f"Thread {thread} ({label}); conversation: {messages} messages, ~{tokens:,} tokens.\n"
    return _Markdown(markdown_text, plain=plain + assembly.to_markdown())
