"""How filesystem tool results read to the model: numbered pages, listings, match lists, caps.

Pure functions from backend results to text, so the wording lives in one place and is tested
without an agent. Long outputs are capped with a note that says what was left out and how to
narrow the request, so one call can never flood the context window.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal

from jupyter_deepagent.backends.protocol import (
    EditResult,
    FileInfo,
    GrepMatch,
    ReadResult,
    WriteResult,
)
from jupyter_deepagent.backends.skipped_files import SkippedFile

__all__ = [
    "GREP_MATCH_LIMIT",
    "MAX_ENTRIES",
    "MAX_LINE_CHARS",
    "GrepOutputMode",
    "format_edit",
    "format_glob",
    "format_grep",
    "format_listing",
    "format_read",
    "format_write",
]

MAX_ENTRIES = 500
"""Most entries (listing rows, paths, matching lines) one ls, glob or grep call returns."""

GREP_MATCH_LIMIT = 10_000
"""Most matching lines one grep collects (`limiting_matches`): far more than an answer shows,
enough for its counts and file lists, and cheap when a pattern hits every line of 50 MB."""

MAX_LINE_CHARS = 2000
"""Longest line `read_file` shows; the rest is replaced by a marker saying how much was cut."""

_MAX_GREP_LINE_CHARS = 500
"""Longest matching line grep's `content` mode shows."""

_MAX_SKIPPED_SHOWN = 20
"""Most skipped files grep names; the rest are counted."""

GrepOutputMode = Literal["files_with_matches", "content", "count"]


def _cut_line(line: str, limit: int = MAX_LINE_CHARS) -> str:
    """Shorten `line` to `limit` characters, with a marker saying how many were cut."""
    if len(line) <= limit:
        return line
    return f"{line[:limit]}… [line cut: {len(line) - limit:,} more characters]"


def _capped(rows: Sequence[str], noun: str, narrow: str, at_least: bool = False) -> str:
    """Join rows, keeping at most MAX_ENTRIES and saying how many were left out (`at_least`:
    `rows` are only the first of them)."""
    if len(rows) <= MAX_ENTRIES:
        return "\n".join(rows)
    left_out = len(rows) - MAX_ENTRIES
    more = "+" if at_least else ""
    note = (
        f"[Showing {MAX_ENTRIES:,} of {len(rows):,}{more} {noun}; {left_out:,}{more} left out. "
        f"{narrow}]"
    )
    return "\n".join([*rows[:MAX_ENTRIES], note])


def _bytes(size: int) -> str:
    return f"{size:,} byte{'s' * (size != 1)}"


def _when(moment: datetime | None) -> str:
    if moment is None:
        return ""
    if moment.tzinfo is not None:
        return moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M")


def format_listing(entries: Sequence[FileInfo], path: str) -> str:
    """One row per entry: path (folders end in `/`), size, modification time."""
    if not entries:
        return f"The folder {path} is empty."
    width = min(max(len(entry.path) for entry in entries), 60)
    rows = []
    for entry in entries:
        size = "folder" if entry.is_dir else _bytes(entry.size)
        row = f"{entry.path.ljust(width)}  {size:<15} {_when(entry.modified_at)}"
        rows.append(row.rstrip())
    narrow = "List a subfolder, or use glob(pattern, path=...) to find specific files."
    return _capped(rows, "entries", narrow)


def format_read(result: ReadResult, file_path: str, limit: int, default_limit: int) -> str:
    """Lines numbered like `cat -n` (1-based), long lines cut, and a hint when more follow.

    Raises:
        ValueError: If the page is empty because `offset` is past the end of the file.
    """
    if result.total_lines == 0:
        return f"{file_path} is empty (0 lines)."
    if not result.lines:
        msg = (
            f"offset {result.offset} is past the end of {file_path}, which has "
            f"{result.total_lines:,} lines. Use an offset below {result.total_lines}."
        )
        raise ValueError(msg)
    rows = [
        f"{number:>6}\t{_cut_line(line)}"
        for number, line in enumerate(result.lines, start=result.offset + 1)
    ]
    next_offset = result.next_offset
    if next_offset is not None:
        first, last = result.offset + 1, result.offset + len(result.lines)
        call = f"file_path={json.dumps(file_path, ensure_ascii=False)}, offset={next_offset}"
        if limit != default_limit:
            call += f", limit={limit}"
        rows.append(
            f"[Showing lines {first:,}-{last:,} of {result.total_lines:,}. "
            f"Continue with read_file({call}).]"
        )
    return "\n".join(rows)


