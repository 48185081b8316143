"""A local process flips symlinks inside the workspace while the agent's /workspace/ backend reads
and writes through them: nothing is read from or written outside, the settings file is never
written, and every failure is one of this project's errors."""

from __future__ import annotations

import os
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_deepagent import ResearchAssistantError
from jupyter_deepagent.backends import DiskBackend
from jupyter_deepagent.jupyter.mounts import GuardedFolder

PASSWD = "root:x:0:0:outside the workspace:/root:/bin/sh\n"
SETTINGS = "workspace_read_only = true\n"
OPERATIONS = 2_000


def flip(links: dict[Path, tuple[str, str]], stop: threading.Event) -> None:
    """Swap each link between its two targets atomically (a new link renamed over it), in turn,
    until stopped."""
    turn = 0
    while not stop.is_set():
        for link, targets in links.items():
            spare = link.with_name(link.name + ".next")
            os.symlink(targets[turn % 2], spare)
            os.replace(spare, link)
        turn += 1


@pytest.fixture
def racing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[GuardedFolder, Path, Path]]:
    """The guarded workspace with three links flipping between inside and outside targets.

    fsync is skipped (it flushes the temporary file, which is not what is raced here) so that
    thousands of writes take seconds, not minutes."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    (workspace / "inside").mkdir(parents=True)
    outside.mkdir()
    (outside / "passwd").write_text(PASSWD)
    (outside / "data.txt").write_text(PASSWD)
    (workspace / "inside" / "data.txt").write_text("inside\n")
    (workspace / "notes.txt").write_text("inside\n")
    (workspace / ".deepagent.toml").write_text(SETTINGS)
    links = {
        workspace / "folder": (str(workspace / "inside"), str(outside)),
        workspace / "file": ("notes.txt", str(outside / "passwd")),
        workspace / "settings": ("notes.txt", ".deepagent.toml"),
    }
    for link, targets in links.items():
        link.symlink_to(targets[0])
    stop = threading.Event()
    flipper = threading.Thread(target=flip, args=(links, stop), daemon=True)
    flipper.start()
    try:
        yield GuardedFolder(DiskBackend(workspace)), workspace, outside
    finally:
        stop.set()
        flipper.join()


def tally(operation: Callable[[int], str], count: int) -> Counter[str]:
    """Run `operation(i)` `count` times; count what each returned, or which error it raised.

    An error outside this project's tree is counted as "untyped: <class>"."""
    seen: Counter[str] = Counter()
    for i in range(count):
        try:
            seen[operation(i)] += 1
        except ResearchAssistantError as exc:
            seen[f"refused: {type(exc).__name__}"] += 1
        except Exception as exc:  # noqa: BLE001 - exactly what the test counts
            seen[f"untyped: {type(exc).__name__}: {exc}"] += 1
    return seen


def test_reads_through_flipping_links_never_return_outside_content(
    racing: tuple[GuardedFolder, Path, Path],
) -> None:
    guarded, _, _ = racing
    paths = ("/folder/data.txt", "/file", "/settings")

    def read(i: int) -> str:
        return "\n".join(guarded.read(paths[i % len(paths)]).lines)

    seen = tally(read, OPERATIONS)
    assert sum(seen.values()) == OPERATIONS
    assert not any("root:x" in outcome for outcome in seen), seen
    assert not any(outcome.startswith("untyped") for outcome in seen), seen
    assert seen["inside"] > 0  # reads succeeded while the links pointed inside,
    assert seen["refused: InvalidPath"] > 0  # and were refused while they pointed out


def test_writes_through_flipping_links_never_land_outside_or_on_the_settings(
    racing: tuple[GuardedFolder, Path, Path],
) -> None:
    guarded, workspace, outside = racing
    paths = ("/folder/new.txt", "/folder/data.txt", "/file", "/settings")

    def write(i: int) -> str:
        path = paths[i % len(paths)]
        if i % 3 == 2:
            guarded.edit(path, "inside", "inside")  # same length, so a later read still matches
            return "edited"
        guarded.write(path, "inside\n")
        return "written"

    seen = tally(write, OPERATIONS)
    assert sum(seen.values()) == OPERATIONS
    assert not any(outcome.startswith("untyped") for outcome in seen), seen
    assert seen["written"] > 0 and seen["edited"] > 0
    assert seen["refused: InvalidPath"] > 0 and seen["refused: PermissionDenied"] > 0
    assert sorted(p.name for p in outside.iterdir()) == ["data.txt", "passwd"]
    assert (outside / "passwd").read_text() == PASSWD
    assert (outside / "data.txt").read_text() == PASSWD
    assert (workspace / ".deepagent.toml").read_text() == SETTINGS
    assert not [p.name for p in workspace.rglob(".deepagent-*.tmp")]
