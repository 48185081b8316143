"""A kernel nobody tells its notebook (papermill, nbconvert, nbclient) finds it by the cell it runs
among the notebooks of its working folder; when it cannot tell, it says so and runs on a thread of
its own, unrecorded."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_shell import Notebook, _with_memory_history, call, scripted

from jupyter_deepagent.jupyter.session.notebook_file import NOTEBOOK_ENV
from jupyter_deepagent.jupyter.session.notebook_finder import ExecutingCell, NotebookFinder
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


def test_papermills_output_leads_to_its_input_in_the_folders_searched_only(
    tmp_path: Path,
) -> None:
    source = _notebook(tmp_path / "quickstart.ipynb", "x = 1", ASK)
    papermill = {"input_path": "quickstart.ipynb", "output_path": "run-1.ipynb"}
    _notebook(tmp_path / "run-1.ipynb", "# Parameters\nx = 2", "x = 1", ASK, papermill=papermill)
    # `papermill ../quickstart.ipynb run-2.ipynb` in runs/: the input is in another folder
    runs = tmp_path / "runs"
    output = _notebook(runs / "run-2.ipynb", ASK, papermill={"input_path": "../quickstart.ipynb"})
    elsewhere = _notebook(tmp_path / "away" / "a.ipynb", ASK)
    absolute = _notebook(runs / "run-3.ipynb", ASK, papermill={"input_path": str(elsewhere)})

    here = NotebookFinder().find([tmp_path], ExecutingCell(ASK))
    from_runs = NotebookFinder().find([runs, tmp_path], ExecutingCell(ASK), ["", "x = 1"])
    output.unlink()
    not_searched = NotebookFinder().find([runs], ExecutingCell(ASK))
    absolute.unlink()
    up_and_out = _notebook(
        runs / "run-2.ipynb", ASK, papermill={"input_path": "../quickstart.ipynb"}
    )
    leaving = NotebookFinder().find([runs], ExecutingCell(ASK))

    assert here.path == source.resolve()
    assert from_runs.path == source.resolve()
    assert not_searched.path == absolute.resolve()  # not the absolute path elsewhere
    assert leaving.path == up_and_out.resolve()  # not `..` out of the folders searched


def test_copies_of_a_cell_are_told_apart_by_the_cells_run_before(tmp_path: Path) -> None:
    first = _notebook(tmp_path / "01_first.ipynb", "%load_ext jupyter_deepagent", "a = 1", ASK)
    _notebook(tmp_path / "02_second.ipynb", "%load_ext jupyter_deepagent", "b = 2", ASK)
    copy = _notebook(tmp_path / "01_first copy.ipynb", "%load_ext jupyter_deepagent", "a = 1", ASK)
    history = ["", "%load_ext jupyter_deepagent", "a = 1", ASK]

    undecided = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)
    log_path_for(first).write_text("")
    still = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)

    assert undecided.path is None and "several notebooks" in undecided.how
    assert sorted(undecided.candidates) == sorted([first.resolve(), copy.resolve()])
    assert still.path is None  # a copy, not an output of it: its log does not decide


def test_a_new_notebook_is_not_taken_for_an_older_one_with_a_log(tmp_path: Path) -> None:
    cells = ("%load_ext jupyter_deepagent", "%%agent\nSummarize the data")
    old = _notebook(tmp_path / "old.ipynb", *cells)
    log_path_for(old).write_text("")
    _notebook(tmp_path / "new.ipynb", *cells)

    found = NotebookFinder().find([tmp_path], ExecutingCell(cells[1]), ["", *cells])

    assert found.path is None and "several notebooks" in found.how


@pytest.mark.parametrize("output", ["nbconvert", "papermill"])
def test_a_log_decides_only_between_a_notebook_and_its_own_output(
    tmp_path: Path, output: str
) -> None:
    cells = ("%load_ext jupyter_deepagent", ASK)
    source = _notebook(tmp_path / "quickstart.ipynb", *cells)
    if output == "nbconvert":
        _notebook(tmp_path / "quickstart.nbconvert.ipynb", *cells)
    else:  # papermill's output leads to its input, log or none
        _notebook(tmp_path / "run.ipynb", *cells, papermill={"input_path": "quickstart.ipynb"})
    history = ["", *cells]

    without_log = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)
    log_path_for(source).write_text("")
    with_log = NotebookFinder().find([tmp_path], ExecutingCell(ASK), history)

    assert (without_log.path is None) == (output == "nbconvert")
    assert with_log.path == source.resolve()


def test_a_notebook_the_agent_wrote_is_no_candidate(tmp_path: Path) -> None:
    from jupyter_deepagent.project.secrets.masked_text import AgentTexts, file_identity

    forged = _notebook(tmp_path / "x.ipynb", ASK)
    written = AgentTexts()
    written.wrote(file_identity(forged), forged.read_text())

    def agent_wrote(path: Path, text: str) -> bool:
        return written.is_own(file_identity(path), text)

    found = NotebookFinder(agent_wrote).find([tmp_path], ExecutingCell(ASK))
    unguarded = NotebookFinder().find([tmp_path], ExecutingCell(ASK))

    assert found.path is None and "no notebook in" in found.how
    assert unguarded.path == forged.resolve()


def test_the_frontend_names_the_notebook_before_the_environment(tmp_path: Path) -> None:
    from jupyter_deepagent.jupyter.session.notebook_file import explicit_notebook

    environ = {NOTEBOOK_ENV: "from-env.ipynb"}
    frontends = [(None, "named with `%agent notebook`"), (None, "given to the session")]

    lab = explicit_notebook([*frontends, ("lab.ipynb", "JPY_SESSION_NAME")], environ)
    vscode = explicit_notebook(
        [*frontends, (None, "JPY_SESSION_NAME"), ("code.ipynb", "VS Code")], environ
    )
    silent = explicit_notebook([*frontends, (None, "JPY_SESSION_NAME")], environ)
    magic = explicit_notebook([("named.ipynb", "named with `%agent notebook`")], environ)

    assert lab is not None and (lab.path, lab.how) == (Path("lab.ipynb"), "JPY_SESSION_NAME")
    assert vscode is not None and vscode.path == Path("code.ipynb")
    assert silent is not None and (silent.path, silent.how) == (
        Path("from-env.ipynb"),
        NOTEBOOK_ENV,
    )
    assert magic is not None and magic.path == Path("named.ipynb")


def test_run_gives_the_kernel_its_notebook_and_not_the_environments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbclient

    from jupyter_deepagent.cli.headless import run_notebook

    path = _notebook(tmp_path / "mine.ipynb", "x = 1")
    monkeypatch.setenv(NOTEBOOK_ENV, str(tmp_path / "other.ipynb"))
    seen: dict[str, str] = {}
    monkeypatch.setattr(
        nbclient.NotebookClient, "execute", lambda self, env=None, **_: seen.update(env or {})
    )

    run_notebook(path, replay="auto", progress=False)

    assert seen["JPY_SESSION_NAME"] == str(path.resolve())
    assert NOTEBOOK_ENV not in seen


def test_a_folder_of_many_notebooks_is_read_once_then_only_stat(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from jupyter_deepagent.jupyter.session import notebook_finder

    for number in range(200):
        _notebook(tmp_path / f"n{number:03}.ipynb", f"%%agent\nquestion {number}", "y = 1")
    read: list[str] = []
    real = notebook_finder._read_cells
    monkeypatch.setattr(
        notebook_finder,
        "_read_cells",
        lambda path, *rest: read.append(path.name) or real(path, *rest),
    )
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


class Kernel(Notebook):
    """An IPython shell with the extension loaded (as a cell), in a folder, without
    `__session__`: nobody told it its notebook."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)

    def _start(self) -> InteractiveShell:
        InteractiveShell.clear_instance()
        self.shell = _with_memory_history(InteractiveShell.instance)
        self.run("%load_ext jupyter_deepagent")
        return self.shell


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Kernel]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", NOTEBOOK_ENV, "JUPYTER_DEEPAGENT_REPLAY"):
        monkeypatch.delenv(name, raising=False)
    started = Kernel(tmp_path)
    yield started
    started.stop()


