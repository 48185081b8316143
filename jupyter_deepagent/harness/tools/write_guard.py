"""The agent's file tools refuse to change the folders the harness writes (`harness.artifact_folders`).

Offloaded results, transcripts and subagent reports must say what happened: the agent reads
these folders, but its `write_file`, `edit_file` and `delete` refuse them, while the harness
writes through the backend directly.
"""

from __future__ import annotations

from jupyter_deepagent._exceptions import PermissionDenied
from jupyter_deepagent.harness.artifact_folders import HARNESS_FOLDERS

__all__ = ["refuse_harness_folder"]


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
