"""Another thread flips symlinks inside the workspace while the agent's /workspace/ backend reads
and writes through them: nothing is read from or written outside, the settings file is never
written, and every failure is one of this project's errors."""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from jupyter_deepagent import ResearchAssistantError
from jupyter_deepagent.backends import DiskBackend
from jupyter_deepagent.project.workspace import GuardedFolder

PASSWD = "root:x:0:0:outside the workspace:/root:/bin/sh\n"
SETTINGS = "workspace_read_only = true\n"
OPERATIONS = 2_000


def swap_link(link: Path, target: str) -> None:
    """Point `link` at `target` in one step (a new link renamed over the old entry)."""
    spare = link.with_name(link.name + ".next")
    os.symlink(target, spare)
    os.replace(spare, link)


def swap_file(path: Path, text: str) -> None:
    """Make `path` a regular file holding `text`, in one step."""
    spare = path.with_name(path.name + ".next")
    spare.write_text(text)
    os.replace(spare, path)


def flip(workspace: Path, outside: Path, stop: threading.Event) -> None:
    """Until stopped, flip each racing entry between something inside and something outside:
    a link's target, a real folder and a link to an outside folder, a real file and a link to an
    outside file or to the settings file."""
    box, parked = workspace / "box", workspace / "box.parked"
    while not stop.is_set():
        swap_link(workspace / "folder", str(outside))
        swap_file(workspace / "file", "inside\n")
        swap_link(workspace / "settings", ".deepagent.toml")
        box.rename(parked)
        with contextlib.suppress(FileExistsError):  # a write may have made a new `box` folder
            box.symlink_to(outside, target_is_directory=True)
        swap_link(workspace / "folder", str(workspace / "inside"))
        swap_link(workspace / "file", str(outside / "passwd"))
        swap_file(workspace / "settings", "inside\n")
        while parked.exists():  # writes may keep making a new `box` folder: clear it and retry
            with contextlib.suppress(OSError):
                if box.is_symlink():
                    box.unlink()
                elif box.exists():
                    shutil.rmtree(box)
                parked.rename(box)


@pytest.fixture
def racing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[GuardedFolder, Path, Path]]:
    """The guarded workspace with four entries flipping between inside and outside.

    fsync is skipped (it flushes the temporary file, which is not what is raced here) so that
    thousands of writes take seconds, not minutes."""
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    workspace, outside = tmp_path / "workspace", tmp_path / "outside"
    for folder in (workspace / "inside", workspace / "box", outside):
        folder.mkdir(parents=True)
    for folder in (workspace / "inside", workspace / "box", outside):
        (folder / "data.txt").write_text(PASSWD if folder == outside else "inside\n")
    (outside / "passwd").write_text(PASSWD)
    (workspace / "file").write_text("inside\n")
    (workspace / ".deepagent.toml").write_text(SETTINGS)
    (workspace / "folder").symlink_to(workspace / "inside")
    (workspace / "settings").symlink_to("file")
    stop = threading.Event()
    flipper = threading.Thread(target=flip, args=(workspace, outside, stop), daemon=True)
    flipper.start()
    try:
        yield GuardedFolder(DiskBackend(workspace)), workspace, outside
    finally:
        stop.set()
        flipper.join()


def leftover_temporary_files(workspace: Path) -> list[str]:
    """The writes' temporary files left in `workspace`. `os.walk` skips a folder the flipper
    renames while it is listed (a `Path.rglob` raised FileNotFoundError then), and the flipper
    never makes such files itself."""
    return [
        name
        for _, _, names in os.walk(workspace)
        for name in names
        if name.startswith(".deepagent-") and name.endswith(".tmp")
    ]


def tally(operation: Callable[[int], str], count: int) -> Counter[str]:
    """Run `operation(i)` `count` times; count what each returned, or which error it raised.

    An error outside this project's tree is counted as "untyped: <class>"."""
    seen: Counter[str] = Counter()
    for i in range(count):
        try:
            seen[operation(i)] += 1
        except ResearchAssistantError as exc:
            seen[f"refused: {type(exc).__name__}"] += 1
        except Exception as exc:  # exactly what the test counts
            seen[f"untyped: {type(exc).__name__}: {exc}"] += 1
    return seen


def test_reads_through_flipping_links_never_return_outside_content(
    racing: tuple[GuardedFolder, Path, Path],
) -> None:
    guarded, _, _ = racing
    paths = ("/folder/data.txt", "/box/data.txt", "/file", "/settings")

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
    paths = ("/folder/new.txt", "/box/data.txt", "/box/new.txt", "/file", "/settings")

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
    assert not leftover_temporary_files(workspace)
