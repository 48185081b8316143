"""The cell files of `/notebook/`: `index.md`, `cells/`, `outputs/` and `history/`.

```
/index.md                  one line per cell shown: name, cell id, files, first line
/cells/<name>.py           the latest source of the cell (raw: magics as typed)
/outputs/<name>.txt        its latest outputs as text, labelled [stdout], [result], [error]...
/history/executions.md     which cell each execution count `In [n]` was
```

`<name>` is the cell's position (see `notebook_cells`). The files hold exactly the cell's text:
no execution count, which changes with every run, so a second pass of Run All reads the same
files as the first; only `history/executions.md` names counts.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from jupyter_deepagent.jupyter.notebook_fs._output_text import output_pieces, outputs_key
from jupyter_deepagent.jupyter.notebook_fs._saved_notebook import SavedCell
from jupyter_deepagent.jupyter.notebook_fs.notebook_cells import (
    NotebookView,
    history_text,
    index_text,
    notebook_view,
)
from jupyter_deepagent.jupyter.notebook_fs.notebook_files import NotebookFile
from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture

__all__ = ["HISTORY_FILE", "INDEX_FILE", "CellFiles", "cell_files", "missing_cell_reason"]

INDEX_FILE = "/index.md"
HISTORY_FILE = "/history/executions.md"

_NAME = re.compile(r"(\d+)([a-z]*)")


def _known(text: str) -> Callable[[], str]:
    return lambda: text


def _same_name(name: str, stem: str) -> bool:
    """Whether `stem` names the cell `name`, its number written any way (`4` for `04`)."""
    found, wanted = _NAME.fullmatch(name), _NAME.fullmatch(stem)
    if found is None or wanted is None:
        return name == stem
    return (int(found[1]), found[2]) == (int(wanted[1]), wanted[2])


@dataclass(frozen=True)
class CellFiles:
    """The cell files of one call, and the view they were made of."""

    files: dict[str, NotebookFile]
    view: NotebookView

    def alias(self, path: str) -> str | None:
        """The file `path` means when its number is written another way (`4.py` for `04.py`)."""
        folder, _, name = path.rpartition("/")
        stem, dot, extension = name.partition(".")
        if folder not in ("/cells", "/outputs"):
            return None
        for cell in self.view.cells:
            if _same_name(cell.name, stem):
                candidate = f"{folder}/{cell.name}{dot}{extension}"
                return candidate if candidate in self.files else None
        return None


def cell_files(
    capture: OutputCapture, saved: Sequence[SavedCell], running_count: int | None, mount: str
) -> CellFiles:
    """The files of the cells shown (see the module docstring).

    Args:
        capture: The kernel's executions and outputs.
        saved: The saved notebook's cells (`[]` when unknown), for order, names and ids.
        running_count: The execution count of the cell running the agent, if any: the view
            ends there, without that cell's outputs.
        mount: Where the view is mounted (e.g. `/notebook`), for the paths the index shows.
    """
    view = notebook_view(capture.executions(), saved, running_count)
    shown = [cell for cell in view.cells if not cell.running]
    records = {
        record.execution_count: record
        for record in capture.cells([cell.execution_count for cell in shown])
    }
    files: dict[str, NotebookFile] = {}
    with_outputs = set()
    for cell in view.cells:
        files[cell.source_path] = NotebookFile(cell.source_path, _known(cell.source))
        record = records.get(cell.execution_count)
        if record is not None and record.outputs:
            with_outputs.add(cell.name)
            files[cell.outputs_path] = NotebookFile(
                cell.outputs_path,
                record.outputs_text,
                pieces=partial(output_pieces, record.outputs),
                key=partial(outputs_key, record.outputs),
            )
    files[INDEX_FILE] = NotebookFile(INDEX_FILE, partial(index_text, view, mount, with_outputs))
    files[HISTORY_FILE] = NotebookFile(HISTORY_FILE, partial(history_text, view, mount))
    return CellFiles(files, view)


def missing_cell_reason(path: str, cells: CellFiles, mount: str) -> str:
    """Why `path` (under `/cells/` or `/outputs/`) is not a file, and what to read instead.

    The same words whether a cell never ran or lies below the running agent cell, so the
    answer does not change between two passes of Run All.
    """
    folder, _, name = path.rpartition("/")
    stem = name.partition(".")[0]
    index = f"{mount}{INDEX_FILE}"
    for cell in cells.view.cells:
        if folder != "/outputs" or not _same_name(cell.name, stem):
            continue
        if cell.running:
            return f"cell {cell.name} is the agent cell running now: its outputs are not shown"
        source = f"{mount}{cell.source_path}"
        return f"cell {cell.name} ran but produced no output; its source is {source}"
    kind = "cell" if folder == "/cells" else "output of a cell"
    names = [cell.name for cell in cells.view.cells]
    if folder == "/outputs":
        names = [cell.name for cell in cells.view.cells if cell.outputs_path in cells.files]
    shown = ", ".join(names[:12]) + (f" and {len(names) - 12} more" if len(names) > 12 else "")
    there = f"the {folder[1:]} here are {shown}" if names else f"there are no {folder[1:]} yet"
    return f"no {kind} named {stem} in this view ({there}); {index} lists the cells and files"
