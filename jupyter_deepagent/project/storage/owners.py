"""Whose thread is it? Threads belong to a user within a project; `/memories/` to the project.

A team shares one database (see `database_url`), so the checkpointer keeps every thread under
`<project>/<user>/<thread>`: two researchers may both call a thread `analysis` without meeting,
while each still types and sees the plain name. The user is `JUPYTERHUB_USER` on a JupyterHub,
else the operating system's user; the project is the `project` setting, by default the notebook
folder's name. The same keys are used with the SQLite files, so both behave alike.
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass

from jupyter_deepagent._exceptions import InputError

__all__ = [
    "ThreadOwner",
    "current_user",
    "memory_namespace",
    "project_name",
]

_HUB_USER_VARIABLE = "JUPYTERHUB_USER"
_SEPARATOR = "/"


def _part(text: str, fallback: str) -> str:
    """`text` usable as one part of a key: no separator, no surrounding spaces."""
    cleaned = text.strip().replace(_SEPARATOR, "_").replace("\x00", "")
    return cleaned or fallback


def current_user() -> str:
    """The user threads are kept for: `JUPYTERHUB_USER`, else the operating system's user."""
    hub = os.environ.get(_HUB_USER_VARIABLE, "").strip()
    if hub:
        return _part(hub, "user")
    try:
        return _part(getpass.getuser(), "user")
    except (OSError, KeyError):  # no login name (a container without a passwd entry)
        return "user"


def project_name(setting: str, notebook_folder_name: str) -> str:
    """The project whose `/memories/` are shared: the `project` setting, else the folder's name."""
    return _part(setting or notebook_folder_name, "default")


def memory_namespace(project: str) -> tuple[str, ...]:
    """The store namespace of a project's `/memories/`, shared by its users, its notebooks and
    its served agent (a store label cannot hold a ".")."""
    return ("memories", project.replace(".", "_"))


@dataclass(frozen=True)
class ThreadOwner:
    """A user in a project: maps plain thread names to the keys kept in the checkpointer."""

    project: str
    user: str

    @property
    def memory_namespace(self) -> tuple[str, ...]:
        """The store namespace of the project's `/memories/` (see `memory_namespace`)."""
        return memory_namespace(self.project)

    def key(self, thread: str) -> str:
        """The checkpointer's thread id of this user's `thread`."""
        return _SEPARATOR.join((self.project, self.user, thread))

    def thread_of(self, key: str) -> str | None:
        """The plain name of a key of this user's (None for anybody else's key)."""
        prefix = self.key("")
        return key[len(prefix) :] if key.startswith(prefix) and len(key) > len(prefix) else None

    def project_thread(self, key: str) -> tuple[str, str] | None:
        """(user, thread) of a key in this project, whoever's it is; None for other projects."""
        project, _, rest = key.partition(_SEPARATOR)
        user, _, thread = rest.partition(_SEPARATOR)
        if project != self.project or not user or not thread:
            return None
        return user, thread

    def own(self, name: str) -> str:
        """`name` as one of this user's threads: a plain name, or `USER/NAME` (as `%agent threads
        --all` lists them) for this user's own only.

        Raises:
            InputError: The thread is another user's; they alone may continue or reset it.
        """
        user, slash, plain = name.rpartition(_SEPARATOR)
        if not slash or user == self.user:
            return plain
        msg = (
            f"thread {plain!r} of {user} is theirs: `%agent threads --all` lists the project's "
            f"threads read-only, and only {user} may continue or reset it. Your own thread of "
            f"that name is %%agent -t {plain} (it is separate from theirs; you are {self.user})."
        )
        raise InputError(msg)
