"""CompositeBackend: one tree over several backends, always speaking in full virtual paths."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from jupyter_deepagent import EditConflict, FileNotFound, InvalidPath, PermissionDenied
from jupyter_deepagent.backends import (
    CompositeBackend,
    DiskBackend,
    FileInfo,
    StateBackend,
    StoreBackend,
)


@pytest.fixture
def parts(tmp_path: Path) -> dict[str, object]:
    return {
        "scratch": StateBackend(),
        "memories": StoreBackend(),
        "workspace": DiskBackend(tmp_path),
        "team": StateBackend(),
    }


@pytest.fixture
def tree(parts: dict[str, object]) -> CompositeBackend:
    return CompositeBackend(
        parts["scratch"],  # type: ignore[arg-type]
        {
            "/memories/": parts["memories"],  # type: ignore[dict-item]
            "workspace": parts["workspace"],  # type: ignore[dict-item]
            "/memories/team": parts["team"],  # type: ignore[dict-item]
        },
    )


def paths(infos: list[FileInfo]) -> list[str]:
    return [info.path for info in infos]


def test_routes_are_normalized_to_folder_prefixes(tree: CompositeBackend) -> None:
    assert sorted(tree.routes) == ["/memories/", "/memories/team/", "/workspace/"]


def test_each_path_goes_to_its_mount(tree: CompositeBackend, parts: dict, tmp_path: Path) -> None:
    tree.write("/memories/prefs.md", "likes tables")
    tree.write("/workspace/report.md", "draft")
    tree.write("/scratch.md", "temp")
    assert parts["memories"].read("/prefs.md").lines == ["likes tables"]
    assert (tmp_path / "report.md").read_text() == "draft"
    assert parts["scratch"].read("/scratch.md").lines == ["temp"]


def test_the_longest_prefix_wins(tree: CompositeBackend, parts: dict) -> None:
    tree.write("/memories/team/shared.md", "for everyone")
    assert parts["team"].read("/shared.md").lines == ["for everyone"]
    with pytest.raises(FileNotFound):
        parts["memories"].read("/team/shared.md")
    assert tree.backend_for("/memories/team/shared.md") == (parts["team"], "/shared.md")
    assert tree.backend_for("memories/x.md") == (parts["memories"], "/x.md")
    assert tree.backend_for("/memories") == (parts["memories"], "/")
    assert tree.backend_for("/memoriesx/a.md") == (parts["scratch"], "/memoriesx/a.md")


def test_every_result_carries_the_full_virtual_path(tree: CompositeBackend) -> None:
    assert tree.write("/memories/a.md", "x\nx").path == "/memories/a.md"
    assert tree.read("/memories/a.md").path == "/memories/a.md"
    assert tree.edit("/memories/a.md", "x", "y", replace_all=True).path == "/memories/a.md"
    assert paths(tree.ls("/memories/a.md")) == ["/memories/a.md"]
    assert paths(tree.glob("*.md", "/memories/")) == ["/memories/a.md"]
    assert [match.path for match in tree.grep("y", "/memories")] == ["/memories/a.md"] * 2


def test_ls_root_shows_the_mount_points_as_folders(tree: CompositeBackend) -> None:
    tree.write("/notes/a.md", "a")
    tree.write("/z.md", "z")
    listed = tree.ls("/")
    assert paths(listed) == ["/memories/", "/notes/", "/workspace/", "/z.md"]
    assert all(info.is_dir for info in listed[:3])


def test_ls_shows_nested_mounts_and_no_duplicates(tree: CompositeBackend) -> None:
    tree.write("/memories/a.md", "a")
    assert paths(tree.ls("/memories/")) == ["/memories/a.md", "/memories/team/"]
    tree.write("/memories/team/t.md", "t")
    assert paths(tree.ls("/memories")) == ["/memories/a.md", "/memories/team/"]
    assert paths(tree.ls("/memories/team/")) == ["/memories/team/t.md"]


def test_ls_of_a_folder_holding_only_a_mount_lists_it(parts: dict) -> None:
    tree = CompositeBackend(parts["scratch"], {"/a/b/": parts["memories"]})
    assert paths(tree.ls("/a/")) == ["/a/b/"]
    assert paths(tree.ls("/")) == ["/a/"]


def test_files_in_the_default_under_a_mount_are_shadowed(parts: dict) -> None:
    parts["scratch"].write("/memories/hidden.md", "shadowed")
    tree = CompositeBackend(parts["scratch"], {"/memories/": parts["memories"]})
    assert paths(tree.ls("/")) == ["/memories/"]
    assert tree.glob("**") == []
    assert tree.grep("shadowed") == []


def test_glob_and_grep_span_every_mount(tree: CompositeBackend) -> None:
    tree.write("/notes.md", "topic: mounts")
    tree.write("/memories/m.md", "topic: memory")
    tree.write("/memories/team/t.md", "topic: team")
    tree.write("/workspace/w.md", "topic: workspace")
    tree.write("/workspace/w.txt", "topic: text")
    everything = ["/memories/m.md", "/memories/team/t.md", "/notes.md", "/workspace/w.md"]
    assert paths(tree.glob("**/*.md")) == everything
    assert paths(tree.glob("*.md")) == everything  # a name, at any depth, across mounts
    assert paths(tree.glob("/*.md")) == ["/notes.md"]
    assert paths(tree.glob("memories/**/*.md")) == ["/memories/m.md", "/memories/team/t.md"]
    assert paths(tree.glob("/workspace/*.{md,txt}")) == ["/workspace/w.md", "/workspace/w.txt"]
    assert [match.path for match in tree.grep("topic", glob="*.md")] == everything
    assert [match.path for match in tree.grep("topic", glob="memories/*.md")] == ["/memories/m.md"]
    assert [match.path for match in tree.grep("topic", "/memories/")] == everything[:2]


def test_mount_points_cannot_be_written_or_deleted(tree: CompositeBackend) -> None:
    tree.write("/memories/keep.md", "k")
    for attempt in (
        lambda: tree.delete("/memories/"),
        lambda: tree.delete("/memories"),
        lambda: tree.delete("/memories/team"),
        lambda: tree.write("/workspace", "x"),
    ):
        with pytest.raises(PermissionDenied, match="mount point"):
            attempt()
    assert tree.read("/memories/keep.md").lines == ["k"]
    with pytest.raises(PermissionDenied, match="is a mount point; delete the files under it"):
        tree.delete("/memories/")


def test_files_under_a_mount_can_be_deleted(tree: CompositeBackend) -> None:
    tree.write("/memories/old/a.md", "a")
    tree.delete("/memories/old/")
    with pytest.raises(FileNotFound):
        tree.ls("/memories/old/")


def test_errors_from_a_mount_name_the_full_path(tree: CompositeBackend) -> None:
    with pytest.raises(FileNotFound) as missing:
        tree.read("/memories/nope.md")
    assert missing.value.path == "/memories/nope.md"
    assert "ls('/memories/')" in str(missing.value)
    tree.write("/workspace/dup.md", "a a")
    with pytest.raises(EditConflict, match="found 2 times in /workspace/dup.md") as conflict:
        tree.edit("/workspace/dup.md", "a", "b")
    assert conflict.value.matches == 2
    with pytest.raises(InvalidPath, match="/memories/ is a folder"):
        tree.read("/memories")


def test_a_route_at_the_root_is_refused(parts: dict) -> None:
    with pytest.raises(ValueError, match="default"):
        CompositeBackend(parts["scratch"], {"/": parts["memories"]})


def test_async_twins_route_the_same_way(tree: CompositeBackend, parts: dict) -> None:
    async def session() -> list[str]:
        await tree.awrite("/memories/async.md", "from a coroutine")
        return paths(await tree.als("/memories/"))

    assert asyncio.run(session()) == ["/memories/async.md", "/memories/team/"]
    assert parts["memories"].read("/async.md").lines == ["from a coroutine"]


class _MountAwareBackend(StateBackend):
    """A backend that knows where it is mounted and says so in its hints."""

    def read(self, path, offset=0, limit=2000):
        from jupyter_deepagent import FileNotFound

        msg = f"no cell {path}; ls /notebook/cells/ lists executed cells"
        raise FileNotFound(msg, path=path)


def test_a_mount_aware_backend_keeps_its_own_not_found_hint() -> None:
    composite = CompositeBackend(StateBackend(), {"/notebook/": _MountAwareBackend()})
    with pytest.raises(FileNotFound, match="ls /notebook/cells/ lists executed cells"):
        composite.read("/notebook/cells/7.py")
