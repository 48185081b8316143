"""StateBackend and the graph-state `files` channel: reducer, binding, nesting, threads."""

from __future__ import annotations

import asyncio
import threading
from types import MappingProxyType

from jupyter_deepagent.backends import FileData, StateBackend, bind_state_files, merge_files


def file(content: str) -> FileData:
    return FileData(content=content, modified_at="2025-01-01T00:00:00+00:00")


def test_merge_files_lets_the_right_side_win_per_path() -> None:
    left = {"/a.md": file("old a"), "/b.md": file("b")}
    right = {"/a.md": file("new a"), "/c.md": file("c")}
    assert merge_files(left, right) == {
        "/a.md": file("new a"),
        "/b.md": file("b"),
        "/c.md": file("c"),
    }
    assert left["/a.md"]["content"] == "old a"


def test_merge_files_deletes_paths_set_to_none() -> None:
    left = {"/a.md": file("a"), "/b.md": file("b")}
    assert merge_files(left, {"/a.md": None, "/ghost.md": None}) == {"/b.md": file("b")}
    assert "/a.md" in left


def test_merge_files_accepts_missing_sides() -> None:
    assert merge_files(None, None) == {}
    assert merge_files(None, {"/a.md": file("a"), "/b.md": None}) == {"/a.md": file("a")}
    assert merge_files({"/a.md": file("a")}, None) == {"/a.md": file("a")}


def test_an_unbound_backend_keeps_its_own_files() -> None:
    initial = {"/seed.md": file("seed")}
    backend = StateBackend(initial)
    backend.write("/new.md", "new")
    assert sorted(backend.files) == ["/new.md", "/seed.md"]
    assert list(initial) == ["/seed.md"]
    assert StateBackend().files == {}


def test_binding_records_writes_and_deletes_without_touching_the_input() -> None:
    state = MappingProxyType({"/keep.md": file("keep"), "/drop.md": file("drop")})
    backend = StateBackend()
    with bind_state_files(state) as changes:
        assert backend.read("/keep.md").lines == ["keep"]
        backend.write("/new.md", "fresh")
        backend.edit("/keep.md", "keep", "kept")
        backend.delete("/drop.md")
        assert [info.path for info in backend.ls("/")] == ["/keep.md", "/new.md"]
    assert set(changes) == {"/new.md", "/keep.md", "/drop.md"}
    assert changes["/drop.md"] is None
    assert changes["/keep.md"]["content"] == "kept"
    assert dict(state) == {"/keep.md": file("keep"), "/drop.md": file("drop")}
    assert merge_files(dict(state), changes) == {
        "/keep.md": changes["/keep.md"],
        "/new.md": changes["/new.md"],
    }


def test_the_binding_ends_with_the_block() -> None:
    backend = StateBackend()
    with bind_state_files({"/bound.md": file("bound")}):
        backend.write("/during.md", "x")
    assert backend.files == {}
    backend.write("/after.md", "y")
    assert list(backend.files) == ["/after.md"]


def test_bindings_nest_inner_wins_and_outer_is_restored() -> None:
    backend = StateBackend()
    with bind_state_files({"/outer.md": file("outer")}) as outer_changes:
        with bind_state_files({"/inner.md": file("inner")}) as inner_changes:
            assert list(backend.files) == ["/inner.md"]
            backend.write("/written-inside.md", "i")
        assert sorted(backend.files) == ["/outer.md"]
        backend.write("/written-outside.md", "o")
    assert list(inner_changes) == ["/written-inside.md"]
    assert list(outer_changes) == ["/written-outside.md"]


def test_deleting_a_folder_records_each_file_deleted() -> None:
    backend = StateBackend()
    state = {"/d/a.md": file("a"), "/d/e/b.md": file("b"), "/x.md": file("x")}
    with bind_state_files(state) as changes:
        backend.delete("/d/")
    assert changes == {"/d/a.md": None, "/d/e/b.md": None}


def test_async_twins_see_and_record_the_binding() -> None:
    backend = StateBackend()

    async def tool_call() -> list[str]:
        await backend.awrite("/from-async.md", "a")
        return [info.path for info in await backend.als("/")]

    with bind_state_files({"/seed.md": file("seed")}) as changes:
        assert asyncio.run(tool_call()) == ["/from-async.md", "/seed.md"]
    assert list(changes) == ["/from-async.md"]


def test_parallel_tool_calls_keep_their_changes_apart() -> None:
    backend = StateBackend()
    state = {"/shared.md": file("shared")}
    recorded: dict[str, dict] = {}

    def tool_call(name: str) -> None:
        with bind_state_files(state) as changes:
            backend.write(f"/{name}.md", name)
        recorded[name] = changes

    threads = [threading.Thread(target=tool_call, args=(name,)) for name in ("one", "two")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert list(recorded["one"]) == ["/one.md"]
    assert list(recorded["two"]) == ["/two.md"]
    assert list(state) == ["/shared.md"]
