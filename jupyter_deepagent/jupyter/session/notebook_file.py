"""Which notebook file a kernel runs, also where the frontend does not say.

JupyterLab tells the kernel (`JPY_SESSION_NAME`, as `__session__`), and so do VS Code
(`__vsc_ipynb_file__`) and `jupyter-deepagent run`; papermill, `jupyter nbconvert --execute` and
plain nbclient do not. `KernelNotebook.locate` takes, in order: the notebook named with
`%agent notebook PATH`, or given to the session, the frontend's variables, then
`JUPYTER_DEEPAGENT_NOTEBOOK` (for clients that say nothing), and else looks the executing cell
(`executing_cell`) up among the notebooks of the kernel's working folder (`NotebookFinder`).

A notebook found by its cell is kept while it holds each agent cell run next (one `stat` each);
an agent cell it does not hold is looked up again, and the run's header says so.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.jupyter.session.notebook_finder import (
    ExecutingCell,
    NotebookFinder,
    NotebookLocation,
)
from jupyter_deepagent.jupyter.views.notebook_words import (
    notebook_changed_note,
    strict_replay_without_notebook,
    unknown_notebook_note,
)

__all__ = [
    "NOTEBOOK_ENV",
    "KernelNotebook",
    "executing_cell",
    "explicit_notebook",
    "input_history",
]

NOTEBOOK_ENV = "JUPYTER_DEEPAGENT_NOTEBOOK"
"""The environment variable naming the notebook a kernel runs (for clients that do not say)."""


def executing_cell(shell: object) -> ExecutingCell | None:
    """The cell being run: from the kernel's execute request (its code and `cellId`), else (a
    terminal IPython, a comm message) the last input of IPython's history; None before any."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    if isinstance(parent, dict) and parent.get("header", {}).get("msg_type") == "execute_request":
        code = parent.get("content", {}).get("code")
        code = code if isinstance(code, str) else ""
        cell_id = parent.get("metadata", {}).get("cellId")
        key = str(parent.get("header", {}).get("msg_id", ""))
        if code.strip():
            return ExecutingCell(code, cell_id if isinstance(cell_id, str) else None, key)
    history = input_history(shell)
    if not history or not history[-1].strip():
        return None
    return ExecutingCell(history[-1], None, f"count:{len(history)}")


def input_history(shell: object) -> Sequence[str]:
    """The cells run in this kernel, as typed, oldest first (IPython's raw input history)."""
    raw = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None)
    return raw if isinstance(raw, list) else []


def explicit_notebook(
    given: Iterable[tuple[object, str]], environ: Mapping[str, str] = os.environ
) -> NotebookLocation | None:
    """The first notebook named outright: by `given` ((value, how) pairs, best first: the
    `%agent notebook` name, the session's argument, the frontend's variables), then by
    `JUPYTER_DEEPAGENT_NOTEBOOK` (for clients that say nothing); None when nothing names one."""
    named = list(given)
    from_env = environ.get(NOTEBOOK_ENV, "").strip()
    if from_env:
        named.append((from_env, NOTEBOOK_ENV))
    for value, how in named:
        if isinstance(value, str) and value.endswith(".ipynb"):
            return NotebookLocation(Path(value), how)
    return None


