"""Where bytes live: one protocol and its implementations (no LLM, no Jupyter).

Importing this package stays light: LangGraph is loaded only when a `StoreBackend` first
touches its store.
"""

from __future__ import annotations

from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.protocol import (
    BackendProtocol,
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.state import FileData, StateBackend, bind_state_files, merge_files
from jupyter_deepagent.backends.store import StoreBackend

__all__ = [
    "BackendProtocol",
    "CompositeBackend",
    "DiskBackend",
    "EditResult",
    "FileData",
    "FileInfo",
    "GrepMatch",
    "ReadResult",
    "StateBackend",
    "StoreBackend",
    "WriteResult",
    "bind_state_files",
    "merge_files",
]
