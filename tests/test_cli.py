"""`jupyter-deepagent run / log / verify` on the example notebook, headless in real kernels, offline;
and Run All twice in one kernel, as JupyterLab (cell ids) and as plain nbclient (none) send it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from jupyter_deepagent.jupyter.session.recorded_code import RUNNER_TOKEN_ENV
from jupyter_deepagent.trace.research_log.log import log_path_for

EXAMPLE = Path(__file__).parents[1] / "notebooks" / "01_first_research_run.ipynb"
LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])


def _copy(tmp_path: Path) -> Path:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copytree(EXAMPLE.parent / "scripts", folder / "scripts")
    shutil.copy(EXAMPLE, folder / EXAMPLE.name)
    return folder / EXAMPLE.name


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "JUPYTER_DEEPAGENT_REPLAY")}
    return {**env, "IPYTHONDIR": str(tmp_path / "ipython")}


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "jupyter_deepagent.cli", *args], capture_output=True, text=True,
        env=_env(tmp_path), timeout=600, check=False,
    )


def _printed(path: Path, marker: str) -> str:
    notebook = nbformat.read(path, as_version=4)
    cell = next(c for c in notebook.cells if marker in c.source)
    return "".join(o.get("text", "") for o in cell.outputs)


def test_run_records_then_replays_strictly_and_verify_and_exit_codes_tell_what_happened(
    tmp_path: Path,
) -> None:
    notebook = _copy(tmp_path)
    first, second = tmp_path / "first.ipynb", tmp_path / "second.ipynb"

    recorded = _cli(tmp_path, "run", str(notebook), "--output", str(first), "--no-progress")
    # a restart and Run All: the thread is still there, the cell's turn is replaced
    replayed = _cli(tmp_path, "run", str(notebook), "--replay", "strict", "--output",
                    str(second), "--no-progress")

    assert recorded.returncode == 0, recorded.stderr
    assert replayed.returncode == 0, replayed.stderr
    assert "Which station's permafrost warms fastest?" in recorded.stdout
    assert " scripted " in recorded.stdout and " replayed " in replayed.stdout
    conversation = _printed(first, "_agent.messages")
    assert conversation.count("--- read_file") == 1
    assert _printed(second, "_agent.messages") == conversation

    # a fresh clone: no conversations kept, and a model that would fail if it were asked
    shutil.rmtree(notebook.parent / ".deepagent")
    (notebook.parent / "scripts" / "first_run.yaml").write_text(
        "name: scripted-first-run\nprofile: {max_input_tokens: 1048576}\nscript: []\n"
    )
    fresh = _cli(tmp_path, "run", str(notebook), "--replay", "strict", "--no-progress")
    assert fresh.returncode == 0, fresh.stderr
    assert " replayed " in fresh.stdout

    timeline = _cli(tmp_path, "log", str(notebook))
    assert "· replayed ·" not in timeline.stdout and "read_file file_path=" in timeline.stdout
    as_json = json.loads(_cli(tmp_path, "log", str(notebook), "--format", "json").stdout)
    assert [entry["replay"] for entry in as_json] == ["scripted"]  # the replays appended nothing
    assert {entry["shown_as"] for entry in as_json} == {"In [5]"}  # as Lab shows the cell
    before = log_path_for(notebook).read_bytes()
    verified = _cli(tmp_path, "verify", str(notebook))  # with a dry run: strict replay passes
    assert verified.returncode == 0, verified.stdout
    assert log_path_for(notebook).read_bytes() == before  # the dry run wrote nothing

    # an edited prompt in the same cell (same id): strict replay refuses it, showing the change
    edited = nbformat.read(notebook, as_version=4)
    cell = next(c for c in edited.cells if c.source.startswith("%%agent"))
    cell.source = cell.source.replace("warms fastest", "warms slowest")
    nbformat.write(edited, notebook)
    mismatch = _cli(tmp_path, "run", str(notebook), "--replay", "strict", "--no-progress")
    assert mismatch.returncode == 1, mismatch.stdout + mismatch.stderr
    assert " mismatch " in mismatch.stdout
    assert "model call 1" in mismatch.stderr and "warms slowest" in mismatch.stderr

    # a cell that fails for another reason
    edited.cells.insert(1, nbformat.v4.new_code_cell("raise RuntimeError('broken data')"))
    nbformat.write(edited, notebook)
    assert _cli(tmp_path, "run", str(notebook), "--no-progress").returncode == 2

    # a tampered line
    log = log_path_for(notebook)
    lines = log.read_text(encoding="utf-8").splitlines()
    lines[0] = lines[0].replace("Svalbard", "Abisko")
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tampered = _cli(tmp_path, "verify", str(notebook))
    assert tampered.returncode == 1
    assert "line 1: its content does not match its hash" in tampered.stdout


def _conversation_after_each_pass(tmp_path: Path, with_ids: bool) -> list[Any]:
    notebook_path = _copy(tmp_path)
    notebook = nbformat.read(notebook_path, as_version=4)
    env = {**_env(tmp_path), "JPY_SESSION_NAME": str(notebook_path),
           "JUPYTER_DEEPAGENT_REPLAY": "off", "PYDEVD_DISABLE_FILE_VALIDATION": "1",
           RUNNER_TOKEN_ENV: "token-of-this-kernel"}
    client = NotebookClient(notebook, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(notebook_path.parent)}})
    passes = []
    with client.setup_kernel(env=env):
        if with_ids:
            from jupyter_deepagent.cli.headless import _execute_with_cell_id

            current: dict[str, Any] = {}
            client.on_cell_start = lambda cell, cell_index: current.update(id=cell.id)
            client.kc.execute = _execute_with_cell_id(
                client.kc, lambda: current.get("id"), "refuse", "token-of-this-kernel"
            )
        check = nbformat.v4.new_code_cell(
            # the turns; tool results are recomputed (a grep of /notebook/outputs/ names the
            # output files by execution count, which goes on growing in one kernel)
            "print([(m.type, m.name if m.type == 'tool' else m.text[:40], "
            "[c['args'] for c in getattr(m, 'tool_calls', [])]) for m in _agent.messages])"
        )
        notebook.cells.append(check)
        for _ in range(2):  # Run All, twice, in one kernel
            for index, cell in enumerate(notebook.cells):
                client.execute_cell(cell, index)
            passes.append(check.outputs[0]["text"])
    return passes


@LOOPBACK_ONLY
@pytest.mark.parametrize("with_ids", [False, True], ids=["nbclient", "jupyterlab cell ids"])
def test_run_all_twice_in_one_kernel_builds_the_first_passs_conversation(
    tmp_path: Path, with_ids: bool
) -> None:
    first, second = _conversation_after_each_pass(tmp_path, with_ids)

    assert first.count("('human'") == 1 and first.count("('tool'") == 5
    assert second == first


def test_the_shipped_quickstart_replays_strictly_offline_and_verifies(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    shutil.copytree(EXAMPLE.parent, folder, ignore=shutil.ignore_patterns(".deepagent"))
    notebook = folder / "quickstart.ipynb"

    verified = _cli(tmp_path, "verify", str(notebook))
    replayed = _cli(tmp_path, "run", str(notebook), "--replay", "strict", "--no-progress")

    assert verified.returncode == 0, verified.stdout
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    assert replayed.stdout.count(" replayed ") == 3
    assert "3 agent cells (3 replayed)" in replayed.stdout
