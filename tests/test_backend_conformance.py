"""Every backend behaves the same: what the agent sees does not depend on where bytes live."""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from jupyter_deepagent import (
    BackendError,
    EditConflict,
    FileNotFound,
    InvalidPath,
)
from jupyter_deepagent.backends import BackendProtocol, FileInfo, GrepMatch
from tests.conftest import MountedBackend


@pytest.fixture
def fs(any_backend: MountedBackend) -> MountedBackend:
    return any_backend


def paths(infos: list[FileInfo]) -> list[str]:
    return [info.path for info in infos]


def hits(matches: list[GrepMatch]) -> list[tuple[str, int, str]]:
    return [(match.path, match.line_number, match.line) for match in matches]


def test_every_backend_implements_the_protocol(fs: MountedBackend) -> None:
    assert isinstance(fs.backend, BackendProtocol)


def test_write_then_read_returns_the_lines(fs: MountedBackend) -> None:
    written = fs.backend.write(fs.path("notes/a.md"), "first\nsecond\n")
    assert written.path == fs.path("notes/a.md")
    assert written.created is True
    assert written.size == len(b"first\nsecond\n")
    page = fs.backend.read(fs.path("notes/a.md"))
    assert page.path == fs.path("notes/a.md")
    assert page.lines == ["first", "second"]
    assert (page.offset, page.total_lines, page.next_offset) == (0, 2, None)


def test_relative_and_untidy_paths_mean_the_same_file(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("notes/a.md"), "x")
    untidy = fs.path("notes//./a.md").lstrip("/")
    assert fs.backend.read(untidy).lines == ["x"]
    assert fs.backend.read(untidy).path == fs.path("notes/a.md")


def test_writing_an_existing_path_overwrites_it(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("a.txt"), "old")
    again = fs.backend.write(fs.path("a.txt"), "new")
    assert again.created is False
    assert fs.backend.read(fs.path("a.txt")).lines == ["new"]


def test_reading_a_missing_file_names_it_and_says_where_to_look(fs: MountedBackend) -> None:
    with pytest.raises(FileNotFound) as caught:
        fs.backend.read(fs.path("notes/missing.md"))
    assert fs.path("notes/missing.md") in str(caught.value)
    assert f"ls('{fs.path('notes/')}')" in str(caught.value)


def test_reading_an_empty_file_gives_no_lines(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("empty.txt"), "")
    page = fs.backend.read(fs.path("empty.txt"))
    assert (page.lines, page.total_lines, page.next_offset) == ([], 0, None)
    assert fs.backend.ls(fs.path("empty.txt"))[0].size == 0


def test_reading_past_the_end_is_an_error(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("short.txt"), "one\ntwo")
    with pytest.raises(BackendError, match="past the end"):
        fs.backend.read(fs.path("short.txt"), offset=2)


@pytest.mark.parametrize(("offset", "limit"), [(-1, 10), (0, 0)])
def test_a_negative_offset_or_empty_limit_is_explained(
    fs: MountedBackend, offset: int, limit: int
) -> None:
    fs.backend.write(fs.path("a.md"), "a")
    with pytest.raises(BackendError, match="offset of 0 or more"):
        fs.backend.read(fs.path("a.md"), offset=offset, limit=limit)


def test_a_large_file_pages_with_offset_limit_and_next_offset(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("big.log"), "\n".join(f"line {n}" for n in range(50_000)))
    first = fs.backend.read(fs.path("big.log"))
    assert len(first.lines) == 2000
    assert first.total_lines == 50_000
    assert first.next_offset == 2000
    middle = fs.backend.read(fs.path("big.log"), offset=25_000, limit=3)
    assert middle.lines == ["line 25000", "line 25001", "line 25002"]
    last = fs.backend.read(fs.path("big.log"), offset=49_999, limit=10)
    assert (last.lines, last.next_offset) == (["line 49999"], None)


def test_lines_split_like_splitlines(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("crlf.txt"), "a\r\nb\rc\n\n")
    assert fs.backend.read(fs.path("crlf.txt")).lines == ["a", "b", "c", ""]


