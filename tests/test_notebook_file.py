"""A kernel nobody tells its notebook (papermill, nbconvert, nbclient) finds it by the cell it runs
among the notebooks of its working folder; when it cannot tell, it says so and runs on a thread of
its own, unrecorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from notebook_shell import CellRun, _forget, _with_memory_history, scripted

from jupyter_deepagent.jupyter.session.notebook_file import (
    NOTEBOOK_ENV,
    ExecutingCell,
    NotebookFinder,
)
from jupyter_deepagent.trace.research_log.log import log_path_for

ASK = "%%agent\nWhich station warms fastest?"


def _notebook(path: Path, *sources: str, ids: tuple[str, ...] = (), **metadata: object) -> Path:
    notebook = nbformat.v4.new_notebook(metadata=metadata)
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    for cell, cell_id in zip(notebook.cells, ids, strict=False):
        cell.id = cell_id
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)
    return path


def test_the_notebook_holding_the_cell_is_found_and_checkpoints_are_not_candidates(
    tmp_path: Path,
) -> None:
    mine = _notebook(tmp_path / "glaciers.ipynb", "import pandas", ASK + "\n")
    _notebook(tmp_path / "other.ipynb", "%%agent\nSomething else")
    _notebook(tmp_path / ".ipynb_checkpoints" / "glaciers-checkpoint.ipynb", ASK)
    (tmp_path / "broken.ipynb").write_text("{not json")

    found = NotebookFinder().find([tmp_path], ExecutingCell(ASK))
    nowhere = NotebookFinder().find([tmp_path], ExecutingCell("%%agent\nnot in any"))

    assert found.path == mine.resolve()
    assert nowhere.path is None and "no notebook in" in nowhere.how


def test_a_cell_id_wins_over_the_same_source_elsewhere(tmp_path: Path) -> None:
    _notebook(tmp_path / "a.ipynb", ASK, ids=("cell-a",))
    mine = _notebook(tmp_path / "b.ipynb", ASK, ids=("cell-b",))

    found = NotebookFinder().find([tmp_path], ExecutingCell(ASK, cell_id="cell-b"))

    assert found.path == mine.resolve()


def test_papermills_output_leads_to_its_input_where_the_log_lives(tmp_path: Path) -> None:
    source = _notebook(tmp_path / "quickstart.ipynb", "x = 1", ASK)
    papermill = {"input_path": "quickstart.ipynb", "output_path": "run-1.ipynb"}
    _notebook(tmp_path / "run-1.ipynb", "# Parameters\nx = 2", "x = 1", ASK, papermill=papermill)
    # `papermill ../quickstart.ipynb run-2.ipynb` in runs/: the input is in another folder
    elsewhere = {"input_path": "../quickstart.ipynb"}
    _notebook(tmp_path / "runs" / "run-2.ipynb", ASK, papermill=elsewhere)

    here = NotebookFinder().find([tmp_path], ExecutingCell(ASK))
    from_runs = NotebookFinder().find([tmp_path / "runs"], ExecutingCell(ASK))

    assert here.path == source.resolve()
    assert from_runs.path == source.resolve()


def test_copies_of_a_cell_are_told_apart_by_the_cells_run_before_then_by_the_log(
    tmp_path: Path,
) -> None:
    first = _notebook(tmp_path / "01_first.ipynb", "%load_ext jupyter_deepagent", "a = 1", ASK)
    _notebook(tmp_path / "02_second.ipynb", "%load_ext jupyter_deepagent", "b = 2", ASK)
    copy = _notebook(tmp_path / "01_first.nbconvert.ipynb", "%load_ext jupyter_deepagent",
                     "a = 1", ASK)
    history = ["", "%load_ext jupyter_deepagent", "a = 1", ASK]

    undecided = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)
    log_path_for(first).write_text("")
    decided = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)

    assert undecided.path is None and "several notebooks" in undecided.how
    assert sorted(undecided.candidates) == sorted([first.resolve(), copy.resolve()])
    assert decided.path == first.resolve()


def test_a_folder_of_many_notebooks_is_read_once_then_only_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_deepagent.jupyter.session import notebook_file

    for number in range(200):
        _notebook(tmp_path / f"n{number:03}.ipynb", f"%%agent\nquestion {number}", "y = 1")
    read: list[str] = []
    real = notebook_file._read_cells
    monkeypatch.setattr(notebook_file, "_read_cells",
                        lambda path, stamp: read.append(path.name) or real(path, stamp))
    finder = NotebookFinder()
    cell = ExecutingCell("%%agent\nquestion 150")

    first = finder.find([tmp_path], cell)
    first_reads = len(read)
    again = finder.find([tmp_path], cell)
    again_reads = len(read) - first_reads
    _notebook(tmp_path / "n150.ipynb", "%%agent\nquestion 150 edited")
    edited = finder.find([tmp_path], cell)

    assert first.path == again.path == (tmp_path / "n150.ipynb").resolve()
    assert (first_reads, again_reads) == (200, 0)
    assert edited.path is None and read[-1] == "n150.ipynb"  # a changed file is read again
    assert len(read) == 201


# -- in a kernel nobody told its notebook -----------------------------------------------------------


class Kernel:
    """An IPython shell with the extension loaded, in a folder, without `__session__`."""

    def __init__(self) -> None:
        InteractiveShell.clear_instance()
        self.shell = _with_memory_history(InteractiveShell.instance)
        self.run("%load_ext jupyter_deepagent")

    @property
    def session(self) -> Any:
        from jupyter_deepagent.jupyter.magic.magics import get_session

        return get_session(self.shell)

    def run(self, source: str) -> CellRun:
        with capture_output() as captured:
            result = self.shell.run_cell(source, store_history=True)
        return CellRun(result, captured.stdout, captured.stderr, captured.outputs)

    def stop(self) -> None:
        self.shell.run_line_magic("unload_ext", "jupyter_deepagent")
        _forget(self.shell)
        InteractiveShell.clear_instance()


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", NOTEBOOK_ENV, "JUPYTER_DEEPAGENT_REPLAY"):
        monkeypatch.delenv(name, raising=False)
    started = Kernel()
    yield started
    started.stop()


def test_a_kernel_finds_its_notebook_by_the_cell_and_keeps_it(kernel: Kernel, tmp_path: Path) -> None:
    mine = _notebook(tmp_path / "glaciers.ipynb", "%load_ext jupyter_deepagent", ASK, "%%agent\nNext")
    _notebook(tmp_path / "other.ipynb", "%load_ext jupyter_deepagent", "%%agent\nElsewhere")
    kernel.session.configure(model=scripted("Svalbard.", "Next."))

    cell = kernel.run(ASK)
    mine.rename(tmp_path / "moved.ipynb")  # found once: a kernel runs one notebook
    kernel.run("%%agent\nNext")

    assert cell.error is None and "thread glaciers ·" in cell.live_text
    assert kernel.session.notebook_path == mine.resolve()
    records = log_path_for(mine).read_text().splitlines()
    assert len(records) == 2


def test_a_kernel_that_cannot_tell_says_so_once_and_keeps_to_a_thread_of_its_own(
    kernel: Kernel, tmp_path: Path
) -> None:
    _notebook(tmp_path / "a.ipynb", ASK)
    _notebook(tmp_path / "b.ipynb", ASK)
    kernel.session.configure(model=scripted("one", "two"))

    first = kernel.run(ASK)
    second = kernel.run("%%agent\nnot in any notebook")
    thread = kernel.session.thread

    assert first.error is None and second.error is None
    assert "cannot tell which notebook it runs (several notebooks in" in first.live_text
    assert "a.ipynb, b.ipynb" in first.live_text
    assert "%agent notebook PATH" in first.live_text and NOTEBOOK_ENV in first.live_text
    assert "cannot tell" not in second.live_text and "still unknown" in second.live_text
    assert thread.startswith("kernel-") and f"thread {thread} ·" in first.live_text
    assert not list(tmp_path.glob("*.agentlog.jsonl"))
    shown = kernel.run("%agent notebook").markdown[0]
    assert "cannot tell" in shown and f"`{thread}`" in shown


def test_strict_replay_refuses_a_kernel_that_cannot_tell(
    kernel: Kernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DEEPAGENT_REPLAY", "strict")
    kernel.session.configure(model=scripted("never asked"))

    cell = kernel.run(ASK)

    assert type(cell.error).__name__ == "UsageError"
    assert "strict replay needs the notebook's research log" in str(cell.error)
    assert kernel.session.last_trace is None


def test_the_notebook_is_named_with_the_magic_or_the_environment(
    kernel: Kernel, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    named = _notebook(tmp_path / "sub" / "named.ipynb", "x = 1")
    _notebook(tmp_path / "from-env.ipynb", "x = 1")

    missing = kernel.run("%agent notebook nowhere.ipynb")
    monkeypatch.setenv(NOTEBOOK_ENV, "from-env.ipynb")
    by_env = kernel.session.default_thread
    shown = kernel.run("%agent notebook sub/named.ipynb").markdown[0]

    assert "does not exist" in str(missing.error)
    assert by_env == "from-env"
    assert f"`{named.resolve()}` (named with `%agent notebook`)" in shown
    assert "named.ipynb.agentlog.jsonl" in shown and "thread `named`" in shown
    assert kernel.session.notebook_path == named.resolve()
