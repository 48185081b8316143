"""Text matching shared by every backend: glob patterns, grep over files, exact-text edits.

Backends only enumerate their files; which ones match, which lines hit and what an edit does is
decided here, once, so every backend answers the same question the same way.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from jupyter_deepagent._exceptions import BackendError, EditConflict, InvalidPath
from jupyter_deepagent.backends._paths import relative_to
from jupyter_deepagent.backends.matching._glob import compile_glob, expand_braces
from jupyter_deepagent.backends.matching._line_regex import line_pattern
from jupyter_deepagent.backends.matching._regex_cost import check_regex_cost
from jupyter_deepagent.backends.matching.match_limit import current_match_limit
from jupyter_deepagent.backends.protocol import FileInfo, GrepMatch

__all__ = [
    "REGEX_TIME_BUDGET",
    "BlockSearch",
    "check_glob",
    "compile_glob",
    "every_file",
    "expand_braces",
    "file_filter_matches",
    "first_matches",
    "glob_matches",
    "grep_texts",
    "matching_lines",
    "regex_time_budget",
    "replace_exact",
]


_dot_names: ContextVar[bool] = ContextVar("glob_dot_names", default=False)
"""Inside `every_file`: wildcards match names starting with `.` too."""


def _traversal(pattern: str) -> InvalidPath:
    return InvalidPath(
        f"the glob pattern {pattern!r} has a '..' level, which no path here has (paths are "
        "absolute and tidy). Search from another folder with path=... instead."
    )


@lru_cache(maxsize=256)
def _matcher(pattern: str, dots: bool) -> tuple[re.Pattern[str], bool]:
    """The compiled pattern, and whether it is matched against names alone (no `/` in it)."""
    if ".." in pattern.replace("\\", "/").split("/"):
        raise _traversal(pattern)
    return compile_glob(pattern.lstrip("/"), dots), "/" not in pattern


def glob_matches(pattern: str, path: str, root: str) -> bool:
    """Tell whether file `path` (under folder `root`) matches `pattern`, as deepagents' glob and
    grep filter decide it.

    A pattern without `/` is matched against the file's name, at any depth (`*.md` finds every
    Markdown file under `root`); one with `/` against the path relative to `root`, a leading `/`
    anchoring it there (`/*.md`: the files directly in `root`). Names starting with `.` are
    matched only by a pattern level that starts with `.`, and `**` does not enter dot-folders.

    Raises:
        InvalidPath: If the pattern has a `..` level (no path has one).
        BackendError: If the pattern cannot be compiled (see `compile_glob`).
    """
    compiled, by_name = _matcher(pattern, _dot_names.get())
    subject = path.rsplit("/", 1)[-1] if by_name else relative_to(path, root)
    return compiled.fullmatch(subject) is not None


def check_glob(pattern: str) -> None:
    """Refuse a pattern `glob_matches` would refuse, before any file is looked at.

    Raises:
        InvalidPath: If the pattern has a `..` level.
        BackendError: If the pattern cannot be compiled.
    """
    _matcher(pattern, False)


def file_filter_matches(file_glob: str, path: str, root: str) -> bool:
    """Tell whether a grep `glob` filter keeps `path`: the same rules as `glob_matches`."""
    return glob_matches(file_glob, path, root)


class _Globs(Protocol):
    def glob(self, pattern: str, path: str = "/") -> list[FileInfo]: ...


def every_file(backend: _Globs, path: str = "/") -> list[FileInfo]:
    """Every file under `path`, dot-named ones included: `backend.glob("**", path)`, with
    wildcards matching names that start with `.` (for a search over all files, not the model's
    glob)."""
    token = _dot_names.set(True)
    try:
        return backend.glob("**", path)
    finally:
        _dot_names.reset(token)


REGEX_TIME_BUDGET = 2.0
"""Seconds of regular-expression matching one grep may spend, over all its files and lines."""


@dataclass
class _RegexBudget:
    seconds_left: float


_regex_budget: ContextVar[_RegexBudget | None] = ContextVar("regex_budget", default=None)


@contextmanager
def regex_time_budget() -> Iterator[None]:
    """Let every regex grep inside share one `REGEX_TIME_BUDGET` (a grep spread over mounts).

    Nested uses keep the outermost budget; outside any, each `grep_texts` call has its own.
    """
    if _regex_budget.get() is not None:
        yield
        return
    token = _regex_budget.set(_RegexBudget(REGEX_TIME_BUDGET))
    try:
        yield
    finally:
        _regex_budget.reset(token)


def _compile_regex(pattern: str) -> Any:
    import regex as mrab

    check_regex_cost(pattern)  # compiling is not covered by the matching timeout
    try:
        return mrab.compile(pattern, mrab.VERSION0)
    except mrab.error as exc:
        msg = (
            f"invalid regular expression {pattern!r}: {exc}. Fix the pattern, or pass "
            "regex=False to search for the text literally."
        )
        raise BackendError(msg) from exc


def _too_slow(pattern: str) -> BackendError:
    return BackendError(
        f"the regular expression {pattern!r} took too long (over {REGEX_TIME_BUDGET:g} s; "
        "catastrophic backtracking?); simplify it (avoid nested repeats such as (a+)+ or "
        "(a|aa)+) or search for a literal with regex=False"
    )


def _regex_hit(pattern: str) -> Callable[[str], bool]:
    """A line test that stops the whole grep once the shared matching budget is spent.

    The `regex` package checks its timeout while it matches, so a pattern that backtracks
    without end is stopped instead of holding the interpreter (Python's `re` cannot be).
    """
    compiled = _compile_regex(pattern)
    budget = _regex_budget.get() or _RegexBudget(REGEX_TIME_BUDGET)
    clock = time.monotonic

    def hit(line: str) -> bool:
        if budget.seconds_left <= 0:
            raise _too_slow(pattern)
        start = clock()
        try:
            found = compiled.search(line, concurrent=True, timeout=budget.seconds_left)
        except TimeoutError as exc:
            budget.seconds_left = 0.0
            raise _too_slow(pattern) from exc
        finally:
            budget.seconds_left -= clock() - start
        return found is not None

    return hit


BlockSearch = Callable[[str], tuple[list[int], list[str]]]
"""Searches a block of lines joined by `"\\n"`: the 0-based indexes in the block of the lines
holding the pattern, in order, and those lines (two lists, so that thousands of hits cost no
Python step each)."""


def matching_lines(pattern: str, regex: bool = False) -> BlockSearch:
    """A grep over blocks of lines: the lines of a block that hold `pattern`, as `grep_texts`
    would find them line by line, but searched a whole block at a time where that means the same.

    Args:
        pattern: A literal substring, or a regular expression when `regex` is true.
        regex: Treat `pattern` as a regular expression; its matching shares the grep's
            `REGEX_TIME_BUDGET` (see `regex_time_budget`), checked block by block.

    Returns:
        The search of one block (lines joined by `"\\n"`, no line break at the end).

    Raises:
        BackendError: If `regex` is true and the pattern does not compile or would take too long
            to compile; the returned search raises it when matching runs over the budget.
    """
    if not regex:
        return lambda block: _literal_lines(pattern, block)
    _compile_regex(pattern)  # the pattern's own errors, exactly as a line-by-line grep says them
    form = line_pattern(pattern)
    if form is None:
        return _line_by_line(_regex_hit(pattern))
    import regex as mrab

    body, flags = form
    inline = f"(?{flags})" if flags else ""
    runs = mrab.compile(inline + body, mrab.VERSION0 | mrab.MULTILINE)
    budget = _regex_budget.get() or _RegexBudget(REGEX_TIME_BUDGET)
    return lambda block: _regex_lines(pattern, runs, budget, block)


def _line_by_line(hit: Callable[[str], bool]) -> BlockSearch:
    def search(block: str) -> tuple[list[int], list[str]]:
        found = [(i, line) for i, line in enumerate(block.split("\n")) if hit(line)]
        return [i for i, _ in found], [line for _, line in found]

    return search


def _literal_lines(pattern: str, block: str) -> tuple[list[int], list[str]]:
    indexes: list[int] = []
    lines: list[str] = []
    if "\n" in pattern:
        return indexes, lines
    index, counted = 0, 0
    at = block.find(pattern)
    while at != -1:
        start = block.rfind("\n", 0, at) + 1
        end = block.find("\n", at)
        end = len(block) if end == -1 else end
        index += block.count("\n", counted, start)
        counted = start
        indexes.append(index)
        lines.append(block[start:end])
        at = block.find(pattern, end + 1) if end < len(block) else -1
    return indexes, lines


def _regex_lines(
    pattern: str, runs: Any, budget: _RegexBudget, block: str
) -> tuple[list[int], list[str]]:
    """Each match of `runs` is a run of whole matching lines (see `line_pattern`)."""
    if budget.seconds_left <= 0:
        raise _too_slow(pattern)
    start = time.monotonic()
    try:
        found = [(m.start(), m.group()) for m in runs.finditer(block, timeout=budget.seconds_left)]
    except TimeoutError as exc:
        budget.seconds_left = 0.0
        raise _too_slow(pattern) from exc
    finally:
        budget.seconds_left -= time.monotonic() - start
    indexes: list[int] = []
    lines: list[str] = []
    index, counted = 0, 0  # the index of the line starting at `counted`
    for at, run in found:
        start = block.rfind("\n", 0, at) + 1  # a run starts at its first hit: go to its line
        index += block.count("\n", counted, start)
        run_lines = block[start : at + len(run)].split("\n")
        if indexes and indexes[-1] == index:  # an empty hit at the end of a line already found
            run_lines, index = run_lines[1:], index + 1
        indexes += range(index, index + len(run_lines))
        lines += run_lines
        index += len(run_lines) - 1
        counted = block.rfind("\n", 0, at + len(run)) + 1
        counted = max(counted, start)
    return indexes, lines


def grep_texts(
    pattern: str,
    files: Iterable[tuple[str, str]],
    root: str,
    file_glob: str | None = None,
    regex: bool = False,
) -> list[GrepMatch]:
    """Find the lines containing `pattern` in `(path, text)` pairs, sorted by path and line.

    Args:
        pattern: A literal substring, or a Python regular expression when `regex` is true.
        files: The candidate files under `root`, as `(virtual path, text)`.
        root: The folder searched from, for relative `file_glob` patterns.
        file_glob: Only search files whose name (or relative path, if it holds `/`) matches.
        regex: Treat `pattern` as a regular expression, searched in each line; matching may take
            `REGEX_TIME_BUDGET` seconds in all (shared inside `regex_time_budget`).

    Returns:
        One GrepMatch per matching line (1-based line numbers). Texts holding a NUL are skipped.
        Inside `limiting_matches(n)`, only the first `n` (a file stops being read at its
        `n + 1`-th match), and the limit is marked reached when any was left out.

    Raises:
        BackendError: If `regex` is true and the pattern does not compile, would take too long
            to compile (see `check_regex_cost`), or matching it takes longer than its budget
            (catastrophic backtracking).
    """
    if regex:
        hit = _regex_hit(pattern)
    else:

        def hit(line: str) -> bool:
            return pattern in line

    cap = current_match_limit()
    most = cap.limit if cap is not None else -1
    matches: list[GrepMatch] = []
    for path, text in files:
        if "\x00" in text or (file_glob and not file_filter_matches(file_glob, path, root)):
            continue
        found = 0
        for number, line in enumerate(text.splitlines(), start=1):
            if hit(line):
                if found == most:  # later lines of this file come after `most` matches
                    assert cap is not None
                    cap.reached = True
                    break
                found += 1
                matches.append(GrepMatch(path=path, line_number=number, line=line))
    matches.sort(key=lambda match: (match.path, match.line_number))
    return first_matches(matches)


def first_matches(matches: list[GrepMatch]) -> list[GrepMatch]:
    """`matches` (sorted by path and line) cut to the limit in force, if any; a cut marks the
    limit reached."""
    cap = current_match_limit()
    if cap is None or len(matches) <= cap.limit:
        return matches
    cap.reached = True
    return matches[: cap.limit]


def replace_exact(path: str, text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """Apply an exact-text edit and return the new text and how many occurrences were replaced.

    Args:
        path: The file's virtual path, for messages.
        text: The file's current text.
        old: The exact text to replace; must be non-empty.
        new: Its replacement.
        replace_all: Replace every occurrence instead of requiring exactly one.

    Returns:
        `(new_text, replacements)`.

    Raises:
        EditConflict: If `old` is empty or not found (`matches == 0`), or found more than once
            without `replace_all` (`matches` is the count).
    """
    if not old:
        msg = f"Cannot edit {path}: the text to replace is empty. Give the exact text to change."
        raise EditConflict(msg, path=path, matches=0)
    count = text.count(old)
    if count == 0:
        msg = (
            f"The text to replace was not found in {path}. Read the file and copy the text "
            "exactly, including whitespace and indentation."
        )
        raise EditConflict(msg, path=path, matches=0)
    if count > 1 and not replace_all:
        msg = (
            f"The text to replace was found {count} times in {path}; give more surrounding "
            "context to make it unique, or pass replace_all=True."
        )
        raise EditConflict(msg, path=path, matches=count)
    return text.replace(old, new), count
