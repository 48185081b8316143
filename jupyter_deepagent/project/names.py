"""Names the user gives: a thread's name and the notebook variable that results go into.

The settings, the file lock and the magic's options all check them here, so a name is refused
with the same words wherever it comes from.
"""

from __future__ import annotations

import builtins
import keyword
import re

from jupyter_deepagent._exceptions import InputError

__all__ = ["check_thread_name", "check_variable_name"]

_RESERVED_VARIABLES = frozenset({"In", "Out", "get_ipython", "exit", "quit", "_agent"})
_IPYTHON_HISTORY_NAME = re.compile(r"^_+$|^_i+$|^_(?:i|ih|oh|dh)?\d*$")
_THREAD_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,99}$")


def check_thread_name(name: str) -> str:
    """Return `name` if it can name a thread (letters, digits, `_.-`; up to 100 characters),
    optionally as `USER/NAME` (a user's thread, as `%agent threads --all` lists them).

    Raises:
        InputError: The name is empty or holds other characters.
    """
    owner, slash, plain = name.rpartition("/")
    if slash and owner and len(owner) <= 100 and not re.search(r"[/\s]", owner):
        name = plain if _THREAD_NAME.match(plain) else name
        if name == plain:
            return f"{owner}/{plain}"
    if not _THREAD_NAME.match(name):
        msg = (
            f"thread name {name!r} is not allowed: use letters, digits, '_', '.' and '-', "
            "starting with a letter or digit"
        )
        raise InputError(msg)
    return name


def check_variable_name(name: str, source: str = "--into") -> str:
    """Return `name` if results may be assigned to it in the notebook.

    A Python identifier that is not a keyword, not a builtin (`list`, `print`), not a dunder, and
    not a name IPython or this extension keeps (`In`, `Out`, `get_ipython`, `_`, `_i3`, `_agent`).

    Raises:
        InputError: The name cannot be used; the message names `source` and says why.
    """
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        msg = f"{source} takes a Python variable name, got {name!r}"
        raise InputError(msg, source=source)
    if (
        name in _RESERVED_VARIABLES
        or hasattr(builtins, name)
        or (name.startswith("__") and name.endswith("__"))
        or _IPYTHON_HISTORY_NAME.match(name)
    ):
        msg = (
            f"{source}: {name!r} is a name IPython, Python or the extension itself uses; "
            "choose another variable name, e.g. agent_results"
        )
        raise InputError(msg, source=source)
    return name
