"""Which notebook file a kernel runs, also where the frontend does not say.

JupyterLab tells the kernel (`JPY_SESSION_NAME`, as `__session__`), and so do VS Code
(`__vsc_ipynb_file__`) and `jupyter-deepagent run`; papermill, `jupyter nbconvert --execute` and
plain nbclient do not. `locate_notebook` takes, in order: the notebook named with `%agent
notebook PATH`, or given to the session, `JUPYTER_DEEPAGENT_NOTEBOOK`, the frontend's variables,
and else looks the executing cell up (`executing_cell`: its source, and its `cellId` when the
frontend sends one) among the `.ipynb` files of the kernel's working folder (`NotebookFinder`):

- papermill saves its output notebook as it runs, naming the input in `metadata.papermill`;
  the input is preferred when it holds the cell too (its research log lives beside it);
- notebooks in `.ipynb_checkpoints/` (or any subfolder) are not candidates;
- several notebooks holding the cell are told apart by the cells run before in this kernel
  (IPython's input history), then by which one has a research log.

A notebook is read again only when its size or modification time changed, so a folder of many
notebooks costs one `stat` each per lookup.
"""

from __future__ import annotations

import hashlib
import json
import os
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.jupyter.views.notebook_words import (
    strict_replay_without_notebook,
    unknown_notebook_note,
)
from jupyter_deepagent.trace.research_log.log import log_path_for

__all__ = [
    "NOTEBOOK_ENV",
    "ExecutingCell",
    "KernelNotebook",
    "NotebookFinder",
    "NotebookLocation",
    "executing_cell",
    "explicit_notebook",
    "input_history",
]

NOTEBOOK_ENV = "JUPYTER_DEEPAGENT_NOTEBOOK"
"""The environment variable naming the notebook a kernel runs (for clients that do not say)."""


@dataclass(frozen=True)
class ExecutingCell:
    """The cell the kernel runs now: its source, the frontend's cell id (if sent), and a key
    telling this execution from the next (the request's id, or the execution count)."""

    code: str
    cell_id: str | None = None
    key: str = ""


@dataclass(frozen=True)
class NotebookLocation:
    """Where a kernel's notebook is, and how that is known.

    Attributes:
        path: The notebook file, or None when it cannot be told.
        how: How it is known ("named with `%agent notebook`", "JPY_SESSION_NAME"...), or why
            not ("no notebook in FOLDER holds this cell").
        candidates: When several notebooks are equally likely, which.
    """

    path: Path | None
    how: str
    candidates: tuple[Path, ...] = ()


def _text(value: object) -> str:
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return value if isinstance(value, str) else ""


def _digest(code: str) -> str:
    return hashlib.sha256(code.strip().encode("utf-8", "surrogatepass")).hexdigest()


def executing_cell(shell: object) -> ExecutingCell | None:
    """The cell being run: from the kernel's execute request (its code and `cellId`), else (a
    terminal IPython, a comm message) the last input of IPython's history; None before any."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    if isinstance(parent, dict) and parent.get("header", {}).get("msg_type") == "execute_request":
        code = _text(parent.get("content", {}).get("code"))
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
    `%agent notebook` name, the session's argument, the frontend's variables), with
    `JUPYTER_DEEPAGENT_NOTEBOOK` after the first two; None when nothing names one."""
    named = list(given)
    from_env = environ.get(NOTEBOOK_ENV, "").strip()
    if from_env:
        named.insert(min(2, len(named)), (from_env, NOTEBOOK_ENV))
    for value, how in named:
        if isinstance(value, str) and value.endswith(".ipynb"):
            return NotebookLocation(Path(value), how)
    return None


@dataclass(frozen=True)
class _Cells:
    """What a notebook file says about its cells, as read at one size and modification time."""

    stamp: tuple[int, int]
    sources: frozenset[str]
    """Digests of its code cells' sources (spaces around them trimmed)."""
    ids: frozenset[str]
    papermill_input: str | None
    """The input notebook papermill names in an output notebook's metadata."""


