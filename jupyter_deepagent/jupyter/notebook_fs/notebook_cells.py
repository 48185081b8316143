"""The notebook as the user sees it: each cell run in this kernel once, at its place, latest run.

Executions (`OutputCapture.executions`) become cells: an execution belongs to the cell whose id
its execute request carried (JupyterLab, the headless runner); without an id (nbclient,
papermill, nbconvert, terminal IPython) to the saved notebook's code cell of the same source (the
first one after the previous match not matched yet; a new pass of Run All starts again at the
top), else to the cell of that exact text. A cell holds its latest run only: a re-run replaces.

Cells are ordered as in the saved notebook and named by their position there (`04`, as
`/saved/cells/4.py`); a cell the saved file does not hold yet (a new, unsaved cell; papermill's
injected parameters) follows the saved cell run before it, with a letter (`04a`). When no
executed cell is in the saved notebook (the file is not known), cells are numbered in the order
they first ran. Names therefore stay the same across Run All twice and across restarts.

While a cell runs the agent, the view ends at that cell: cells below it are left out (they would
differ between the first and the second pass of Run All), and so are its own outputs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from jupyter_deepagent.jupyter.notebook_fs._saved_notebook import SavedCell
from jupyter_deepagent.jupyter.notebook_fs.output_capture import Execution

__all__ = ["NotebookCell", "NotebookView", "history_text", "index_text", "notebook_view"]


@dataclass(frozen=True)
class NotebookCell:
    """One cell of the view: its name (position), id, latest run and every execution count.

    Attributes:
        name: The file stem, e.g. `04` (`/cells/04.py`, `/outputs/04.txt`).
        cell_id: The notebook cell's id when known (sent by the frontend or saved in the file).
        saved_index: Its 1-based position in the saved notebook, None when not saved there.
        source: The source of its latest run.
        counts: The execution counts of its runs in this kernel, oldest first.
        running: True for the cell running the agent now (its outputs are not shown).
    """

    name: str
    cell_id: str | None
    saved_index: int | None
    source: str
    counts: tuple[int, ...]
    running: bool = False

    @property
    def execution_count(self) -> int:
        """The execution count of its latest run (`In [n]`)."""
        return self.counts[-1]

    @property
    def source_path(self) -> str:
        """`/cells/<name>.py`."""
        return f"/cells/{self.name}.py"

    @property
    def outputs_path(self) -> str:
        """`/outputs/<name>.txt`."""
        return f"/outputs/{self.name}.txt"


@dataclass(frozen=True)
class NotebookView:
    """The cells shown, in notebook order (the running cell, if any, last)."""

    cells: list[NotebookCell] = field(default_factory=list)
    by_saved_position: bool = False

    @property
    def running(self) -> NotebookCell | None:
        """The cell running the agent now, if it is one of these."""
        return self.cells[-1] if self.cells and self.cells[-1].running else None


@dataclass
class _Group:
    key: str
    cell_id: str | None
    saved_index: int | None
    anchor: int  # the saved position of the cell run before this one first ran (0: none)
    first: int
    executions: list[Execution] = field(default_factory=list)


def _normal(source: str) -> str:
    return source.replace("\r\n", "\n").rstrip()


class _Matcher:
    """Which saved cell each execution (in count order) is, by id or else by source."""

    def __init__(self, saved: Sequence[SavedCell]) -> None:
        code = [cell for cell in saved if cell.cell_type == "code"]
        self._by_id = {cell.cell_id: cell for cell in code if cell.cell_id}
        self._by_source: dict[str, list[SavedCell]] = {}
        for cell in code:
            self._by_source.setdefault(_normal(cell.source), []).append(cell)
        self._matched: set[int] = set()
        self.previous = 0  # the saved position of the last execution matched

    def match(self, execution: Execution) -> SavedCell | None:
        if execution.cell_id and (self._by_id or not self._by_source):
            found = self._by_id.get(execution.cell_id)
        else:  # no id sent, or a notebook saved without ids: by source
            found = self._by_source_text(_normal(execution.source))
        if found is not None:
            self._matched.add(found.index)
            self.previous = found.index
        return found

    def _by_source_text(self, source: str) -> SavedCell | None:
        candidates = self._by_source.get(source, [])
        after = [cell for cell in candidates if cell.index > self.previous]
        for pool in (after, candidates):  # after the previous match; else a new pass begins
            fresh = [cell for cell in pool if cell.index not in self._matched]
            if fresh or pool:
                return (fresh or pool)[0]
        return None


def _groups(executions: Iterable[Execution], saved: Sequence[SavedCell]) -> list[_Group]:
    matcher = _Matcher(saved)
    groups: dict[str, _Group] = {}
    for execution in executions:
        anchor = matcher.previous
        found = matcher.match(execution)
        if found is not None:
            key = f"id:{found.cell_id}" if found.cell_id else f"saved:{found.index}"
            cell_id, index = found.cell_id, found.index
        elif execution.cell_id:
            key, cell_id, index = f"id:{execution.cell_id}", execution.cell_id, None
        else:
            key, cell_id, index = f"text:{_normal(execution.source)}", None, None
        group = groups.get(key)
        if group is None:
            group = groups[key] = _Group(key, cell_id, index, anchor, execution.execution_count)
        group.executions.append(execution)
    return list(groups.values())


def _suffix(k: int) -> str:
    """`a`..`y`, then `za`..`zy`, `zza`...: letters that sort in order."""
    return "z" * (k // 25) + "abcdefghijklmnopqrstuvwxy"[k % 25]


def _named(groups: list[_Group], saved_count: int) -> tuple[list[tuple[str, _Group]], bool]:
    by_position = any(group.saved_index is not None for group in groups)
    if not by_position:
        ordered = sorted(groups, key=lambda group: group.first)
        width = max(2, len(str(len(ordered))))
        return [(str(n).zfill(width), g) for n, g in enumerate(ordered, start=1)], False

    def order(group: _Group) -> tuple[int, int, int]:
        if group.saved_index is not None:
            return group.saved_index, 0, group.first
        return group.anchor, 1, group.first

    width = max(2, len(str(saved_count)))
    named, letters = [], 0
    for group in sorted(groups, key=order):
        if group.saved_index is not None:
            named.append((str(group.saved_index).zfill(width), group))
            letters = 0
            continue
        if named and named[-1][1].saved_index is None and named[-1][1].anchor != group.anchor:
            letters = 0
        named.append((str(group.anchor).zfill(width) + _suffix(letters), group))
        letters += 1
    return named, True


def notebook_view(
    executions: Iterable[Execution], saved: Sequence[SavedCell], running_count: int | None
) -> NotebookView:
    """The cells shown: each cell's latest run, in notebook order, up to the running cell.

    Args:
        executions: Every execution of this kernel, by execution count.
        saved: The saved notebook's cells (`[]` when it is not known).
        running_count: The execution count of the cell running the agent, if any.

    Returns:
        The view; with `running_count`, it ends at that cell (`NotebookView.running`).
    """
    named, by_position = _named(_groups(executions, saved), len(saved))
    cells = []
    for name, group in named:
        counts = tuple(execution.execution_count for execution in group.executions)
        running = running_count is not None and running_count in counts
        source = group.executions[-1].source
        cells.append(NotebookCell(name, group.cell_id, group.saved_index, source, counts, running))
        if running:
            break  # the cells below the running one are left out
    return NotebookView(cells, by_position)


def _first_line(source: str) -> str:
    return next((line for line in source.splitlines() if line.strip()), "")[:80]


def index_text(view: NotebookView, mount: str, with_outputs: set[str]) -> str:
    """The `/index.md` text: one line per cell shown, with its id, files and first line.

    Execution counts are left out (they change with every run, and a second pass of Run All
    must read the same index); `history_text` maps them to cells.

    Args:
        view: The cells shown.
        mount: Where the view is mounted (e.g. `/notebook`), prefixed to the paths shown.
        with_outputs: The names of the cells that have outputs.

    Returns:
        Markdown text.
    """
    how = (
        "Names are positions in the saved notebook (as in saved/cells/); a letter marks a cell "
        "not saved there yet, run after the one it names."
        if view.by_saved_position
        else "The notebook file is not known: cells are numbered in the order they first ran."
    )
    lines = [
        "# Cells run in this kernel, in notebook order",
        "",
        "Each cell's latest source and outputs; a re-run replaces them. " + how,
    ]
    if view.running is not None:
        lines.append("The view ends at the running agent cell: cells below it are left out.")
    lines.append("")
    for cell in view.cells:
        what = f"cell {cell.cell_id}" if cell.cell_id else "cell (no id)"
        entry = f"- {cell.name}: {what} -> {mount}{cell.source_path}"
        if cell.running:
            entry += " (this cell, running: its outputs are not shown)"
        elif cell.name in with_outputs:
            entry += f", outputs {mount}{cell.outputs_path}"
        first = _first_line(cell.source)
        lines.append(f"{entry}  | {first}" if first else entry)
    if not view.cells:
        lines.append("(no cell has run yet)")
    return "\n".join(lines) + "\n"


def history_text(view: NotebookView, mount: str) -> str:
    """The `/history/executions.md` text: which cell each execution count (`In [n]`) was."""
    runs = sorted((count, cell) for cell in view.cells for count in cell.counts)
    lines = [
        "# Executions in this kernel, oldest first",
        "",
        f"`In [n]` is the execution count Jupyter shows beside a cell. Only each cell's latest "
        f"run is kept, under {mount}/cells/ and {mount}/outputs/; earlier runs are not.",
        "",
    ]
    for count, cell in runs:
        latest = cell.execution_count
        later = "" if count == latest else f" (replaced by In [{latest}])"
        lines.append(f"- In [{count}]: cell {cell.name}{later}")
    if not runs:
        lines.append("(nothing has run yet)")
    return "\n".join(lines) + "\n"
