"""Glob patterns (`**`, `*`, `?`, `[abc]`, `{a,b}`) as regular expressions that cannot backtrack
without end, whatever pattern the model sends.

A naive translation (`*` to `[^/]*`) lets Python's `re` try every way of splitting a name between
the stars: `*a*a*a*a*ab` against a 250-character name takes seconds, each further `*a` multiplies
that. Here each `*` instead finds the leftmost place where the fixed text after it matches, and
commits to it (an atomic group): the classic two-pointer wildcard match, which is exact because
a `*` that takes less leaves more for the stars after it. `**/` does the same over whole folders.
So one path costs at most (path length) x (pattern length) steps.

Braces are expanded first, into at most `MAX_GLOB_ALTERNATIVES` alternatives; a pattern that
would expand further is refused before anything is built.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from functools import lru_cache

from jupyter_deepagent._exceptions import BackendError

__all__ = [
    "MAX_GLOB_ALTERNATIVES",
    "compile_glob",
    "expand_braces",
]

MAX_GLOB_ALTERNATIVES = 1_000
"""Most alternatives a glob's `{a,b}` groups may expand to (`{a,b}` ten times is 1,024)."""

_MAX_GLOB_CHARS = 16_384
"""Longest glob pattern accepted, before and (summed over alternatives) after brace expansion."""

_MAX_BRACE_DEPTH = 20

_STAR, _ANY, _REST, _FOLDERS, _SLASH = "*", "?", "**", "**/", "/"
"""Tokens: `*` within a name, one character, a trailing `**` (everything below), `**/` (zero
or more folders), a folder separator. Any other token is a regular expression for one character."""


@dataclass(frozen=True)
class _Alternatives:
    options: tuple[tuple[str | _Alternatives, ...], ...]


_Sequence = tuple[str | _Alternatives, ...]


def _too_costly(pattern: str, why: str) -> BackendError:
    shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
    return BackendError(
        f"the glob pattern {shown!r} {why}. Use a simpler pattern, or several glob calls."
    )


def _next_group(pattern: str, pos: int) -> tuple[int, int, list[int]] | None:
    """The first balanced `{...}` at or after `pos`: `(start, end, top-level comma positions)`."""
    depth, start = 0, -1
    commas: list[int] = []
    for i in range(pos, len(pattern)):
        char = pattern[i]
        if char == "{":
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                return start, i, commas
        elif char == "," and depth == 1:
            commas.append(i)
    return None


def _parse_braces(pattern: str, whole: str, depth: int = 0) -> _Sequence:
    """Split a pattern into literal text and `{a,b}` groups; unbalanced braces stay literal.

    A group without a top-level comma (`{x}`) is literal too, and so is everything from a `{`
    that never closes.
    """
    if depth > _MAX_BRACE_DEPTH:
        raise _too_costly(whole, f"nests braces more than {_MAX_BRACE_DEPTH} deep")
    items: list[str | _Alternatives] = []
    pos = 0
    while (group := _next_group(pattern, pos)) is not None:
        start, end, commas = group
        if not commas:
            items.append(pattern[pos : end + 1])
        else:
            items.append(pattern[pos:start])
            bounds = [start, *commas, end]
            options = tuple(
                _parse_braces(pattern[a + 1 : b], whole, depth + 1)
                for a, b in itertools.pairwise(bounds)
            )
            items.append(_Alternatives(options))
        pos = end + 1
    items.append(pattern[pos:])
    return tuple(item for item in items if item != "")


def _count(sequence: _Sequence) -> int:
    """How many alternatives a parsed pattern expands to, stopping early past the limit."""
    total = 1
    for item in sequence:
        if isinstance(item, _Alternatives):
            total *= sum(_count(option) for option in item.options)
            if total > MAX_GLOB_ALTERNATIVES:
                return total
    return total


def _expand(sequence: _Sequence) -> list[str]:
    expanded = [""]
    for item in sequence:
        if isinstance(item, str):
            expanded = [head + item for head in expanded]
        else:
            tails = [tail for option in item.options for tail in _expand(option)]
            expanded = [head + tail for head in expanded for tail in tails]
    return expanded


def expand_braces(pattern: str) -> list[str]:
    """Expand `{a,b}` alternatives (nested allowed); unbalanced braces stay literal.

    Args:
        pattern: A glob pattern such as `**/*.{md,txt}`.

    Returns:
        Every alternative, in order, e.g. `["**/*.md", "**/*.txt"]`.

    Raises:
        BackendError: If the pattern is longer than `_MAX_GLOB_CHARS`, nests braces too deep, or
            would expand to more than `MAX_GLOB_ALTERNATIVES` alternatives or `_MAX_GLOB_CHARS`
            characters in all.
    """
    if len(pattern) > _MAX_GLOB_CHARS:
        length = f"is {len(pattern):,} characters long (at most {_MAX_GLOB_CHARS:,})"
        raise _too_costly(pattern, length)
    parsed = _parse_braces(pattern, pattern)
    if _count(parsed) > MAX_GLOB_ALTERNATIVES:
        raise _too_costly(
            pattern,
            f"expands to more than {MAX_GLOB_ALTERNATIVES:,} alternatives through its {{a,b}} "
            "groups",
        )
    expanded = _expand(parsed)
    if sum(map(len, expanded)) > _MAX_GLOB_CHARS * 4:
        raise _too_costly(pattern, "expands to too much text through its {a,b} groups")
    return expanded


