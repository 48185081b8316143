"""Where bytes live: one protocol and its implementations (no LLM, no Jupyter).

Importing this package stays light: LangGraph is loaded only when a `StoreBackend` first
touches its store. Besides the backends, it exports the path and matching rules they follow
(`normalize_virtual_path`, `glob_matches`, ...), for backends built in other layers.
"""

from __future__ import annotations

from jupyter_deepagent.backends._paths import folder_prefix, is_within, normalize_virtual_path
from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.matching._matching import (
    BlockSearch,
    check_glob,
    every_file,
    file_filter_matches,
    first_matches,
    glob_matches,
    grep_texts,
    matching_lines,
)
from jupyter_deepagent.backends.matching.match_limit import (
    MatchLimit,
    current_match_limit,
    limiting_matches,
)
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
    "BlockSearch",
    "CompositeBackend",
    "DiskBackend",
    "EditResult",
    "FileData",
    "FileInfo",
    "GrepMatch",
    "MatchLimit",
    "ReadResult",
    "StateBackend",
    "StoreBackend",
    "WriteResult",
    "bind_state_files",
    "check_glob",
    "current_match_limit",
    "every_file",
    "file_filter_matches",
    "first_matches",
    "folder_prefix",
    "glob_matches",
    "grep_texts",
    "is_within",
    "limiting_matches",
    "matching_lines",
    "merge_files",
    "normalize_virtual_path",
]
