"""grep names the files it could not search (too large), instead of answering a bare "No matches"
that the model would take as "the text is nowhere"."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from langchain.tools import ToolRuntime

from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.harness.tools.filesystem import filesystem_tools
from jupyter_deepagent.project.workspace import GuardedFolder


def _grep(backend: BackendProtocol, **args: Any) -> str:
    tool = next(t for t in filesystem_tools(backend) if t.name == "grep")
    runtime = ToolRuntime(
        state={"files": {}}, context=None, config={}, stream_writer=lambda _: None,
        tool_call_id="call-1", store=None,
    )
    return str(tool.invoke({**args, "runtime": runtime}))


def _agrep(backend: BackendProtocol, **args: Any) -> str:
    tool = next(t for t in filesystem_tools(backend) if t.name == "grep")
    runtime = ToolRuntime(
        state={"files": {}}, context=None, config={}, stream_writer=lambda _: None,
        tool_call_id="call-1", store=None,
    )
    return str(asyncio.run(tool.ainvoke({**args, "runtime": runtime})))


def _workspace(backend: BackendProtocol) -> CompositeBackend:
    return CompositeBackend(StateBackend(), {"/workspace/": backend})


def test_a_file_over_10_mb_is_named_instead_of_a_bare_no_matches(tmp_path: Path) -> None:
    (tmp_path / "genome.fasta").write_text("ACGT" * 2_750_000 + "\nneedle\n")  # 11 MB
    (tmp_path / "notes.md").write_text("nothing here\n")
    fs = _workspace(DiskBackend(tmp_path))
    answer = _grep(fs, pattern="needle")
    assert answer.startswith("No matches for 'needle' in /.")
    assert "Not searched: 1 file too large or unreadable" in answer
    assert "/workspace/genome.fasta (11.0 MB, over the 10.0 MB limit)" in answer


def test_skipped_files_follow_the_matches_in_every_mode(tmp_path: Path) -> None:
    (tmp_path / "big.csv").write_text("x,needle\n" * 200)
    (tmp_path / "small.txt").write_text("a needle\n")
    fs = _workspace(DiskBackend(tmp_path, max_file_bytes=1000))
    content = _grep(fs, pattern="needle", output_mode="content")
    assert content.splitlines()[0] == "/workspace/small.txt:1: a needle"
    assert "/workspace/big.csv (" in content.splitlines()[-1]
    assert "/workspace/big.csv" in _grep(fs, pattern="needle", output_mode="count")
    assert "/workspace/big.csv" in _agrep(fs, pattern="needle", path="/workspace")


def test_a_glob_filter_leaves_out_skipped_files_it_does_not_match(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "big.csv").write_text("y" * 2000)
    (tmp_path / "big.log").write_text("y" * 2000)
    fs = _workspace(DiskBackend(tmp_path, max_file_bytes=1000))
    by_path = _grep(fs, pattern="needle", glob="workspace/data/*.csv")
    assert "/workspace/data/big.csv" in by_path
    assert "big.log" not in by_path
    by_name = _grep(fs, pattern="needle", glob="*.log")
    assert "/workspace/big.log" in by_name
    assert "big.csv" not in by_name


def test_a_skipped_file_the_agent_may_not_see_is_not_named(tmp_path: Path) -> None:
    (tmp_path / ".deepagent").mkdir()
    (tmp_path / ".deepagent" / "checkpoints.sqlite").write_text("z" * 2000)
    (tmp_path / ".env.large").write_text("KEY=" + "z" * 2000)
    (tmp_path / "visible.txt").write_text("v" * 2000)
    guarded = GuardedFolder(DiskBackend(tmp_path, max_file_bytes=1000))
    answer = _grep(_workspace(guarded), pattern="needle")
    assert "/workspace/visible.txt" in answer
    assert "checkpoints" not in answer
    assert ".env" not in answer
    assert "Not searched: 1 file " in answer


def test_a_search_that_skips_nothing_says_nothing_more(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("needle\n")
    fs = _workspace(DiskBackend(tmp_path))
    assert _grep(fs, pattern="needle") == "/workspace/a.txt"
