"""A cap on the matches one grep collects, so a pattern that hits every line stays cheap.

A regular expression such as `.` matches each of the 641,025 lines of a 50 MB output; making
a `GrepMatch` for each (and copying each through a `CompositeBackend`) took over a second, for
an answer the grep tool cuts to a few hundred rows anyway. The tool opens
`limiting_matches(n)` around its call; inside it, every backend's grep keeps only the first `n`
matches by path and line, stops reading a file once it has `n + 1` of its own (any later line
of it comes after `n` matches), and marks the limit `reached` when it dropped or did not look
for more. Like `regex_time_budget` and `recording_skipped_files`, the limit travels in a
context variable, so a backend that wraps another (a guarded folder, a mount) passes it on
without a change; a backend that ignores it only costs time (the tool still cuts its answer).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

__all__ = ["MatchLimit", "current_match_limit", "limiting_matches"]


@dataclass
class MatchLimit:
    """At most `limit` matches; `reached` once a search found or may have found more."""

    limit: int
    reached: bool = False


_LIMIT: ContextVar[MatchLimit | None] = ContextVar("grep_match_limit", default=None)


@contextmanager
def limiting_matches(limit: int) -> Iterator[MatchLimit]:
    """Let the greps in this block (and the threads it starts) keep the first `limit` matches.

    Args:
        limit: The most matches a grep returns; 1 or more.

    Yields:
        The limit, whose `reached` tells, after the block, whether matches were left out.

    Raises:
        ValueError: If `limit` is below 1.
    """
    if limit < 1:
        msg = f"a grep match limit must be 1 or more, not {limit}"
        raise ValueError(msg)
    cap = MatchLimit(limit)
    token = _LIMIT.set(cap)
    try:
        yield cap
    finally:
        _LIMIT.reset(token)


def current_match_limit() -> MatchLimit | None:
    """The limit greps run under now, or None (every match is returned)."""
    return _LIMIT.get()
