"""Adds the filesystem tools and the `files` state channel the StateBackend writes to."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Annotated, NotRequired

from langchain.agents.middleware import AgentMiddleware, AgentState

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import FileData, merge_files

__all__ = ["FilesState", "FilesystemMiddleware"]


class FilesState(AgentState):
    """Agent state with the thread's files (path -> FileData), checkpointed with the thread."""

    files: Annotated[NotRequired[dict[str, FileData]], merge_files]


class FilesystemMiddleware(AgentMiddleware):
    """Registers ls, read_file, write_file, edit_file, delete, glob and grep over one backend."""

    state_schema = FilesState

    def __init__(
        self,
        backend: BackendProtocol,
        *,
        descriptions: Mapping[str, str] | None = None,
        exclude: Collection[str] = (),
    ) -> None:
        super().__init__()
        from jupyter_deepagent.harness.tools.filesystem import filesystem_tools

        self.backend = backend
        self.tools = filesystem_tools(backend, descriptions=descriptions, exclude=exclude)
