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

Names starting with `.` are matched as deepagents (wcmatch without `DOTMATCH`) matches them:
only by a pattern level that starts with a literal `.`; `*`, `?`, `[...]` and `**` never match
the leading dot of a name, and `**` does not go into a dot-folder. `\\` escapes the next
character, and empty levels (`a//b`) count as one `/`.
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


def _top_groups(pattern: str) -> list[tuple[int, int, list[int]]]:
    """The outermost balanced `{...}` groups, in order: `(start, end, top-level commas)`.

    Braces pair as brackets do, in one pass; a `{` that never closes is literal, and so is a
    `}` that closes nothing (`{{a,b}` has the group `{a,b}` after a literal `{`).
    """
    open_groups: list[tuple[int, list[int]]] = []  # each open `{` and the commas directly in it
    closed: list[tuple[int, int, list[int]]] = []
    escaped = False
    for i, char in enumerate(pattern):
        if escaped or char == "\\":  # an escaped `{`, `}` or `,` is literal
            escaped = not escaped
        elif char == "{":
            open_groups.append((i, []))
        elif char == "}" and open_groups:
            start, commas = open_groups.pop()
            closed.append((start, i, commas))
        elif char == "," and open_groups:
            open_groups[-1][1].append(i)
    top: list[tuple[int, int, list[int]]] = []
    for group in sorted(closed):
        if not top or group[0] > top[-1][1]:
            top.append(group)
    return top


def _parse_braces(pattern: str, whole: str, depth: int = 0) -> _Sequence:
    """Split a pattern into literal text and `{a,b}` groups; unbalanced braces stay literal.

    A group without a top-level comma (`{x}`) keeps its braces (groups inside it expand), and
    everything from a `{` that never closes is literal; `\\` escapes a brace or comma.
    """
    if depth > _MAX_BRACE_DEPTH:
        raise _too_costly(whole, f"nests braces more than {_MAX_BRACE_DEPTH} deep")
    items: list[str | _Alternatives] = []
    pos = 0
    for start, end, commas in _top_groups(pattern):
        if not commas:  # `{x}` stays literal, groups inside it still expand
            items.append(pattern[pos : start + 1])
            items.extend(_parse_braces(pattern[start + 1 : end], whole, depth + 1))
            items.append("}")
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


def _class_text(char: str) -> str:
    """One character as regex class text: anything but a letter or digit escaped."""
    return char if char.isalnum() else "\\" + char


def _class_char(pattern: str, j: int) -> tuple[str, int]:
    """The class character at `j` (`\\` escapes the next one) and the index after it."""
    if pattern[j] == "\\" and j + 1 < len(pattern):
        return pattern[j + 1], j + 2
    return pattern[j], j + 1


def _class_end(pattern: str, j: int) -> int | None:
    """Where the class whose body starts at `j` closes: its first `]` that is neither escaped
    nor the body's first character; `None` if it never closes or a `/` comes first."""
    k = j + 1 if pattern.startswith("]", j) else j
    while (k := pattern.find("]", k)) != -1:
        escapes = 0
        while k - escapes > j and pattern[k - escapes - 1] == "\\":
            escapes += 1
        if escapes % 2 == 0:
            return k if pattern.find("/", j, k) == -1 else None
        k += 1
    return None


def _bracket(pattern: str, i: int) -> tuple[str, int] | None:
    """The regex for the `[...]` class opening at `i` (never matching `/`), and its end index.

    As in wcmatch: a `]` right after the opening (or after `!`/`^`) is literal, `\\` escapes
    the next character, a reversed range (`z-a`) matches nothing, and a class that never closes
    or holds a `/` is not a class (its `[` is literal).
    """
    j = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
    negate = j == i + 2
    end = _class_end(pattern, j)
    if end is None:
        return None
    items: list[tuple[str, str]] = []  # (first, last) of each character or range
    single = False  # the last item is one character: a `-` after it makes a range
    while j < end:
        if pattern[j] == "-" and single and j + 1 < end:
            last, j = _class_char(pattern, j + 1)
            items[-1], single = (items[-1][0], last), False
            continue
        char, j = _class_char(pattern, j)
        items.append((char, char))
        single = True
    body = "".join(
        _class_text(low) if low == high else f"{_class_text(low)}-{_class_text(high)}"
        for low, high in items
        if low <= high
    )
    if not body:  # only reversed ranges: nothing matches (or, negated, any one character)
        return ("[^/]" if negate else "(?!)"), end
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
        elif char == "\\":  # escapes the next character; a `\\` at the very end is dropped
            i += 1
            if i < n:
                tokens.append(re.escape(pattern[i]))
        else:
            tokens.append(re.escape(char))
        i += 1
    return tokens


