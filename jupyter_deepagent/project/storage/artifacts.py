"""The harness's artifact folders on disk (`/large_tool_results/`, `/conversation_history/`,
`/subagents/`), kept under `<state_dir>/artifacts/`; transcripts in a folder per user."""

from __future__ import annotations

from pathlib import Path

from jupyter_deepagent.harness.artifact_folders import HARNESS_FOLDERS

__all__ = ["ARTIFACT_MOUNTS", "adopt_earlier_transcripts", "artifact_folder"]

ARTIFACT_MOUNTS = tuple(folder.strip("/") for folder in HARNESS_FOLDERS)
"""Folders the harness writes to, kept on disk under `<state_dir>/artifacts/`."""
_PER_USER_MOUNT = "conversation_history"  # transcripts are named by thread, threads by user


def artifact_folder(state_dir: Path, mount: str, user: str) -> Path:
    """Where an artifact mount keeps its files: `<state_dir>/artifacts/<mount>/`; transcripts
    (`/conversation_history/<thread>.md`) in a folder of the user's, since two users of a shared
    folder may both have a thread called `analysis`."""
    folder = state_dir / "artifacts" / mount
    if mount != _PER_USER_MOUNT:
        return folder
    name = user.replace("/", "_").replace("\\", "_").replace("\x00", "")
    return folder / (name if name.strip(".") else f"_{name}")


def adopt_earlier_transcripts(state_dir: Path, user: str) -> None:
    """Move transcripts an earlier version kept for every user (`artifacts/conversation_history/
    <thread>.md`) into `user`'s folder, as earlier threads go to the first user who opens them;
    a transcript the user has already is left where it is."""
    shared = state_dir / "artifacts" / _PER_USER_MOUNT
    try:
        earlier = [
            entry
            for entry in shared.iterdir()
            if entry.suffix == ".md" and entry.is_file() and not entry.is_symlink()
        ]
    except OSError:
        return
    if not earlier:
        return
    own = artifact_folder(state_dir, _PER_USER_MOUNT, user)
    own.mkdir(parents=True, exist_ok=True)
    for entry in earlier:
        if not (own / entry.name).exists():
            entry.replace(own / entry.name)
