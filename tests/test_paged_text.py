"""PagedText pages and searches a text exactly as its `str.splitlines()` lines, masked.

Blocks are made tiny here, so that every kind of line break, long line and secret meets a
block boundary somewhere; the answer must not depend on where the blocks were cut.
"""

from __future__ import annotations

import random
import re

import pytest

from jupyter_deepagent.backends import matching_lines
from jupyter_deepagent.jupyter.notebook_fs import paged_text
from jupyter_deepagent.jupyter.notebook_fs.paged_text import VIEW_LINE_CHARS, PagedText
from jupyter_deepagent.project.secrets.redaction import Redactor

KEY = "AIza" + "SyPagedTextUnitTestKey0123456789abcd"
PIECES = ["ab", " ", "\n", "\r\n", "\r", "\x0c", "\u2028", "é", "x" * 70, KEY, "token=", "\n\n"]


def _holds_ab(line: str) -> bool:
    return "ab" in line


def _a_word(line: str) -> bool:
    return re.search(r"a\w", line) is not None


def _expected(text: str, redact: Redactor) -> list[str]:
    """The masked lines of a text whose lines are all shorter than `VIEW_LINE_CHARS`."""
    lines = text.splitlines()
    assert all(len(line) <= VIEW_LINE_CHARS for line in lines)
    return [redact(line) for line in lines]


@pytest.fixture(autouse=True)
def tiny_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(paged_text, "_BLOCK_CHARS", 64)
    monkeypatch.setattr(paged_text, "IN_MEMORY_BYTES", 100)


def test_pages_and_greps_match_the_lines_of_the_text(tmp_path) -> None:
    rng = random.Random(5)
    redact = Redactor(extra=list, environ={}).frozen()
    search = matching_lines("ab", regex=False)
    regex = matching_lines(r"a\w", regex=True)
    for _ in range(400):
        text = "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 40)))
        expected = _expected(text, redact)
        paged = PagedText([(text, 0, len(text))], redact, lambda: str(tmp_path))
        assert paged.total_lines == len(expected)
        assert paged.size == len(text.encode("utf-8", "surrogatepass"))
        offset = rng.randint(0, max(len(expected) - 1, 0))
        assert paged.page(offset, 7) == expected[offset : offset + 7], text
        assert paged.page(0, len(expected) + 1) == expected
        for found, literal, hit in ((search, "ab", _holds_ab), (regex, None, _a_word)):
            hits = [
                (number, line)
                for numbers, lines in paged.grep(found, literal)
                for number, line in zip(numbers, lines, strict=True)
            ]
            assert hits == [(i + 1, line) for i, line in enumerate(expected) if hit(line)], text
        paged.close()


def test_a_line_longer_than_a_block_is_cut_and_still_masked(tmp_path) -> None:
    redact = Redactor(extra=list, environ={}).frozen()
    long_line = "y" * (VIEW_LINE_CHARS - 10) + " " + KEY + " " + "z" * 30_000
    text = f"first\n{long_line}\nlast"
    paged = PagedText([(text, 0, len(text))], redact, lambda: str(tmp_path))
    first, cut, last = paged.page(0, 3)
    assert (first, last) == ("first", "last")
    assert KEY[:10] not in cut and cut.endswith("more characters]")
    paged.close()


def test_a_long_line_is_cut_in_its_real_text_so_many_masks_do_not_pull_a_key_into_view(
    tmp_path,
) -> None:
    # 120 masks make the masked line shorter than the real one by 4,000 characters: a cut in the
    # masked text would reach past the part masked, to a key cut in two by the margin's end
    redact = Redactor(extra=list, environ={"MAPS_API_KEY": KEY}).frozen()
    keys = f"{KEY} " * 120
    across = VIEW_LINE_CHARS + 4_096 - 20  # where the masked margin ends, 20 characters in
    long_line = keys + "x" * (across - len(keys)) + KEY + "z" * 100
    paged = PagedText([(long_line, 0, len(long_line))], redact, lambda: str(tmp_path))

    [cut] = paged.page(0, 1)

    assert KEY[:8] not in cut and cut.count("***") == 120
    shown = cut.split(" … ")[0]
    assert shown == "*** " * 120 + "x" * (VIEW_LINE_CHARS - len(keys))
    assert cut.endswith(f"[{len(long_line) - VIEW_LINE_CHARS:,} more characters]")
    paged.close()
