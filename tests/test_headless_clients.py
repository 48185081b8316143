"""The notebook replays and keeps its own conversation under the clients that name no notebook:
papermill (in-process and its command line), `jupyter nbconvert --execute` and plain nbclient,
each in a real kernel without `JPY_SESSION_NAME`, offline."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_deepagent.trace.research_log.log import log_path_for

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"
LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
_NOT_INHERITED = (
    "GOOGLE_API_KEY",
    "GEMINI_API_KEY",
    "JPY_SESSION_NAME",
    "JUPYTER_DEEPAGENT_NOTEBOOK",
    "JUPYTER_DEEPAGENT_REPLAY",
)


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _NOT_INHERITED}
    return {
        **env,
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        **extra,
    }


def _scratch_notebooks(tmp_path: Path) -> Path:
    """A copy of `notebooks/` as a fresh clone has it (no conversations kept)."""
    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, folder, ignore=shutil.ignore_patterns(".deepagent"))
    return folder


def _texts(cell: Any) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(str(output.get("text", "")))
        parts += [
            str(value) for key, value in output.get("data", {}).items() if key.startswith("text/")
        ]
    return "\n".join(parts)


def _agent_cells(notebook: Any) -> list[Any]:
    return [c for c in notebook.cells if c.cell_type == "code" and c.source.startswith("%%agent")]


def _replay_of(cell: Any) -> list[str]:
    """How each run of a cell went, as its output metadata says ("replayed", "live"...)."""
    runs = [o.get("metadata", {}).get("jupyter_deepagent", {}).get("run") for o in cell.outputs]
    return [run["replay"] for run in runs if run]


def _papermill_in_process(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    import papermill

    for name, value in _env(tmp_path, JUPYTER_DEEPAGENT_REPLAY="strict").items():
        monkeypatch.setenv(name, value)
    for name in _NOT_INHERITED:
        if name != "JUPYTER_DEEPAGENT_REPLAY":
            monkeypatch.delenv(name, raising=False)
    output = tmp_path / "papermill-output.ipynb"  # outside the folder: the input is found
    papermill.execute_notebook(
        str(folder / "quickstart.ipynb"),
        str(output),
        cwd=str(folder),
        kernel_name="python3",
        progress_bar=False,
    )
    return output


def _papermill_command(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # the output beside the input, as papermill saves it while it runs: two candidates
    command = [
        sys.executable,
        "-m",
        "papermill",
        "quickstart.ipynb",
        "quickstart-run.ipynb",
        "--kernel",
        "python3",
        "--no-progress-bar",
    ]
    _run(command, folder, tmp_path)
    return folder / "quickstart-run.ipynb"


def _nbconvert(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "nbconvert",
        "--execute",
        "--to",
        "notebook",
        "--ExecutePreprocessor.kernel_name=python3",
        "quickstart.ipynb",
    ]
    _run(command, folder, tmp_path)
    return folder / "quickstart.nbconvert.ipynb"


def _nbclient(folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    notebook = nbformat.read(folder / "quickstart.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute(env=_env(tmp_path, JUPYTER_DEEPAGENT_REPLAY="strict"))
    output = tmp_path / "nbclient-output.ipynb"
    nbformat.write(notebook, output)
    return output


def _run(command: list[str], folder: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        command,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(tmp_path, JUPYTER_DEEPAGENT_REPLAY="strict"),
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


Client = Callable[[Path, Path, pytest.MonkeyPatch], Path]


@pytest.mark.slow
@LOOPBACK_ONLY
@pytest.mark.parametrize(
    "client",
    [_papermill_in_process, _papermill_command, _nbconvert, _nbclient],
    ids=["papermill", "papermill command", "nbconvert --execute", "nbclient"],
)
def test_the_quickstart_replays_strictly_under_a_client_that_names_no_notebook(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, client: Client
) -> None:
    folder = _scratch_notebooks(tmp_path)
    log = log_path_for(folder / "quickstart.ipynb")
    shipped = log.read_bytes()

    output = nbformat.read(client(folder, tmp_path, monkeypatch), as_version=4)

    cells = _agent_cells(output)
    assert len(cells) == 3
    assert [_replay_of(cell) for cell in cells] == [["replayed"]] * 3  # no live model call
    assert all("thread quickstart ·" in _texts(cell) for cell in cells)
    after = log.read_bytes()
    assert after.startswith(shipped), "the shipped records were changed"
    added = after[len(shipped) :].count(b"\n")
    assert after == shipped, f"strict replay appended {added} records to the research log"


@pytest.mark.slow
@LOOPBACK_ONLY
def test_the_quickstart_replays_strictly_after_papermill_under_a_client_that_sends_cell_ids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # papermill sends no cell ids, `jupyter-deepagent run` does (as JupyterLab): one state folder
    folder = _scratch_notebooks(tmp_path)
    log = log_path_for(folder / "quickstart.ipynb")
    shipped = log.read_bytes()
    _nbclient(folder, tmp_path, monkeypatch)

    command = [sys.executable, "-m", "jupyter_deepagent.cli", "run", "quickstart.ipynb"]
    _run([*command, "--replay", "strict"], folder, tmp_path)
    output = nbformat.read(_nbclient(folder, tmp_path, monkeypatch), as_version=4)

    assert [_replay_of(cell) for cell in _agent_cells(output)] == [["replayed"]] * 3
    assert log.read_bytes() == shipped  # no run went live


def _small_notebook(path: Path, question: str) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            "%load_ext jupyter_deepagent\n"
            "from jupyter_deepagent import ScriptedChatModel, get_session\n"
            f"_ = get_session().configure(model=ScriptedChatModel(script=['answer to {question}'],"
            " profile={'max_input_tokens': 100_000}))"
        ),
        nbformat.v4.new_code_cell(f"%%agent\n{question}"),
        nbformat.v4.new_code_cell(
            "import json\nprint(json.dumps([get_session().thread, "
            "[m.text for m in _agent.messages if m.type == 'human']]))"
        ),
    ]
    nbformat.write(notebook, path)
    return path


def _headless(path: Path, tmp_path: Path) -> tuple[Any, list[Any]]:
    """Run a notebook with plain nbclient; its executed cells and the last cell's JSON."""
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute(env=_env(tmp_path))
    return notebook, json.loads(notebook.cells[-1].outputs[0]["text"])


