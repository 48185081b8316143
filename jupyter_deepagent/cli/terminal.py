"""How the command line writes: colour only on a terminal, plain text in a pipe or a file.

Kernel tracebacks and outputs carry ANSI colour codes (`\\x1b[31mNameError`); in a pipe, a log
file or CI they are noise, so `Terminal.text` strips them unless the stream is a terminal. Colour
is also off under `NO_COLOR` (any value but empty, as no-color.org asks) and for `TERM=dumb`.
`one_line` makes any message one line, so each error is one line of output.

What a run recorded (a request, a tool call's arguments, the model's text, the code it asks to
run) is the model's to write, and a terminal obeys what it prints: an OSC 52 sequence sets the
clipboard, a cursor move or a concealed colour hides the code shown for approval. So the command
line shows such text through `visible` (every control character written out, `\x1b]52;...`),
and `Terminal.text` keeps only the colours (SGR) of a kernel's output, nothing else.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

__all__ = ["Terminal", "colour_allowed", "one_line", "plain", "visible", "visible_json"]

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # the other two-byte escapes
)
_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # SGR: colours and weights (but conceal, 8)
_INVISIBLE = "\u180e\u200b\u2028\u2029\u202a-\u202e\u2060\u2066-\u2069\ufeff"
"""Characters that change what a line shows without showing: bidirectional embeddings,
overrides and isolates (code shown for approval reordered on screen, "Trojan Source"), zero-width
spaces and joiners that hide a break, line and paragraph separators. The joiners and marks that
Persian, Arabic, Hebrew and emoji need in ordinary text (U+200C to U+200F) are kept."""
_CONTROL = re.compile(f"[\\x00-\\x08\\x0b-\\x1f\\x7f-\\x9f{_INVISIBLE}]")  # but tab, newline
_C1 = re.compile(f"[\\x7f-\\x9f{_INVISIBLE}]")  # what JSON leaves as it is


def plain(text: str) -> str:
    """`text` without ANSI escape codes."""
    return _ANSI.sub("", text)


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """`text` safe to print, and showing what it held: every control character (ESC, BEL, a
    carriage return, C1 controls) written out as `\\x1b`, so an escape sequence prints as text,
    and every invisible one that reorders or hides text (`\\u202e`); tabs and newlines kept."""
    return _CONTROL.sub(_written_out, text)


def visible_json(text: str) -> str:
    """A JSON text safe to print: the C1 controls and invisible characters JSON leaves raw
    escaped as `\\u009b`, `\\u202e`."""
    return _C1.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _colours_only(text: str) -> str:
    """`text` with its colour codes kept and every other escape or control written out."""
    kept: list[str] = []
    position = 0
    for match in _COLOUR.finditer(text):
        concealed = "8" in match.group()[2:-1].split(";")
        kept += [visible(plain(text[position : match.start()])), "" if concealed else match.group()]
        position = match.end()
    kept.append(visible(plain(text[position:])))
    return "".join(kept)


def one_line(text: str) -> str:
    """`text` without ANSI codes (`visible`), its lines and runs of spaces joined by single
    spaces."""
    return " ".join(visible(plain(text)).split())


def colour_allowed(stream: TextIO) -> bool:
    """Whether colour may be written to `stream`: a terminal, with neither `NO_COLOR` set nor
    `TERM=dumb`."""
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class Terminal:
    """One output stream of the command line, and whether it shows colour.

    Args:
        stream: Where the lines go (`sys.stdout` or `sys.stderr`).
    """

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.colour = colour_allowed(stream)

    @property
    def is_terminal(self) -> bool:
        """Whether the stream is a terminal (whatever `NO_COLOR` says): a progress bar's place."""
        isatty = getattr(self.stream, "isatty", None)
        try:
            return bool(isatty and isatty())
        except ValueError:
            return False

    def text(self, text: str) -> str:
        """`text` (a kernel's output) as this stream shows it: colours kept on a colour terminal,
        other escapes removed, other control characters written out (`visible`)."""
        return _colours_only(text) if self.colour else visible(plain(text))

    def error(self, text: str) -> str:
        """An error line: in red on a colour terminal, else plain and on one line."""
        line = one_line(text)
        return f"{_BOLD}{_RED}{line}{_RESET}" if self.colour else line

    def write(self, text: str) -> None:
        """Write `text` (as `text` shows it) and flush."""
        self.stream.write(self.text(text))
        self.stream.flush()
