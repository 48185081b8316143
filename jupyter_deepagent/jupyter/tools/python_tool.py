"""The `python` tool: the agent runs code in the kernel, in the notebook's own namespace.

Opt-in (`%%agent --python`, `%agent config python=true`), and every call waits for the user's
approval unless `python_approval=false`. The code runs with the notebook's variables as its
globals, so what it defines is there for the next cell. The model gets back what the code
printed, the value of its last expression (a short repr; a DataFrame as its first rows) and, on
an error, a short traceback of the agent's own code. Figures it leaves open (matplotlib) and
what it displays are saved under `/outputs/` and shown under the cell. A call that runs past
`python_timeout` seconds is stopped like the stop button stops a tool, and the run goes on.

What the code prints is masked like the notebook's files (exact secret values as `***`), and so
are the figures and displays it saved when the agent reads them back from `/outputs/`; but the
code runs with the kernel's full power: only approve code you have read.
"""

from __future__ import annotations

import ast
import base64
import io
import itertools
import linecache
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from jupyter_deepagent.jupyter.tools.call_time_limit import TimeLimitExceeded, time_limit
from jupyter_deepagent.jupyter.tools.output_routing import CapturedOutput, capture_thread_output

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from langchain_core.tools import StructuredTool

    from jupyter_deepagent.backends.protocol import BackendProtocol

__all__ = ["PYTHON_TOOL_NAME", "python_tool"]

PYTHON_TOOL_NAME: Final = "python"
_OUTPUTS = "/outputs/"
_REPR_LIMIT = 2_000
_PRINTED_LIMIT = 20_000
_FRAME_ROWS = 10
_DISPLAY_FILES = (
    ("image/png", ".png"),
    ("image/jpeg", ".jpg"),
    ("image/svg+xml", ".svg"),
    ("text/html", ".html"),
    ("text/markdown", ".md"),
    ("application/json", ".json"),
)
_DESCRIPTION = """\
Run Python code in the user's Jupyter kernel, in the notebook's namespace: the notebook's \
variables (DataFrames, functions, imports) are there, and what you define stays for the user's \
next cells. Returns what the code printed, the value of its last expression (short; DataFrames \
as their first rows) and a short traceback on error. Matplotlib figures left open and anything \
displayed are saved under /outputs/ and shown to the user. The user may be asked to approve \
each call; a call running longer than {limit} is stopped. Prefer small steps; do not print \
whole large tables."""


def python_tool(
    shell: InteractiveShell,
    backend: BackendProtocol,
    *,
    seconds: float | None = 60,
    redact: Callable[[str], str] = str,
) -> StructuredTool:
    """The `python` tool for a run: code runs in `shell.user_ns`, files go to `backend`'s
    `/outputs/`.

    Args:
        shell: The IPython shell whose namespace the code runs in.
        backend: The run's filesystem (figures are written to its `/outputs/`).
        seconds: The time limit of one call (None: none).
        redact: Masks secret values in what goes back to the model.
    """
    from langchain_core.tools import StructuredTool, ToolException

    from jupyter_deepagent.harness.approval_policy import RUNS_CODE

    calls = itertools.count(1)

    def python(code: str) -> str:
        """Run Python code in the notebook's kernel."""
        text, failed = _run_python(
            shell, code, backend=backend, seconds=seconds, redact=redact, call=next(calls)
        )
        if failed:
            raise ToolException(text)
        return text

    limit = f"{seconds:g} s" if seconds else "the user's patience (no time limit is set)"
    return StructuredTool.from_function(
        python,
        name=PYTHON_TOOL_NAME,
        description=_DESCRIPTION.format(limit=limit),
        handle_tool_error=True,
        metadata={RUNS_CODE: True},  # every call asks, in subagents too (approval_policy)
    )


