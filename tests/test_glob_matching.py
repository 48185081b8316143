"""Glob matching: the linear-time translation answers exactly as the plain backtracking one does,
and brace expansion keeps its meaning while refusing patterns that would expand without end."""

from __future__ import annotations

import itertools
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jupyter_deepagent import BackendError
from jupyter_deepagent.backends.matching._glob import (
    MAX_GLOB_ALTERNATIVES,
    compile_glob,
    expand_braces,
)


def _reference_braces(pattern: str) -> list[str]:
    """Brace expansion by re-scanning: slow on big patterns, obviously right on small ones.

    The first `{` that closes is expanded; a `{` that never closes is literal (`{{a,b}` is a
    `{` and then the group), and a group without a comma keeps its braces.
    """
    for start, char in enumerate(pattern):
        if char != "{":
            continue
        depth, commas = 0, []
        for i in range(start, len(pattern)):
            if pattern[i] == "{":
                depth += 1
            elif pattern[i] == "}":
                depth -= 1
                if depth == 0:
                    break
            elif pattern[i] == "," and depth == 1:
                commas.append(i)
        else:
            continue  # never closes: literal, try the next `{`
        head, inside, tail = pattern[:start], pattern[start + 1 : i], pattern[i + 1 :]
        if not commas:
            return [
                head + "{" + middle + "}" + rest
                for middle in _reference_braces(inside)
                for rest in _reference_braces(tail)
            ]
        bounds = [start, *commas, i]
        options = [pattern[a + 1 : b] for a, b in itertools.pairwise(bounds)]
        return [out for option in options for out in _reference_braces(head + option + tail)]
    return [pattern]


def _reference_translate(pattern: str) -> str:
    """The naive translation (`*` -> `[^/]*`), which backtracks exponentially on long names.

    A name starting with `.` is matched only where the pattern's level starts with `.`.
    """
    pattern = re.sub("/{2,}", "/", pattern)
    no_dot = r"(?!\.)"
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        at_start = i == 0 or pattern[i - 1] == "/"
        if at_start and char != ".":
            out.append(no_dot)
        if char == "*":
            if pattern.startswith("**", i):
                i += 2
                if at_start and pattern.startswith("/", i):
                    out.append(rf"(?:{no_dot}[^/]*/)*")
                    i += 1
                elif at_start and i == n:
                    out.append(rf"[^/]*(?:/{no_dot}[^/]*)*")
                else:
                    out.append("[^/]*")
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            start = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
            end = pattern.find("]", start + 1 if pattern[start : start + 1] == "]" else start)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = "".join("\\" + c if c in "\\[]^&~|" else c for c in body)
                out.append(f"[^/{body}]" if negate else f"(?!/)[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _reference_match(pattern: str, path: str) -> bool:
    alternatives = [_reference_translate(option) for option in _reference_braces(pattern)]
    return re.fullmatch("(?:" + "|".join(alternatives) + ")", path, re.DOTALL) is not None


_PIECES = ["a", "b", ".", "/", "*", "**", "?", "[ab]", "[!a]", "**/", "{a,b}", "{a,*/}", "{", "}"]
patterns = st.lists(st.sampled_from(_PIECES), max_size=8).map("".join)
_NAMES = ["a", "b", "ab", "ba", ".a", "a.b", "..b"]
paths = st.lists(st.sampled_from(_NAMES), min_size=1, max_size=6).map("/".join)
"""Relative file paths as backends give them (no empty levels), some names starting with `.`."""


@settings(max_examples=600, deadline=None)
@given(pattern=patterns, path=paths)
def test_glob_answers_as_the_plain_translation_does(pattern: str, path: str) -> None:
    assert (compile_glob(pattern).fullmatch(path) is not None) == _reference_match(pattern, path)


@settings(max_examples=300, deadline=None)
@given(pattern=st.lists(st.sampled_from(["a", ",", "{", "}", "*"]), max_size=12).map("".join))
def test_brace_expansion_keeps_its_meaning(pattern: str) -> None:
    assert expand_braces(pattern) == _reference_braces(pattern)


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*a" * 6 + "b", "a" * 250, False),
        ("*a" * 6 + "b", "a" * 250 + "b", True),
        ("*a*a*ab", "xaya/zab", False),  # `*` never crosses a folder
        ("**/a/**/a/**/b", "a/" * 40 + "c", False),
        ("**/a/**/a/**/b", "x/a/y/a/z/b", True),
        ("*[ab]?*.md", "qa1-notes.md", True),
    ],
)
def test_stars_find_the_match_or_its_absence(pattern: str, path: str, matches: bool) -> None:
    assert (compile_glob(pattern).fullmatch(path) is not None) is matches


def test_a_brace_bomb_is_refused_with_a_clear_error() -> None:
    with pytest.raises(BackendError, match=r"more than 1,000 alternatives.*\{a,b\}"):
        expand_braces("{a,b}" * 18)


def test_braces_up_to_the_limit_still_expand() -> None:
    assert len(expand_braces("{a,b}" * 9)) == 512 <= MAX_GLOB_ALTERNATIVES
    assert expand_braces("data/*.{csv,{json,jsonl}}") == [
        "data/*.csv",
        "data/*.json",
        "data/*.jsonl",
    ]


def test_braces_nested_too_deep_are_refused() -> None:
    with pytest.raises(BackendError, match="nests braces"):
        expand_braces("{a," * 50 + "b" + "}" * 50)
