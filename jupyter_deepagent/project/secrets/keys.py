"""The secrets a folder's agent has read: the keys its env file set, and a run's `--context`
values (a kernel session's, or a served agent's).

`ApiKeys.load` reads the env file again before every run, so fixing `.env` works without a
restart, while a variable set in the real environment (or with `%env`) is never overridden: only
the names this session took from the file are updated, and removed when the file drops them.
`values()` feeds the `Redactor` that keeps all of these out of what the model reads.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from jupyter_deepagent._exceptions import InputError

__all__ = ["ApiKeys"]

_MIN_CONTEXT_SECRET = 4


class ApiKeys:
    """What the env file set in `os.environ`, the notes about it, and the `--context` values."""

    def __init__(self) -> None:
        self._from_file: dict[str, str] = {}
        self._context: set[str] = set()
        self.notes: list[str] = []
        """Lines for the next cell: names read, and lines that could not be read (by name)."""
        self.malformed: list[str] = []
        """Names whose line in the env file could not be read, at the last `load`."""

    def load(self, path: Path, shown_as: str) -> None:
        """Read the env file at `path` (named `shown_as` in notes) into `os.environ`.

        Raises:
            InputError: The file exists but cannot be read; the message names it, never a value.
        """
        from jupyter_deepagent.project.secrets.env_file import read_env_file

        try:
            entries = read_env_file(path)
        except OSError as exc:
            msg = (
                f"env_file {shown_as!r}: cannot read it: {exc.strerror or type(exc).__name__}. "
                "Fix the file, or set env_file to another one."
            )
            raise InputError(msg, source=shown_as) from None
        taken = [name for name, value in entries.values.items() if self._take(name, value)]
        for name in [n for n in self._from_file if n not in entries.values]:
            if os.environ.get(name) == self._from_file.pop(name):
                del os.environ[name]
        if taken:
            self.notes.append(f"read {', '.join(taken)} from {shown_as}")
        self.malformed = list(entries.malformed)
        self.notes += [
            f"{shown_as}: the line for {name} could not be read (check its quotes); skipped"
            for name in self.malformed
        ]

    def _take(self, name: str, value: str) -> bool:
        """Set `name` unless the real environment has it; True if it is new to these keys."""
        ours = name in self._from_file and os.environ.get(name) == self._from_file[name]
        if name in os.environ and not ours:
            return False
        os.environ[name] = value
        self._from_file[name] = value
        return not ours

    def origins(self, shown_as: str) -> dict[str, str]:
        """Where each variable this session took from the env file was read from, as an error
        names it: {"GOOGLE_API_KEY": ".env beside the notebook"}; the other variables come from
        the environment."""
        where = (
            f"{shown_as} beside the notebook"
            if "/" not in shown_as and "\\" not in shown_as
            else f"{shown_as} (the env_file setting)"
        )
        return {
            name: where for name, value in self._from_file.items() if os.environ.get(name) == value
        }

    def unreadable_note(self, variables: Iterable[str], shown_as: str) -> str:
        """A sentence to add to a missing-key error when the env file has a line for one of
        `variables` that could not be read at the last `load` ("" when it has none)."""
        broken = [name for name in self.malformed if name in variables]
        if not broken:
            return ""
        return (
            f" Note: {shown_as} has a line for {', '.join(broken)}, but it could not be read: "
            'check its quotes (KEY=value, or KEY="value").'
        )

    def add_context(self, context: Mapping[str, str]) -> None:
        """Remember a run's `--context` values: they are for tools, never for the model."""
        self._context.update(v for v in context.values() if len(v) >= _MIN_CONTEXT_SECRET)

    def values(self) -> Iterable[str]:
        """Every value to mask besides the environment's secret-looking variables."""
        return [*self._from_file.values(), *self._context]
