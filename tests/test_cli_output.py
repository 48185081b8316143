"""`run --output` never destroys a notebook: its folder is checked before a cell runs, and the
executed notebook is written whole and renamed into place, so a write that fails (a full disk)
leaves the file as it was, even when it is the notebook that ran."""

from __future__ import annotations

import errno
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from jupyter_deepagent.cli import headless


def _notebook(path: Path) -> Path:
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(book, path)
    return path


def test_a_write_that_fails_halfway_leaves_the_notebook_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _notebook(tmp_path / "study.ipynb")
    before = path.read_bytes()
    executed = nbformat.read(path, as_version=4)
    executed.cells[0].outputs = [nbformat.v4.new_output("stream", text="a long output\n" * 1000)]

    def full_disk(notebook: object, stream: object, **_: object) -> None:
        stream.write('{"cells": [{"source": "x = ')  # type: ignore[attr-defined]
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(nbformat, "write", full_disk)
    problem = headless._write_atomically(executed, path)

    assert problem == f"could not write {path}: No space left on device; it is unchanged"
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["study.ipynb"]  # no temporary file left


def test_the_executed_notebook_replaces_the_file_once_whole(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "study.ipynb")
    executed = nbformat.read(path, as_version=4)
    executed.cells[0].outputs = [nbformat.v4.new_output("stream", text="done\n")]

    assert headless._write_atomically(executed, path) == ""
    assert nbformat.read(path, as_version=4).cells[0].outputs[0]["text"] == "done\n"
    assert [p.name for p in tmp_path.iterdir()] == ["study.ipynb"]


def test_an_output_folder_that_does_not_exist_is_refused_before_a_cell_runs(
    tmp_path: Path,
) -> None:
    path = _notebook(tmp_path / "study.ipynb")
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter_deepagent.cli",
            "run",
            str(path),
            "--output",
            str(tmp_path / "missing" / "out.ipynb"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 2
    assert "the folder of --output" in ran.stderr and "does not exist" in ran.stderr
    assert "create it first" in ran.stderr
    assert ran.stdout == ""  # no table: nothing ran


def test_ctrl_c_ends_the_run_with_one_line_and_exit_130_writing_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    book = nbformat.v4.new_notebook()
    book.cells = [
        nbformat.v4.new_code_cell(
            f"import pathlib, time\npathlib.Path({str(marker)!r}).touch()\ntime.sleep(60)"
        )
    ]
    path = tmp_path / "study.ipynb"
    nbformat.write(book, path)
    before = path.read_bytes()
    process = subprocess.Popen(
        [sys.executable, "-m", "jupyter_deepagent.cli", "run", str(path), "--output", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not marker.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.1)
    assert marker.exists(), "the cell never started"
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=60)

    assert process.returncode == 130
    assert stderr.strip().splitlines()[-1] == (
        f"interrupted: {path} is unchanged, and the agent cells that finished kept their "
        f"research-log records; {path} was not written"
    )
    assert "AssertionError" not in stderr and stdout == ""
    assert path.read_bytes() == before


def test_a_notebook_only_its_owner_reads_stays_so(tmp_path: Path) -> None:
    path = _notebook(tmp_path / "study.ipynb")
    path.chmod(0o600)
    assert headless._write_atomically(nbformat.read(path, as_version=4), path) == ""
    assert path.stat().st_mode & 0o777 == 0o600
