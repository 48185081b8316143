"""Is a state database whole? A missing file is a new, empty state; a file that exists must be a
whole SQLite database, or the cell stops naming the file, what is wrong and how to recover.

SQLite itself takes an empty (0-byte) file for a new database, so a truncated
`checkpoints.sqlite` would silently start every conversation afresh and a truncated
`store.sqlite` would silently empty `/memories/`. The tool never leaves an empty database (it
creates the tables as it creates the file), so an empty one is damage. Nothing here changes the
file: recovering is the user's choice.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from jupyter_deepagent._exceptions import StateDamaged

__all__ = ["check_database", "damage_of", "damaged"]

_HEADER = b"SQLite format 3\x00"
_HEADER_BYTES = 100
_REPORTED_PROBLEMS = 3


def damage_of(path: Path) -> str | None:
    """What is wrong with the SQLite file at `path`, or None when it is whole or missing."""
    try:
        size = path.stat().st_size
        with path.open("rb") as file:
            header = file.read(_HEADER_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"it cannot be read ({exc.strerror or exc})"
    if size == 0:
        return "it is empty (0 bytes): it was truncated, as a full disk or a failed copy leaves it"
    if not header.startswith(_HEADER):
        return "it is not an SQLite database (its first bytes were overwritten)"
    if len(header) < _HEADER_BYTES:
        return f"it is truncated ({size} bytes, shorter than a database header)"
    expected = _expected_size(header)
    if expected is not None and size < expected:
        return f"it is truncated ({size:,} bytes of the {expected:,} it holds)"
    return _integrity_problem(path)


def _expected_size(header: bytes) -> int | None:
    """The database's size by its header, when the header's page count is valid."""
    page_size = int.from_bytes(header[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(header[28:32], "big")
    change_counter, valid_for = header[24:28], header[92:96]
    if pages == 0 or change_counter != valid_for:  # an old writer: the count is not kept
        return None
    return page_size * pages


def _integrity_problem(path: Path) -> str | None:
    """SQLite's own quick check; None also when it cannot run (a locked or unwritable file is
    not damage: opening the database then says what is wrong)."""
    try:
        connection = sqlite3.connect(f"{path.absolute().as_uri()}?mode=rw", uri=True)
        try:
            rows = connection.execute("PRAGMA quick_check").fetchall()
        finally:
            connection.close()
    except sqlite3.OperationalError:
        return None
    except sqlite3.DatabaseError as exc:
        return f"SQLite's check finds damage: {exc}"
    lines = [line for row in rows for line in str(row[0]).splitlines()]
    problems = [line for line in lines if line != "ok" and not line.startswith("***")]
    if not problems:
        return None
    extra = len(problems) - _REPORTED_PROBLEMS
    more = f" (and {extra} more)" if extra > 0 else ""
    return "SQLite's check finds damage: " + "; ".join(problems[:_REPORTED_PROBLEMS]) + more


def check_database(path: Path, role: str) -> None:
    """Raise `StateDamaged` if the database at `path` exists and is not whole.

    Args:
        path: The database file.
        role: What it holds, for the message ("conversations", "long-term memories").

    Raises:
        StateDamaged: The file is empty, truncated, not SQLite, or fails SQLite's check.
    """
    problem = damage_of(path)
    if problem is not None:
        raise damaged(path, role, problem)


def damaged(path: Path, role: str, problem: str) -> StateDamaged:
    """The `StateDamaged` error for `path`, saying what is wrong and how to recover."""
    aside = path.with_name(path.name + ".damaged")
    message = (
        f"The database of {role} {path} is damaged: {problem}. It was left as it is and this cell "
        f"did nothing. To start afresh without what it held, move it aside (for example rename it "
        f"to {aside.name}) and run the cell again: a new, empty one is created. To keep what it "
        f"held, restore it from a backup, or try `sqlite3 {path.name} .recover` on a copy."
    )
    return StateDamaged(message, path=str(path))
