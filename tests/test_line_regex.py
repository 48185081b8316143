"""grep over a block of lines at once finds exactly the lines a line-by-line grep finds.

`matching_lines` searches a whole block with one regular expression when the pattern cannot
cross a line break, and line by line otherwise; either way the answer must be the one a grep
of each line alone gives, for every pattern people write, including anchors, empty matches,
negated sets and look-arounds.
"""

from __future__ import annotations

import random

import pytest

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends import matching_lines
from jupyter_deepagent.backends.matching._line_regex import line_pattern
from jupyter_deepagent.backends.matching._matching import _regex_hit

PATTERNS = [
    "a", "^a", "a$", "^$", "b+", "[^,]+,", "[^a]", "(?i)ab", r"x\d", r"\bkey\b", "a|^b",
    "(a)(?=b)", "(?<!a)b", "", "a*", "[a-c]{2}", r"\w+$", "^.{0,3}$", "é", "[^]a]",
    "(?:a|b){2,}", r"\s", r"a\Z", r"[\s]", r"\Aa", "(?s)a.b", r"(a)\1", r"[^\S]", r"\W",
]
PIECES = ["a", "b", " ", ",", "x1", "é", "\t", "AB", "", "key=v", "\r", "ab"]


def _per_line(pattern: str, lines: list[str]) -> list[tuple[int, str]]:
    hit = _regex_hit(pattern)
    return [(i, line) for i, line in enumerate(lines) if hit(line)]


def test_a_block_search_finds_what_a_line_by_line_search_finds() -> None:
    rng = random.Random(3)
    searches = {pattern: matching_lines(pattern, regex=True) for pattern in PATTERNS}
    for _ in range(1_500):
        count = rng.randint(1, 25)
        words = [[rng.choice(PIECES) for _ in range(rng.randint(0, 5))] for _ in range(count)]
        lines = ["".join(parts).replace("\r", "") for parts in words]  # a line holds no break
        block = "\n".join(lines)
        for pattern, search in searches.items():
            assert list(zip(*search(block), strict=True)) == _per_line(pattern, lines), (
                pattern,
                lines,
            )
        for literal in ("a", "ab", " ", "key", "é"):
            found = list(zip(*matching_lines(literal)(block), strict=True))
            assert found == [(i, line) for i, line in enumerate(lines) if literal in line]


@pytest.mark.parametrize(
    "pattern", [r"\s", r"a\Z", r"\Aa", "(?s)a.b", r"(a)\1", "[[:space:]]", r"\n", "a{e<=1}"]
)
def test_patterns_that_could_see_past_their_line_are_searched_line_by_line(pattern: str) -> None:
    assert line_pattern(pattern) is None


def test_a_negated_set_stays_inside_its_line() -> None:
    search = matching_lines("[^,]+,", regex=True)
    assert search("abc\n,x\ny,") == ([2], ["y,"])  # `abc\n,` is no match of line 0


def test_a_rare_hit_far_into_a_big_block_is_found_at_once() -> None:
    """A search anchored at every line start would look ahead for the literal from each one."""
    lines = [f"{i} station glacier mass loss year value" for i in range(100_000)]
    lines[99_000] = "key in the middle"
    found = matching_lines(r"key in the m\w+e", regex=True)("\n".join(lines))
    assert found == ([99_000], ["key in the middle"])


def test_a_backtracking_pattern_over_a_block_stops_within_its_budget() -> None:
    with pytest.raises(BackendError, match="took too long"):
        matching_lines("(a|aa)+$", regex=True)("\n".join(["a" * 40 + "!"] * 1_000))
