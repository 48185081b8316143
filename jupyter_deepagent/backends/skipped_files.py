"""Files a search passed over without reading (too large, unreadable), so an answer can say so.

A grep that finds nothing in the files it could read must not answer a plain "No matches" when
it skipped a 12 MB file. Backends note each file they skip with `note_skipped_file`; whoever
wants the list (the grep tool) opens `recording_skipped_files()` around the call. A composite
backend re-notes what its mounts skipped under their full paths. Outside any recording, a note
costs nothing. Binary files are not noted: they hold no lines to search.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["SkippedFile", "note_skipped_file", "recording_skipped_files"]


@dataclass(frozen=True)
class SkippedFile:
    """A file a search did not read, and why (e.g. `"12.3 MB, over the 10.0 MB limit"`)."""

    path: str
    reason: str


_RECORDING: ContextVar[list[SkippedFile] | None] = ContextVar("skipped_files", default=None)


@contextmanager
def recording_skipped_files() -> Iterator[list[SkippedFile]]:
    """Collect the files skipped by searches in this block (and threads it starts).

    Yields:
        The list the notes go to, filled as the block runs. Blocks nest: notes go to the
        innermost one only.
    """
    skipped: list[SkippedFile] = []
    token = _RECORDING.set(skipped)
    try:
        yield skipped
    finally:
        _RECORDING.reset(token)


def note_skipped_file(path: str, reason: str) -> None:
    """Record that a search skipped `path`, if a recording is open."""
    skipped = _RECORDING.get()
    if skipped is not None:
        skipped.append(SkippedFile(path=path, reason=reason))
