"""LangGraph's own checkpointer conformance suite (`langgraph-checkpoint-conformance`), run on
every saver the project builds: the SQLite saver of the state folder, the PostgreSQL saver of
`database_url`, and the per-user view over each (`OwnedCheckpointer`), the last two through
their async methods (what `ainvoke` and `atrace_run` use) and through their sync ones.

The suite calls async methods only; `SyncMethods` hands each call to the saver's synchronous
twin, so the synchronous contract (what `%%agent` runs use) is held to the same tests. A
capability the saver underneath does not implement (LangGraph's `SqliteSaver` has no `prune`,
neither saver has `copy_thread` or `delete_for_runs` yet) is left out, and the table below says
which: a saver gaining one makes the test fail until the table says so, and the suite then runs it.

The per-user views share their database with another user's threads, written first under the
same thread ids, so each of the suite's listings also checks that nothing of theirs shows.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    empty_checkpoint,
)
from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.capabilities import ALL_CAPABILITIES

from jupyter_deepagent.project.storage.owned_checkpointer import OwnedCheckpointer
from jupyter_deepagent.project.storage.owners import ThreadOwner

OPTIONAL = {"delete_for_runs", "copy_thread", "prune"}
LACKING = {"sqlite": OPTIONAL, "postgres": {"delete_for_runs", "copy_thread"}}
"""The optional capabilities LangGraph's saver of each kind does not implement (installed
versions: langgraph-checkpoint-sqlite 3.1, langgraph-checkpoint-postgres 3.2)."""
ANA, BEN = ThreadOwner("lab", "ana"), ThreadOwner("lab", "ben")


class SyncMethods(BaseCheckpointSaver):
    """`saver`'s synchronous methods behind the async ones the suite calls (on the loop's
    thread, as a synchronous caller would)."""

    def __init__(self, saver: BaseCheckpointSaver) -> None:
        super().__init__(serde=saver.serde)
        self.saver = saver

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self.saver.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        for saved in self.saver.list(config, filter=filter, before=before, limit=limit):
            yield saved

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self.saver.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self.saver.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        self.saver.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        self.saver.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self.saver.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self.saver.prune(thread_ids, strategy=strategy)

    def get_next_version(self, current: Any, channel: None) -> Any:
        return self.saver.get_next_version(current, channel)


def implemented(saver: BaseCheckpointSaver) -> set[str]:
    """The optional capabilities `saver` (or the saver under an `OwnedCheckpointer`) has."""
    inner = saver.inner if isinstance(saver, OwnedCheckpointer) else saver
    return {
        name
        for name in OPTIONAL
        if getattr(type(inner), name) is not getattr(BaseCheckpointSaver, name)
    }


def write_others(saver: BaseCheckpointSaver) -> None:
    """Ben's checkpoints in the database, in threads named like the suite's (and one he keeps)."""
    bens = OwnedCheckpointer(saver, BEN)
    for thread in ("ben's notes", "thread-1"):
        config: RunnableConfig = {"configurable": {"thread_id": thread, "checkpoint_ns": ""}}
        for step in range(3):
            checkpoint = empty_checkpoint()
            config = bens.put(config, checkpoint, {"source": "loop", "step": step}, {})


@contextmanager
def sqlite_saver(root: Path) -> Iterator[BaseCheckpointSaver]:
    from jupyter_deepagent.project.storage.sqlite import SqliteStorage

    storage = SqliteStorage(root / uuid.uuid4().hex / ".deepagent")
    try:
        yield storage.checkpointer
    finally:
        storage.close()


def postgres_saver(server: Any) -> Callable[[Path], Any]:
    @contextmanager
    def made(root: Path) -> Iterator[BaseCheckpointSaver]:
        from jupyter_deepagent.project.storage.postgres import PostgresStorage

        storage = PostgresStorage(server.create_database(f"conformance_{uuid.uuid4().hex}"))
        try:
            yield storage.checkpointer
        finally:
            storage.close()

    return made


@pytest.fixture(params=["sqlite", "postgres"])
def saver_kind(request: pytest.FixtureRequest) -> tuple[str, Callable[[Path], Any]]:
    if request.param == "postgres":
        return "postgres", postgres_saver(request.getfixturevalue("postgres_server"))
    return "sqlite", sqlite_saver


# LangGraph's sync savers have no async methods of their own (theirs raise NotImplementedError):
# async runs reach the database through OwnedCheckpointer, so only its async methods are tested.
@pytest.mark.parametrize(
    ("view", "methods"), [("saver", "sync"), ("owned", "sync"), ("owned", "async")]
)
def test_the_saver_passes_langgraphs_conformance_suite(
    saver_kind: tuple[str, Callable[[Path], Any]], view: str, methods: str, tmp_path: Path
) -> None:
    kind, make = saver_kind
    lacking: set[str] = set()

    async def factory() -> AsyncIterator[BaseCheckpointSaver]:
        with make(tmp_path) as saver:
            under_test: BaseCheckpointSaver = saver
            if view == "owned":
                write_others(saver)
                under_test = OwnedCheckpointer(saver, ANA)
            lacking.update(OPTIONAL - implemented(under_test))
            yield SyncMethods(under_test) if methods == "sync" else under_test

    registered = checkpointer_test(
        name=f"{kind}-{view}-{methods}", skip_capabilities=LACKING[kind]
    )(factory)
    report = asyncio.run(validate(registered))

    failures = {name: result.failures for name, result in report.results.items() if result.failures}
    assert not failures, failures
    assert lacking == LACKING[kind]  # the table above is still true
    tested = {name for name, result in report.results.items() if result.detected}
    assert tested == {cap.value for cap in ALL_CAPABILITIES} - LACKING[kind]
    assert all(report.results[name].passed and report.results[name].tests_passed for name in tested)


def test_the_owned_views_optional_methods_keep_to_the_users_threads() -> None:
    """What the suite cannot see (it has one user): `prune`, `copy_thread` and
    `delete_for_runs` reach only the caller's threads, with a saver that implements them."""
    from langgraph.checkpoint.memory import InMemorySaver

    class Recorded(InMemorySaver):
        def __init__(self) -> None:
            super().__init__()
            self.calls: list[tuple[str, object]] = []

        def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
            self.calls.append(("prune", (list(thread_ids), strategy)))

        def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
            self.calls.append(("copy_thread", (source_thread_id, target_thread_id)))

        def delete_for_runs(self, run_ids: Sequence[str]) -> None:
            self.calls.append(("delete_for_runs", list(run_ids)))

    inner = Recorded()
    ana, ben = OwnedCheckpointer(inner, ANA), OwnedCheckpointer(inner, BEN)
    for owner, run_id in ((ana, "run-a"), (ben, "run-b")):
        config: RunnableConfig = {"configurable": {"thread_id": "draft", "checkpoint_ns": ""}}
        owner.put(config, empty_checkpoint(), {"source": "loop", "step": 0, "run_id": run_id}, {})

    ana.prune(["draft"], strategy="delete")
    ana.copy_thread("draft", "draft-copy")
    ana.delete_for_runs(["run-a", "run-b", "run-unknown"])
    asyncio.run(ana.aprune(["draft"]))
    assert inner.calls == [
        ("prune", (["lab/ana/draft"], "delete")),
        ("copy_thread", ("lab/ana/draft", "lab/ana/draft-copy")),
        ("delete_for_runs", ["run-a"]),  # ben's run is his to delete
        ("prune", (["lab/ana/draft"], "keep_latest")),
    ]


