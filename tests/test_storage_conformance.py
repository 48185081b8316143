"""The storage conformance suite, run on the SQLite files beside the notebook and on a real
PostgreSQL server: checkpoints, thread listing, rewinds, `/memories/` across threads and
processes, one writer per thread, and two users of one project (threads private, memories
shared)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import ThreadBusy
from jupyter_deepagent.jupyter.magic import magics
from jupyter_deepagent.project.storage import OwnedStorage, open_storage
from jupyter_deepagent.project.storage.owners import ThreadOwner

KERNEL = Path(__file__).parent / "kernel_process.py"
PATIENCE = 120  # seconds; only a hang reaches it
pytestmark = pytest.mark.usefixtures("storage_kind")


def start_kernel(folder: Path, *args: str, user: str | None = None) -> subprocess.Popen[str]:
    env = dict(os.environ)
    if user is not None:
        env["JUPYTERHUB_USER"] = user
    return subprocess.Popen(
        [sys.executable, str(KERNEL), str(folder), *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )


def finish(process: subprocess.Popen[str]) -> list[dict]:
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith("{")]


def run_kernel(folder: Path, *args: str, user: str | None = None) -> list[dict]:
    return finish(start_kernel(folder, *args, user=user))


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(process.communicate()[1])
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def conversation(nb: Notebook, thread: str | None = None) -> list[tuple[str, str]]:
    saved = nb.session.storage.checkpointer.get_tuple(
        {"configurable": {"thread_id": thread or nb.session.thread}}
    )
    return [(m.type, str(m.text)) for m in saved.checkpoint["channel_values"]["messages"]]


def open_owned(folder: Path, user: str) -> OwnedStorage:
    url = os.environ.get("JUPYTER_DEEPAGENT_DATABASE_URL", "")
    raw = open_storage(folder / ".deepagent", ".deepagent", url)
    return OwnedStorage(raw, ThreadOwner(folder.name, user))


# -- checkpoints and threads -------------------------------------------------------------------


def test_a_conversation_survives_a_restart_and_threads_are_listed(
    notebook: Notebook, storage_kind: str
) -> None:
    notebook.session.configure(model=scripted("Noted: the yield is 42.", "It was 42."))
    assert notebook.run("%%agent -t yields\nThe yield is 42.").error is None
    notebook.restart()
    follow = scripted("It was 42.")
    notebook.session.configure(model=follow)
    assert notebook.run("%%agent -t yields\nWhat was the yield?").error is None
    sent = [m.text for m in follow.requests[0].messages if m.type != "system"]
    assert sent == ["The yield is 42.", "Noted: the yield is 42.", "What was the yield?"]

    listing = notebook.run("%agent threads")
    assert "**yields** (current)" in listing.markdown[0] and "| 4 |" in listing.markdown[0]
    state = notebook.folder / ".deepagent"
    assert (state / ".gitignore").read_text().splitlines()[-1] == "*"  # artifacts out of git
    if storage_kind == "postgres":  # no database beside the notebook
        assert not (state / "checkpoints.sqlite").exists()


def test_rerunning_the_cells_rewinds_their_turns(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = scripted(call("ls", path="/notebook/"), "It has cells.", "Summary: cells.")
    notebook.session.configure(model=model)
    cells = ["%%agent\nList the notebook's files.", "%%agent\nNow summarize."]

    def run_all() -> list[tuple[str, str]]:
        for index, source in enumerate(cells):
            parent = {"metadata": {"cellId": f"cell-{index}"}}
            monkeypatch.setattr(magics, "_parent", lambda shell, parent=parent: parent)
            assert notebook.run(source).error is None
        return conversation(notebook)

    first = run_all()
    second = run_all()
    notebook.restart()
    notebook.session.configure(model=model)
    third = run_all()
    assert [kind for kind, _ in first] == ["human", "ai", "tool", "ai", "human", "ai"]
    assert second == first and third == first
    assert model.remaining == 0  # the re-runs forked from the turns, the model was not asked


def test_memories_written_in_one_thread_are_read_in_another(notebook: Notebook) -> None:
    model = scripted(
        call("write_file", file_path="/memories/units.md", content="Yields are in t/ha."),
        "Saved.",
        call("read_file", file_path="/memories/units.md"),
        "Tonnes per hectare.",
    )
    notebook.session.configure(model=model)
    assert notebook.run("%%agent -t first\nRemember the units.").error is None
    notebook.restart()
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent -t second\nWhich units?")
    assert cell.error is None
    tool = [m for m in notebook.shell.user_ns["_agent"].messages if m.type == "tool"]
    assert "Yields are in t/ha." in str(tool[-1].text)


# -- one writer per thread ---------------------------------------------------------------------


def test_a_second_kernel_on_a_running_thread_is_told_which_process_runs_it(
    notebook: Notebook,
) -> None:
    other = start_kernel(notebook.folder, "shared", "hold")
    try:
        wait_for(notebook.folder / "started", other)
        model = scripted("Second turn done.")
        notebook.session.configure(model=model)
        busy = notebook.run("%%agent -t shared\nsecond")
        assert isinstance(busy.error, ThreadBusy)
        assert busy.error.pid == other.pid
        text = busy.error._render_traceback_()[0]
        assert text.startswith("ThreadBusy: thread 'shared' is being run by another kernel")
        assert f"process {other.pid}" in text and "no turn is lost" in text
        assert "%%agent -t NAME" in text and "--new" in text
        assert model.requests == []
        reset = notebook.run("%agent reset -t shared")
        assert isinstance(reset.error, ThreadBusy)
    finally:
        (notebook.folder / "go").write_text("go")
        ran = finish(other)
    assert [(r["turn"], r["error"]) for r in ran] == [("first", None)]
    again = notebook.run("%%agent -t shared\nsecond")
    assert again.error is None and again.markdown[-1] == "Second turn done."
    sent = [m.type + ":" + m.text for m in model.requests[0].messages if m.type != "system"]
    assert sent == ["human:first", "ai:", "tool:went", "ai:First turn done.", "human:second"]


def test_two_kernels_taking_turns_on_one_thread_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    open_owned(folder, "nobody").close()  # both kernels find the state folder made
    turns = 5
    kernels = [start_kernel(folder, "shared", "turns", str(turns), str(n)) for n in (1, 2)]
    results = [finish(kernel) for kernel in kernels]
    assert all(r["error"] is None for ran in results for r in ran)

    from jupyter_deepagent.project.storage.owners import current_user

    storage = open_owned(folder, current_user())
    try:
        saved = storage.checkpointer.get_tuple({"configurable": {"thread_id": "shared"}})
    finally:
        storage.close()
    messages = saved.checkpoint["channel_values"]["messages"]
    humans = sorted(m.text for m in messages if m.type == "human")
    assert humans == sorted(f"p{k} turn {n}" for k in (1, 2) for n in range(turns))
    calls = [c["id"] for m in messages if m.type == "ai" for c in m.tool_calls]
    results_of = [m.tool_call_id for m in messages if m.type == "tool"]
    assert len(calls) == 2 * turns and sorted(calls) == sorted(results_of)


# -- two users of one project ------------------------------------------------------------------


def test_two_users_share_the_projects_memories_and_keep_their_threads(tmp_path: Path) -> None:
    folder = tmp_path / "lab"
    folder.mkdir()
    open_owned(folder, "nobody").close()
    [wrote] = run_kernel(folder, "analysis", "remember", "soil.md", "pH 6.5 in plot B",
                         user="ana")
    assert wrote["error"] is None
    [read] = run_kernel(folder, "analysis", "recall", "soil.md", user="ben")
    assert read["error"] is None and "pH 6.5 in plot B" in read["result"]

    [ana] = run_kernel(folder, "-", "threads", user="ana")
    [ben] = run_kernel(folder, "-", "threads", user="ben")
    assert ana["own"] == ["analysis"] and ben["own"] == ["analysis"]  # same name, two threads
    assert ana["all"] == [["ana", "analysis"], ["ben", "analysis"]]  # one's own first
    assert ben["all"] == [["ben", "analysis"], ["ana", "analysis"]]

    storage = open_owned(folder, "ana")
    try:
        ana_turn = storage.checkpointer.get_tuple({"configurable": {"thread_id": "analysis"}})
    finally:
        storage.close()
    humans = [m.text for m in ana_turn.checkpoint["channel_values"]["messages"]
              if m.type == "human"]
    assert humans == ["remember /memories/soil.md"]  # ben's turn is not in ana's thread


def test_another_users_thread_is_listed_read_only_and_refused(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    notebook.session.configure(model=scripted("Ana's answer."))
    assert notebook.run("%%agent -t draft\nAna's question").error is None
    monkeypatch.setenv("JUPYTERHUB_USER", "ben")
    model = scripted("Ben's answer.")
    notebook.session.configure(model=model)

    assert "No conversations yet" in notebook.run("%agent threads").markdown[0]
    every = notebook.run("%agent threads --all").markdown[0]
    assert "| ana/draft | ana | 2 |" in every and "read-only" in every
    for line in ("%%agent -t ana/draft\ncontinue", "%agent reset -t ana/draft",
                 "%agent show -t ana/draft"):
        refused = notebook.run(line)
        assert isinstance(refused.error, UsageError)
        assert "only ana may continue or reset it" in str(refused.error)
    assert model.requests == []
    assert notebook.run("%%agent -t ben/draft\nBen's question").error is None
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    assert conversation(notebook, "draft") == [("human", "Ana's question"), ("ai", "Ana's answer.")]


# -- async runs --------------------------------------------------------------------------------

ASYNC_CELL = """
from jupyter_deepagent import atrace_run, create_research_agent, get_session
from jupyter_deepagent.backends import StoreBackend

