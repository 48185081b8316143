"""Look the executing cell up among the notebooks of a kernel's folders.

A kernel nobody tells its notebook (papermill, `jupyter nbconvert --execute`, plain nbclient)
finds it by the cell it runs (`ExecutingCell`: its source, and its `cellId` when the frontend
sends one) among the `.ipynb` files at the top of its folders (`NotebookFinder`):

- papermill saves its output notebook as it runs, naming the input in `metadata.papermill`;
  the input is preferred when it holds the cell too (its research log lives beside it), and
  only an input in the folders searched counts;
- notebooks in `.ipynb_checkpoints/` (or any subfolder) are not candidates, nor notebooks whose
  text is one the agent wrote (it could otherwise choose which notebook the kernel adopts);
- several notebooks holding the cell are told apart by the cells run before in this kernel
  (IPython's input history); a research log decides only between a notebook and its
  `NAME.nbconvert.ipynb`; else the kernel cannot tell.

A notebook is read again only when its size or modification time changed, so a folder of many
notebooks costs one `stat` each per lookup.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jupyter_deepagent.trace.research_log.log import log_path_for

__all__ = ["ExecutingCell", "NotebookFinder", "NotebookLocation"]


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


@dataclass(frozen=True)
class _Cells:
    """What a notebook file says about its cells, as read at one size and modification time
    (nothing when its whole text is one the agent wrote: it is never a candidate)."""

    stamp: tuple[int, int]
    sources: frozenset[str]
    """Digests of its code cells' sources (spaces around them trimmed)."""
    ids: frozenset[str]
    papermill_input: str | None
    """The input notebook papermill names in an output notebook's metadata."""


@dataclass
class NotebookFinder:
    """Looks the executing cell up among a folder's notebooks (see the module docstring).

    Each notebook is read once per size and modification time.

    Attributes:
        agent_wrote: Whether a file's whole text is what the agent wrote to it
            (`AgentTexts.is_own`).
    """

    agent_wrote: Callable[[Path, str], bool] | None = None
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
        inputs = [self._input_of(path, holding[path], folders, cell) for path in matches]
        unique = list(dict.fromkeys(inputs))
        if len(unique) > 1:
            unique = self._most_run(unique, history, digest)
        if len(unique) > 1:
            unique = self._source_of_outputs(unique)
        if len(unique) == 1:
            return NotebookLocation(unique[0], f"found by this cell among the notebooks of {where}")
        how = f"several notebooks in {where} hold this cell"
        return NotebookLocation(None, how, tuple(unique))

    def holds(self, path: Path, cell: ExecutingCell) -> bool:
        """Whether the notebook `path` still holds `cell` (one `stat` when it did not change)."""
        cells = self._cells(path)
        return cells is not None and _holds(cells, cell)

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
        cells = _read_cells(path, stamp, self.agent_wrote)
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

    def _input_of(
        self, path: Path, cells: _Cells, folders: Sequence[Path], cell: ExecutingCell
    ) -> Path:
        """`path`, or the input notebook papermill names in it when that holds the cell too."""
        for named in self._named_input(path, cells, folders):
            source = self._cells(named)
            if source is not None and _holds(source, cell):
                return named
        return path

    def _named_input(self, path: Path, cells: _Cells, folders: Sequence[Path]) -> Iterator[Path]:
        """Where the input papermill names in `path` may be (a relative name is taken from the
        working folder, else from beside `path`): only notebooks at the top of `folders`."""
        named = cells.papermill_input
        if not named:
            return
        roots = {folder.resolve() for folder in folders}
        tried = (folders[0] / named, path.parent / named)  # an absolute name is itself
        for candidate in dict.fromkeys(name.resolve() for name in tried):
            if candidate.parent in roots and candidate != path:
                yield candidate

    def _source_of_outputs(self, paths: list[Path]) -> list[Path]:
        """The one of `paths` with a research log when every other is its nbconvert output
        (`NAME.nbconvert.ipynb`; papermill's outputs lead to their input already); else all."""
        logged = [path for path in paths if log_path_for(path).is_file()]
        if len(logged) != 1:
            return paths
        output = logged[0].with_name(f"{logged[0].stem}.nbconvert.ipynb")
        return logged if all(path in (logged[0], output) for path in paths) else paths

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


def _read_cells(
    path: Path, stamp: tuple[int, int], agent_wrote: Callable[[Path, str], bool] | None = None
) -> _Cells:
    unreadable = _Cells(stamp, frozenset(), frozenset(), None)
    try:
        raw = path.read_bytes()
        notebook = json.loads(raw)
    except (OSError, ValueError):
        return unreadable
    if agent_wrote is not None and agent_wrote(path, raw.decode("utf-8", "replace")):
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
