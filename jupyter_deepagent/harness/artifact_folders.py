"""The harness's artifact folders: the ones it writes to itself, named once so a rename cannot
miss one.

Each is a virtual path ending in `/`. They hold what the harness moved out of the conversation or
kept after a task: large tool results, folded history and long human messages, subagent
transcripts. None of them is a file the agent was asked to write.
"""

from __future__ import annotations

from typing import Final

__all__ = ["HARNESS_FOLDERS", "HISTORY_FOLDER", "LARGE_RESULTS_FOLDER", "TRANSCRIPT_FOLDER"]

LARGE_RESULTS_FOLDER: Final = "/large_tool_results/"
"""Where large and consumed tool results are written (`<tool>-<short-id>.<ext>`)."""

HISTORY_FOLDER: Final = "/conversation_history/"
"""Where long human messages and the summarization transcripts (`<thread>.md`) are written."""

TRANSCRIPT_FOLDER: Final = "/subagents/"
"""Where each task's transcript is saved, as `<task-id>.md`."""

HARNESS_FOLDERS: Final = (LARGE_RESULTS_FOLDER, HISTORY_FOLDER, TRANSCRIPT_FOLDER)
"""Every folder above, in that order."""