def _one(token: str) -> str:
    return "[^/]" if token == _ANY else token


_DOT = re.escape(".")
_NO_DOT = "(?!\\.)"
"""Where a name starts: a name beginning with `.` is matched only by a literal `.` there."""


def _name_regex(tokens: list[str], dots: bool) -> str:
    """One folder level (no `/` inside): each `*` takes the leftmost place the next text fits."""
    guard = "" if dots or not tokens or tokens[0] == _DOT else _NO_DOT
    if _REST in tokens:  # a trailing `**` is always a level of its own, the last one
        return ".*" if dots else f"{guard}[^/]+(?:/{guard}[^/]+)*"
    blocks: list[list[str]] = [[]]
    for token in tokens:
        if token == _STAR:
            blocks.append([])
        else:
            blocks[-1].append(_one(token))
    if len(blocks) <= 2:  # one star can only slide along its own name: linear as it is
        return guard + "[^/]*".join("".join(block) for block in blocks)
    first, *middle, last = ("".join(block) for block in blocks)
    inner = "".join(f"(?>[^/]*?{block})" for block in middle if block)
    return f"{guard}(?>{first}{inner}[^/]*{last}(?![^/]))"


def _folders_regex(tokens: list[str], dots: bool) -> str:
    """Consecutive folder levels separated by `/` (no `**/` inside)."""
    levels: list[list[str]] = [[]]
    for token in tokens:
        if token == _SLASH:
            levels.append([])
        else:
            levels[-1].append(token)
    return "/".join(_name_regex(level, dots) for level in levels)


def _translate(pattern: str, dots: bool) -> str:
    """One brace-free glob as a regular expression body (see the module docstring)."""
    runs: list[list[str]] = [[]]
    trailing = len(pattern) - len(pattern.rstrip("\\"))
    if trailing % 2:  # a trailing backslash escapes nothing: dropped
        pattern = pattern[:-1]
    for token in _tokens(re.sub("/{2,}", "/", pattern)):
        if token == _FOLDERS:
            runs.append([])
        else:
            runs[-1].append(token)
    folder = "[^/]*/" if dots else f"{_NO_DOT}[^/]*/"  # one folder `**/` may pass through
    out = [_folders_regex(runs[0], dots)]
    for index, run in enumerate(runs[1:], start=2):
        if index < len(runs):  # the leftmost folders where this run fits, then commit
            out.append(f"(?>(?:{folder})*?{_folders_regex(run, dots)})")
        else:  # the last run ends the path: any folders before it, tried from the deepest
            out.append(f"(?:{folder})*{_folders_regex(run, dots)}")
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str, dots: bool = False) -> re.Pattern[str]:
    """Compile a glob (`**`, `*`, `?`, `[abc]`, `{a,b}`) into one anchored regular expression.

    Args:
        pattern: The glob, matched against a relative path (no leading `/`).
        dots: Let wildcards match names starting with `.` too (wcmatch's `DOTMATCH`); by
            default such a name is matched only by a level starting with a literal `.`.

    Returns:
        A compiled pattern to use with `fullmatch`; matching one path takes time proportional
        to the path's length times the pattern's, never more.

    Raises:
        BackendError: If the pattern cannot be compiled (e.g. a reversed range `[z-a]`), or is
            too long, or its braces expand to too many alternatives.
    """
    alternatives = dict.fromkeys(_translate(option, dots) for option in expand_braces(pattern))
    try:
        return re.compile("(?:" + "|".join(alternatives) + ")", re.DOTALL)
    except re.error as exc:
        msg = f"invalid glob pattern {pattern!r}: {exc.msg}. Use *, **, ?, [abc] and {{a,b}}."
        raise BackendError(msg) from exc
