"""`/notebook/` is the notebook as the user sees it: one entry per cell, its latest run, named by
position, the same after Run All twice; an agent cell sees the cells above it, not its own output.

In a shell (no cell ids: executions are matched to the saved notebook by source, or numbered in
the order cells first ran) with a scripted `%%agent`, and the pieces (`notebook_view`) directly.
"""

from __future__ import annotations

import nbformat
import pytest
from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.notebook_fs._saved_notebook import SavedCell
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend
from jupyter_deepagent.jupyter.notebook_fs.notebook_cells import notebook_view
from jupyter_deepagent.jupyter.notebook_fs.output_capture import Execution

CELLS = [
    "n = globals().get('n', 0) + 1",
    "print(f'value {111 * n}')",  # 111 on the first pass, 222 on the second
    "%%agent --replay off\nlook around",
    "print('below the agent cell')",
]
LOOK = [
    call("ls", path="/notebook/cells/"),
    call("grep", pattern="value", path="/notebook/outputs/", output_mode="content"),
    call("grep", pattern="below the agent cell", path="/notebook/"),
    call("grep", pattern="agent ·", path="/notebook/"),  # the agent cell's own live lines
    call("read_file", file_path="/notebook/index.md"),
    "looked",
]


def _save(notebook: Notebook) -> None:
    cells = [nbformat.v4.new_markdown_cell("# Warming")]
    cells += [nbformat.v4.new_code_cell(source) for source in CELLS]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook.path)


def _run_all(notebook: Notebook) -> list[str]:
    """Run every cell once; the agent's tool results, as the model received them."""
    notebook.session.configure(model=scripted(*LOOK))
    for source in CELLS:
        assert notebook.run(source).error is None
    messages = notebook.shell.user_ns["_agent"].messages
    return [m.text for m in messages if isinstance(m, ToolMessage)][-(len(LOOK) - 1) :]


@pytest.mark.parametrize("saved", [False, True], ids=["notebook file unknown", "saved notebook"])
def test_run_all_twice_shows_each_cell_once_with_its_latest_output(
    notebook: Notebook, saved: bool
) -> None:
    if saved:
        _save(notebook)
    names = ["02", "03", "04", "05"] if saved else ["01", "02", "03", "04"]
    first = _run_all(notebook)
    view = NotebookBackend(notebook.shell)
    after_first = [info.path for info in view.ls("/cells/")]
    second = _run_all(notebook)

    assert [info.path for info in view.ls("/cells/")] == after_first
    assert after_first == [f"/cells/{name}.py" for name in names]
    assert [m.line for m in view.grep("value", "/outputs/")] == ["value 222"]  # not 111
    assert view.read(f"/outputs/{names[1]}.txt").lines == ["[stdout]", "value 222"]
    assert "- In [2]: cell " + names[1] + " (replaced by In [6])" in view.read(
        "/history/executions.md"
    ).lines

    listing, values, below, own, index = second
    assert listing == first[0]  # the agent's ls: the same names and sizes on both passes
    for name in names[:3]:
        assert f"/notebook/cells/{name}.py" in listing
    assert f"/notebook/cells/{names[3]}.py" not in listing  # the cell below the agent's
    assert "value 111" in first[1] and "value 222" in values and "111" not in values
    assert "No matches" in below and "No matches" in own  # /saved/ too: it ends above the cell
    assert index == first[4]
    assert f"/notebook/cells/{names[2]}.py (this cell, running: its outputs are not" in index
    assert ("cell (no id)" in index) is not saved  # source-matched cells have the saved ids


def test_the_saved_file_ends_above_the_agent_cell_and_a_search_of_the_view_leaves_it_out(
    notebook: Notebook,
) -> None:
    # saved by an earlier session: every cell with the outputs of its run then
    cells = [nbformat.v4.new_markdown_cell("# Warming")]
    cells += [nbformat.v4.new_code_cell(source) for source in CELLS]
    said = ["", "value 999", "agent · old run", "below the agent cell"]
    for cell, text in zip(cells[1:], said, strict=True):
        if text:
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text + "\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook.path)
    notebook.session.configure(
        model=scripted(
            call("ls", path="/notebook/saved/cells/"),
            call("grep", pattern="below the agent cell", path="/notebook/saved/"),
            "looked",
        )
    )
    for source in CELLS:
        assert notebook.run(source).error is None
    messages = notebook.shell.user_ns["_agent"].messages
    saved_cells, below = [m.text for m in messages if isinstance(m, ToolMessage)]

    assert "/notebook/saved/cells/3.py" in saved_cells  # the cells above the agent's
    assert "4.py" not in saved_cells and "5.py" not in saved_cells  # its own, and below it
    assert "No matches" in below
    view = NotebookBackend(notebook.shell)  # after the run: the whole saved file again
    assert [m.line for m in view.grep("value 9", "/")] == []  # the run shows 111, not the save
    assert [m.line for m in view.grep("value 9", "/saved/")] == ["value 999"]  # when asked for


def _saved(*sources: str, ids: bool = True) -> list[SavedCell]:
    return [
        SavedCell(i, "code", source, cell_id=f"id{i}" if ids else None)
        for i, source in enumerate(sources, start=1)
    ]


def _names(executions: list[Execution], saved: list[SavedCell]) -> list[tuple[str, int]]:
    view = notebook_view(executions, saved, None)
    return [(cell.name, cell.execution_count) for cell in view.cells]


def test_identical_sources_match_the_saved_cells_in_order_pass_after_pass() -> None:
    saved = _saved("import x", "df", "df = df * 2", "df")
    run_all = ["import x", "df", "df = df * 2", "df"]
    executions = [Execution(n, src) for n, src in enumerate(run_all * 2, start=1)]
    assert _names(executions, saved) == [("01", 5), ("02", 6), ("03", 7), ("04", 8)]
    again = [*executions, Execution(9, "df")]  # the first `df` re-run alone
    assert _names(again, saved) == [("01", 5), ("02", 9), ("03", 7), ("04", 8)]


def test_cells_ids_place_cells_and_unsaved_ones_follow_the_cell_run_before_them() -> None:
    saved = _saved("a", "b", "c")
    executions = [
        Execution(1, "a", "id1"),
        Execution(2, "new, not saved yet", "fresh"),
        Execution(3, "papermill's parameters"),  # no id, no saved cell of this text
        Execution(4, "c edited", "id3"),
        Execution(5, "a", "id1"),
    ]
    assert _names(executions, saved) == [("01", 5), ("01a", 2), ("01b", 3), ("03", 4)]


def test_the_running_cell_ends_the_view() -> None:
    saved = _saved("a", "%%agent\nq", "b")
    executions = [Execution(n, s) for n, s in enumerate(["a", "%%agent\nq", "b", "a"], 1)]
    running = Execution(5, "%%agent\nq")
    view = notebook_view([*executions, running], saved, running_count=5)
    assert [(c.name, c.running) for c in view.cells] == [("01", False), ("02", True)]
    assert view.running is not None and view.running.counts == (2, 5)