def test_unicode_names_and_content_round_trip(fs: MountedBackend) -> None:
    text = "Café ☕\n日本語 🎉"
    resume = fs.path("données/résumé.md")
    fs.backend.write(resume, text)
    fs.backend.write(fs.path("📝 notes.md"), "emoji name")
    assert fs.backend.read(resume).lines == ["Café ☕", "日本語 🎉"]
    assert fs.backend.ls(resume)[0].size == len(text.encode())
    assert fs.path("📝 notes.md") in paths(fs.backend.ls(fs.root))
    assert hits(fs.backend.grep("🎉", fs.root)) == [(resume, 2, "日本語 🎉")]


def test_edit_replaces_unique_text(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("a.py"), "x = 1\ny = 2\n")
    result = fs.backend.edit(fs.path("a.py"), "y = 2", "y = 3")
    assert (result.path, result.replacements) == (fs.path("a.py"), 1)
    assert fs.backend.read(fs.path("a.py")).lines == ["x = 1", "y = 3"]


def test_edit_with_two_matches_says_how_many(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("a.py"), "x = 1\nx = 1\n")
    with pytest.raises(EditConflict) as caught:
        fs.backend.edit(fs.path("a.py"), "x = 1", "x = 2")
    assert caught.value.matches == 2
    assert "found 2 times" in str(caught.value)
    assert "replace_all=True" in str(caught.value)
    assert fs.backend.read(fs.path("a.py")).lines == ["x = 1", "x = 1"]


def test_edit_replace_all_replaces_every_occurrence(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("a.py"), "x\nx\nx\n")
    assert fs.backend.edit(fs.path("a.py"), "x", "y", replace_all=True).replacements == 3
    assert fs.backend.read(fs.path("a.py")).lines == ["y", "y", "y"]


@pytest.mark.parametrize("old", ["", "not there"])
def test_edit_with_empty_or_missing_text_is_a_conflict_with_no_matches(
    fs: MountedBackend, old: str
) -> None:
    fs.backend.write(fs.path("a.py"), "x = 1\n")
    with pytest.raises(EditConflict) as caught:
        fs.backend.edit(fs.path("a.py"), old, "y")
    assert caught.value.matches == 0
    assert fs.path("a.py") in str(caught.value)


def test_editing_a_missing_file_is_file_not_found(fs: MountedBackend) -> None:
    with pytest.raises(FileNotFound):
        fs.backend.edit(fs.path("nope.md"), "a", "b")


def test_deleting_a_file_removes_only_it(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("keep.md"), "k")
    fs.backend.write(fs.path("drop.md"), "d")
    fs.backend.delete(fs.path("drop.md"))
    with pytest.raises(FileNotFound):
        fs.backend.read(fs.path("drop.md"))
    assert fs.backend.read(fs.path("keep.md")).lines == ["k"]


def test_deleting_a_folder_deletes_everything_under_it(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("proj/a.md"), "a")
    fs.backend.write(fs.path("proj/deep/b.md"), "b")
    fs.backend.write(fs.path("project.md"), "not under proj/")
    fs.backend.delete(fs.path("proj/"))
    with pytest.raises(FileNotFound):
        fs.backend.ls(fs.path("proj/"))
    assert fs.backend.read(fs.path("project.md")).lines == ["not under proj/"]


def test_deleting_a_missing_path_is_file_not_found(fs: MountedBackend) -> None:
    with pytest.raises(FileNotFound):
        fs.backend.delete(fs.path("ghost.md"))


def test_ls_lists_children_sorted_with_folders_ending_in_slash(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("notes/b.md"), "bb")
    fs.backend.write(fs.path("notes/a.md"), "a")
    fs.backend.write(fs.path("notes/sub/c.md"), "c")
    fs.backend.write(fs.path("notes/.hidden"), "h")
    listed = fs.backend.ls(fs.path("notes"))
    assert paths(listed) == [
        fs.path("notes/.hidden"),
        fs.path("notes/a.md"),
        fs.path("notes/b.md"),
        fs.path("notes/sub/"),
    ]
    assert [info.is_dir for info in listed] == [False, False, False, True]
    assert listed[2].size == 2
    assert listed[2].modified_at is not None and listed[2].modified_at.utcoffset() is not None


