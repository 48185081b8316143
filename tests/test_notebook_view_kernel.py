"""`/notebook/` in a real ipykernel: Run All twice in one kernel, with cell ids as JupyterLab
sends them and without (nbclient, with and without the notebook file known), shows the same
cells after each pass, only each cell's latest output, and an agent cell sees the cells above
it: not its own live lines, not the cells below. So the second pass of an unchanged notebook
replays its agent cell: the agent reads the same `/notebook/` as on the first.

The kernel talks to the test over ZMQ on loopback only; its IPython files stay in the test's folder.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])

LOOK = """\
profile: {max_input_tokens: 100000}
script:
"""
STEPS = """\
  - tool_calls: [{name: ls, args: {path: /notebook/cells/}}]
  - tool_calls: [{name: grep, args: {pattern: value, path: /notebook/outputs/, output_mode: content}}]
  - tool_calls: [{name: grep, args: {pattern: below the agent cell, path: /notebook/cells/}}]
  - tool_calls: [{name: grep, args: {pattern: "agent ·", path: /notebook/outputs/}}]
  - looked
"""
CHECK = """\
import json
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend
_view = NotebookBackend(get_ipython())  # made in this cell: the view ends here
print(json.dumps({
    "cells": [info.path for info in _view.ls("/cells/")],
    "outputs": [info.path for info in _view.ls("/outputs/")],
    "values": [m.line for m in _view.grep(r"^value \\d+$", "/outputs/", regex=True)],
    "agent": [m.text for m in _agent.messages if m.type == "tool"][-4:],
}))"""
CELLS = [
    "%load_ext jupyter_deepagent",
    "n = globals().get('n', 0) + 1\nprint(f'value {111 * n}')",  # 111, then 222
    "%%agent -m scripted:look.yaml --replay off\nlook around",
    "print('below the agent cell')",
    CHECK,
]


def _notebook(folder: Path, sources: list[str] = CELLS) -> Path:
    (folder / "look.yaml").write_text(LOOK + STEPS * 2)
    cells = [nbformat.v4.new_markdown_cell("# Warming")]
    cells += [nbformat.v4.new_code_cell(source) for source in sources]
    path = folder / "view.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def _with_cell_ids(kc: Any, current: dict[str, str]) -> Any:
    """`kc.execute`, the request's metadata carrying the cell's id as JupyterLab sends it."""

    def execute(code: str, silent: bool = False, store_history: bool = True,
                user_expressions: dict | None = None, allow_stdin: bool | None = None,
                stop_on_error: bool = True) -> str:
        content = {"code": code, "silent": silent, "store_history": store_history,
                   "user_expressions": user_expressions or {}, "allow_stdin": False,
                   "stop_on_error": stop_on_error}
        message = kc.session.msg("execute_request", content, metadata={"cellId": current["id"]})
        kc.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    return execute


def _run_all_twice(
    tmp_path: Path, with_ids: bool, file_known: bool, sources: list[str] = CELLS
) -> tuple[list[dict[str, Any]], list[str]]:
    """The check cell's view after each pass, and the agent cell's first live line of each."""
    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = _notebook(folder, sources)
    if not file_known:  # kept where the kernel cannot find it (not in its working folder)
        (folder / "elsewhere").mkdir()
        path = path.rename(folder / "elsewhere" / path.name)
    notebook = nbformat.read(path, as_version=4)
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    env.pop("JPY_SESSION_NAME", None)
    env |= {"IPYTHONDIR": str(tmp_path / "ipython"), "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    if file_known:
        env["JPY_SESSION_NAME"] = str(path)
    client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                            resources={"metadata": {"path": str(folder)}})
    passes, heads = [], []
    with client.setup_kernel(env=env):
        if with_ids:
            current: dict[str, str] = {}
            client.on_cell_start = lambda cell, cell_index: current.update(id=cell.id)
            client.kc.execute = _with_cell_ids(client.kc, current)
        for _ in range(2):  # Run All, twice, in one kernel
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            errors = [o for c in notebook.cells for o in c.get("outputs", [])
                      if o.output_type == "error"]
            assert errors == []
            passes.append(json.loads(notebook.cells[-1].outputs[0]["text"]))
            heads.append(notebook.cells[3].outputs[0]["data"]["text/plain"].splitlines()[0])
    return passes, heads


@LOOPBACK_ONLY
@pytest.mark.parametrize(
    ("with_ids", "file_known"),
    [(True, True), (False, True), (False, False)],
    ids=["jupyterlab cell ids", "nbclient, notebook file known", "nbclient, file unknown"],
)
def test_run_all_twice_in_a_kernel_shows_the_notebook_once(
    tmp_path: Path, with_ids: bool, file_known: bool
) -> None:
    (first, second), _ = _run_all_twice(tmp_path, with_ids, file_known)

    # load_ext, value, agent, below, this check (the markdown cell is 01 in the saved file)
    names = ["02", "03", "04", "05", "06"] if file_known else ["01", "02", "03", "04", "05"]
    assert second["cells"] == first["cells"] == [f"/cells/{name}.py" for name in names]
    with_output = [f"/outputs/{name}.txt" for name in names[1:4]]
    assert first["outputs"] == with_output  # the agent cell's outputs, once it has finished
    # IPython's "already loaded" notice on the second %load_ext is not a cell output
    assert second["outputs"] == first["outputs"]
    assert first["values"] == ["value 111"] and second["values"] == ["value 222"]

    for agent in (first, second):
        listing, values, below, own = agent["agent"]
        assert f"/notebook/cells/{names[2]}.py" in listing  # its own source
        assert f"/notebook/cells/{names[3]}.py" not in listing  # not the cell below it
        assert "No matches" in below and "No matches" in own  # nor its own live lines
    assert first["agent"][0] == second["agent"][0]  # the same listing, names and sizes
    assert "value 111" in first["agent"][1]
    assert "value 222" in second["agent"][1] and "111" not in second["agent"][1]


@LOOPBACK_ONLY
@pytest.mark.parametrize("with_ids", [True, False], ids=["jupyterlab cell ids", "nbclient"])
def test_the_second_pass_of_run_all_replays_an_agent_cell_that_reads_the_notebook(
    tmp_path: Path, with_ids: bool
) -> None:
    sources = [*CELLS]
    sources[1] = "print('value 111')"  # the same on both passes
    sources[2] = "%%agent -m scripted:look.yaml\nlook around"  # replay: auto
    (first, second), heads = _run_all_twice(tmp_path, with_ids, True, sources)

    assert heads[0].endswith(" · scripted")
    assert heads[1].endswith(" · replayed")  # every request as recorded: no model call
    assert second["agent"] == first["agent"]


@LOOPBACK_ONLY
def test_a_papermill_run_places_the_injected_parameters_after_the_parameters_cell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import papermill

    folder = tmp_path / "notebooks"
    folder.mkdir()
    path = _notebook(folder)
    notebook = nbformat.read(path, as_version=4)
    notebook.cells[2].source = "n = 0"  # the value cell's `n`, as a parameter
    notebook.cells[2].metadata["tags"] = ["parameters"]
    notebook.cells.insert(3, nbformat.v4.new_code_cell(CELLS[1]))
    nbformat.write(notebook, path)
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("PYDEVD_DISABLE_FILE_VALIDATION", "1")
    monkeypatch.setenv("JPY_SESSION_NAME", str(path))  # the notebook file, as papermill read it

    done = papermill.execute_notebook(
        str(path), str(folder / "out.ipynb"), parameters={"n": 4}, kernel_name="python3",
        cwd=str(folder), progress_bar=False, language="python",
    )

    check = json.loads(done.cells[-1].outputs[0]["text"])
    # load_ext 02, parameters 03, papermill's injected cell 03a, value 04, agent 05, below 06
    assert check["cells"] == [f"/cells/{name}.py" for name in
                              ["02", "03", "03a", "04", "05", "06", "07"]]
    assert check["values"] == ["value 555"]  # n = 4 injected, then + 1
    listing = check["agent"][0]
    assert "/notebook/cells/03a.py" in listing and "/notebook/cells/06.py" not in listing
