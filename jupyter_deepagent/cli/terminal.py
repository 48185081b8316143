"""How the command line writes: colour only on a terminal, plain text in a pipe or a file.

Kernel tracebacks and outputs carry ANSI colour codes (`\\x1b[31mNameError`); in a pipe, a log
file or CI they are noise, so `Terminal.text` strips them unless the stream is a terminal. Colour
is also off under `NO_COLOR` (any value but empty, as no-color.org asks) and for `TERM=dumb`.
`one_line` makes any message one line, so each error is one line of output.
"""

from __future__ import annotations

import os
import re
from typing import TextIO

__all__ = ["Terminal", "colour_allowed", "one_line", "plain"]

_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI: colours, cursor moves, erasing
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)"  # OSC: titles, hyperlinks
    r"|\x1b[@-Z\\-_]"  # the other two-byte escapes
)
_RED, _BOLD, _RESET = "\x1b[31m", "\x1b[1m", "\x1b[0m"


def plain(text: str) -> str:
    """`text` without ANSI escape codes."""
    return _ANSI.sub("", text)


def one_line(text: str) -> str:
    """`text` without ANSI codes, its lines and runs of spaces joined by single spaces."""
    return " ".join(plain(text).split())


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
        """`text` as this stream shows it: ANSI codes kept on a colour terminal, else stripped."""
        return text if self.colour else plain(text)

    def error(self, text: str) -> str:
        """An error line: in red on a colour terminal, else plain and on one line."""
        line = one_line(text)
        return f"{_BOLD}{_RED}{line}{_RESET}" if self.colour else line

    def write(self, text: str) -> None:
        """Write `text` (as `text` shows it) and flush."""
        self.stream.write(self.text(text))
        self.stream.flush()
