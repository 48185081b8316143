"""`RunOptions`: what one `%%agent` cell asks of its run, as the magic parsed it from the line.

The session plans a run from these (see `Session.plan`); the magic's parser (`magic/options.py`)
makes them, so the session depends on no part of the magic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

__all__ = ["RunOptions"]


@dataclass(frozen=True)
class RunOptions:
    """The options of one `%%agent` cell; None means "use the notebook's default"."""

    model: str | None = None
    thread: str | None = None
    new: bool = False
    system: str | None = None
    skills: tuple[str, ...] = ()
    memory: tuple[str, ...] = ()
    into: str | None = None
    context: Mapping[str, str] = field(default_factory=dict)
    quiet: bool = False
    help: bool = False
    tools: tuple[str, ...] = ()
    python: bool = False
    cells: bool = False
    replay: str | None = None
    budget: str | None = None
    """`--budget`: this run's budget as written ("$0.50", "200k tokens", "none": no limit)."""