def test_a_users_limit_counts_their_own_checkpoints(tmp_path: Path) -> None:
    with sqlite_saver(tmp_path) as saver:
        ana, ben = OwnedCheckpointer(saver, ANA), OwnedCheckpointer(saver, BEN)
        for owner, count in ((ana, 3), (ben, 5)):
            config: RunnableConfig = {"configurable": {"thread_id": "t", "checkpoint_ns": ""}}
            for step in range(count):
                config = owner.put(config, empty_checkpoint(), {"step": step}, {})
        newest = [saved.metadata["step"] for saved in ana.list(None, limit=3)]
        assert newest == [2, 1, 0]
        assert [saved.metadata["step"] for saved in ana.list(None, limit=2)] == [2, 1]

        async def listed() -> list[object]:
            return [saved.metadata["step"] async for saved in ana.alist(None, limit=3)]

        assert asyncio.run(listed()) == [2, 1, 0]
        assert len(list(ben.list(None))) == 5
        assert all(s.config["configurable"]["thread_id"] == "t" for s in ben.list(None))


def test_the_suite_reached_every_method_it_names() -> None:
    """The async methods the suite detects are those `OwnedCheckpointer` defines, so the
    'owned async' runs above test its own code, not `BaseCheckpointSaver`'s defaults."""
    from langgraph.checkpoint.conformance.capabilities import DetectedCapabilities
    from langgraph.checkpoint.memory import InMemorySaver

    detected = DetectedCapabilities.from_instance(OwnedCheckpointer(InMemorySaver(), ANA))
    assert {cap.value for cap in detected.detected} == {cap.value for cap in ALL_CAPABILITIES}
