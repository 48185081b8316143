"""How the command line names a notebook's cells: as JupyterLab shows them, by execution count
(`In [4]`), and by plain position only where a cell has not run (`cell 7 of 12, not run`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = ["cell_label", "saved_labels"]


def cell_label(position: int, total: int, execution_count: object) -> str:
    """A cell as Lab shows it: `In [n]` once it ran, else `cell 7 of 12, not run`.

    Args:
        position: The cell's place among all the notebook's cells (0-based).
        total: How many cells the notebook has.
        execution_count: The cell's execution count (None, or 0, when it has not run).
    """
    if isinstance(execution_count, int) and execution_count > 0:
        return f"In [{execution_count}]"
    return f"cell {position + 1} of {total}, not run"


def saved_labels(notebook: NotebookNode) -> list[str]:
    """Each cell's label, by position, from the execution counts saved in the notebook file
    (what Lab shows when it opens it)."""
    total = len(notebook.cells)
    return [
        cell_label(position, total, cell.get("execution_count"))
        for position, cell in enumerate(notebook.cells)
    ]
