"""A checkpointer that keeps one user's threads under their own keys (see `ThreadOwner`).

The graph, the research log and the events see plain thread names (`analysis`); the database
underneath holds `<project>/<user>/analysis`. Everything is delegated to LangGraph's own saver
(SQLite or PostgreSQL); only the thread id of each config is mapped in and back out, so
rewinds, forks and resumes work unchanged, and a user cannot reach another user's thread by
naming it.

The savers underneath are LangGraph's synchronous ones (one connection or pool, shared with the
notebook's synchronous runs and its thread locks), so the async methods (`ainvoke`,
`atrace_run`) run the same synchronous calls in a worker thread, as LangGraph's own
`PostgresStore` does for its async methods. That keeps the storage usable from any event loop
(a cell's top-level `await`, `asyncio.run`, a server's loop), where LangGraph's async savers are
bound to the one loop that made them.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Collection, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    DeltaChannelHistory,
)

from jupyter_deepagent.project.storage.owners import ThreadOwner

__all__ = ["OwnedCheckpointer"]


class OwnedCheckpointer(BaseCheckpointSaver):
    """`inner`, seen through `owner`'s thread names.

    Every method of LangGraph's `BaseCheckpointSaver` is passed through, the optional ones too
    (`delete_for_runs`, `copy_thread`, `prune`): an inner saver without one raises LangGraph's
    own `NotImplementedError`.

    Args:
        inner: LangGraph's saver (`SqliteSaver`, `PostgresSaver`...), safe to call from several
            threads (both are).
        owner: Whose threads these are.
    """

    def __init__(self, inner: BaseCheckpointSaver, owner: ThreadOwner) -> None:
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.owner = owner

    @property
    def config_specs(self) -> list:
        """The inner saver's configurable fields."""
        return self.inner.config_specs

    # -- mapping thread ids ----------------------------------------------------------------------
    def _in(self, config: RunnableConfig | None) -> RunnableConfig | None:
        if not config:
            return config
        configurable = dict(config.get("configurable") or {})
        thread = configurable.get("thread_id")
        if thread is None:
            return config
        configurable["thread_id"] = self.owner.key(str(thread))
        return {**config, "configurable": configurable}

    def _in_config(self, config: RunnableConfig) -> RunnableConfig:
        mapped = self._in(config)
        return config if mapped is None else mapped

    def _out_config(self, config: RunnableConfig | None) -> RunnableConfig | None:
        if not config:
            return config
        configurable = dict(config.get("configurable") or {})
        thread = self.owner.thread_of(str(configurable.get("thread_id", "")))
        if thread is None:
            return None
        configurable["thread_id"] = thread
        return {**config, "configurable": configurable}

    def _out(self, saved: CheckpointTuple | None) -> CheckpointTuple | None:
        if saved is None:
            return None
        config = self._out_config(saved.config)
        if config is None:  # another user's checkpoint (a list without a thread)
            return None
        return saved._replace(config=config, parent_config=self._out_config(saved.parent_config))

    def _owns_run(self, run_id: str) -> bool:
        """Whether the run's checkpoints are all in this user's threads (and there are some)."""
        found = self.inner.list(None, filter={"run_id": run_id})
        owners = {self._out_config(saved.config) is not None for saved in found}
        return owners == {True}

    # -- the saver's interface -------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint of `config` (the thread's latest without a checkpoint id)."""
        return self._out(self.inner.get_tuple(self._in_config(config)))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The checkpoints of `config`'s thread, newest first (only this user's without one).

        `limit` counts this user's checkpoints: without a thread, the other users' are passed
        over before it applies.
        """
        one_thread = bool(config and (config.get("configurable") or {}).get("thread_id"))
        found = self.inner.list(
            self._in(config),
            filter=filter,
            before=self._in(before),
            limit=limit if one_thread else None,
        )
        try:
            mine = (tuple_ for saved in found if (tuple_ := self._out(saved)) is not None)
            yield from islice(mine, limit) if limit is not None else mine
        finally:
            close = getattr(found, "close", None)
            if close is not None:  # the inner saver's cursor and lock, released now
                close()

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Save a checkpoint; returns its config (with the plain thread name)."""
        saved = self.inner.put(self._in_config(config), checkpoint, metadata, new_versions)
        mine = self._out_config(saved)
        return saved if mine is None else mine

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Save a task's pending writes."""
        self.inner.put_writes(self._in_config(config), writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint of this user's thread `thread_id`."""
        self.inner.delete_thread(self.owner.key(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Delete the checkpoints and writes of these runs, those in this user's threads only
        (a run with a checkpoint in another user's thread is left whole)."""
        mine = [run_id for run_id in run_ids if self._owns_run(run_id)]
        if mine:
            self.inner.delete_for_runs(mine)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copy this user's thread `source_thread_id` to their thread `target_thread_id`."""
        self.inner.copy_thread(self.owner.key(source_thread_id), self.owner.key(target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Prune this user's threads (see `BaseCheckpointSaver.prune` for the strategies)."""
        keys = [self.owner.key(thread) for thread in thread_ids]
        self.inner.prune(keys, strategy=strategy)

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """The inner saver's walk of the thread's writes (it holds no thread ids to map)."""
        return self.inner.get_delta_channel_history(
            config=self._in_config(config), channels=channels
        )

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The inner saver's channel versions."""
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> OwnedCheckpointer:
        """The same view over the inner saver with a wider msgpack allowlist."""
        inner = self.inner.with_allowlist(extra_allowlist)
        return self if inner is self.inner else OwnedCheckpointer(inner, self.owner)

    # -- async twins: the same calls, in a worker thread -----------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async `get_tuple`."""
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list` (read whole in the worker thread, then yielded)."""

        def read() -> list[CheckpointTuple]:
            return [*self.list(config, filter=filter, before=before, limit=limit)]

        for saved in await asyncio.to_thread(read):
            yield saved

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async `put`."""
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async `put_writes`."""
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async `delete_thread`."""
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async `delete_for_runs`."""
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async `copy_thread`."""
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Async `prune`."""
        await asyncio.to_thread(self.prune, thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async `get_delta_channel_history`."""
        return await asyncio.to_thread(
            self.get_delta_channel_history, config=config, channels=channels
        )