@LOOPBACK_ONLY
def test_notebooks_of_one_folder_run_headless_keep_their_own_conversations(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    alpha = _small_notebook(folder / "alpha.ipynb", "Where is the alpha station?")
    beta = _small_notebook(folder / "beta.ipynb", "Where is the beta station?")
    gamma = _small_notebook(folder / "gamma.ipynb", "Where is the gamma station?")
    shutil.copy(gamma, folder / "gamma copy.ipynb")  # the same cells: no way to tell

    _, (alpha_thread, alpha_asked) = _headless(alpha, tmp_path)
    _, (beta_thread, beta_asked) = _headless(beta, tmp_path)
    ran, (gamma_thread, gamma_asked) = _headless(gamma, tmp_path)

    assert (alpha_thread, beta_thread) == ("alpha", "beta")
    assert alpha_asked == ["Where is the alpha station?"]
    assert beta_asked == ["Where is the beta station?"]  # not alpha's turn
    assert log_path_for(alpha).is_file() and log_path_for(beta).is_file()
    # gamma: it says so, runs on a thread of its own, and records nothing
    said = _texts(ran.cells[1])
    assert "cannot tell which notebook it runs" in said and "gamma copy.ipynb" in said
    assert "%agent notebook PATH" in said
    assert gamma_thread.startswith("kernel-") and gamma_asked == ["Where is the gamma station?"]
    assert not log_path_for(gamma).exists()


@LOOPBACK_ONLY
def test_a_new_notebook_run_headless_does_not_take_an_older_ones_log_and_thread(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    old = _small_notebook(folder / "old.ipynb", "Summarize the data")
    _headless(old, tmp_path)
    recorded = log_path_for(old).read_bytes()
    new = _small_notebook(folder / "new.ipynb", "Summarize the data")  # the same cells, no log

    ran, (thread, asked) = _headless(new, tmp_path)

    assert thread.startswith("kernel-") and asked == ["Summarize the data"]  # not old's turn
    assert "cannot tell which notebook it runs" in _texts(ran.cells[1])
    assert log_path_for(old).read_bytes() == recorded and not log_path_for(new).exists()
