"""Glob and the grep filter answer as deepagents' do: its own glob tests, ported as a table.

The cases come from deepagents' `tests/unit_tests/backends/test_glob_semantics.py` (the matrix,
the hidden-folder cases, the patterns it checks its sandbox script against, the brace cases) and
`test_utils.py` (`TestGlobSearchFiles`, `TestGrepIncludeGlob`), plus a few of ours for the same
rules. Each case runs through the project's backends (state, disk, and mounts) and, when
deepagents is installed (the `bench` extra), through deepagents' own `FilesystemBackend` and
in-memory matcher in the same test, so the expectation is checked against deepagents, not copied
from it. A property test compares the two matchers on generated patterns.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from jupyter_deepagent import BackendError
from jupyter_deepagent.backends import (
    CompositeBackend,
    DiskBackend,
    StateBackend,
    glob_matches,
)
from jupyter_deepagent.backends.state import FileData

HAVE_DEEPAGENTS = importlib.util.find_spec("deepagents") is not None

# deepagents' matrix tree, with the extra file of its hidden-folder cases
TREE = (
    "/a.py",
    "/sub/b.py",
    "/sub/nested/c.py",
    "/readme.md",
    "/.hidden.py",
    "/.hidden/x.py",
    "/.github/workflows/ci.yml",
    "/.hidden/nested/y.py",
)

_BARE_PY = {"/a.py", "/sub/b.py", "/sub/nested/c.py", "/.hidden/x.py", "/.hidden/nested/y.py"}
_WALKED_PY = {"/a.py", "/sub/b.py", "/sub/nested/c.py"}
_NOT_DOT_NAMED = {
    "/a.py",
    "/sub/b.py",
    "/sub/nested/c.py",
    "/readme.md",
    "/.hidden/x.py",
    "/.hidden/nested/y.py",
    "/.github/workflows/ci.yml",
}

# (pattern, search path, the files glob finds)
GLOB_CASES: list[tuple[str, str, set[str]]] = [
    # deepagents' matrix: a pattern without `/` matches names at any depth, dot-folders included
    ("*.py", "/", _BARE_PY),
    ("**/*.py", "/", _WALKED_PY),
    ("*.md", "/", {"/readme.md"}),
    ("sub/*.py", "/", {"/sub/b.py"}),
    ("sub/**/*.py", "/", {"/sub/b.py", "/sub/nested/c.py"}),
    ("/*.py", "/", {"/a.py"}),
    ("a.py/**", "/", set()),
    ("*.py", "/sub", {"/sub/b.py", "/sub/nested/c.py"}),
    ("*.yml", "/", {"/.github/workflows/ci.yml"}),
    ("**/*.yml", "/", set()),
    (".github/**/*.yml", "/", {"/.github/workflows/ci.yml"}),
    (".hidden.py", "/", {"/.hidden.py"}),
    (".*.py", "/", {"/.hidden.py"}),
    ("*", "/", _NOT_DOT_NAMED),
    ("*.{py,md}", "/", _BARE_PY | {"/readme.md"}),
    ("*.{yml,yaml}", "/", {"/.github/workflows/ci.yml"}),
    ("?.py", "/", _BARE_PY),
    ("[ab].py", "/", {"/a.py", "/sub/b.py"}),
    ("[!a].py", "/", _BARE_PY - {"/a.py"}),
    ("[^a].py", "/", _BARE_PY - {"/a.py"}),
    # its hidden-folder cases
    (".hidden/*.py", "/", {"/.hidden/x.py"}),
    (".hidden/**/*.py", "/", {"/.hidden/x.py", "/.hidden/nested/y.py"}),
    # the patterns it checks its sandbox script against (not yet above)
    ("*.{py,yml}", "/", _BARE_PY | {"/.github/workflows/ci.yml"}),
    ("{a,b}.py", "/", {"/a.py", "/sub/b.py"}),
    ("{a,{b,c}}.py", "/", {"/a.py", "/sub/b.py", "/sub/nested/c.py"}),
    ("sub/", "/", set()),
    ("*.py/", "/", set()),
    ("sub//b.py", "/", {"/sub/b.py"}),
    # the same rules, more of them
    ("**", "/", _NOT_DOT_NAMED),
    ("**/*", "/", {"/a.py", "/readme.md", "/sub/b.py", "/sub/nested/c.py"}),
    ("/**", "/", {"/a.py", "/readme.md", "/sub/b.py", "/sub/nested/c.py"}),
    (".*", "/", {"/.hidden.py"}),
    (".*/**", "/", {"/.github/workflows/ci.yml", "/.hidden/x.py", "/.hidden/nested/y.py"}),
    ("sub/**", "/", {"/sub/b.py", "/sub/nested/c.py"}),
    ("sub/**/", "/", set()),
    ("**/.hidden/*.py", "/", {"/.hidden/x.py"}),
    ("*/*.py", "/", {"/sub/b.py"}),
    ("*/**/*.yml", "/", set()),
    ("**/nested/*", "/", {"/sub/nested/c.py"}),
    ("[.]hidden.py", "/", set()),
    ("?hidden.py", "/", set()),
    ("a\\.py", "/", {"/a.py"}),
    ("\\*.py", "/", set()),
    ("{.hidden,sub}/*.py", "/", {"/.hidden/x.py", "/sub/b.py"}),
    # from a subfolder: relative to it, and a leading `/` anchors there
    ("/*.py", "/sub", {"/sub/b.py"}),
    ("nested/*.py", "/sub", {"/sub/nested/c.py"}),
    ("/nested/*.py", "/sub", {"/sub/nested/c.py"}),
    ("*.py", "/.hidden", {"/.hidden/x.py", "/.hidden/nested/y.py"}),
    ("**/*.py", "/.hidden", {"/.hidden/x.py", "/.hidden/nested/y.py"}),
    ("*", "/.github", {"/.github/workflows/ci.yml"}),
]

# deepagents' `TestGlobSearchFiles` and `TestGrepIncludeGlob` trees and cases
SAMPLE = (
    "/src/main.py",
    "/src/utils/helper.py",
    "/src/utils/common.py",
    "/docs/readme.md",
    "/test.py",
)
SAMPLE_CASES: list[tuple[str, str, set[str]]] = [
    ("*.py", "/", {"/test.py", "/src/main.py", "/src/utils/helper.py", "/src/utils/common.py"}),
    ("**/*.py", "/", {"/test.py", "/src/main.py", "/src/utils/helper.py", "/src/utils/common.py"}),
    ("*.py", "/src/", {"/src/main.py", "/src/utils/helper.py", "/src/utils/common.py"}),
    ("*.py", "/src/utils/", {"/src/utils/helper.py", "/src/utils/common.py"}),
    ("*.xyz", "/", set()),
    ("src/**/*.py", "/", {"/src/main.py", "/src/utils/helper.py", "/src/utils/common.py"}),
    ("/*.py", "/", {"/test.py"}),
    ("/src/**/*.py", "/", {"/src/main.py", "/src/utils/helper.py", "/src/utils/common.py"}),
]
GREP_SAMPLE = ("/src/app/main.py", "/top.py", "/README.md")
# (grep's glob filter, search path, the files whose lines it searches)
GREP_CASES: list[tuple[str, str, set[str]]] = [
    ("src/**/*.py", "/", {"/src/app/main.py"}),
    ("**/*.py", "/", {"/src/app/main.py", "/top.py"}),
    ("*.py", "/", {"/src/app/main.py", "/top.py"}),
    ("*.md", "/", {"/README.md"}),
    ("app/*.py", "/src", {"/src/app/main.py"}),
    ("/*.py", "/", {"/top.py"}),
    ("/src/**/*.py", "/", {"/src/app/main.py"}),
]
# its brace cases: (files, pattern, found)
BRACE_CASES: list[tuple[tuple[str, ...], str, set[str]]] = [
    (("/probe.py",), "{a,}" * 4 + "probe.py", {"/probe.py"}),
    (("/{probe}.py",), "{probe}.py", {"/{probe}.py"}),
    (("/a.py", "/b.py", "/c.py", "/d.py"), "{a,{b,c}}.py", {"/a.py", "/b.py", "/c.py"}),
    (("/{x}a.py", "/{x}b.py"), "{x}{a,b}.py", {"/{x}a.py", "/{x}b.py"}),
]


def _state(files: tuple[str, ...]) -> StateBackend:
    stamp = "2024-01-01T00:00:00"
    data: dict[str, FileData] = {
        path: {"content": "import x\n", "created_at": stamp, "modified_at": stamp} for path in files
    }
    return StateBackend(data)


def _write_tree(root: Path, files: tuple[str, ...]) -> Path:
    for path in files:
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("import x\n")
    return root


Backends = dict[str, Any]


def _ours(tmp_path: Path, files: tuple[str, ...]) -> Backends:
    """The project's backends holding `files`: state, disk, and mounts (`/sub/` on disk, the
    rest in state, when the tree has a `/sub/`)."""
    disk = _write_tree(tmp_path / "ours", files)
    rest = tuple(path for path in files if not path.startswith("/sub/"))
    mounts = {"/sub/": DiskBackend(disk / "sub")} if len(rest) < len(files) else {}
    mounted = CompositeBackend(_state(rest), mounts)
    return {"state": _state(files), "disk": DiskBackend(disk), "mounted": mounted}


def _theirs(tmp_path: Path, files: tuple[str, ...]) -> dict[str, Callable[..., set[str]]]:
    """deepagents' answers over the same files: its disk backend and its in-memory matcher."""
    if not HAVE_DEEPAGENTS:
        return {}
    from deepagents.backends.filesystem import FilesystemBackend
    from deepagents.backends.utils import _glob_search_files, grep_matches_from_files

    disk = FilesystemBackend(
        root_dir=str(_write_tree(tmp_path / "theirs", files)), virtual_mode=True
    )
    stamp = "2024-01-01T00:00:00"
    memory = {path: {"content": "import x\n", "modified_at": stamp} for path in files}

    def disk_glob(pattern: str, path: str) -> set[str]:
        return {info["path"] for info in disk.glob(pattern, path=path).matches or []}

    def memory_glob(pattern: str, path: str) -> set[str]:
        found = _glob_search_files(memory, pattern, path)
        return set() if found == "No files found" else set(found.split("\n"))

    def memory_grep(glob: str, path: str) -> set[str]:
        found = grep_matches_from_files(memory, "import", path, glob=glob)
        return {match["path"] for match in found.matches or []}

    return {"disk": disk_glob, "memory": memory_glob, "grep": memory_grep}