def _run_python(
    shell: InteractiveShell,
    code: str,
    *,
    backend: BackendProtocol | None = None,
    seconds: float | None = 60,
    redact: Callable[[str], str] = str,
    call: int = 1,
) -> tuple[str, bool]:
    """Run `code` in the shell's namespace; return the text for the model and whether it failed.

    Raises:
        KeyboardInterrupt: The stop button was pressed while the code ran.
    """
    filename = f"<agent python {call}>"
    try:
        tree = ast.parse(code, filename=filename)
    except SyntaxError as exc:
        return redact(_syntax_error(exc)), True
    linecache.cache[filename] = (len(code), None, code.splitlines(keepends=True), filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
    else:
        last = None
    body = compile(tree, filename, "exec")
    tail = compile(ast.Expression(last.value), filename, "eval") if last is not None else None
    namespace = shell.user_ns
    figures_before = _figure_numbers()
    error: str | None = None
    value: object = None
    with capture_thread_output() as captured:
        try:
            with time_limit(seconds):
                exec(body, namespace)
                if tail is not None:
                    value = eval(tail, namespace)
        except TimeLimitExceeded:
            error = (
                f"TimeLimitExceeded: the code was stopped after {seconds:g} s (python_timeout). "
                "Variables it set before that stay. Try a smaller or faster step."
            )
        except Exception as exc:
            error = _short_traceback(exc, filename)
    files = _save_figures(figures_before, backend) + _save_displays(captured, backend)
    parts = []
    if error is not None:
        parts.append(error)
    printed = captured.text
    if printed.strip():
        if len(printed) > _PRINTED_LIMIT:
            printed = printed[:_PRINTED_LIMIT] + f"\n… ({len(captured.text):,} characters in all)"
        parts.append(f"printed:\n{printed.rstrip()}")
    if error is None and value is not None:
        parts.append(f"value: {_short_repr(value)}")
    if files:
        parts.append("saved and shown under the cell: " + ", ".join(files))
    if not parts:
        parts.append("done (nothing printed, no value)")
    return redact("\n\n".join(parts)), error is not None


def _short_repr(value: Any) -> str:
    """A short text for a value: a DataFrame or Series as its shape and first rows."""
    kind = type(value).__name__
    if kind in ("DataFrame", "Series") and hasattr(value, "head"):
        shape = " × ".join(str(n) for n in getattr(value, "shape", ()))
        head = value.head(_FRAME_ROWS).to_string()
        more = f"\n… first {_FRAME_ROWS} rows shown" if len(value) > _FRAME_ROWS else ""
        return f"{kind} ({shape}):\n{head}{more}"
    try:
        text = repr(value)
    except Exception as exc:
        text = f"<{kind} whose repr failed: {exc}>"
    if len(text) > _REPR_LIMIT:
        text = text[:_REPR_LIMIT] + f"… ({len(text):,} characters)"
    return text


def _syntax_error(exc: SyntaxError) -> str:
    line = (exc.text or "").rstrip()
    where = f"line {exc.lineno}" if exc.lineno else "the code"
    shown = f"\n    {line}" if line else ""
    return f"SyntaxError: {exc.msg} ({where}){shown}"


def _short_traceback(exc: BaseException, filename: str) -> str:
    """The exception with only the frames of the agent's code (not this module's, not the
    libraries' deep inside)."""
    summary = traceback.extract_tb(exc.__traceback__)
    frames = [frame for frame in summary if frame.filename == filename]
    lines = ["Traceback (most recent call last):"]
    lines += [f"  line {f.lineno}, in {f.name}\n    {(f.line or '').strip()}" for f in frames[-5:]]
    lines += traceback.format_exception_only(type(exc), exc)
    text = "\n".join(line.rstrip("\n") for line in lines)
    head = traceback.format_exception_only(type(exc), exc)[-1].strip()
    return f"{head}\n\n{text}"


def _figure_numbers() -> set[int]:
    pyplot = sys.modules.get("matplotlib.pyplot")
    return set(pyplot.get_fignums()) if pyplot is not None else set()


def _unused_path(backend: BackendProtocol, stem: str, suffix: str) -> str:
    from jupyter_deepagent._exceptions import ResearchAssistantError

    try:
        taken = {info.path.rsplit("/", 1)[-1] for info in backend.ls(_OUTPUTS)}
    except ResearchAssistantError:
        taken = set()
    for number in itertools.count(1):
        name = f"{stem}-{number}{suffix}"
        if name not in taken:
            return _OUTPUTS + name
    raise AssertionError  # pragma: no cover - count() never ends


def _save(backend: BackendProtocol, path: str, content: str) -> None:
    """Write a file the kernel made: the agent reads it masked (`MaskedFolder.save_output`),
    since a display shows what the notebook's variables hold, keys included."""
    owner, inner = backend.backend_for(path) if hasattr(backend, "backend_for") else (backend, path)
    save_output = getattr(owner, "save_output", None)
    if save_output is not None:
        save_output(inner, content)
    else:
        backend.write(path, content)


def _save_figures(before: set[int], backend: BackendProtocol | None) -> list[str]:
    """Save the figures the code opened as PNG files in /outputs/, and close them (so the
    notebook's inline backend does not show them a second time)."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return []
    saved = []
    for number in sorted(set(pyplot.get_fignums()) - before):
        figure = pyplot.figure(number)
        if backend is not None:
            buffer = io.BytesIO()
            figure.savefig(buffer, format="png", bbox_inches="tight")
            path = _unused_path(backend, "figure", ".png")
            _save(backend, path, base64.b64encode(buffer.getvalue()).decode("ascii"))
            saved.append(path)
        pyplot.close(figure)
    return saved


def _save_displays(captured: CapturedOutput, backend: BackendProtocol | None) -> list[str]:
    """Save what the code displayed: images, HTML, Markdown, JSON as /outputs/ files; plain
    text is added to what it printed."""
    saved = []
    for data, _ in captured.displays:
        for mime, suffix in _DISPLAY_FILES:
            if mime in data and backend is not None:
                content = data[mime]
                if not isinstance(content, str):
                    import json

                    content = json.dumps(content, ensure_ascii=False, default=str)
                path = _unused_path(backend, "display", suffix)
                _save(backend, path, content)
                saved.append(path)
                break
        else:
            text = data.get("text/plain")
            if text:
                captured.stream("stdout", f"{text}\n")
    return saved
