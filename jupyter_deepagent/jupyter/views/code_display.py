"""Code shown for approval as it runs: characters that hide or reorder text are made visible.

The user approves code by reading it, so what they read must be what runs. A right-to-left
override (U+202E) or an isolate (U+2066..U+2069) in a comment or a string makes a line read in
another order than Python reads it ("Trojan Source"); a zero-width space, a soft hyphen or
another format character is not drawn at all; a carriage return or an escape sequence rewrites
the line in a terminal or a text view; and code pushed past a long run of blanks sits beyond the
right edge of the code block. `shown_code` writes each such character as its Python escape
(`\\u202e`, `\\r`) and says what it found, in notes placed before the code.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["shown_code"]

_FAR_RIGHT_BLANKS = 40
"""Blanks inside a line after which code counts as pushed out of sight."""

_PUSHED = re.compile(rf"\S([ \t\u00a0]{{{_FAR_RIGHT_BLANKS},}})\S")


_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
"""Hangul fillers: letters (Python takes them in names) that are drawn as nothing."""


def _hides(char: str) -> bool:
    """Whether `char` is drawn as nothing, reorders text or acts on a terminal."""
    if char in "\n\t":
        return False
    return char in _BLANK_LETTERS or unicodedata.category(char) in (
        "Cc",
        "Cf",
        "Zl",
        "Zp",
        "Co",
        "Cn",
    )


def _escape(char: str) -> str:
    if char == "\r":
        return "\\r"
    point = ord(char)
    return (
        f"\\x{point:02x}"
        if point < 0x100
        else f"\\u{point:04x}"
        if point < 0x10000
        else (f"\\U{point:08x}")
    )


def shown_code(code: str) -> tuple[str, list[str]]:
    """`code` as the approval shows it, and notes on what in it would mislead a reader.

    Returns:
        `(text, notes)`: the code with every invisible or reordering character written as its
        escape, and one sentence per kind of trick found (none for ordinary code).
    """
    found: dict[str, int] = {}
    parts = []
    for at, char in enumerate(code):
        if char == "\r" and code[at + 1 : at + 2] == "\n":
            parts.append(char)  # a Windows line end: Python and every view read a line break
        elif _hides(char):
            found[char] = found.get(char, 0) + 1
            parts.append(_escape(char))
        else:
            parts.append(char)
    notes = []
    if found:
        named = ", ".join(
            f"{_escape(char)} ({unicodedata.name(char, 'a control character').lower()})"
            + (f" x{count}" if count > 1 else "")
            for char, count in found.items()
        )
        notes.append(
            f"This code holds invisible characters that can make it read unlike what runs, "
            f"shown here as escapes: {named}. Reject it unless you know why they are there."
        )
    for number, line in enumerate(code.split("\n"), start=1):
        pushed = _PUSHED.search(line)
        if pushed is not None:
            notes.append(
                f"On line {number}, code goes on after {len(pushed.group(1))} blank characters, "
                "past the edge of the code block: scroll right to read it all."
            )
    return "".join(parts), notes
