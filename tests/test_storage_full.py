"""A state folder whose disk fills up during a run: one clear line, and nothing lost.

SQLite's own limit (`PRAGMA max_page_count`) makes a write fail with SQLITE_FULL, the error a
full disk gives, on the real checkpointer of the cell's session.
"""

from __future__ import annotations

import sqlite3

from notebook_shell import Notebook, notebook, scripted  # noqa: F401

from jupyter_deepagent import StateNotWritten


def _checkpoints(notebook: Notebook) -> sqlite3.Connection:
    return notebook.session.storage.raw._checkpoints


def test_a_full_disk_under_the_checkpointer_says_so_and_the_next_run_continues(
    notebook: Notebook,  # noqa: F811
) -> None:
    notebook.session.configure(model=scripted("The first answer."))
    assert notebook.run("%%agent\nFirst question.").error is None
    connection = _checkpoints(notebook)
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")  # no room for one more page
    notebook.session.configure(model=scripted("x" * 200_000))
    cell = notebook.run("%%agent\nSecond question.")
    assert isinstance(cell.error, StateNotWritten)
    shown = cell.error._render_traceback_()
    assert len(shown) == 1 and "disk is full" in shown[0] and "free" in shown[0]
    assert str(notebook.folder / ".deepagent") in shown[0]
    assert "Traceback" not in "".join(shown)

    connection.execute("PRAGMA max_page_count = 1073741823")  # room again
    model = scripted("The third answer.")
    notebook.session.configure(model=model)
    assert notebook.run("%%agent\nThird question.").error is None
    sent = [message.text for message in model.requests[0].messages]
    assert "First question." in sent and "The first answer." in sent  # the thread is intact
