"""The cells and outputs saved in a `.ipynb` file (earlier kernels' work), re-read when it changes.

nbformat is imported on first read. The file is parsed again only when its modification time or
size changes, so listing `/saved/` twice costs one `stat`.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Hashable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.jupyter.notebook_fs._output_text import (
    OutputRecord,
    format_outputs,
    joined,
    output_pieces,
    output_record,
    outputs_key,
)
from jupyter_deepagent.jupyter.notebook_fs.notebook_files import NotebookFile
from jupyter_deepagent.jupyter.notebook_fs.paged_text import Piece

__all__ = ["SavedCell", "SavedNotebook", "saved_files", "saved_index"]

_EXTENSIONS = {"code": "py", "markdown": "md"}


@dataclass(frozen=True)
class SavedCell:
    """One cell as saved: 1-based position, type, source, execution count, outputs and id."""

    index: int
    cell_type: str
    source: str
    execution_count: int | None = None
    outputs: list[OutputRecord] = field(default_factory=list)
    cell_id: str | None = None

    @property
    def source_path(self) -> str:
        """`/saved/cells/<index>.py` (`.md` for Markdown, `.txt` for raw cells)."""
        return f"/saved/cells/{self.index}.{_EXTENSIONS.get(self.cell_type, 'txt')}"

    @property
    def outputs_path(self) -> str:
        """`/saved/outputs/<index>.txt`."""
        return f"/saved/outputs/{self.index}.txt"

    @property
    def label(self) -> str:
        """`In[5]`, or `not run` for a cell without an execution count."""
        return f"In[{self.execution_count}]" if self.execution_count else "not run"

    def header(self, notebook_name: str) -> str:
        """The first line of the outputs file: which cell, its execution count, which notebook."""
        return f"# saved cell {self.index}, {self.label}, from {notebook_name}"

    def outputs_text(self, notebook_name: str) -> str:
        """The outputs file: a line naming the cell and its execution count, then the outputs."""
        return f"{self.header(notebook_name)}\n{format_outputs(self.outputs)}"

    def outputs_pieces(self, notebook_name: str) -> tuple[list[Piece], int]:
        """The outputs file as `output_pieces` gives it: slices of the outputs' own strings."""
        return output_pieces(self.outputs, self.header(notebook_name))

    def outputs_key(self, notebook_name: str) -> Hashable:
        """Changes when the outputs file changes (see `outputs_key`)."""
        return self.header(notebook_name), outputs_key(self.outputs)


def saved_index(cells: list[SavedCell], notebook_name: str, mount: str) -> str:
    """The `/saved/index.md` text: one line per saved cell with its files and first line.

    Args:
        cells: The saved cells.
        notebook_name: The notebook file's name, for the title.
        mount: Where the view is mounted (e.g. `/notebook`), prefixed to the paths shown.

    Returns:
        Markdown text.
    """
    lines = [f"# Cells saved in {notebook_name}", ""]
    for cell in cells:
        entry = f"- {cell.index}: {cell.cell_type}, {cell.label} -> {mount}{cell.source_path}"
        if cell.outputs:
            entry += f", outputs {mount}{cell.outputs_path}"
        first = next((line for line in cell.source.splitlines() if line.strip()), "")
        lines.append(f"{entry}  | {first[:80]}" if first else entry)
    if not cells:
        lines.append("(nothing saved yet)")
    return "\n".join(lines) + "\n"


class SavedNotebook:
    """A notebook file on disk, as saved.

    Args:
        path: The `.ipynb` file (it may not exist yet: an unsaved notebook has no cells).
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._stamp: tuple[int, int] | None = None
        self._cells: list[SavedCell] = []
        self.modified_at: datetime | None = None

    def cells(self) -> list[SavedCell]:
        """The saved cells, in notebook order; `[]` when the file does not exist.

        Raises:
            BackendError: If the file exists but is not a readable notebook.
        """
        try:
            stat = os.stat(self.path)
        except FileNotFoundError:
            return []
        except OSError as exc:
            msg = f"Cannot read the saved notebook {self.path.name}: {exc.strerror or exc}."
            raise BackendError(msg) from exc
        stamp = (stat.st_mtime_ns, stat.st_size)
        with self._lock:
            if stamp != self._stamp:
                self._cells = self._load()
                self._stamp = stamp
                self.modified_at = datetime.fromtimestamp(stat.st_mtime, tz=UTC)
            return self._cells

    def _load(self) -> list[SavedCell]:
        """The cells as saved. A version 4 file is read as the JSON it is (every view of
        `/notebook/` reads it, and importing nbformat costs a kernel seconds the first time);
        an older one through nbformat, which converts it."""
        try:
            notebook = json.loads(self.path.read_bytes())
            if not isinstance(notebook, dict) or not isinstance(notebook.get("cells", []), list):
                raise ValueError("not a notebook (no list of cells)")
            if notebook.get("nbformat", 4) < 4:
                notebook = self._converted()
        except Exception as exc:  # not JSON, not a notebook, unreadable: one problem
            msg = (
                f"Cannot read the saved notebook {self.path.name}: {exc}. The live cells under "
                "cells/ and outputs/ are still readable."
            )
            raise BackendError(msg) from exc
        cells = []
        for index, cell in enumerate(notebook.get("cells", []), start=1):
            outputs = []
            for output in cell.get("outputs", []) or []:
                record = output_record(output.get("output_type", ""), output)
                if record is not None:
                    outputs.append(record)
            count, cell_id = cell.get("execution_count"), cell.get("id")
            cells.append(
                SavedCell(
                    index=index,
                    cell_type=str(cell.get("cell_type", "code")),
                    source=joined(cell.get("source")),
                    execution_count=count if isinstance(count, int) else None,
                    outputs=outputs,
                    cell_id=cell_id if isinstance(cell_id, str) and cell_id else None,
                )
            )
        return cells

    def _converted(self) -> dict[str, Any]:
        import nbformat

        with warnings.catch_warnings():  # old files miss cell ids; nbformat warns, we do not care
            warnings.simplefilter("ignore")
            return dict(nbformat.read(self.path, as_version=4))


def saved_files(
    saved: SavedNotebook, mount: str, above: int | None = None
) -> dict[str, NotebookFile]:
    """The files of `/saved/`: each saved cell's source and outputs, and `index.md`.

    Args:
        saved: The notebook file.
        mount: Where the view is mounted (e.g. `/notebook`), for the paths the index shows.
        above: Keep only the cells before this 1-based position (the running agent cell's).

    Raises:
        BackendError: If the file exists but is not a readable notebook.
    """
    cells, when, name = saved.cells(), saved.modified_at, saved.path.name
    if above is not None:
        cells = [cell for cell in cells if cell.index < above]
    files: dict[str, NotebookFile] = {}
    for cell in cells:
        files[cell.source_path] = NotebookFile(
            cell.source_path, partial(str, cell.source), modified_at=when
        )
        if cell.outputs:
            files[cell.outputs_path] = NotebookFile(
                cell.outputs_path,
                partial(cell.outputs_text, name),
                modified_at=when,
                pieces=partial(cell.outputs_pieces, name),
                key=partial(cell.outputs_key, name),
            )
    index = partial(saved_index, cells, name, mount)
    files["/saved/index.md"] = NotebookFile("/saved/index.md", index, modified_at=when)
    return files
