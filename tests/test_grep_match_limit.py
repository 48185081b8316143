"""A grep whose pattern hits every line stops at its match limit, and its answer says so."""

from __future__ import annotations

import threading
from typing import Any

from notebook_shell import shell  # noqa: F401
from test_filesystem_tools import Files

from jupyter_deepagent.backends import limiting_matches
from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.harness.tools._format import GREP_MATCH_LIMIT
from jupyter_deepagent.project.workspace import GuardedFolder
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend

LINES = 300_000


def _numbered(count: int) -> str:
    return "".join(f"row {i} value\n" for i in range(count))


def _within(seconds: float, action: Any) -> Any:
    """Run `action` in a thread; fail (not hang the suite) if it is not done in `seconds`."""
    result: list[Any] = []
    worker = threading.Thread(target=lambda: result.append(action()), daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), f"grep still running after {seconds} s"
    return result[0]


def test_grep_tool_shows_the_first_lines_and_says_the_search_stopped() -> None:
    files = Files()
    files("write_file", file_path="/big.txt", content=_numbered(LINES))

    answer = files("grep", pattern="value", output_mode="content")

    rows = answer.splitlines()
    assert rows[0] == "/big.txt:1: row 0 value"
    assert f"Showing 500 of {GREP_MATCH_LIMIT:,}+ matching lines" in answer
    assert f"The search stopped after the first {GREP_MATCH_LIMIT:,} matching lines" in answer
    assert f"after /big.txt:{GREP_MATCH_LIMIT}" in answer
    assert "Narrow the search" in answer
    assert f"{LINES:,}" not in answer  # no total it never counted
    assert files.acall("grep", pattern="value", output_mode="content") == answer


def test_grep_count_mode_says_at_least() -> None:
    files = Files()
    files("write_file", file_path="/a.txt", content="value\n" * 3)
    files("write_file", file_path="/big.txt", content=_numbered(LINES))
    files("write_file", file_path="/c.txt", content="value\n")

    answer = files("grep", pattern="value", output_mode="count")

    assert answer.splitlines()[:2] == ["/a.txt: 3", f"/big.txt: {GREP_MATCH_LIMIT - 3}+"]
    assert "/c.txt" not in answer
    assert "lower bound" in answer


def test_grep_files_mode_says_later_files_may_match() -> None:
    files = Files()
    files("write_file", file_path="/big.txt", content=_numbered(LINES))
    files("write_file", file_path="/z.txt", content="value\n")

    answer = files("grep", pattern="v.lue", regex=True)

    assert answer.splitlines()[0] == "/big.txt"
    assert "Files after it may match too" in answer


def test_grep_under_the_limit_says_nothing_more() -> None:
    files = Files()
    files("write_file", file_path="/a.txt", content=_numbered(GREP_MATCH_LIMIT))

    answer = files("grep", pattern="value", output_mode="count")

    assert answer == f"/a.txt: {GREP_MATCH_LIMIT}"


def test_every_backend_keeps_the_first_matches_by_path_and_line(tmp_path) -> None:
    (tmp_path / "a.txt").write_text(_numbered(50))
    (tmp_path / "b.txt").write_text(_numbered(50))
    state = StateBackend()
    state.write("/m/x.txt", _numbered(50))
    state.write("/m/y.txt", _numbered(50))
    disk = DiskBackend(tmp_path)
    composite = CompositeBackend(state, {"/disk/": disk})
    for backend, first in ((disk, "/a.txt"), (state, "/m/x.txt"), (composite, "/disk/a.txt")):
        with limiting_matches(60) as cap:
            found = backend.grep("value", "/")
        assert len(found) == 60, backend
        assert (found[0].path, found[0].line_number) == (first, 1)
        assert cap.reached, backend
        with limiting_matches(200) as cap:
            assert len(backend.grep("value", "/")) in (100, 200)
        assert not cap.reached, backend  # every match was returned


def test_notebook_grep_over_300_000_matching_lines_stops_at_the_limit(shell) -> None:  # noqa: F811
    shell.run_cell(f"print({_numbered(LINES)!r}, end='')", store_history=True)
    backend = NotebookBackend(shell)

    def grep() -> Any:
        with limiting_matches(1_000) as cap:
            return backend.grep(r"row \d+ val", "/outputs/", regex=True), cap

    found, cap = _within(30, grep)

    assert [m.line for m in found] == [f"row {i} value" for i in range(1_000)]
    assert found[1].line_number == found[0].line_number + 1
    assert found[-1].line == "row 999 value"
    assert cap.reached
    composite = CompositeBackend(StateBackend(), {"/notebook/": backend})
    with limiting_matches(1_000) as cap:
        assert len(composite.grep("value", "/notebook/outputs/")) == 1_000
    assert cap.reached


def test_hidden_files_never_use_up_the_limit(tmp_path) -> None:
    """A hidden file's matches must not push a search over its limit (a one-bit oracle)."""
    (tmp_path / "visible.txt").write_text("probe\n" * 10)
    answers = []
    for hidden in ("probe here\n", "nothing\n"):
        (tmp_path / ".env").write_text(hidden)
        for redact in (None, str):
            folder = GuardedFolder(DiskBackend(tmp_path), redact=redact)
            with limiting_matches(10) as cap:
                found = folder.grep("probe", "/")
            answers.append((len(found), cap.reached))
    assert answers == [(10, False)] * 4