def test_ls_of_a_file_returns_that_file(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("notes/a.md"), "abc")
    [info] = fs.backend.ls(fs.path("notes/a.md"))
    assert (info.path, info.size, info.is_dir) == (fs.path("notes/a.md"), 3, False)


def test_ls_of_a_missing_folder_is_file_not_found(fs: MountedBackend) -> None:
    with pytest.raises(FileNotFound, match="ls\\("):
        fs.backend.ls(fs.path("nowhere/"))


def test_reading_a_folder_says_it_is_a_folder(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("notes/a.md"), "a")
    with pytest.raises(InvalidPath, match="is a folder"):
        fs.backend.read(fs.path("notes"))


def test_writing_under_a_file_is_refused(fs: MountedBackend) -> None:
    fs.backend.write(fs.path("a.md"), "a")
    with pytest.raises(InvalidPath):
        fs.backend.write(fs.path("a.md/b.md"), "b")


def test_parent_traversal_is_refused(fs: MountedBackend) -> None:
    with pytest.raises(InvalidPath, match=r"'\.\.'"):
        fs.backend.read(fs.path("notes/../a.md"))


@pytest.fixture
def tree(fs: MountedBackend) -> MountedBackend:
    for name, text in {
        "a.md": "alpha abc\n",
        "b.txt": "a.c literal\naxc\n",
        "c.py": "print('abc')\n",
        "docs/d.md": "delta a.c\n",
        "docs/deep/e.md": "echo\n",
        "docs/deep/f.txt": "foxtrot abc\n",
    }.items():
        fs.backend.write(fs.path(name), text)
    return fs


def test_glob_double_star_matches_any_depth_including_zero(tree: MountedBackend) -> None:
    found = paths(tree.backend.glob("**/*.md", tree.root))
    assert found == [tree.path("a.md"), tree.path("docs/d.md"), tree.path("docs/deep/e.md")]


def test_glob_name_patterns_match_at_any_depth_path_patterns_level_by_level(
    tree: MountedBackend,
) -> None:
    """As deepagents' glob: a pattern without `/` matches names; `*` never crosses a `/`."""
    assert paths(tree.backend.glob("*.md", tree.root)) == [
        tree.path("a.md"),
        tree.path("docs/d.md"),
        tree.path("docs/deep/e.md"),
    ]
    assert paths(tree.backend.glob("/*.md", tree.root)) == [tree.path("a.md")]
    assert paths(tree.backend.glob("docs/*", tree.root)) == [tree.path("docs/d.md")]


def test_glob_braces_and_character_classes(tree: MountedBackend) -> None:
    assert paths(tree.backend.glob("**/*.{txt,py}", tree.root)) == [
        tree.path("b.txt"),
        tree.path("c.py"),
        tree.path("docs/deep/f.txt"),
    ]
    assert paths(tree.backend.glob("[ab].*", tree.root)) == [tree.path("a.md"), tree.path("b.txt")]
    assert paths(tree.backend.glob("?.py", tree.root)) == [tree.path("c.py")]


def test_glob_double_star_in_the_middle_spans_zero_or_more_folders(tree: MountedBackend) -> None:
    assert paths(tree.backend.glob("docs/**/*.md", tree.root)) == [
        tree.path("docs/d.md"),
        tree.path("docs/deep/e.md"),
    ]
    assert paths(tree.backend.glob("docs/**", tree.root)) == [
        tree.path("docs/d.md"),
        tree.path("docs/deep/e.md"),
        tree.path("docs/deep/f.txt"),
    ]


def test_glob_nested_braces_and_negated_classes(tree: MountedBackend) -> None:
    nested = tree.backend.glob("{a.md,docs/{d.md,deep/{e,f}.*}}", tree.root)
    assert paths(nested) == [
        tree.path("a.md"),
        tree.path("docs/d.md"),
        tree.path("docs/deep/e.md"),
        tree.path("docs/deep/f.txt"),
    ]
    assert paths(tree.backend.glob("/[!ab].*", tree.root)) == [tree.path("c.py")]