storage = get_session().storage
agent = create_research_agent(
    model, checkpointer=storage.checkpointer, store=storage.store,
    backend=StoreBackend(storage.store, storage.memory_namespace),
)
config = {"configurable": {"thread_id": "async"}}
first = await atrace_run(agent, {"messages": [("user", "Remember the units.")]}, config=config)
second = await agent.ainvoke({"messages": [("user", "Which units?")]}, config)
"""


def test_an_async_run_keeps_its_turns_and_memories_in_the_notebooks_storage(
    notebook: Notebook,
) -> None:
    model = scripted(
        call("write_file", file_path="/units.md", content="Yields are in t/ha."),
        "Saved.",
        call("read_file", file_path="/units.md"),
        "Tonnes per hectare.",
    )
    notebook.shell.user_ns["model"] = model
    cell = notebook.run(ASYNC_CELL)  # a cell's top-level await, on the kernel's event loop
    assert cell.error is None
    first, second = notebook.shell.user_ns["first"], notebook.shell.user_ns["second"]
    assert first.status == "ok" and first.final_text == "Saved."
    assert second["messages"][-1].text == "Tonnes per hectare."
    assert "Yields are in t/ha." in str(second["messages"][-2].text)  # read back from the store

    assert [kind for kind, _ in conversation(notebook, "async")] == [
        "human", "ai", "tool", "ai", "human", "ai", "tool", "ai"
    ]  # both turns, read back through the synchronous methods
    assert "| async | 8 |" in notebook.run("%agent threads").markdown[0]
    storage = notebook.session.storage
    kept = storage.store.get(storage.memory_namespace, "/units.md")
    assert kept is not None and "Yields are in t/ha." in json.dumps(kept.value)
