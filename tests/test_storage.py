"""The state folder on disk: checkpoints that grow with what was written, not with steps x
history; damaged databases named, never replaced; a state_dir that is the tool's own folder."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import StateDamaged, StateNotWritten

MB = 1_000_000


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def state_size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("checkpoints.sqlite*") if p.is_file())


# -- checkpoints grow with what was written ----------------------------------------------------


def test_twenty_one_mb_writes_keep_checkpoints_under_60_mb(notebook: Notebook) -> None:
    steps = [
        call("write_file", file_path=f"/workspace/part_{i}.txt", content=f"{i:02d}" * (MB // 2))
        for i in range(20)
    ]
    model = scripted(*steps, "All parts written.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nWrite the twenty parts.")
    assert cell.error is None and cell.markdown[-1] == "All parts written."
    assert len(list(notebook.folder.glob("part_*.txt"))) == 20
    state = notebook.folder / ".deepagent"
    open_size = state_size(state)
    notebook.restart()
    assert open_size < 60 * MB, f"{open_size / MB:.0f} MB of checkpoints for 20 MB written"
    assert state_size(state) < 30 * MB
    follow = scripted("Twenty parts, all written.")
    notebook.session.configure(model=follow)
    assert notebook.run("%%agent\nHow many parts?").error is None
    sent = follow.requests[0].messages
    assert [m.type for m in sent].count("tool") == 20  # the whole run is in the thread


def test_an_approval_still_waits_after_a_restart(notebook: Notebook) -> None:
    model = scripted(
        call("write_file", file_path="/workspace/a.md", content="a"),
        call("write_file", file_path="/workspace/b.md", content="b"),
        "Wrote both.",
    )
    notebook.session.configure(model=model, interrupt_on=("write_file",))
    assert "waiting for approval" in notebook.run("%%agent\nwrite a and b").live_text
    notebook.restart()  # the pause is on disk, not only in this kernel
    notebook.session.configure(model=model, interrupt_on=("write_file",))
    assert "waiting for approval" in notebook.run("%agent resume approve").live_text
    done = notebook.run("%agent resume approve")
    assert done.error is None and done.markdown[-1] == "Wrote both."
    assert (notebook.folder / "a.md").read_text() == "a"
    assert (notebook.folder / "b.md").read_text() == "b"


def test_a_run_stopped_after_some_steps_keeps_them_across_a_restart(notebook: Notebook) -> None:
    from langchain.tools import tool

    @tool
    def fetch_page(url: str) -> str:
        """Fetch a web page."""
        raise KeyboardInterrupt  # the stop button, pressed while the tool runs

    model = scripted(
        call("write_file", file_path="/workspace/a.md", content="a"),
        call("write_file", file_path="/workspace/b.md", content="b"),
        call("fetch_page", url="https://example.org"),
    )
    notebook.session.configure(model=model)
    notebook.session.tools.append(fetch_page)
    assert isinstance(notebook.run("%%agent\nwrite, then fetch").error, KeyboardInterrupt)
    notebook.restart()
    follow = scripted("Both files are written; the fetch was stopped.")
    notebook.session.configure(model=follow)
    assert notebook.run("%%agent\nwhere are we?").error is None
    sent = [m for m in follow.requests[0].messages if m.type != "system"]
    assert [m.type for m in sent] == ["human", "ai", "tool", "ai", "tool", "ai", "tool", "human"]
    assert "interrupted by the user" in sent[-2].text


# -- damage is named -----------------------------------------------------------------------------


def one_turn(notebook: Notebook) -> None:
    """A turn that keeps a memory, so both databases exist (the store's is made at first use)."""
    remember = call("write_file", file_path="/memories/budget.md", content="40k")
    notebook.session.configure(model=scripted(remember, "Noted: the budget is 40k."))
    assert notebook.run("%%agent\nThe budget is 40k.").error is None
    notebook.restart()


def brief(cell) -> str:
    return cell.error._render_traceback_()[0]


def test_a_checkpoints_file_truncated_to_nothing_stops_the_cell(notebook: Notebook) -> None:
    one_turn(notebook)
    database = notebook.folder / ".deepagent" / "checkpoints.sqlite"
    database.write_bytes(b"")
    model = scripted("A fresh start.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nWhat is the budget?")
    assert isinstance(cell.error, StateDamaged)
    text = brief(cell)
    assert text.startswith("StateDamaged: ")
    assert str(database) in text and "conversations" in text and "empty (0 bytes)" in text
    assert "move it aside" in text and "checkpoints.sqlite.damaged" in text
    assert model.requests == [] and database.stat().st_size == 0  # nothing ran, nothing replaced
    listed = notebook.run("%agent threads")
    assert isinstance(listed.error, StateDamaged) and "empty (0 bytes)" in brief(listed)

    database.rename(database.with_name("checkpoints.sqlite.damaged"))  # the user's way out
    assert notebook.run("%%agent\nWhat is the budget?").error is None
    assert [m.text for m in model.requests[0].messages if m.type == "human"] == [
        "What is the budget?"
    ]


def test_a_truncated_store_stops_the_cell_instead_of_emptying_memories(
    notebook: Notebook,
) -> None:
    notebook.session.configure(
        model=scripted(call("write_file", file_path="/memories/units.md", content="SI units"), "ok")
    )
    notebook.run("%%agent\nremember: SI units")
    notebook.restart()
    store = notebook.folder / ".deepagent" / "store.sqlite"
    data = store.read_bytes()
    store.write_bytes(data[: len(data) // 2])
    before = digest(store)
    notebook.session.configure(model=scripted(call("ls", path="/memories/"), "nothing"))
    cell = notebook.run("%%agent\nwhat do you remember?")
    assert isinstance(cell.error, StateDamaged)
    text = brief(cell)
    assert str(store) in text and "/memories/" in text and "truncated" in text
    assert digest(store) == before


@pytest.mark.parametrize("name", ["checkpoints.sqlite", "store.sqlite"])
@pytest.mark.parametrize(
    ("offset", "expected"),
    [(0, "not an SQLite database"), (4096, "SQLite's check finds damage")],
    ids=["header", "page"],
)
def test_a_garbage_page_is_named_not_a_raw_database_error(
    notebook: Notebook, offset: int, expected: str, name: str
) -> None:
    one_turn(notebook)
    database = notebook.folder / ".deepagent" / name
    data = bytearray(database.read_bytes())
    data[offset : offset + 4096] = b"\xde\xad\xbe\xef" * 1024
    database.write_bytes(bytes(data))
    notebook.session.configure(model=scripted("ok"))
    cell = notebook.run("%%agent\nWhat is the budget?")
    assert isinstance(cell.error, StateDamaged)
    assert expected in brief(cell) and str(database) in brief(cell)
    assert database.read_bytes() == bytes(data)


def test_a_missing_database_is_a_new_empty_state(notebook: Notebook) -> None:
    one_turn(notebook)
    (notebook.folder / ".deepagent" / "checkpoints.sqlite").unlink()
    model = scripted("Hello.")
    notebook.session.configure(model=model)
    assert notebook.run("%%agent\nhi").error is None
    assert len(model.requests[0].messages) == 2  # system prompt and "hi": a new conversation


# -- state_dir ------------------------------------------------------------------------------------


def test_a_state_dir_pointing_at_a_repository_is_refused_and_left_untouched(
    notebook: Notebook,
) -> None:
    repository = notebook.folder.parent / "their-repo"
    (repository / ".git").mkdir(parents=True)
    (repository / "README.md").write_text("# theirs\n")
    before = sorted(p.name for p in repository.iterdir())
    notebook.run("%agent config state_dir=../their-repo")
    model = scripted("never")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nhello")
    assert isinstance(cell.error, UsageError)
    text = str(cell.error)
    assert "'../their-repo'" in text and "already holds files" in text
    assert ".git" in text and "README.md" in text and "new folder" in text
    assert sorted(p.name for p in repository.iterdir()) == before  # no .gitignore, no database
    assert model.requests == []


def test_a_created_state_folder_is_hidden_from_git_and_reused(notebook: Notebook) -> None:
    notebook.run("%agent config state_dir=agent-state")
    notebook.session.configure(model=scripted("one"))
    assert notebook.run("%%agent\nfirst").error is None
    state = notebook.folder / "agent-state"
    assert (state / ".gitignore").read_text().strip().endswith("*")
    notebook.restart()
    notebook.run("%agent config state_dir=agent-state")
    model = scripted("two")
    notebook.session.configure(model=model)
    assert notebook.run("%%agent\nsecond").error is None
    assert [m.text for m in model.requests[0].messages if m.type == "human"] == [
        "first",
        "second",
    ]


def test_an_empty_folder_is_used_without_a_gitignore(notebook: Notebook) -> None:
    (notebook.folder / "mine").mkdir()
    notebook.run("%agent config state_dir=mine")
    notebook.session.configure(model=scripted("ok"))
    assert notebook.run("%%agent\nhello").error is None
    assert (notebook.folder / "mine" / "checkpoints.sqlite").is_file()
    assert not (notebook.folder / "mine" / ".gitignore").exists()


def test_a_state_folder_of_an_earlier_version_is_adopted(notebook: Notebook) -> None:
    one_turn(notebook)
    state = notebook.folder / ".deepagent"
    for marker in state.glob(".jupyter-deepagent-state"):
        marker.unlink()
    model = scripted("You said 40k.")
    notebook.session.configure(model=model)
    assert notebook.run("%%agent\nWhat is the budget?").error is None
    assert "The budget is 40k." in [m.text for m in model.requests[0].messages]


def test_a_state_dir_that_is_a_file_is_refused(notebook: Notebook) -> None:
    (notebook.folder / "notes.txt").write_text("mine")
    notebook.run("%agent config state_dir=notes.txt")
    notebook.session.configure(model=scripted("never"))
    cell = notebook.run("%%agent\nhello")
    assert isinstance(cell.error, UsageError) and "is a file" in str(cell.error)
    assert (notebook.folder / "notes.txt").read_text() == "mine"


def test_a_database_error_in_a_run_names_the_file_found_damaged(tmp_path: Path) -> None:
    import sqlite3

    from jupyter_deepagent.project.storage.sqlite import SqliteStorage as Storage

    storage = Storage(tmp_path / "state")
    try:
        with pytest.raises(StateNotWritten, match="locked"), storage.writing("t"):
            raise sqlite3.OperationalError("database is locked")  # not damage: says so
        store = tmp_path / "state" / "store.sqlite"
        store.write_bytes(b"\0" * 4096)  # damaged behind the open connection's back
        with pytest.raises(StateDamaged) as damaged, storage.writing("t"):
            raise sqlite3.DatabaseError("database disk image is malformed")
        assert damaged.value.path == str(store) and "/memories/" in str(damaged.value)
    finally:
        storage.close()


def test_a_memory_store_whose_setup_fails_leaves_no_empty_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # opening the database makes an empty file; were it kept, the next open would refuse it as
    # damaged ("it is empty") although nothing was ever written
    from langgraph.store.sqlite import SqliteStore

    from jupyter_deepagent.project.storage.lazy_store import LazySqliteStore

    def no_space(self: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(SqliteStore, "setup", no_space)
    store = LazySqliteStore(tmp_path / "store.sqlite", damage=lambda exc: ValueError(str(exc)))
    with pytest.raises(OSError, match="No space"):
        store.get(("memories",), "AGENTS.md")
    assert not (tmp_path / "store.sqlite").exists()
    monkeypatch.undo()
    store.put(("memories",), "AGENTS.md", {"content": "kept"})  # the next try works
    assert store.get(("memories",), "AGENTS.md").value == {"content": "kept"}
    store.close()