def test_a_kernel_keeps_the_notebook_found_while_it_holds_the_cells_run(
    kernel: Kernel, tmp_path: Path
) -> None:
    mine = _notebook(
        tmp_path / "glaciers.ipynb", "%load_ext jupyter_deepagent", ASK, "%%agent\nNext"
    )
    other = _notebook(tmp_path / "other.ipynb", "%load_ext jupyter_deepagent", "%%agent\nElsewhere")
    kernel.session.configure(model=scripted("Svalbard.", "Next.", "Elsewhere."))

    cell = kernel.run(ASK)
    kept = kernel.run("%%agent\nNext")
    moved = kernel.run("%%agent\nElsewhere")  # in other.ipynb alone: looked up again

    assert cell.error is None and "thread glaciers ·" in cell.live_text
    assert "thread glaciers ·" in kept.live_text and "not in" not in kept.live_text
    assert moved.error is None and "thread other ·" in moved.live_text
    assert "this cell is not in glaciers.ipynb" in moved.live_text
    assert "runs other.ipynb now" in moved.live_text
    assert kernel.session.notebook_path == other.resolve()
    assert len(log_path_for(mine).read_text().splitlines()) == 2
    assert len(log_path_for(other).read_text().splitlines()) == 1


def test_a_cell_the_kept_notebook_no_longer_holds_cannot_be_told(
    kernel: Kernel, tmp_path: Path
) -> None:
    mine = _notebook(tmp_path / "glaciers.ipynb", "%load_ext jupyter_deepagent", ASK)
    kernel.session.configure(model=scripted("Svalbard.", "unrecorded"))

    kernel.run(ASK)
    kernel.run("x = 1")  # not in the notebook either, but no agent cell: the notebook is kept
    kept = kernel.session.notebook_path
    cell = kernel.run("%%agent\nTyped, never saved")

    assert kept == mine.resolve() and cell.error is None
    assert "glaciers.ipynb, the notebook found before, does not hold this cell" in cell.live_text
    assert f"thread {kernel.session.notebook.own_thread} ·" in cell.live_text
    assert len(log_path_for(mine).read_text().splitlines()) == 1


