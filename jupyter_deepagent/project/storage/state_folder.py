"""The state folder (`state_dir`): a folder the tool creates, or an empty one, never a folder of
the user's files.

A folder the tool creates gets a `.gitignore` of `*` (its databases hold conversations) and a
marker file saying what it is; an existing empty folder gets the marker only, since it is not
the tool's to hide from git. A folder with the marker is reused. A folder holding anything else
is refused: pointing `state_dir` at a repository would otherwise mix databases with its files and
hide them from git.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from jupyter_deepagent._exceptions import InputError

__all__ = ["claim_state_folder", "state_folder_of"]

_MARKER_FILE: Final = ".jupyter-deepagent-state"
"""The file that names a folder as jupyter-deepagent's state folder."""

_MARKER_TEXT = (
    "This folder holds the conversations (checkpoints.sqlite), long-term memories (store.sqlite)\n"
    "and artifacts of jupyter-deepagent's %%agent. Delete the folder to forget them all.\n"
)
_IGNORE_TEXT = "# conversations and memories of the notebook's agent\n*\n"
# What a state folder made before the marker existed holds; such a folder is adopted.
_OWN_NAMES = frozenset(
    f"{base}{suffix}"
    for base in ("checkpoints.sqlite", "store.sqlite")
    for suffix in ("", "-wal", "-shm", "-journal")
) | {"artifacts", "locks", ".gitignore"}
_SHOWN = 5


def state_folder_of(notebook_dir: Path, state_dir: str, workspace: str) -> Path:
    """The state folder the `state_dir` setting names, for a notebook in `notebook_dir`.

    Raises:
        InputError: It is the notebook's folder, the workspace, or a folder above either:
            the databases and their `.gitignore` would land among the user's files.
    """
    folder = (notebook_dir / state_dir).resolve()
    for name, setting in (("the notebook's folder", "."), ("the workspace", workspace)):
        mine = (notebook_dir / setting).resolve()
        if folder == mine or folder in mine.parents:
            msg = (
                f"state_dir {state_dir!r} is {name} or a folder above it, so the "
                "agent's databases would mix with your files. Set state_dir to a folder of "
                "its own, such as .deepagent (in .deepagent.toml or with %agent config)."
            )
            raise InputError(msg, source="state_dir")
    return folder


def claim_state_folder(folder: Path, setting: str) -> None:
    """Make sure `folder` can be the state folder: create it, or accept it as ours or empty.

    Args:
        folder: The resolved state folder.
        setting: The `state_dir` value as configured, for messages.

    Raises:
        InputError: `folder` is a file, or a folder holding files that are not the tool's.
        OSError: The folder or its marker cannot be created.
    """
    try:
        folder.mkdir(parents=True)
    except FileExistsError:
        pass
    else:  # the marker first: another kernel creating the folder at once then sees it as ours
        (folder / _MARKER_FILE).write_text(_MARKER_TEXT)
        (folder / ".gitignore").write_text(_IGNORE_TEXT)
        return
    if not folder.is_dir():
        msg = (
            f"state_dir {setting!r} is a file ({folder}), not a folder. Set state_dir to a new "
            "folder (the agent creates it), for example .deepagent, in .deepagent.toml or with "
            "%agent config state_dir=..."
        )
        raise InputError(msg, source="state_dir")
    if (folder / _MARKER_FILE).is_file():
        return
    names = sorted(entry.name for entry in folder.iterdir())
    foreign = [name for name in names if name not in _OWN_NAMES]
    made_by_an_earlier_version = any(name.endswith(".sqlite") for name in names)
    if foreign or (names and not made_by_an_earlier_version):
        listed = foreign or names
        shown = ", ".join(listed[:_SHOWN])
        more = f" and {len(listed) - _SHOWN} more" if len(listed) > _SHOWN else ""
        msg = (
            f"state_dir {setting!r} ({folder}) is a folder that already holds files of its own "
            f"({shown}{more}), so it is not used: the agent's databases would mix with them. "
            "Set state_dir to a new folder (the agent creates it and keeps it out of git) or an "
            "empty one, in .deepagent.toml or with %agent config state_dir=..."
        )
        raise InputError(msg, source="state_dir")
    (folder / _MARKER_FILE).write_text(_MARKER_TEXT)
