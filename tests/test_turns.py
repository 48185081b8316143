"""Cell-addressed turns: re-running a cell replaces its turn, so Run All twice or a restart and
Run All rebuild the first pass's conversation (with JupyterLab's cell ids and without them)."""

from __future__ import annotations

from typing import Any

import pytest
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.magic import magics

CELLS = [
    "%%agent\nList the notebook's files.",
    "%%agent\nNow summarize what you found.",
]


def _script() -> Any:
    return scripted(
        call("ls", path="/notebook/"),
        "The notebook has cells.",
        "Summary: it has cells.",
    )


def _conversation(nb: Notebook) -> list[tuple[str, str]]:
    saved = nb.session.storage.checkpointer.get_tuple(
        {"configurable": {"thread_id": nb.session.thread}}
    )
    messages = saved.checkpoint["channel_values"]["messages"]
    return [(m.type, str(m.text)) for m in messages]


def _run_all(nb: Notebook, cell_ids: list[str] | None, monkeypatch: pytest.MonkeyPatch) -> None:
    for index, source in enumerate(CELLS):
        parent = {"metadata": {"cellId": cell_ids[index]}} if cell_ids else {}
        monkeypatch.setattr(magics, "_parent", lambda shell, parent=parent: parent)
        run = nb.run(source)
        assert run.error is None, run.stdout


@pytest.mark.parametrize("cell_ids", [None, ["c-ask", "c-sum"]], ids=["no ids", "cell ids"])
def test_run_all_twice_and_restart_run_all_give_the_first_passs_conversation(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, cell_ids: list[str] | None
) -> None:
    model = _script()
    notebook.session.configure(model=model)

    _run_all(notebook, cell_ids, monkeypatch)
    first = _conversation(notebook)
    _run_all(notebook, cell_ids, monkeypatch)
    second = _conversation(notebook)
    notebook.restart()
    notebook.session.configure(model=model)
    _run_all(notebook, cell_ids, monkeypatch)
    third = _conversation(notebook)

    assert [kind for kind, _ in first] == ["human", "ai", "tool", "ai", "human", "ai"]
    assert second == first
    assert third == first
    assert model.remaining == 0  # played once; the re-runs were answered from the conversation


@pytest.mark.parametrize(
    ("first_ids", "then_ids"),
    [(None, ["c-ask", "c-sum"]), (["c-ask", "c-sum"], None)],
    ids=["papermill then Lab", "Lab then papermill"],
)
def test_a_client_with_cell_ids_and_one_without_rebuild_each_others_conversation(
    notebook: Notebook,
    monkeypatch: pytest.MonkeyPatch,
    first_ids: list[str] | None,
    then_ids: list[str] | None,
) -> None:
    # JupyterLab and `jupyter-deepagent run` send cell ids; papermill and nbconvert send none
    model = _script()
    notebook.session.configure(model=model)

    _run_all(notebook, first_ids, monkeypatch)
    first = _conversation(notebook)
    _run_all(notebook, then_ids, monkeypatch)

    assert _conversation(notebook) == first
    assert model.remaining == 0  # the second client's pass asked the model nothing


def test_two_cells_of_the_same_text_run_with_ids_after_a_pass_without_keep_two_turns(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook.session.configure(model=scripted("first", "second"))
    for cell_id in (None, None, "one", "two"):  # papermill's Run All, then JupyterLab's
        parent = {"metadata": {"cellId": cell_id}} if cell_id else {}
        monkeypatch.setattr(magics, "_parent", lambda shell, parent=parent: parent)
        assert notebook.run("%%agent\nGo on.").error is None

    # cell "one" takes over the turn papermill left; cell "two" does not take cell "one"'s new
    # turn for its own (it has the same text): it goes on after it, as in JupyterLab alone
    assert _conversation(notebook) == [
        ("human", "Go on."), ("ai", "first"), ("human", "Go on."), ("ai", "second"),
    ]


def test_editing_a_cell_with_an_id_replaces_its_turn_and_drops_the_later_ones(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    model = scripted("first answer", "second answer", "edited answer")
    notebook.session.configure(model=model)
    monkeypatch.setattr(magics, "_parent", lambda shell: {"metadata": {"cellId": "one"}})
    notebook.run("%%agent\nWhat is the question?")
    monkeypatch.setattr(magics, "_parent", lambda shell: {"metadata": {"cellId": "two"}})
    notebook.run("%%agent\nAnd the next one?")

    monkeypatch.setattr(magics, "_parent", lambda shell: {"metadata": {"cellId": "one"}})
    edited = notebook.run("%%agent\nWhat is the real question?")

    assert edited.error is None
    assert _conversation(notebook) == [
        ("human", "What is the real question?"),
        ("ai", "edited answer"),
    ]
    history = list(notebook.session.storage.checkpointer.list(
        {"configurable": {"thread_id": notebook.session.thread}}
    ))
    texts = {str(m.text) for c in history for m in c.checkpoint["channel_values"].get("messages", [])}
    assert "second answer" in texts  # the dropped turn stays in the checkpoint history


def test_new_keeps_its_meaning_a_fresh_thread_each_time(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    notebook.session.configure(model=scripted("one", "two"))
    notebook.run("%%agent --new\nhello")
    first_thread = notebook.session.thread
    notebook.run("%%agent --new\nhello")

    assert notebook.session.thread != first_thread