class KernelNotebook:
    """Which notebook one kernel runs (see the module docstring).

    Args:
        shell: The IPython shell (its namespace holds the frontend's variables, its kernel the
            execute request, its history the cells run before).
        given: The notebook file, when the session was told it.
        agent_wrote: Whether a file's whole text is what the agent wrote to it: such a notebook is
            never adopted by its cells.

    Attributes:
        own_thread: The thread of this kernel's own ("kernel-" and 8 hex digits), for runs
            while the notebook cannot be told: they share no notebook's conversation.
    """

    def __init__(
        self,
        shell: object,
        given: str | None = None,
        agent_wrote: Callable[[Path, str], bool] | None = None,
    ) -> None:
        self.shell = shell
        self._given = given
        self._named: str | None = None  # `%agent notebook PATH`
        self._found: Path | None = None  # found by a cell: kept while it holds the cells run
        self._looked_up: tuple[str, NotebookLocation] | None = None  # this execution's answer
        self._changed = ""  # a note for the next run: the notebook found by its cells changed
        self._finder = NotebookFinder(agent_wrote)
        self._start_folder = Path.cwd()
        self.own_thread = f"kernel-{uuid.uuid4().hex[:8]}"
        self._said_unknown = False

    def locate(self) -> NotebookLocation:
        """Where the notebook is, and how that is known.

        In order: named with `%agent notebook PATH`, given to the session, `__session__`
        (Jupyter's `JPY_SESSION_NAME`), `__vsc_ipynb_file__` (VS Code),
        `JUPYTER_DEEPAGENT_NOTEBOOK`; else the notebook of the working folder holding the
        executing cell (see `NotebookFinder`), kept while it holds each agent cell run next (one
        `stat`), looked up again for an agent cell it does not hold (other cells keep it: a
        cell papermill injects is in no notebook). At most once per execution.
        """
        namespace = getattr(self.shell, "user_ns", {})
        named = explicit_notebook(
            [
                (self._named, "named with `%agent notebook`"),
                (self._given, "given to the session"),
                (namespace.get("__session__"), "JPY_SESSION_NAME"),
                (namespace.get("__vsc_ipynb_file__"), "VS Code"),
            ]
        )
        if named is not None:
            return named
        cell = executing_cell(self.shell)
        if cell is None:
            if self._found is not None:
                return NotebookLocation(self._found, self._found_how())
            return NotebookLocation(None, "no cell has run yet in this kernel")
        if self._looked_up is not None and self._looked_up[0] == cell.key:
            return self._looked_up[1]
        kept = self._found
        if kept is not None and ("%agent" not in cell.code or self._finder.holds(kept, cell)):
            found = NotebookLocation(kept, self._found_how())
        else:
            found = self._finder.find(self._folders(), cell, input_history(self.shell))
            if found.path is not None:
                if kept is not None and found.path != kept:
                    self._changed = notebook_changed_note(kept, found.path)
                self._found, self._said_unknown = found.path, False
            elif kept is not None:
                how = f"{kept.name}, the notebook found before, does not hold this cell; "
                found = replace(found, how=how + found.how)
        self._looked_up = (cell.key, found)
        return found

    def _folders(self) -> list[Path]:
        return list(dict.fromkeys((self._start_folder, Path.cwd())))

    def _found_how(self) -> str:
        where = " or ".join(str(folder) for folder in self._folders())
        return f"found by this cell among the notebooks of {where}"

    def name(self, path: str) -> Path:
        """Make `path` (relative to the working folder) the notebook, as `%agent notebook PATH`
        does; returns it, absolute.

        Raises:
            InputError: `path` is not an `.ipynb` file that exists.
        """
        chosen = Path(path).expanduser()
        if chosen.suffix != ".ipynb" or not chosen.is_file():
            what = "is not a .ipynb file" if chosen.suffix != ".ipynb" else "does not exist"
            msg = f"%agent notebook: {path!r} {what}; name the notebook this kernel runs"
            raise InputError(msg, source="%agent notebook")
        self._named = str(chosen.resolve())
        return Path(self._named)

    def for_run(self, *, turn: bool, strict: bool, thread: str | None) -> tuple[Path | None, str]:
        """The notebook a run is recorded in, and a note for its header: when it cannot be told,
        what that means and what to do (in full the first time, then a reminder); when the
        notebook found by its cells changed, which it is now.

        Args:
            turn: The run is a cell's turn (or its resume): it would be recorded.
            strict: Strict replay: the run may not go live.
            thread: The thread the run goes on (None: a new one, `--new`).

        Raises:
            InputError: Strict replay, and the notebook (so its research log) is unknown.
        """
        location = self.locate()
        if not turn:
            return location.path, ""
        if location.path is not None:
            note, self._changed = self._changed, ""
            return location.path, note
        if strict:
            text = strict_replay_without_notebook(location.how, location.candidates)
            raise InputError(text, source="%%agent")
        own = (
            thread is None or thread == self.own_thread or thread.startswith(self.own_thread + "-")
        )
        note = unknown_notebook_note(
            location.how, location.candidates, thread, own=own, again=self._said_unknown
        )
        self._said_unknown = True
        return None, note
