"""Shared fixtures: every backend, ready to use, under the same name; and a check that every
run event the suite emits follows the schema."""

from __future__ import annotations

import atexit
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from jupyter_deepagent.backends import (
    BackendProtocol,
    CompositeBackend,
    DiskBackend,
    StateBackend,
    StoreBackend,
    bind_state_files,
)
from jupyter_deepagent.events.schema import (
    CHECK_EVENTS_VARIABLE,
    check_events,
    validate_event,
)

# Hypothesis caches the constants of local modules in ./.hypothesis/ while tests are collected,
# even without an example database: keep that out of the checkout.
_HYPOTHESIS_HOME = tempfile.mkdtemp(prefix="hypothesis-")
atexit.register(shutil.rmtree, _HYPOTHESIS_HOME, ignore_errors=True)
set_hypothesis_home_dir(_HYPOTHESIS_HOME)

# Every run event built or stamped anywhere in the suite is validated against the schema: here
# (recorded, so an event whose error a run swallowed still fails its test) and in any process a
# test starts (a kernel, a script), where an invalid event raises.
os.environ[CHECK_EVENTS_VARIABLE] = "1"
_invalid_events: list[str] = []


def _record_invalid(event: dict, stamped: bool) -> None:
    try:
        validate_event(event, stamped=stamped)
    except ValueError as exc:
        _invalid_events.append(str(exc))
        raise


check_events(_record_invalid)


@pytest.fixture(autouse=True)
def _every_event_follows_the_schema() -> Iterator[None]:
    """Fail the test if any event it emitted broke the schema (even one whose error was caught)."""
    _invalid_events.clear()
    yield
    if _invalid_events:
        pytest.fail("run events that do not follow the schema:\n" + "\n".join(_invalid_events))


@dataclass
class MountedBackend:
    """A backend under test and the folder the tests work in (`/`, or a mount like `/mnt/`)."""

    backend: BackendProtocol
    root: str = "/"

    def path(self, relative: str) -> str:
        """The virtual path of `relative` inside the folder under test."""
        return self.root + relative


@pytest.fixture
def sqlite_store(tmp_path: Path) -> Iterator[object]:
    """A LangGraph SqliteStore on a file, set up and closed after the test."""
    from langgraph.store.sqlite import SqliteStore

    conn = sqlite3.connect(
        tmp_path / "store.sqlite", check_same_thread=False, isolation_level=None
    )
    store = SqliteStore(conn)
    store.setup()
    yield store
    conn.close()


@pytest.fixture(
    params=[
        "state",
        "state-bound",
        "store-memory",
        "store-sqlite",
        "disk",
        "composite-default",
        "composite-mount",
        "outputs-masked",
    ]
)
def any_backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MountedBackend]:
    """Every backend implementation, each empty, for the conformance suite."""
    kind = request.param
    if kind == "state":
        yield MountedBackend(StateBackend())
    elif kind == "state-bound":
        with bind_state_files({}):
            yield MountedBackend(StateBackend())
    elif kind == "store-memory":
        yield MountedBackend(StoreBackend())
    elif kind == "store-sqlite":
        yield MountedBackend(StoreBackend(request.getfixturevalue("sqlite_store")))
    elif kind == "disk":
        yield MountedBackend(DiskBackend(tmp_path / "root"))
    elif kind == "outputs-masked":  # /outputs/ as the agent sees it
        from jupyter_deepagent.project.secrets.masked_folder import MaskedFolder
        from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
        from jupyter_deepagent.project.secrets.redaction import Redactor

        yield MountedBackend(MaskedFolder(OutputsBackend(), Redactor(environ={})))
    else:
        mounted = DiskBackend(tmp_path / "mnt")
        composite = CompositeBackend(StateBackend(), {"/mnt/": mounted})
        yield MountedBackend(composite, "/mnt/" if kind == "composite-mount" else "/")


# -- storage: SQLite files, or a PostgreSQL server of the test session's own --------------------


@pytest.fixture(autouse=True)
def _no_team_settings_from_outside(monkeypatch: pytest.MonkeyPatch) -> None:
    """A database URL or a hub user of the machine running the tests must not reach them."""
    monkeypatch.delenv("JUPYTER_DEEPAGENT_DATABASE_URL", raising=False)
    monkeypatch.delenv("JUPYTERHUB_USER", raising=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """A PostgreSQL server in a temporary folder, on a unix socket, for the whole session.

    Skips (with how to install the binaries) where PostgreSQL is missing, unless
    JUPYTER_DEEPAGENT_REQUIRE_POSTGRES=1: then that is a failure.
    """
    from postgres_server import REQUIRE_VARIABLE, PostgresServer, missing_reason

    reason = missing_reason()
    if reason is not None:
        if os.environ.get(REQUIRE_VARIABLE) == "1":
            pytest.fail(f"{reason} ({REQUIRE_VARIABLE}=1)")
        pytest.skip(reason)
    server = PostgresServer.start()
    yield server
    server.stop()


_databases = iter(range(1, 10**6))


@pytest.fixture(params=["sqlite", "postgres"])
def storage_kind(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each storage test twice: on the SQLite files beside the notebook, and on a fresh database
    of the session's PostgreSQL server (given to kernels started by the test through
    JUPYTER_DEEPAGENT_DATABASE_URL, as a JupyterHub would)."""
    if request.param == "postgres":
        server = request.getfixturevalue("postgres_server")
        url = server.create_database(f"test_{os.getpid()}_{next(_databases)}")
        monkeypatch.setenv("JUPYTER_DEEPAGENT_DATABASE_URL", url)
    return request.param
