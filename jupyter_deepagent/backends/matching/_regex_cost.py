"""How big a regular expression grows when compiled, told from its text before compiling it.

The `regex` package copies the body of a counted repeat once per count: `((a{1000}){1000}){1000}`
compiles into a billion nodes, holding the interpreter (and the stop button) while memory grows.
Its matching timeout does not cover compiling. So a grep pattern is measured first: each atom
costs 1, a group the sum of its alternatives, and `{m}`, `{m,}` or `{m,n}` multiplies what it
repeats by its largest count. `*`, `+` and `?` cost nothing more (they compile to loops). A
pattern over `_MAX_REGEX_COST`, or nested deeper than `_MAX_REGEX_DEPTH`, is refused.

The measure errs on the large side (`a{1,100000}` is counted as 100,000 though the package
compiles it as a loop); patterns people search with cost a few hundred.
"""

from __future__ import annotations

import re

from jupyter_deepagent._exceptions import BackendError

__all__ = ["check_regex_cost"]

_MAX_REGEX_COST = 100_000
"""Largest compiled size accepted (about 0.2 s and 30 MB to compile at the limit)."""

_MAX_REGEX_DEPTH = 100
"""Deepest nesting of groups accepted (the package's parser recurses once per level)."""

_COUNTED = re.compile(r"\{(\d*)(?:(,)(\d*))?\}")
_ESCAPE_WITH_BRACES = frozenset("pPNxuUgk")


def _skip_class(pattern: str, i: int) -> int:
    """The index just past the `[...]` set opening at `i` (POSIX `[:name:]` and escapes kept)."""
    n = len(pattern)
    i += 1
    if i < n and pattern[i] == "^":
        i += 1
    if i < n and pattern[i] == "]":
        i += 1
    depth = 1
    while i < n:
        char = pattern[i]
        if char == "\\":
            i += 2
            continue
        if char == "[" and pattern.startswith(":", i + 1):
            end = pattern.find(":]", i + 2)
            i = end + 2 if end != -1 else i + 1
            continue
        if char == "[":  # a nested set (the package's VERSION1 syntax)
            depth += 1
        elif char == "]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _skip_escape(pattern: str, i: int) -> int:
    """The index just past the escape starting at `i` (`\\p{L}`, `\\x{41}`, `\\N{name}` whole)."""
    letter = pattern[i + 1 : i + 2]
    after = i + 2
    if letter in _ESCAPE_WITH_BRACES and pattern.startswith("{", after):
        end = pattern.find("}", after)
        return end + 1 if end != -1 else len(pattern)
    if letter in _ESCAPE_WITH_BRACES and letter in "gk" and pattern.startswith("<", after):
        end = pattern.find(">", after)
        return end + 1 if end != -1 else len(pattern)
    return after


def _regex_cost(pattern: str) -> tuple[int, int]:
    """Estimate the compiled size of `pattern` and its deepest group nesting.

    Args:
        pattern: A regular expression in the `regex` package's (and Python's) syntax.

    Returns:
        `(cost, depth)`: about how many nodes compiling makes, and how deep groups nest.
    """
    # Each open group keeps (cost of finished alternatives, cost of the current one).
    stack: list[list[int]] = [[0, 0]]
    deepest = 0
    last = 0  # cost of the last atom, which a quantifier after it repeats
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\":
            i, last = _skip_escape(pattern, i), 1
            stack[-1][1] += 1
            continue
        if char == "[":
            i, last = _skip_class(pattern, i), 1
            stack[-1][1] += 1
            continue
        if char == "(":
            if pattern.startswith("(?#", i):  # a comment
                end = pattern.find(")", i)
                i = end + 1 if end != -1 else n
                continue
            stack.append([0, 0])
            deepest = max(deepest, len(stack) - 1)
            last = 0
        elif char == ")" and len(stack) > 1:
            done, current = stack.pop()
            last = done + current + 1
            stack[-1][1] += last
        elif char == "|":
            stack[-1][0] += stack[-1][1]
            stack[-1][1] = 0
            last = 0
        elif char == "{" and (counted := _COUNTED.match(pattern, i)) and counted.group(0) != "{}":
            low, comma, high = counted.groups()
            times = max(int(low or 0), int(high or 0)) if comma else int(low or 0)
            stack[-1][1] += last * (max(times, 1) - 1)
            last *= max(times, 1)
            i = counted.end()
            continue
        elif char not in "*+?":
            last = 1
            stack[-1][1] += 1
        i += 1
    while len(stack) > 1:  # unclosed groups: the package refuses them, count them anyway
        done, current = stack.pop()
        stack[-1][1] += done + current
    return stack[0][0] + stack[0][1], deepest


def check_regex_cost(pattern: str) -> None:
    """Refuse a pattern that would take too long or too much memory to compile.

    Raises:
        BackendError: If its estimated size is over `_MAX_REGEX_COST` or its groups nest deeper
            than `_MAX_REGEX_DEPTH`; the message says which and what to do.
    """
    cost, depth = _regex_cost(pattern)
    shown = pattern if len(pattern) <= 80 else pattern[:77] + "..."
    if depth > _MAX_REGEX_DEPTH:
        msg = (
            f"the regular expression {shown!r} nests groups {depth} deep (at most "
            f"{_MAX_REGEX_DEPTH}); flatten it, or search for a literal with regex=False"
        )
        raise BackendError(msg)
    if cost > _MAX_REGEX_COST:
        msg = (
            f"the regular expression {shown!r} is too large to compile: its counted repeats "
            f"expand to about {cost:,} steps (at most {_MAX_REGEX_COST:,}). Use smaller counts "
            "such as {1,50}, or + and * in place of large {n}, or search for a literal with "
            "regex=False"
        )
        raise BackendError(msg)