@dataclass
class NotebookFinder:
    """Looks the executing cell up among a folder's notebooks (see the module docstring).

    Each notebook is read once per size and modification time."""

    _read: dict[Path, _Cells] = field(default_factory=dict)

    def find(
        self, folders: Sequence[Path], cell: ExecutingCell, history: Sequence[str] = ()
    ) -> NotebookLocation:
        """The notebook of `folders` (the kernel's working folder first) holding `cell`.

        Args:
            folders: Where to look (top level only: not `.ipynb_checkpoints/`).
            cell: The executing cell.
            history: The cells run before in this kernel, to tell apart notebooks that all
                hold `cell`.

        Returns:
            The notebook, or a location with no path saying why (none holds the cell; several
            do, as `candidates`).
        """
        digest = _digest(cell.code)
        holding: dict[Path, _Cells] = {}
        for folder in folders:
            for path, cells in self._notebooks(folder):
                if _holds(cells, cell):
                    holding[path] = cells
        by_id = {p: c for p, c in holding.items() if cell.cell_id and cell.cell_id in c.ids}
        matches = list(by_id or holding)
        where = " or ".join(str(folder) for folder in folders)
        if not matches:
            return NotebookLocation(None, f"no notebook in {where} holds this cell")
        inputs = [self._input_of(path, holding[path], folders[0], cell) for path in matches]
        unique = list(dict.fromkeys(inputs))
        if len(unique) > 1:
            unique = self._most_run(unique, history, digest)
        if len(unique) > 1:
            logged = [path for path in unique if log_path_for(path).is_file()]
            unique = logged if len(logged) == 1 else unique
        if len(unique) == 1:
            return NotebookLocation(unique[0], f"found by this cell among the notebooks of {where}")
        how = f"several notebooks in {where} hold this cell"
        return NotebookLocation(None, how, tuple(unique))

    def _cells(self, path: Path) -> _Cells | None:
        """What `path` holds (read again only when its size or modification time changed;
        nothing for a file that is not a readable notebook); None when it is gone."""
        try:
            status = path.stat()
        except OSError:
            self._read.pop(path, None)
            return None
        stamp = (status.st_mtime_ns, status.st_size)
        known = self._read.get(path)
        if known is not None and known.stamp == stamp:
            return known
        cells = _read_cells(path, stamp)
        self._read[path] = cells
        return cells

    def _notebooks(self, folder: Path) -> Iterable[tuple[Path, _Cells]]:
        try:
            folder = folder.resolve()
            names = sorted(entry.name for entry in os.scandir(folder))
        except OSError:
            return
        for name in names:
            if not name.endswith(".ipynb"):
                continue
            path = folder / name
            cells = self._cells(path)
            if cells is not None:
                yield path, cells

    def _input_of(self, path: Path, cells: _Cells, folder: Path, cell: ExecutingCell) -> Path:
        """`path`, or the input notebook papermill names in it when that holds the cell too
        (a relative name is taken from the working `folder`, else from beside `path`)."""
        named = cells.papermill_input
        if not named:
            return path
        tried = (
            [Path(named)] if Path(named).is_absolute() else [folder / named, path.parent / named]
        )
        for candidate in tried:
            resolved = candidate.resolve()
            source = self._cells(resolved) if resolved != path else None
            if source is not None and _holds(source, cell):
                return resolved
        return path

    def _most_run(self, paths: list[Path], history: Sequence[str], digest: str) -> list[Path]:
        """Those of `paths` holding the most of the cells run before in this kernel."""
        earlier = {_digest(code) for code in history if code.strip()} - {digest}
        scores = {}
        for path in paths:
            cells = self._cells(path)
            scores[path] = len(earlier & cells.sources) if cells is not None else -1
        best = max(scores.values())
        return [path for path in paths if scores[path] == best]


def _holds(cells: _Cells, cell: ExecutingCell) -> bool:
    return bool(cell.cell_id and cell.cell_id in cells.ids) or _digest(cell.code) in cells.sources


def _read_cells(path: Path, stamp: tuple[int, int]) -> _Cells:
    unreadable = _Cells(stamp, frozenset(), frozenset(), None)
    try:
        notebook = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return unreadable
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return unreadable
    sources, ids = set(), set()
    for cell in notebook["cells"]:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        sources.add(_digest(_text(cell.get("source"))))
        if isinstance(cell.get("id"), str):
            ids.add(cell["id"])
    metadata = notebook.get("metadata")
    papermill = metadata.get("papermill") if isinstance(metadata, dict) else None
    named = papermill.get("input_path") if isinstance(papermill, dict) else None
    named = named if isinstance(named, str) and named.endswith(".ipynb") else None
    return _Cells(stamp, frozenset(sources), frozenset(ids), named)


class KernelNotebook:
    """Which notebook one kernel runs (see the module docstring), found once.

    Args:
        shell: The IPython shell (its namespace holds the frontend's variables, its kernel the
            execute request, its history the cells run before).
        given: The notebook file, when the session was told it.

    Attributes:
        own_thread: The thread of this kernel's own ("kernel-" and 8 hex digits), for runs
            while the notebook cannot be told: they share no notebook's conversation.
    """

    def __init__(self, shell: object, given: str | None = None) -> None:
        self.shell = shell
        self._given = given
        self._named: str | None = None  # `%agent notebook PATH`
        self._found: NotebookLocation | None = None  # found by a cell: a kernel runs one notebook
        self._looked_up: tuple[str, NotebookLocation] | None = None  # this execution's answer
        self._finder = NotebookFinder()
        self._start_folder = Path.cwd()
        self.own_thread = f"kernel-{uuid.uuid4().hex[:8]}"
        self._said_unknown = False

    def locate(self) -> NotebookLocation:
        """Where the notebook is, and how that is known.

        In order: named with `%agent notebook PATH`, given to the session,
        `JUPYTER_DEEPAGENT_NOTEBOOK`, `__session__` (Jupyter's `JPY_SESSION_NAME`),
        `__vsc_ipynb_file__` (VS Code); else the notebook of the working folder holding the
        executing cell (see `NotebookFinder`), kept once found. Looked up at most once per
        execution.
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
        if self._found is not None:
            return self._found
        cell = executing_cell(self.shell)
        if cell is None:
            return NotebookLocation(None, "no cell has run yet in this kernel")
        if self._looked_up is not None and self._looked_up[0] == cell.key:
            return self._looked_up[1]
        folders = list(dict.fromkeys((self._start_folder, Path.cwd())))
        found = self._finder.find(folders, cell, input_history(self.shell))
        if found.path is not None:
            self._found = found
        self._looked_up = (cell.key, found)
        return found

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
        what that means and what to do (in full the first time, then a reminder).

        Args:
            turn: The run is a cell's turn (or its resume): it would be recorded.
            strict: Strict replay: the run may not go live.
            thread: The kernel's own thread the run goes on (None: one the user chose).

        Raises:
            InputError: Strict replay, and the notebook (so its research log) is unknown.
        """
        location = self.locate()
        if location.path is not None or not turn:
            return location.path, ""
        if strict:
            text = strict_replay_without_notebook(location.how, location.candidates)
            raise InputError(text, source="%%agent")
        note = unknown_notebook_note(
            location.how, location.candidates, thread, again=self._said_unknown
        )
        self._said_unknown = True
        return None, note
