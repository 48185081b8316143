"""The `database_url` setting: a secret shown only masked, a password refused where it would be
saved, an unreachable server named in one line within seconds, an earlier version's SQLite state
adopted, and a `project` shared by two notebook folders."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import DatabaseUnreachable

PASSWORD = "tr0ub4dor" + "-and-3"
PATIENCE = 30  # seconds; only a hang reaches it (the connection timeout is 5 s)
LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])


# -- a secret --------------------------------------------------------------------------------


def test_a_password_in_agent_config_is_refused_and_masked(notebook: Notebook) -> None:
    refused = notebook.run(f"%agent config database_url=postgresql://ana:{PASSWORD}@db/lab")
    assert isinstance(refused.error, UsageError)
    text = str(refused.error)
    assert "holds a password" in text and "~/.pgpass" in text and PASSWORD not in text
    assert "postgresql://ana:***@db/lab" in text
    assert notebook.session.config.database_url == ""


def test_a_url_of_another_kind_in_the_config_file_is_refused(notebook: Notebook) -> None:
    (notebook.folder / ".deepagent.toml").write_text('database_url = "mysql://db/lab"\n')
    with pytest.raises(ValueError, match=r"\.deepagent\.toml: database_url must be a postgresql"):
        notebook.session.config  # noqa: B018


def test_the_environments_url_wins_and_is_shown_masked(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"postgresql://ana:{PASSWORD}@db.example.org:6543/lab"
    monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", url)
    shown = notebook.run("%agent config database_url=postgresql://ben@elsewhere/lab")
    assert "JUPYTER_DEEPAGENT_DATABASE_URL in the environment, which wins" in shown.stdout
    table = shown.markdown[0]
    assert "postgresql://ana:***@db.example.org:6543/lab" in table
    assert "JUPYTER_DEEPAGENT_DATABASE_URL" in table and PASSWORD not in table
    assert notebook.session.config.database_url == url
    assert PASSWORD not in notebook.session.redactor()(f"the URL is {url}")


# -- a server that cannot be reached -----------------------------------------------------------


@pytest.fixture
def refusing_port() -> int:
    """A port of 127.0.0.1 where nothing listens (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def stalling_port() -> Iterator[int]:
    """A port of 127.0.0.1 that accepts connections and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    worker = threading.Thread(target=accept, daemon=True)
    worker.start()
    yield server.getsockname()[1]
    stop.set()
    worker.join()
    for connection in held:
        connection.close()
    server.close()


def _unreachable(notebook: Notebook, monkeypatch: pytest.MonkeyPatch, port: int) -> str:
    url = f"postgresql://ana:{PASSWORD}@127.0.0.1:{port}/lab"
    monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", url)
    model = scripted("never sent")
    notebook.session.configure(model=model)
    started = time.monotonic()
    cell = notebook.run("%%agent\nhello")
    assert time.monotonic() - started < PATIENCE
    assert isinstance(cell.error, DatabaseUnreachable)
    assert model.requests == []
    [shown] = cell.error._render_traceback_()  # one message, no traceback: its words wrapped
    line = " ".join(shown.split())
    assert "Traceback" not in shown and PASSWORD not in line
    assert f"127.0.0.1:{port}" in line and "'lab'" in line
    assert "server is running" in line and "%agent config database_url=" in line
    return line


@LOOPBACK_ONLY
def test_a_refused_connection_is_one_line_naming_host_and_port(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, refusing_port: int
) -> None:
    line = _unreachable(notebook, monkeypatch, refusing_port)
    assert line.startswith("DatabaseUnreachable: Cannot reach the PostgreSQL database 'lab'")
    assert "refused" in line.lower()


@LOOPBACK_ONLY
def test_a_server_that_never_answers_times_out_in_seconds(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, stalling_port: int
) -> None:
    line = _unreachable(notebook, monkeypatch, stalling_port)
    assert "timeout" in line.lower() or "timed out" in line.lower()


# -- an earlier version's state, and a project of two folders -----------------------------------


def test_threads_and_memories_of_an_earlier_version_are_adopted(notebook: Notebook) -> None:
    model = scripted(
        call("write_file", file_path="/memories/units.md", content="t/ha"), "Saved.",
        call("read_file", file_path="/memories/units.md"), "t/ha it is.",
    )
    notebook.session.configure(model=model)
    assert notebook.run("%%agent -t analysis\nRemember the units.").error is None
    owner = notebook.session.owner
    notebook.session.close()
    state = notebook.folder / ".deepagent"
    with sqlite3.connect(state / "checkpoints.sqlite") as db:  # as an earlier version kept it
        for table in ("checkpoints", "writes"):
            db.execute(f"UPDATE {table} SET thread_id = 'analysis'")
    with sqlite3.connect(state / "store.sqlite") as db:
        db.execute("UPDATE store SET prefix = 'memories'")
    notebook.restart()
    notebook.session.configure(model=model)
    assert "analysis** (current) | 4 |" in notebook.run("%agent threads").markdown[0]
    assert notebook.run("%%agent -t analysis\nWhich units?").error is None
    sent = [m.type for m in model.requests[-2].messages if m.type != "system"]
    assert sent[:4] == ["human", "ai", "tool", "ai"]  # the earlier conversation continued
    tool = [m for m in notebook.shell.user_ns["_agent"].messages if m.type == "tool"]
    assert "t/ha" in str(tool[-1].text)
    assert owner.key("analysis") == f"project/{owner.user}/analysis"


@pytest.mark.usefixtures("storage_kind")
def test_two_notebook_folders_of_one_project_share_memories(tmp_path: Path) -> None:
    from notebook_shell import Notebook as Shell

    settings = 'project = "soil.survey"\nstate_dir = "../state"\n'
    folders = [tmp_path / "north", tmp_path / "south"]
    for folder in folders:
        folder.mkdir()
        (folder / ".deepagent.toml").write_text(settings)
    north, south = (Shell(folder) for folder in folders)
    try:
        north.session.configure(model=scripted(
            call("write_file", file_path="/memories/plots.md", content="12 plots"), "Saved."))
        assert north.run("%%agent\nRemember the plots.").error is None
        south.session.configure(model=scripted(
            call("read_file", file_path="/memories/plots.md"), "12 plots."))
        assert south.run("%%agent\nHow many plots?").error is None
        tool = [m for m in south.shell.user_ns["_agent"].messages if m.type == "tool"]
        assert "12 plots" in str(tool[-1].text)
        assert south.session.owner.project == "soil.survey"
    finally:
        north.stop()
        south.stop()


def test_a_database_with_foreign_tables_is_named_damaged_and_left_alone(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, postgres_server: object
) -> None:
    import psycopg

    from jupyter_deepagent import StateDamaged

    url = postgres_server.create_database("foreign_tables")  # type: ignore[attr-defined]
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("CREATE TABLE checkpoints (id integer, note text)")
        connection.execute("INSERT INTO checkpoints VALUES (1, 'theirs')")
    monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", url)
    model = scripted("never sent")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nhello")
    assert isinstance(cell.error, StateDamaged) and model.requests == []
    [line] = cell.error._render_traceback_()
    assert line.startswith("StateDamaged: The PostgreSQL database 'foreign_tables'")
    assert "langgraph-checkpoint-postgres" in line and "database of its own" in line
    with psycopg.connect(url) as connection:
        assert connection.execute("SELECT note FROM checkpoints").fetchall() == [("theirs",)]


# -- spellings that once leaked the password ---------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        f"Postgresql://ana:{PASSWORD}@db.example.org/lab",  # any case: libpq wants lower case
        f"postgresql://ana:{PASSWORD}@side@db.example.org/lab",  # a raw "@" in the password
        f"postgresql://ana@db.example.org/lab?sslpassword={PASSWORD}",
    ],
)
def test_every_spelling_of_a_password_is_masked(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, url: str
) -> None:
    monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", url)
    shown = notebook.run("%agent config")
    assert shown.error is None
    assert PASSWORD not in shown.markdown[0] and "***" in shown.markdown[0]
    assert notebook.session.config.database_url.startswith("postgresql://")


def test_a_stray_percent_in_the_password_is_refused_without_echoing_it(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", "postgresql://ana:se%ZZ" + "cret@db/lab")
    cell = notebook.run("%agent config")
    assert isinstance(cell.error, UsageError)
    assert "write a '%' in a user name or password as %25" in str(cell.error)
    assert "ZZcret" not in str(cell.error)


def _open_storage_in_a_process(url: str) -> str:
    from jupyter_deepagent.project.storage.postgres import PostgresStorage

    try:
        PostgresStorage(url).close()
    except Exception as exc:  # the test reports what each process met
        return f"{type(exc).__name__}: {exc}"
    return "ok"


def test_kernels_opening_a_new_database_at_once_all_get_it(postgres_server: object) -> None:
    import multiprocessing

    url = postgres_server.create_database(f"together_{int(time.time() * 1000)}")
    with multiprocessing.get_context("spawn").Pool(6) as pool:
        results = pool.map(_open_storage_in_a_process, [url] * 6)
    assert results == ["ok"] * 6


def test_the_agent_cannot_read_libpqs_password_files(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = "db.example.org:5432:lab:ana:" + PASSWORD + "\n"
    (notebook.folder / ".pgpass").write_text(line)  # a home folder, as on a JupyterHub
    (notebook.folder / "keys").mkdir()
    (notebook.folder / "keys" / "lab.pass").write_text(line)
    monkeypatch.setenv("PGPASSFILE", str(notebook.folder / "keys" / "lab.pass"))
    model = scripted(
        {"tool_calls": [{"name": "read_file", "args": {"file_path": "/workspace/.pgpass"}},
                        {"name": "read_file", "args": {"file_path": "/workspace/keys/lab.pass"}},
                        {"name": "grep", "args": {"pattern": "5432", "path": "/workspace/"}},
                        {"name": "ls", "args": {"path": "/workspace/"}}]},
        "done",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nfind the database password")
    assert cell.error is None
    sent = "\n".join(str(m.content) for m in model.requests[-1].messages)
    assert PASSWORD not in sent
    results = {r["tool"]: r for r in notebook.session.last_trace.of_type("tool_result")}
    assert "credential files" in results["read_file"]["error"]
    assert "No matches" in results["grep"]["content"]
    assert ".pgpass" not in results["ls"]["content"] and "keys/" in results["ls"]["content"]