def test_glob_with_a_leading_slash_is_anchored_at_the_folder_searched(
    tree: MountedBackend,
) -> None:
    """As deepagents' glob: `/` narrows the pattern to the search folder's own files."""
    found = tree.backend.glob("/docs/*.md", tree.root)
    assert paths(found) == [tree.path("docs/d.md")]
    assert paths(tree.backend.glob("/*.md", tree.path("docs"))) == [tree.path("docs/d.md")]


def test_glob_from_a_subfolder_is_relative_to_it(tree: MountedBackend) -> None:
    found = tree.backend.glob("*.md", tree.path("docs/deep"))
    assert paths(found) == [tree.path("docs/deep/e.md")]
    assert found[0].size == len(b"echo\n")


def test_glob_with_no_match_is_empty(tree: MountedBackend) -> None:
    assert tree.backend.glob("**/*.csv", tree.root) == []


def test_grep_is_literal_by_default(tree: MountedBackend) -> None:
    assert hits(tree.backend.grep("a.c", tree.root)) == [
        (tree.path("b.txt"), 1, "a.c literal"),
        (tree.path("docs/d.md"), 1, "delta a.c"),
    ]


def test_grep_regex_matches_patterns(tree: MountedBackend) -> None:
    found = hits(tree.backend.grep(r"^a.c", tree.root, regex=True))
    assert found == [(tree.path("b.txt"), 1, "a.c literal"), (tree.path("b.txt"), 2, "axc")]


def test_grep_glob_filter_limits_the_files(tree: MountedBackend) -> None:
    by_name = tree.backend.grep("abc", tree.root, glob="*.txt")
    assert hits(by_name) == [(tree.path("docs/deep/f.txt"), 1, "foxtrot abc")]
    by_path = tree.backend.grep("a", tree.root, glob="docs/*.md")
    assert paths_of(by_path) == [tree.path("docs/d.md")]


def paths_of(matches: list[GrepMatch]) -> list[str]:
    return sorted({match.path for match in matches})


def test_grep_in_one_file(tree: MountedBackend) -> None:
    assert hits(tree.backend.grep("abc", tree.path("c.py"))) == [
        (tree.path("c.py"), 1, "print('abc')")
    ]


def test_grep_with_a_bad_regex_explains_it(tree: MountedBackend) -> None:
    with pytest.raises(BackendError, match="invalid regular expression"):
        tree.backend.grep("(unclosed", tree.root, regex=True)


def test_grep_in_a_missing_folder_is_file_not_found(tree: MountedBackend) -> None:
    with pytest.raises(FileNotFound):
        tree.backend.grep("x", tree.path("nowhere/"))


def test_glob_in_a_missing_folder_is_file_not_found(tree: MountedBackend) -> None:
    with pytest.raises(FileNotFound):
        tree.backend.glob("**", tree.path("nowhere/"))


def test_async_twins_do_the_same(fs: MountedBackend) -> None:
    backend = fs.backend

    async def session() -> None:
        written = await backend.awrite(fs.path("as/a.md"), "one\ntwo two")
        assert written.created
        assert (await backend.aread(fs.path("as/a.md"))).lines == ["one", "two two"]
        edited = await backend.aedit(fs.path("as/a.md"), "two", "2", replace_all=True)
        assert edited.replacements == 2
        assert paths(await backend.als(fs.path("as"))) == [fs.path("as/a.md")]
        assert paths(await backend.aglob("**/*.md", fs.root)) == [fs.path("as/a.md")]
        assert hits(await backend.agrep("2 2", fs.root)) == [(fs.path("as/a.md"), 2, "2 2")]
        await backend.adelete(fs.path("as/a.md"))
        with pytest.raises(FileNotFound):
            await backend.aread(fs.path("as/a.md"))

    asyncio.run(session())


# -- what only a StoreBackend has to get right --------------------------------------------------


def test_store_lists_more_files_than_one_search_page() -> None:
    from jupyter_deepagent.backends import StoreBackend

    backend = StoreBackend()
    for n in range(25):
        backend.write(f"/memories/m{n:02}.md", f"memory {n}")
    assert len(backend.ls("/memories/")) == 25
    assert len(backend.glob("**/*.md")) == 25
    assert len(backend.grep("memory")) == 25