def _count_lines(content: str) -> int:
    return len(content.splitlines())


def format_write(result: WriteResult, content: str) -> str:
    """Say what was written, and whether the file is new or was overwritten."""
    lines = _count_lines(content)
    what = f"Wrote {lines:,} line{'s' * (lines != 1)} ({_bytes(result.size)}) to {result.path}"
    if result.created:
        return f"{what} (new file)."
    return f"{what}, replacing its previous content."


def format_edit(result: EditResult) -> str:
    """Say how many occurrences were replaced."""
    n = result.replacements
    return f"Replaced {n:,} occurrence{'s' * (n != 1)} in {result.path}."


def format_glob(found: Sequence[FileInfo], pattern: str, path: str) -> str:
    """One path per line, or a plain note when nothing matched (saying where a leading `/`
    anchored the pattern, when that was not the root)."""
    if not found:
        note = f"No files match {pattern!r} under {path}."
        if pattern.startswith("/") and path.strip("/"):
            anchored = pattern.lstrip("/")
            note += (
                f" A pattern starting with '/' is anchored at the folder searched: this one "
                f"looked for {anchored!r} inside {path}. For absolute paths, search from "
                f"'/' (path='/')."
            )
        return note
    narrow = "Use a more specific pattern or a deeper path."
    return _capped([info.path for info in found], "matching files", narrow)


def format_grep(
    matches: Sequence[GrepMatch],
    pattern: str,
    path: str,
    file_glob: str | None,
    mode: GrepOutputMode,
    skipped: Sequence[SkippedFile] = (),
    stopped_at: int | None = None,
) -> str:
    """Render grep matches as file paths, `path:line: text` lines, or `path: count` rows,
    followed by a note when the search stopped at its match limit (`stopped_at`: the limit,
    `matches` are the first ones by path and line) and by the files it could not read."""
    note = _skipped_note(skipped)
    narrow = "Narrow the search with path=, glob= or a more specific pattern."
    where = f"{path} (files matching {file_glob!r})" if file_glob else path
    if not matches:
        if stopped_at is not None:
            return (
                f"No matches for {pattern!r} in {where} among the first {stopped_at:,} "
                f"matching lines; the search stopped there. {narrow}" + note
            )
        return f"No matches for {pattern!r} in {where}." + note
    limited = stopped_at is not None
    if limited:
        last = matches[-1]
        kind = {
            "content": "",
            "count": " Counts are of those lines only, so the last is a lower bound (`+`).",
            "files_with_matches": " Files after it may match too; they are not listed.",
        }[mode]
        note = (
            f"\n[The search stopped after the first {stopped_at:,} matching lines (by path, "
            f"then line): more lines match after {last.path}:{last.line_number}, and were not "
            f"looked at.{kind} {narrow}]" + note
        )
    if mode == "content":
        rows = [
            f"{m.path}:{m.line_number}: {_cut_line(m.line, _MAX_GREP_LINE_CHARS)}" for m in matches
        ]
        return _capped(rows, "matching lines", narrow, at_least=limited) + note
    counts: dict[str, int] = {}
    for match in matches:
        counts[match.path] = counts.get(match.path, 0) + 1
    if mode == "count":
        rows = [f"{file}: {n}" for file, n in counts.items()]
        if limited:
            rows[-1] += "+"
    else:
        rows = list(counts)
    return _capped(rows, "files", narrow, at_least=limited) + note


def _skipped_note(skipped: Sequence[SkippedFile]) -> str:
    """A closing note naming the files grep did not search, so no match there is not implied."""
    if not skipped:
        return ""
    shown = [f"{item.path} ({item.reason})" for item in skipped[:_MAX_SKIPPED_SHOWN]]
    if len(skipped) > _MAX_SKIPPED_SHOWN:
        shown.append(f"and {len(skipped) - _MAX_SKIPPED_SHOWN:,} more")
    count = len(skipped)
    return (
        f"\n[Not searched: {count:,} file{'s' * (count != 1)} too large or unreadable, so "
        f"matches in {'them' if count != 1 else 'it'} are unknown: {'; '.join(shown)}.]"
    )
