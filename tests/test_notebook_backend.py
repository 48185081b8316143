"""NotebookBackend: the live notebook (cells, outputs, variables, saved cells) as read-only."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from notebook_shell import shell  # noqa: F401

from jupyter_deepagent._exceptions import BackendError, FileNotFound, PermissionDenied
from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend
from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture
from jupyter_deepagent.jupyter.notebook_fs.variable_files import describe_variable, render_variable


def run(shell: InteractiveShell, source: str) -> int:
    """Run a cell as the user would and return its execution count."""
    count = shell.execution_count
    shell.run_cell(source, store_history=True)
    return count


@pytest.fixture
def notebook(shell: InteractiveShell) -> tuple[NotebookBackend, dict[str, int]]:
    """A backend over a shell that ran the cells a researcher typically runs."""
    counts = {
        "df": run(shell, 'import pandas as pd\ndf = pd.DataFrame({"a": [1, 2]})\ndf'),
        "print": run(shell, 'print("hello")'),
        "error": run(shell, "1/0"),
        "dict": run(shell, 'x = {"k": [1, 2]}'),
        "magic": run(shell, "%time total = 6 * 7"),
    }
    return NotebookBackend(shell), counts


def test_cells_are_listed_once_each_in_the_order_they_first_ran(notebook) -> None:
    backend, _ = notebook
    listed = [info.path for info in backend.ls("/cells")]
    assert listed == [f"/cells/0{n}.py" for n in range(1, 6)]  # no notebook file: run order
    top = {info.path for info in backend.ls("/")}
    assert top >= {"/cells/", "/outputs/", "/vars/", "/history/", "/index.md"}
    index = backend.read("/index.md").lines
    assert (
        "- 02: cell (no id) -> /notebook/cells/02.py, outputs /notebook/outputs/02.txt  | "
        'print("hello")' in index
    )


def test_a_cell_file_holds_its_source_as_typed(notebook) -> None:
    backend, counts = notebook
    source = backend.read(f"/cells/{counts['df']}.py").lines
    assert source == ["import pandas as pd", 'df = pd.DataFrame({"a": [1, 2]})', "df"]
    assert backend.read(f"/cells/{counts['magic']}.py").lines == ["%time total = 6 * 7"]


def test_outputs_show_results_stdout_and_errors_right_after_the_cell_runs(notebook) -> None:
    backend, counts = notebook
    assert backend.read(f"/outputs/{counts['df']}.txt").lines == [
        "[result]",
        "   a",
        "0  1",
        "1  2",
    ]
    assert backend.read(f"/outputs/{counts['print']}.txt").lines == ["[stdout]", "hello"]
    error = "\n".join(backend.read(f"/outputs/{counts['error']}.txt").lines)
    assert error.startswith("[error]\nZeroDivisionError: division by zero")
    assert "Traceback (most recent call last)" in error
    assert "\x1b" not in error
    assert f"/outputs/{counts['dict']}.txt" not in {i.path for i in backend.ls("/outputs")}


def test_a_dataframe_reads_as_csv_and_a_dict_as_json(notebook) -> None:
    backend, _ = notebook
    assert backend.read("/vars/df.csv").lines == ["a", "1", "2"]  # default index left out
    assert json.loads("\n".join(backend.read("/vars/x.json").lines)) == {"k": [1, 2]}
    assert backend.read("/vars/total.txt").lines == ["42"]


def test_index_lists_each_variable_with_type_shape_and_file(notebook) -> None:
    backend, _ = notebook
    index = backend.read("/vars/index.md").lines
    assert "- df: DataFrame, shape (2, 1), columns: a -> /notebook/vars/df.csv" in index
    assert "- x: dict, length 1 -> /notebook/vars/x.json" in index


def test_vars_leave_out_modules_functions_private_and_ipython_names(shell) -> None:
    run(shell, "import os\ndef helper(): pass\nclass Thing: pass\n_private = 1\nkept = Thing()")
    names = {info.path for info in NotebookBackend(shell).ls("/vars")}
    assert names == {"/vars/index.md", "/vars/kept.txt"}


def test_a_meaningful_index_and_a_series_are_written_as_columns(shell) -> None:
    run(
        shell,
        "import pandas as pd\n"
        "prices = pd.DataFrame({'p': [1.5]}, index=pd.Index(['2024-01-02'], name='day'))\n"
        "s = pd.Series([3, 4], name='n')",
    )
    backend = NotebookBackend(shell)
    assert backend.read("/vars/prices.csv").lines == ["day,p", "2024-01-02,1.5"]
    assert backend.read("/vars/s.csv").lines == ["n", "3", "4"]


def test_a_large_frame_pages_by_rows(shell) -> None:
    run(
        shell,
        "import pandas as pd\n"
        "big = pd.DataFrame({'n': range(10_000), 'note': ['two\\nlines'] * 10_000})",
    )
    backend = NotebookBackend(shell)

    first = backend.read("/vars/big.csv", offset=0, limit=3)
    assert first.lines == ["n,note", "0,two\\nlines", "1,two\\nlines"]
    assert (first.total_lines, first.next_offset) == (10_001, 3)
    page = backend.read("/vars/big.csv", offset=5_000, limit=100)
    assert page.lines[0].startswith("4999,") and len(page.lines) == 100
    assert page.next_offset == 5_100
    last = backend.read("/vars/big.csv", offset=9_990, limit=100)
    assert last.lines[-1] == "9999,two\\nlines" and last.next_offset is None
    with pytest.raises(BackendError, match="past the end"):
        backend.read("/vars/big.csv", offset=10_001)
    with pytest.raises(BackendError):
        backend.read("/vars/big.csv", offset=-1)


def test_grep_searches_outputs_and_large_frames_by_line(shell) -> None:
    run(shell, "print('needle in a cell')")
    run(shell, "import pandas as pd\nbig = pd.DataFrame({'n': range(12_000)})")
    backend = NotebookBackend(shell)

    hits = backend.grep("needle")
    assert [(m.path, m.line_number) for m in hits if m.path.startswith("/outputs/")] == [
        ("/outputs/01.txt", 2)
    ]
    assert [(m.path, m.line_number, m.line) for m in backend.grep("11999", "/vars")] == [
        ("/vars/big.csv", 12_001, "11999")
    ]
    assert backend.grep("needle", glob="*.txt") == [m for m in hits if m.path.endswith(".txt")]


def test_glob_matches_across_the_view(notebook) -> None:
    backend, _ = notebook
    assert [info.path for info in backend.glob("**/*.json")] == ["/vars/x.json"]
    assert [info.path for info in backend.glob("*.csv", "/vars")] == ["/vars/df.csv"]


def test_every_change_is_refused(notebook) -> None:
    backend, counts = notebook
    message = "read-only view of the live notebook; write to /workspace/ or /outputs/ instead"
    with pytest.raises(PermissionDenied, match=message):
        backend.write("/cells/new.py", "print(1)")
    with pytest.raises(PermissionDenied):
        backend.edit(f"/cells/{counts['df']}.py", "df", "frame")
    with pytest.raises(PermissionDenied):
        backend.delete("/vars/df.csv")


def test_missing_files_say_what_exists(notebook) -> None:
    backend, counts = notebook
    listed = r"no cell named 77 in this view \(the cells here are 01, 02, 03, 04, 05\); /notebook/"
    with pytest.raises(FileNotFound, match=listed):
        backend.read("/cells/77.py")
    with pytest.raises(FileNotFound, match="cell 04 ran but produced no output"):
        backend.read("/outputs/04.txt")
    with pytest.raises(FileNotFound, match="cell 04 ran but produced no output"):
        backend.read(f"/outputs/{counts['dict']}.txt")  # 4.txt: the same position
    with pytest.raises(FileNotFound, match="df is a DataFrame: read /notebook/vars/df.csv"):
        backend.read("/vars/df.json")
    with pytest.raises(FileNotFound, match="no kernel variable named 'nope'"):
        backend.read("/vars/nope.txt")


def test_async_twins_read_the_same_files(notebook) -> None:
    backend, counts = notebook
    result = asyncio.run(backend.aread(f"/outputs/{counts['print']}.txt"))
    assert result.lines == ["[stdout]", "hello"]


def test_mounted_at_notebook_in_a_composite(notebook) -> None:
    backend, counts = notebook
    tree = CompositeBackend(StateBackend(), {"/notebook/": backend})
    assert tree.read("/notebook/vars/df.csv").lines == ["a", "1", "2"]
    assert "/notebook/cells/01.py" in {i.path for i in tree.ls("/notebook/cells")}
    with pytest.raises(PermissionDenied):
        tree.write("/notebook/cells/01.py", "")


def write_notebook(path: Path, first_output: str) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("# Analysis"),
        nbformat.v4.new_code_cell(
            "print('saved')\n6 * 7",
            execution_count=5,
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text=first_output),
                nbformat.v4.new_output("execute_result", {"text/plain": "42"}, execution_count=5),
            ],
        ),
        nbformat.v4.new_code_cell(
            "1/0",
            execution_count=6,
            outputs=[
                nbformat.v4.new_output(
                    "error",
                    ename="ZeroDivisionError",
                    evalue="division by zero",
                    traceback=["\x1b[31mZeroDivisionError\x1b[39m: division by zero"],
                ),
            ],
        ),
    ]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def test_saved_cells_and_outputs_are_read_from_the_notebook_file(shell, tmp_path) -> None:
    path = tmp_path / "analysis.ipynb"
    write_notebook(path, "saved\n")
    backend = NotebookBackend(shell, notebook_path=path)

    assert backend.read("/saved/cells/1.md").lines == ["# Analysis"]
    assert backend.read("/saved/cells/2.py").lines == ["print('saved')", "6 * 7"]
    outputs = backend.read("/saved/outputs/2.txt").lines
    assert outputs == [
        "# saved cell 2, In[5], from analysis.ipynb",
        "[stdout]",
        "saved",
        "[result]",
        "42",
    ]
    assert backend.read("/saved/outputs/3.txt").lines[1:3] == [
        "[error]",
        "ZeroDivisionError: division by zero",
    ]
    assert (
        "- 2: code, In[5] -> /notebook/saved/cells/2.py, outputs "
        "/notebook/saved/outputs/2.txt  | print('saved')" in backend.read("/saved/index.md").lines
    )

    write_notebook(path, "edited and saved again\n")
    os.utime(path, ns=(1, 1))  # a distinct modification time, however fast the edit
    assert backend.read("/saved/outputs/2.txt").lines[2] == "edited and saved again"


def test_saved_is_absent_until_the_notebook_is_known(shell, tmp_path) -> None:
    backend = NotebookBackend(shell)
    assert "/saved/" not in {info.path for info in backend.ls("/")}
    with pytest.raises(FileNotFound, match="notebook file is not known"):
        backend.read("/saved/cells/1.py")

    path = tmp_path / "from_session.ipynb"
    write_notebook(path, "x\n")
    shell.user_ns["__session__"] = str(path)  # what JupyterLab's kernel sets
    assert backend.read("/saved/cells/1.md").lines == ["# Analysis"]


def test_a_broken_notebook_file_is_a_clear_error(shell, tmp_path) -> None:
    path = tmp_path / "broken.ipynb"
    path.write_text("{not json")
    backend = NotebookBackend(shell, notebook_path=path)
    with pytest.raises(BackendError, match="Cannot read the saved notebook broken.ipynb"):
        backend.read("/saved/index.md")
    run(shell, "print('still searchable')")
    assert [m.path for m in backend.grep("still searchable")] == [
        "/cells/01.py",
        "/index.md",
        "/outputs/01.txt",
    ]


def test_variable_rendering_helpers() -> None:
    assert render_variable("t", (1, 2)) == ("txt", "(1, 2)\n")
    assert render_variable("d", {(1, 2): "tuple key"}) == (
        "json",
        '{\n  "(1, 2)": "tuple key"\n}\n',
    )
    assert describe_variable([1, 2, 3]) == "list, length 3"


def test_importing_the_view_does_not_import_pandas() -> None:
    code = (
        "import sys, jupyter_deepagent.jupyter.notebook_fs.notebook_backend\n"
        "assert 'pandas' not in sys.modules and 'nbformat' not in sys.modules, 'heavy import'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_grep_gathers_the_secret_values_once_for_every_file(shell: InteractiveShell) -> None:
    asked: list[int] = []

    def secrets() -> list[str]:
        asked.append(1)
        return ["hunter2-secret"]

    for index in range(20):
        run(shell, f"print('cell {index} hunter2-secret')")
    backend = NotebookBackend(shell, secrets=secrets)
    matches = backend.grep("cell 1")  # cells 1 and 10-19: their sources and outputs
    assert len(asked) == 1
    cells = [m for m in matches if m.path.startswith(("/cells/", "/outputs/"))]
    assert len(cells) >= 20
    assert [m.line for m in cells if "hunter2" in m.line or "***" not in m.line] == []
    assert not [m for m in matches if "hunter2" in m.line]


def test_reading_the_saved_notebook_does_not_import_nbformat(tmp_path) -> None:
    """Every view of /notebook/ reads the saved file (for the cells' order): importing nbformat
    there cost the agent's first grep in a fresh kernel seconds (its schema validator)."""
    import subprocess
    import sys

    import nbformat

    path = tmp_path / "saved.ipynb"
    cell = nbformat.v4.new_code_cell("print('mean warming 0.5')")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="mean warming 0.5\n")]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), path)
    code = (
        "import sys\n"
        "from jupyter_deepagent.jupyter.notebook_fs._saved_notebook import SavedNotebook\n"
        f"cells = SavedNotebook({str(path)!r}).cells()\n"
        "assert cells[0].outputs[0].text == 'mean warming 0.5\\n', cells\n"
        "print('nbformat' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