def test_a_notebook_and_log_the_agent_writes_are_not_adopted(
    kernel: Kernel, tmp_path: Path
) -> None:
    import nbformat as nbf

    later = "%%agent\nNext"
    forged = nbf.writes(nbf.v4.new_notebook(cells=[nbf.v4.new_code_cell(later)]))
    kernel.session.configure(
        model=scripted(
            call("write_file", file_path="/workspace/x.ipynb", content=forged),
            call("write_file", file_path="/workspace/x.ipynb.agentlog.jsonl", content="{}\n"),
            "written",
            "live",
        )
    )

    kernel.run(ASK)
    refused = not (tmp_path / "x.ipynb.agentlog.jsonl").exists()  # a protected path
    cell = kernel.run(later)

    assert (tmp_path / "x.ipynb").read_text() == forged and refused
    assert cell.error is None and kernel.session.notebook_path is None
    assert "still unknown" in cell.live_text
    assert not (tmp_path / "x.ipynb.agentlog.jsonl").exists()


def test_a_thread_chosen_while_the_notebook_is_unknown_is_not_called_the_kernels_own(
    kernel: Kernel,
) -> None:
    kernel.session.configure(model=scripted("one"))

    cell = kernel.run("%%agent -t shared-notes\nnot in any notebook")

    assert "cannot tell which notebook" in cell.live_text
    assert "on thread shared-notes, as chosen" in cell.live_text
    assert "this kernel's own" not in cell.live_text


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
