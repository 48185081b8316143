"""A 50 MB cell output in `/notebook/`: paged from a masked spill, never held whole.

The output sits in IPython's history (as a terminal, or a kernel started before the extension,
has it); the agent reads pages of it, greps it, and never sees a secret printed inside it.
"""

from __future__ import annotations

import os
import stat
import tracemalloc
from functools import lru_cache

import pytest
from IPython.core.history import HistoryOutput
from IPython.core.interactiveshell import InteractiveShell
from notebook_shell import shell  # noqa: F401

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.matching import _matching
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend

KEY = "AIza" + "SyPagedOutputTestKey0123456789abcdefg"
PASSWORD = "correct-" + "horse-battery-staple"
LINES = 640_000  # about 50 MB
BOUNDARY = 1 << 20  # blocks of lines are cut at the first line break after each MiB


def _line(i: int) -> str:
    return f"{i:06d} station glacier mass loss 1.25 -0.4 year value ok station loss station"


def _last_line_before(text: str, position: int) -> int:
    """The 0-based line holding `position`: the last line of the block cut after it."""
    return text.count("\n", 0, text.find("\n", position))


@lru_cache(maxsize=1)
def big_output() -> str:
    """The output text: a private-key block across the first block boundary, and secrets on
    the lines either side of the second (every line keeps its length, so the cuts stay)."""
    lines = [_line(i) for i in range(LINES)]
    width = len(lines[0])
    plain = "\n".join(lines)
    first = _last_line_before(plain, BOUNDARY)
    second = _last_line_before(plain, plain.find("\n", BOUNDARY) + 1 + BOUNDARY)
    lines[first - 1 : first + 3] = [
        "-----BEGIN RSA PRIVATE KEY-----".ljust(width),
        "MIIEbodyzero".ljust(width, "A"),
        "MIIEbodyone".ljust(width, "B"),
        "-----END RSA PRIVATE KEY-----".ljust(width),
    ]
    lines[second] = f"last line of a block: {KEY}".ljust(width)
    lines[second + 1] = f"first line of the next: password={PASSWORD}".ljust(width)
    return "\n".join(lines)


def _boundary_lines() -> tuple[int, int]:
    """0-based lines of the output holding the key block's first body line and KEY."""
    text = big_output()
    first = _last_line_before(text, BOUNDARY)
    return first, _last_line_before(text, text.find("\n", BOUNDARY) + 1 + BOUNDARY)


def _with_output(ipython: InteractiveShell, text: str, count: int = 1) -> None:
    history = ipython.history_manager
    while len(history.input_hist_raw) <= count:
        history.input_hist_raw.append("print(result)")
    writes = [text, "\n"]  # what `print(text)` leaves in IPython's history
    history.outputs[count] = [HistoryOutput(output_type="out_stream", bundle={"stream": writes})]


@pytest.fixture
def backend(shell: InteractiveShell) -> NotebookBackend:  # noqa: F811
    _with_output(shell, big_output())
    return NotebookBackend(shell, notebook_path=None)


def test_a_page_in_the_middle_holds_the_lines_asked_for(backend: NotebookBackend) -> None:
    page = backend.read("/outputs/1.txt", offset=400_001, limit=3)
    assert page.lines == [_line(400_000), _line(400_001), _line(400_002)]
    assert page.total_lines == LINES + 1  # the `[stdout]` label line first
    (info,) = backend.ls("/outputs/")
    assert info.size == len(f"[stdout]\n{big_output()}\n".encode())


def test_regex_grep_finds_a_line_near_the_end_with_its_number(backend: NotebookBackend) -> None:
    found = backend.grep(r"^63999[89] st\w+n", "/outputs/", regex=True)
    assert [(m.line_number, m.line) for m in found] == [
        (639_998 + 2, _line(639_998)),
        (639_999 + 2, _line(639_999)),
    ]


