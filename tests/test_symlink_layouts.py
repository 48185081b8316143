"""Generated symlink layouts and paths (10,000 cases): no operation on the notebook's /workspace/
backend reads or changes anything outside the folder, reads a hidden file, or changes a protected
one, and every refusal is one of this project's errors."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_deepagent import ResearchAssistantError
from jupyter_deepagent.backends import DiskBackend
from jupyter_deepagent.project.workspace import GuardedFolder

SENTINEL = "SENTINEL-outside"
HIDDEN = "HIDDEN-in-git"
SETTINGS = "workspace_read_only = true\n"

LINK_PLACES = ["l1", "a/l2", "a/b/l3", "new/l4"]
TARGETS = [
    ".", "..", "a", "a/b", "../..", "../outside", "../outside/secret.txt", "../rootx",
    "../../outside", "l1", "a/l2", "../l1", "missing", "a/b/file.txt", ".git", ".git/config",
    ".deepagent.toml", "../root/a", "{base}/outside", "{base}/outside/secret.txt",
    "{base}/root", "{base}/root/a/b", "{base}/root/../outside", "{base}/rootx", "{base}/root/.git",
]
PIECES = ["a", "b", "l1", "l2", "l3", "l4", "new", "file.txt", "secret.txt", "config", ".git",
          ".deepagent.toml", "outside", "..", ".", ""]
OPERATIONS = ["read", "write", "edit", "delete", "ls", "glob", "grep", "grep-hidden"]


FOLDERS = ("a", "a/b", ".git", "new")
FILES = {"a/b/file.txt": "inside\n", ".git/config": f"{HIDDEN}\n", ".deepagent.toml": SETTINGS}


class Layouts:
    """One root reused by every example: its links are changed to each example's, and after a call
    that changed the tree it is repaired, not rebuilt (every file operation costs time on a busy
    disk). Folders a refused write made on its way stay, which only varies the layouts further."""

    def __init__(self, base: Path) -> None:
        self.base, self.root = base, base / "root"
        self.links: dict[str, str] = {}
        for folder in ("outside", "rootx"):
            (base / folder).mkdir()
            (base / folder / "secret.txt").write_text(SENTINEL)
        self.root.mkdir()
        self.repair()
        self.guarded = GuardedFolder(DiskBackend(self.root))

    def repair(self) -> None:
        """Put the ordinary tree back: known folders and files as built, anything else gone."""
        for folder, folders, files in os.walk(self.root):
            here = os.path.relpath(folder, self.root)
            for name in [*files, *folders]:
                path = os.path.normpath(os.path.join(here, name))
                linked = _link(self.root / path)
                if linked is not None:
                    if self.links.get(path) != linked:
                        os.unlink(self.root / path)
                    if name in folders:
                        folders.remove(name)
                elif name in files and path not in FILES:
                    os.unlink(self.root / path)
                elif name in folders and path not in FOLDERS:
                    shutil.rmtree(self.root / path)
                    folders.remove(name)
        for folder in FOLDERS:
            (self.root / folder).mkdir(exist_ok=True)
        for path, text in FILES.items():
            if _text(self.root / path) != text:
                (self.root / path).write_text(text)
        self.links = {p: t for p, t in self.links.items() if _link(self.root / p) == t}

    def use(self, targets: tuple[str | None, ...]) -> Path:
        """The root with a link at each place of `LINK_PLACES` whose target is not None."""
        wanted = {
            place: target.format(base=self.base)
            for place, target in zip(LINK_PLACES, targets, strict=True)
            if target is not None
        }
        for place in set(wanted) | set(self.links):
            if wanted.get(place) != self.links.get(place):
                if place in self.links:
                    os.unlink(self.root / place)
                if place in wanted:
                    if os.path.isdir(self.root / place) and not os.path.islink(self.root / place):
                        shutil.rmtree(self.root / place)  # a refused write made this folder
                    os.symlink(wanted[place], self.root / place)
        self.links = wanted
        return self.root

    def outside(self) -> dict[str, str]:
        """What lies outside the root: every entry of the sibling folders and its text."""
        return {
            f"{folder}/{name}": (self.base / folder / name).read_text()
            for folder in ("outside", "rootx")
            for name in sorted(os.listdir(self.base / folder))
        }


def _link(path: Path) -> str | None:
    return os.readlink(path) if os.path.islink(path) else None


def _text(path: Path) -> str | None:
    try:
        return None if os.path.islink(path) else path.read_text()
    except OSError:
        return None


_LAYOUTS: dict[Path, Layouts] = {}
OUTSIDE = {"outside/secret.txt": SENTINEL, "rootx/secret.txt": SENTINEL}


def attempt(guarded: GuardedFolder, operation: str, path: str) -> object:
    if operation == "read":
        return guarded.read(path)
    if operation == "write":
        return guarded.write(path, "PWNED\n")
    if operation == "edit":
        return guarded.edit(path, "e", "PWNED")
    if operation == "delete":
        return guarded.delete(path)
    if operation == "ls":
        return guarded.ls(path)
    if operation == "glob":
        return guarded.glob("**", path)
    if operation == "grep":
        return guarded.grep("SENTINEL", path)
    return guarded.grep("HIDDEN", "/", glob=path or None)


@settings(
    max_examples=10_000,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    targets=st.tuples(*[st.sampled_from([*[None] * len(TARGETS), *TARGETS])] * len(LINK_PLACES)),
    pieces=st.tuples(*[st.sampled_from(PIECES)] * 5),
    operation=st.sampled_from(OPERATIONS),
)
def test_no_layout_or_path_escapes_or_reaches_a_guarded_file(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    targets: tuple[str | None, ...],
    pieces: tuple[str, ...],
    operation: str,
) -> None:
    monkeypatch.setattr(os, "fsync", lambda fd: None)  # durability is not what is tested here
    if tmp_path not in _LAYOUTS:
        _LAYOUTS[tmp_path] = Layouts(tmp_path)
    layouts = _LAYOUTS[tmp_path]
    layouts.use(targets)
    done = False
    try:
        result, done = attempt(layouts.guarded, operation, "/".join(pieces)), True
    except ResearchAssistantError:
        result = None
    changes = operation in ("write", "edit", "delete")
    if changes and done:
        layouts.repair()
    shown = repr(result)
    assert SENTINEL not in shown and HIDDEN not in shown and "PWNED" not in shown
    assert layouts.outside() == OUTSIDE
    if changes:
        root = layouts.root
        assert (root / ".git" / "config").read_text() == f"{HIDDEN}\n"
        assert (root / ".deepagent.toml").read_text() == SETTINGS
        assert not [name for name in os.listdir(root) if name.endswith(".tmp")]
