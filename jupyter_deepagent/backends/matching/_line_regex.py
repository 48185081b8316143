"""One regular-expression search over a block of many lines, with per-line meaning.

grep asks, line by line, whether a pattern matches somewhere in the line. Calling the matcher
once per line costs a few microseconds a call (half of it the `regex` package's timeout set-up),
so 600,000 lines take seconds. Searching a whole block of lines joined by `"\\n"` at once is
ten times faster, but only when the pattern cannot see past its line: a `\\s`, `[^,]`, `\\A` or
`(?s)` could match across a line break or at a place that is a line's start only in the block.

`line_pattern` rewrites a pattern that is safe that way (negated sets get `\\n` added, so
`[^,]+` stays in its line) into one that matches runs of consecutive matching lines:
`(?:PATTERN)[^\\n]*+(?:\\n(?>[^\\n]*?(?:PATTERN))[^\\n]*+)*` under MULTILINE. The search for
a run starts with the pattern itself, so the package's fast scan for its literal text still
works (a run anchored at `^` instead made it look ahead from every line start: quadratic); one
match then covers every line of a run from its first hit, and the caller takes the run back
to its line start and splits it. A pattern it cannot prove safe gets `None`, and the caller
searches line by line as before.
"""

from __future__ import annotations

import re

__all__ = ["line_pattern"]

_SAFE_ESCAPES = frozenset("wdSbBtf")
"""Escapes that never match a line break nor depend on where the searched text starts."""
_SAFE_CLASS_ESCAPES = frozenset("wdS")
_LEADING_FLAGS = re.compile(r"\(\?([aiLu]+)\)")
_GROUP_OPENERS = ("?:", "?=", "?!", "?<=", "?<!", "?>", "?P<", "?P=", "?#")
_COUNTED = re.compile(r"\{\d*(?:,\d*)?\}")
_SCOPED_FLAGS_OR_NAME = re.compile(r"\(\?(?:[aiLu]+:|<[A-Za-z_])")


def _class_end(pattern: str, i: int) -> tuple[int, str] | None:
    """Parse the set `[...]` opening at `i`: (index past it, its safe spelling), or None."""
    n = len(pattern)
    j = i + 1
    negated = pattern.startswith("^", j)
    if negated:
        j += 1
    out = ["[^" if negated else "["]
    if pattern.startswith("]", j):  # a `]` first is a literal
        out.append("]")
        j += 1
    if negated:
        out.append("\\n")
    while j < n:
        char = pattern[j]
        if ord(char) < 0x20:
            return None
        if char == "]":
            out.append("]")
            return j + 1, "".join(out)
        if char == "[":  # a POSIX class or a nested set: not proven safe
            return None
        if char == "\\":
            letter = pattern[j + 1 : j + 2]
            if not letter:
                return None
            if letter.isalnum() and not (negated or letter in _SAFE_CLASS_ESCAPES):
                return None
            if letter.isalnum() and negated and letter in "xuUN0123456789":
                return None  # a code point escape: keep it simple, search line by line
            out.append(pattern[j : j + 2])
            j += 2
            continue
        out.append(char)
        j += 1
    return None


def line_pattern(pattern: str) -> tuple[str, str] | None:
    """The block form of `pattern` and its leading flags, or None if it is not provably safe.

    Args:
        pattern: A grep regular expression (the `regex` package's VERSION0 syntax).

    Returns:
        `(block pattern, flags)`: the run-of-lines pattern to compile with MULTILINE plus the
        flags letters (`"i"`...) that led the pattern; or None when the pattern could match a
        line break or depends on the start of the searched text (`\\A`, `\\s`, `(?s)`, `\\1`...).
    """
    flags = ""
    lead = _LEADING_FLAGS.match(pattern)
    if lead is not None:
        flags, pattern = lead.group(1), pattern[lead.end() :]
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if ord(char) < 0x20 or char in "\x85\u2028\u2029":
            return None
        if char == "\\":
            letter = pattern[i + 1 : i + 2]
            if not letter or (letter.isalnum() and letter not in _SAFE_ESCAPES):
                return None
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if char == "[":
            parsed = _class_end(pattern, i)
            if parsed is None:
                return None
            i, spelled = parsed
            out.append(spelled)
            continue
        if (
            char == "("
            and pattern.startswith("?", i + 1)
            and not pattern.startswith(_GROUP_OPENERS, i + 1)
            and _SCOPED_FLAGS_OR_NAME.match(pattern, i) is None
        ):
            return None  # inline flags (s, m, x...), version or fuzzy switches
        if char == "{":
            counted = _COUNTED.match(pattern, i)
            if counted is None:
                return None  # fuzzy matching, or a brace the package may read differently
        out.append(char)
        i += 1
    body = "".join(out)
    return rf"(?:{body})[^\n]*+(?:\n(?>[^\n]*?(?:{body}))[^\n]*+)*", flags
