"""The folders the harness itself writes to: offloaded results, transcripts, subagent reports.

Named once here so that the writers (offloading, summarization, the `task` tool), the notebook's
mounts and the file tools cannot disagree. The agent reads these folders; its `write_file`,
`edit_file` and `delete` refuse them, while the harness writes through the backend directly.
"""

from __future__ import annotations

from typing import Final

from jupyter_deepagent._exceptions import PermissionDenied

__all__ = [
    "HARNESS_FOLDERS",
    "HISTORY_DIR",
    "LARGE_RESULTS_DIR",
    "TRANSCRIPT_FOLDER",
    "refuse_harness_folder",
]

LARGE_RESULTS_DIR: Final = "/large_tool_results/"
"""Where large and consumed tool results are written."""

HISTORY_DIR: Final = "/conversation_history/"
"""Where long human messages and the summarization transcripts are written."""

TRANSCRIPT_FOLDER: Final = "/subagents/"
"""Where each task's transcript is saved, as `<task-id>.md`."""

HARNESS_FOLDERS: Final = (LARGE_RESULTS_DIR, HISTORY_DIR, TRANSCRIPT_FOLDER)
"""Every folder the harness writes to and the agent only reads."""


def refuse_harness_folder(path: str) -> None:
    """Refuse an agent's change to a path in a harness folder (or to the folder itself).

    The path is compared in the tidy form every backend uses (`notes//./a` is `/notes/a`); a path
    the backends would refuse anyway (`..`, a backslash) is left to them.

    Raises:
        PermissionDenied: The path is in one of `HARNESS_FOLDERS`.
    """
    tidy = "/" + "/".join(part for part in str(path).split("/") if part not in ("", "."))
    for folder in HARNESS_FOLDERS:
        if tidy == folder.rstrip("/") or tidy.startswith(folder):
            msg = (
                f"Cannot change {tidy}: {folder} is written by the harness only (offloaded tool "
                "results, conversation transcripts, subagent reports), so that what it holds is "
                "what happened. You can read it; save your own files elsewhere, e.g. /notes/."
            )
            raise PermissionDenied(msg, path=tidy)