def _bracket(pattern: str, i: int) -> tuple[str, int] | None:
    """The regex for the `[...]` class opening at `i` (never matching `/`), and its end index."""
    start = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
    end = pattern.find("]", start + 1 if pattern[start : start + 1] == "]" else start)
    if end == -1:
        return None
    body = pattern[i + 1 : end]
    negate = body[:1] in ("!", "^")
    body = body[1:] if negate else body
    body = "".join("\\" + c if c in "\\[]^&~|" else c for c in body)
    return (f"[^/{body}]" if negate else f"(?!/)[{body}]"), end


def _tokens(pattern: str) -> list[str]:
    """Split one brace-free glob into tokens (see `_STAR` and the others)."""
    tokens: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            run_end = i
            while run_end < n and pattern[run_end] == "*":
                run_end += 1
            whole_name = i == 0 or pattern[i - 1] == "/"
            if run_end - i == 2 and whole_name and pattern.startswith("/", run_end):
                tokens.append(_FOLDERS)
                i = run_end + 1
                continue
            if run_end - i == 2 and whole_name and run_end == n:
                tokens.append(_REST)
            elif not tokens or tokens[-1] != _STAR:
                tokens.append(_STAR)
            i = run_end
            continue
        if char == "?":
            tokens.append(_ANY)
        elif char == "/":
            tokens.append(_SLASH)
        elif char == "[" and (found := _bracket(pattern, i)) is not None:
            regex, i = found
            tokens.append(regex)
        else:
            tokens.append(re.escape(char))
        i += 1
    return tokens


def _one(token: str) -> str:
    return "[^/]" if token == _ANY else token


def _name_regex(tokens: list[str]) -> str:
    """One folder level (no `/` inside): each `*` takes the leftmost place the next text fits."""
    if _REST in tokens:
        return ".*"  # a trailing `**` is always a level of its own, the last one
    blocks: list[list[str]] = [[]]
    for token in tokens:
        if token == _STAR:
            blocks.append([])
        else:
            blocks[-1].append(_one(token))
    if len(blocks) <= 2:  # one star can only slide along its own name: linear as it is
        return "[^/]*".join("".join(block) for block in blocks)
    first, *middle, last = ("".join(block) for block in blocks)
    inner = "".join(f"(?>[^/]*?{block})" for block in middle if block)
    return f"(?>{first}{inner}[^/]*{last}(?![^/]))"


def _folders_regex(tokens: list[str]) -> str:
    """Consecutive folder levels separated by `/` (no `**/` inside)."""
    levels: list[list[str]] = [[]]
    for token in tokens:
        if token == _SLASH:
            levels.append([])
        else:
            levels[-1].append(token)
    return "/".join(_name_regex(level) for level in levels)


def _translate(pattern: str) -> str:
    """One brace-free glob as a regular expression body (see the module docstring)."""
    runs: list[list[str]] = [[]]
    for token in _tokens(pattern):
        if token == _FOLDERS:
            runs.append([])
        else:
            runs[-1].append(token)
    out = [_folders_regex(runs[0])]
    for index, run in enumerate(runs[1:], start=2):
        if index < len(runs):  # the leftmost folders where this run fits, then commit
            out.append(f"(?>(?:[^/]*/)*?{_folders_regex(run)})")
        else:  # the last run ends the path: any folders before it, tried from the deepest
            out.append(f"(?:.*/)?{_folders_regex(run)}")
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob (`**`, `*`, `?`, `[abc]`, `{a,b}`) into one anchored regular expression.

    Args:
        pattern: The glob; a leading `/` is ignored by callers that match relative paths.

    Returns:
        A compiled pattern to use with `fullmatch`; matching one path takes time proportional
        to the path's length times the pattern's, never more.

    Raises:
        BackendError: If the pattern cannot be compiled (e.g. a reversed range `[z-a]`), or is
            too long, or its braces expand to too many alternatives.
    """
    alternatives = dict.fromkeys(_translate(option) for option in expand_braces(pattern))
    try:
        return re.compile("(?:" + "|".join(alternatives) + ")", re.DOTALL)
    except re.error as exc:
        msg = f"invalid glob pattern {pattern!r}: {exc.msg}. Use *, **, ?, [abc] and {{a,b}}."
        raise BackendError(msg) from exc
