"""A checkpointer that keeps one user's threads under their own keys (see `ThreadOwner`).

The graph, the research log and the events see plain thread names (`analysis`); the database
underneath holds `<project>/<user>/analysis`. Everything is delegated to LangGraph's own saver
(SQLite or PostgreSQL); only the thread id of each config is mapped in and back out, so
rewinds, forks and resumes work unchanged, and a user cannot reach another user's thread by
naming it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

from jupyter_deepagent.project.storage.owners import ThreadOwner

__all__ = ["OwnedCheckpointer"]


class OwnedCheckpointer(BaseCheckpointSaver):
    """`inner`, seen through `owner`'s thread names.

    Args:
        inner: LangGraph's saver (`SqliteSaver`, `PostgresSaver`...).
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
    def _in(self, config: Any) -> Any:
        if not config:
            return config
        configurable = dict(config.get("configurable") or {})
        thread = configurable.get("thread_id")
        if thread is None:
            return config
        configurable["thread_id"] = self.owner.key(str(thread))
        return {**config, "configurable": configurable}

    def _out_config(self, config: Any) -> Any:
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

    # -- the saver's interface -------------------------------------------------------------------
    def get_tuple(self, config: Any) -> CheckpointTuple | None:
        """The checkpoint of `config` (the thread's latest without a checkpoint id)."""
        return self._out(self.inner.get_tuple(self._in(config)))

    def list(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """The checkpoints of `config`'s thread, newest first (only this user's without one)."""
        found = self.inner.list(
            self._in(config), filter=filter, before=self._in(before), limit=limit
        )
        for saved in found:
            mine = self._out(saved)
            if mine is not None:
                yield mine

    def put(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Save a checkpoint; returns its config (with the plain thread name)."""
        saved = self.inner.put(self._in(config), checkpoint, metadata, new_versions)
        return self._out_config(saved)

    def put_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Save a task's pending writes."""
        self.inner.put_writes(self._in(config), writes, task_id, task_path)

    def delete_thread(self, thread_id: str) -> None:
        """Delete every checkpoint of this user's thread `thread_id`."""
        self.inner.delete_thread(self.owner.key(thread_id))

    def get_next_version(self, current: Any, channel: None) -> Any:
        """The inner saver's channel versions."""
        return self.inner.get_next_version(current, channel)

    def with_allowlist(self, extra_allowlist: Collection[tuple[str, ...]]) -> OwnedCheckpointer:
        """The same view over the inner saver with a wider msgpack allowlist."""
        inner = self.inner.with_allowlist(extra_allowlist)
        return self if inner is self.inner else OwnedCheckpointer(inner, self.owner)

    # -- async twins -----------------------------------------------------------------------------
    async def aget_tuple(self, config: Any) -> CheckpointTuple | None:
        """Async `get_tuple`."""
        return self._out(await self.inner.aget_tuple(self._in(config)))

    async def alist(
        self,
        config: Any,
        *,
        filter: dict[str, Any] | None = None,
        before: Any = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list`."""
        async for saved in self.inner.alist(
            self._in(config), filter=filter, before=self._in(before), limit=limit
        ):
            mine = self._out(saved)
            if mine is not None:
                yield mine

    async def aput(self, config: Any, checkpoint: Any, metadata: Any, new_versions: Any) -> Any:
        """Async `put`."""
        saved = await self.inner.aput(self._in(config), checkpoint, metadata, new_versions)
        return self._out_config(saved)

    async def aput_writes(
        self, config: Any, writes: Sequence[tuple[str, Any]], task_id: str, task_path: str = ""
    ) -> None:
        """Async `put_writes`."""
        await self.inner.aput_writes(self._in(config), writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async `delete_thread`."""
        await self.inner.adelete_thread(self.owner.key(thread_id))