def _paths(infos: list[Any]) -> set[str]:
    return {info.path for info in infos}


@pytest.mark.parametrize(("pattern", "path", "expected"), GLOB_CASES)
def test_glob_matrix(tmp_path: Path, pattern: str, path: str, expected: set[str]) -> None:
    for name, backend in _ours(tmp_path, TREE).items():
        assert _paths(backend.glob(pattern, path)) == expected, name
    theirs = _theirs(tmp_path, TREE)
    for name in ("disk", "memory"):
        if name in theirs:
            assert theirs[name](pattern, path) == expected, f"deepagents {name}"


@pytest.mark.parametrize(("pattern", "path", "expected"), SAMPLE_CASES)
def test_glob_search_files_cases(
    tmp_path: Path, pattern: str, path: str, expected: set[str]
) -> None:
    for name, backend in _ours(tmp_path, SAMPLE).items():
        assert _paths(backend.glob(pattern, path)) == expected, name
    theirs = _theirs(tmp_path, SAMPLE)
    if theirs:
        assert theirs["memory"](pattern, path) == expected


@pytest.mark.parametrize(("glob", "path", "expected"), GREP_CASES)
def test_grep_filter_matrix(tmp_path: Path, glob: str, path: str, expected: set[str]) -> None:
    for name, backend in _ours(tmp_path, GREP_SAMPLE).items():
        assert {match.path for match in backend.grep("import", path, glob)} == expected, name
    theirs = _theirs(tmp_path, GREP_SAMPLE)
    if theirs:
        assert theirs["grep"](glob, path) == expected