def test_store_keeps_each_namespace_apart() -> None:
    from langgraph.store.memory import InMemoryStore

    from jupyter_deepagent.backends import StoreBackend

    shared = InMemoryStore()
    user = ["ada"]
    alice = StoreBackend(shared, namespace=lambda: ("users", user[0]))
    team = StoreBackend(shared, namespace=("team",))
    alice.write("/prefs.md", "ada's")
    team.write("/prefs.md", "team's")
    assert alice.read("/prefs.md").lines == ["ada's"]
    user[0] = "grace"
    with pytest.raises(FileNotFound):
        alice.read("/prefs.md")
    assert team.read("/prefs.md").lines == ["team's"]
    assert shared.get(("team",), "/prefs.md").value["content"] == "team's"


def test_store_reads_files_written_as_lists_of_lines() -> None:
    from langgraph.store.memory import InMemoryStore

    from jupyter_deepagent.backends import StoreBackend

    store = InMemoryStore()
    store.put(("filesystem",), "/old.md", {"content": ["a", "b"], "modified_at": "2025-01-01"})
    assert StoreBackend(store).read("/old.md").lines == ["a", "b"]


_WRITE_IN_ANOTHER_PROCESS = """
import sys
from langgraph.store.sqlite import SqliteStore
from jupyter_deepagent.backends import StoreBackend

with SqliteStore.from_conn_string(sys.argv[1]) as store:
    store.setup()
    StoreBackend(store, namespace=("memories",)).write("/findings.md", "survives restarts")
"""


def test_sqlite_store_files_survive_a_new_process(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    from jupyter_deepagent.backends import StoreBackend

    database = tmp_path / "memories.sqlite"
    subprocess.run(
        [sys.executable, "-c", _WRITE_IN_ANOTHER_PROCESS, str(database)],
        check=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    with SqliteStore.from_conn_string(str(database)) as store:
        store.setup()
        backend = StoreBackend(store, namespace=("memories",))
        assert backend.read("/findings.md").lines == ["survives restarts"]


def test_importing_backends_does_not_import_langgraph() -> None:
    script = (
        "import sys, jupyter_deepagent.backends as b; b.StoreBackend(); "
        "print(sorted(m for m in sys.modules if m.startswith(('langgraph', 'langchain'))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )
    assert done.stdout.strip() == "[]"


def test_a_broken_store_is_a_backend_error_not_a_crash(tmp_path: Path) -> None:
    from langgraph.store.sqlite import SqliteStore

    from jupyter_deepagent.backends import StoreBackend

    conn = sqlite3.connect(tmp_path / "gone.sqlite", check_same_thread=False)
    store = SqliteStore(conn)
    store.setup()
    conn.close()
    closed = r"store failed to \w+ /a\.md: Cannot operate on a closed database\. Check"
    with pytest.raises(BackendError, match=closed):
        StoreBackend(store).write("/a.md", "x")


def test_backends_exports_are_complete_and_sorted() -> None:
    import jupyter_deepagent.backends as backends

    assert backends.__all__ == sorted(backends.__all__)
    assert all(hasattr(backends, name) for name in backends.__all__)
    assert {"StateBackend", "StoreBackend", "DiskBackend", "CompositeBackend"} <= set(
        backends.__all__
    )


def test_dot_named_files_are_found_by_name_and_always_searched(fs: MountedBackend) -> None:
    """Glob reaches a dot-name only through a level starting with `.`; grep reads every file."""
    fs.backend.write(fs.path(".drafts/plan.md"), "needle\n")
    fs.backend.write(fs.path(".plan.md"), "needle\n")
    fs.backend.write(fs.path("plan.md"), "needle\n")
    assert paths(fs.backend.glob("**/*.md", fs.root)) == [fs.path("plan.md")]
    assert paths(fs.backend.glob("*.md", fs.root)) == [
        fs.path(".drafts/plan.md"),
        fs.path("plan.md"),
    ]
    assert paths(fs.backend.glob(".*", fs.root)) == [fs.path(".plan.md")]
    assert paths(fs.backend.glob(".drafts/*", fs.root)) == [fs.path(".drafts/plan.md")]
    found = sorted({match.path for match in fs.backend.grep("needle", fs.root)})
    assert found == [fs.path(".drafts/plan.md"), fs.path(".plan.md"), fs.path("plan.md")]