def test_secrets_at_a_block_boundary_are_masked_in_read_and_grep(
    shell: InteractiveShell,  # noqa: F811
) -> None:
    _with_output(shell, big_output())
    backend = NotebookBackend(shell, notebook_path=None, secrets=lambda: [PASSWORD])
    key_block, key = (line + 1 for line in _boundary_lines())  # lines of the file (label first)
    shown = [line.rstrip() for line in backend.read("/outputs/1.txt", key - 1, 4).lines]
    assert shown[1:3] == ["last line of a block: ***", "first line of the next: password=***"]
    around = backend.read("/outputs/1.txt", key_block - 2, 6).lines
    assert not any("MIIE" in line or "PRIVATE" in line for line in around), around
    for pattern, regex in (("AIza", False), ("horse", False), (r"AIza\w+", True), ("MIIE", False)):
        assert backend.grep(pattern, "/outputs/", regex=regex) == []
    masked = [m.line_number for m in backend.grep("***", "/outputs/")]
    assert masked == [key_block, key_block + 1, key_block + 2, key_block + 3, key + 1, key + 2]


def test_page_reads_allocate_far_less_than_the_output(backend: NotebookBackend) -> None:
    for offset in (300_000, 300_100, 10):  # the first reads index the output and mask a block
        tracemalloc.start()
        try:
            page = backend.read("/outputs/1.txt", offset=offset, limit=100)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert len(page.lines) == 100
        assert peak < 20 * 2**20, f"a page read allocated {peak / 2**20:.0f} MB at once"


def test_an_output_that_changes_is_read_anew_and_its_old_spill_dropped(
    shell: InteractiveShell,  # noqa: F811
) -> None:
    _with_output(shell, big_output())
    backend = NotebookBackend(shell, notebook_path=None)
    assert backend.grep(r"^000007 ", "/outputs/", regex=True)  # masks the whole output
    store = backend.capture.texts
    spilled = store.spilled_bytes()
    assert spilled > 40 * 2**20
    _with_output(shell, "\n".join(f"new {i}" for i in range(300_000)))  # the cell ran again
    assert backend.read("/outputs/1.txt", offset=1, limit=2).lines == ["new 0", "new 1"]
    assert backend.grep("000007 station", "/outputs/") == []
    assert store.spilled_bytes() < spilled / 10


def test_the_spill_folder_is_private_nameless_and_removed_on_close(
    backend: NotebookBackend, tmp_path
) -> None:
    backend.read("/outputs/1.txt", offset=10, limit=1)
    folder = backend.capture.texts.folder
    assert folder is not None and os.path.isdir(folder)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert os.listdir(folder) == []  # the spill files have no name anyone could open
    assert not folder.startswith(os.getcwd())
    backend.capture.uninstall()  # what the extension's unload (the session's end) does
    assert not os.path.exists(folder)


def test_a_backtracking_regex_over_a_big_output_stops_with_an_error(
    shell: InteractiveShell,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_matching, "REGEX_TIME_BUDGET", 0.3)
    _with_output(shell, "\n".join(["a" * 40 + "!"] * 50_000))
    backend = NotebookBackend(shell, notebook_path=None)
    with pytest.raises(BackendError, match="took too long"):
        backend.grep("(a|aa)+$", "/outputs/", regex=True)


def test_an_output_of_many_writes_is_joined_once(shell: InteractiveShell) -> None:  # noqa: F811
    text = big_output()
    writes = [text[at : at + 5_000_000] for at in range(0, len(text), 5_000_000)]
    shell.history_manager.input_hist_raw.append("for part in parts: print(part, end='')")
    shell.history_manager.outputs[1] = [
        HistoryOutput(output_type="out_stream", bundle={"stream": writes})
    ]
    backend = NotebookBackend(shell, notebook_path=None)
    assert backend.read("/outputs/1.txt", offset=1, limit=1).lines == [_line(0)]
    tracemalloc.start()
    try:
        page = backend.read("/outputs/1.txt", offset=200_001, limit=100)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert page.lines[0] == _line(200_000)
    assert peak < 20 * 2**20, f"a second read allocated {peak / 2**20:.0f} MB at once"