@pytest.mark.parametrize(("files", "pattern", "expected"), BRACE_CASES)
def test_brace_cases(
    tmp_path: Path, files: tuple[str, ...], pattern: str, expected: set[str]
) -> None:
    for name, backend in _ours(tmp_path, files).items():
        assert _paths(backend.glob(pattern, "/")) == expected, name
    theirs = _theirs(tmp_path, files)
    if theirs:
        assert theirs["disk"](pattern, "/") == expected


@pytest.mark.parametrize("pattern", ["../*.py", "sub/../*.py", "{a,b}" * 18 + "probe.py"])
def test_traversal_and_brace_bombs_are_refused(tmp_path: Path, pattern: str) -> None:
    for name, backend in _ours(tmp_path, TREE).items():
        with pytest.raises(BackendError):
            backend.glob(pattern, "/")
        with pytest.raises(BackendError):
            backend.grep("import", "/", pattern)
        assert name
    if HAVE_DEEPAGENTS:
        from deepagents.backends.utils import compile_grep_include_glob

        with pytest.raises(ValueError, match="glob pattern"):
            compile_grep_include_glob(pattern)


def test_grep_without_a_filter_still_searches_dot_files(tmp_path: Path) -> None:
    """Only the glob language skips dot-names: a grep over a folder reads every file."""
    for name, backend in _ours(tmp_path, TREE).items():
        found = {match.path for match in backend.grep("import", "/")}
        assert found == set(TREE), name


# -- the two matchers on generated patterns ------------------------------------------------------

_PIECES = [
    "a",
    "b",
    ".",
    "/",
    "*",
    "**",
    "?",
    "[ab]",
    "[!a]",
    "[.a]",
    "**/",
    "{a,b}",
    "{.a,b/}",
    "\\*",
]
_patterns = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=7).map("".join)
_names = st.sampled_from(["a", "b", "ab", ".a", ".b", "a.b", "*", "a.ab"])
_file_paths = st.lists(_names, min_size=1, max_size=5).map("/".join)


@pytest.mark.skipif(not HAVE_DEEPAGENTS, reason="deepagents not installed (the test extra has it)")
@settings(max_examples=1500, deadline=None)
@given(pattern=_patterns, path=_file_paths)
def test_glob_matches_as_deepagents_does(pattern: str, path: str) -> None:
    from deepagents.backends.utils import compile_grep_include_glob

    assume(".." not in pattern.replace("\\", "/").split("/"))
    theirs = compile_grep_include_glob(pattern)(path)
    assert glob_matches(pattern, "/" + path, "/") == theirs
