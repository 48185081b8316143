"""One text of `/notebook/` as the agent sees it: masked once, kept on disk, read page by page.

A cell that printed 50 MB must cost neither 50 MB of memory per call nor a masking per call. A
`PagedText` never joins or copies the text: it reads it as `Piece`s (slices of strings that
live anyway, such as the outputs IPython keeps), cut into blocks of about 1 MB of whole lines.
One pass counts each block's lines. A block is masked the first time a page or a search needs
it, and its masked lines are written once to a `_Spill` with their byte offsets (an `array`),
so a read seeks to the lines it asks for, and a search streams block by block. Texts under
`IN_MEMORY_BYTES` keep their masked bytes in memory instead of a file.

Lines are those of `str.splitlines`, as every backend pages text. Lines longer than
`VIEW_LINE_CHARS` are cut (the read tool shows 2,000 characters of a line anyway); each is
masked on its first `VIEW_LINE_CHARS` plus a margin, so a secret across the cut is still caught,
and cut where its real text passes `VIEW_LINE_CHARS` (masks are shorter than what they hide).
Masks never cross a line break, so masking a block alone gives what masking the whole text
would, except inside a private-key block: a text holding one is masked in order, and a block
that opens in one text block and goes on in the next is carried over (its marker line is put
before the next block while that one is masked).
"""

from __future__ import annotations

import bisect
import os
import re
import tempfile
import threading
import weakref
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from itertools import accumulate, repeat, takewhile
from operator import add

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends import BlockSearch
from jupyter_deepagent.project.secrets.redaction import Redactor, Span, apply_masks

__all__ = ["IN_MEMORY_BYTES", "VIEW_LINE_CHARS", "PagedText", "Piece"]

Piece = tuple[str, int, int]
"""`(text, start, end)`: the slice `text[start:end]`, made of whole lines, never copied."""

VIEW_LINE_CHARS = 10_000
"""Characters of one line shown in `/notebook/`; the rest is replaced by a note."""
IN_MEMORY_BYTES = 256 * 1024
"""Texts smaller than this keep their masked bytes in memory; bigger ones go to a spill file."""

_MARGIN = 4_096  # a secret starting before the cut and ending within this is still masked
_KEPT = VIEW_LINE_CHARS + _MARGIN
_BLOCK_CHARS = 1 << 20
_BREAKS = re.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_RARE_BREAKS = re.compile(r"[\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
_CHANGED = "This notebook file changed while it was read (its cell ran again); read it again."


class _Spill:
    """Bytes appended once and read back by position: in memory, or in an unnamed temporary
    file inside `folder` (gone from the disk's names the moment it is made; freed on close).

    Args:
        folder: Returns the private folder for the file; None keeps the bytes in memory.
    """

    def __init__(self, folder: Callable[[], str] | None = None) -> None:
        self._memory = bytearray() if folder is None else None
        self._file = (  # kept open until close(): the file has no name to reopen
            tempfile.TemporaryFile(dir=folder()) if folder is not None else None
        )
        self._closing = weakref.finalize(self, self._file.close) if self._file else None
        self.size = 0

    def append(self, data: bytes) -> int:
        """Write `data` at the end; return where it starts (callers serialise appends)."""
        at = self.size
        if self._memory is not None:
            self._memory += data
        elif self._file is not None:
            os.pwrite(self._file.fileno(), data, at)
        self.size += len(data)
        return at

    def read(self, offset: int, size: int) -> bytes:
        """`size` bytes from `offset` (safe from many threads at once)."""
        if self._memory is not None:
            return bytes(self._memory[offset : offset + size])
        if self._file is None:
            raise BackendError(_CHANGED)
        return os.pread(self._file.fileno(), size, offset)

    def close(self) -> None:
        """Free the bytes (the file is removed by the system when closed)."""
        if self._closing is not None:
            self._closing()  # closes the file, once
            self._file = None
        self._memory = bytearray() if self._memory is not None else None


@dataclass(slots=True)
class _Block:
    """Lines `[first_line, first_line + lines)`: the slice `[start, end)` of piece `piece`.

    A `whole` block is one line longer than a block (only its first `_KEPT` characters are
    read). Once masked, its lines sit at `spilled + offsets[i]` in the spill.
    """

    piece: int
    start: int
    end: int
    first_line: int
    lines: int
    whole: bool = False
    spilled: int = -1
    offsets: array | None = None


def _byte_size(text: str, start: int, end: int) -> int:
    if text.isascii():  # known without a scan
        return end - start
    return sum(
        len(text[at : min(at + _BLOCK_CHARS, end)].encode("utf-8", "surrogatepass"))
        for at in range(start, end, _BLOCK_CHARS)
    )


def _count_lines(text: str, start: int, end: int) -> int:
    if start >= end:
        return 0
    if _RARE_BREAKS.search(text, start, end) is None:
        return text.count("\n", start, end) + (text[end - 1] != "\n")
    return len(text[start:end].splitlines())


def _blocks(pieces: list[Piece]) -> Iterator[_Block]:
    """Cut the pieces into blocks of whole lines (about `_BLOCK_CHARS` each), counting lines."""
    first = 0
    for index, (text, start, end) in enumerate(pieces):
        at = start
        while at < end:
            stop = at + _BLOCK_CHARS
            if stop >= end:
                stop = end
            else:
                newline = text.find("\n", stop, min(end, stop + _BLOCK_CHARS))
                stop = newline + 1 if newline != -1 else -1
            if stop == -1:  # no "\n" for a while: cut after the last break of any kind
                window = text[at : at + 2 * _BLOCK_CHARS].splitlines(keepends=True)
                if len(window) > 1:
                    stop = at + sum(len(line) for line in window[:-1])
                    if text[stop - 1] == "\r" and text.startswith("\n", stop):
                        stop += 1
                else:  # one line longer than a block: only its start will be read
                    found = _BREAKS.search(text, at, end)
                    stop = end if found is None else found.end()
                    yield _Block(index, at, stop, first, 1, whole=True)
                    first, at = first + 1, stop
                    continue
            count = _count_lines(text, at, stop)
            yield _Block(index, at, stop, first, count)
            first, at = first + count, stop


def _cut(text: str, spans: list[Span], start: int, raw_length: int) -> str:
    """The line of `text` at `start` (`raw_length` characters long) cut after its first
    `VIEW_LINE_CHARS` characters, masked by `spans`: the cut is taken in the real text (a mask
    across it is shown whole), since masks are shorter than what they hide and a cut in the
    masked text would reach past the part masked."""
    cut = start + VIEW_LINE_CHARS
    first = bisect.bisect_left(spans, (start, start))
    inside = list(takewhile(lambda span: span[0] < cut, spans[first:]))
    if inside and inside[-1][1] > cut:
        cut = inside[-1][1]
    rest = raw_length - (cut - start)
    return f"{apply_masks(text, inside, start, cut)} … [{rest:,} more characters]"


def _open_key_line(text: str) -> str:
    """The marker line of a private-key block still open at the end of `text`, else `""`."""
    begin = text.rfind("-----BEGIN")
    if begin == -1 or text.find("-----END", begin) != -1:
        return ""
    line_start = text.rfind("\n", 0, begin) + 1
    line_end = text.find("\n", begin)
    line = text[line_start : line_end if line_end != -1 else len(text)]
    return line if "PRIVATE KEY" in line else ""


class PagedText:
    """The lines of a text, secrets masked by `redact`, masked block by block and kept.

    Args:
        pieces: The text, as slices of whole lines; the text is their lines in order.
        redact: The masking of the moment (a frozen `Redactor`).
        folder: Returns the private folder for a spill file (texts from `IN_MEMORY_BYTES`).
        separators: Bytes between and after the pieces that are not lines of their own
            (the `"\\n"` joining an output's parts), counted in `size`.
    """

    def __init__(
        self,
        pieces: list[Piece],
        redact: Redactor,
        folder: Callable[[], str] | None = None,
        separators: int = 0,
    ) -> None:
        self.redact = redact
        self._pieces = pieces
        self._blocks = list(_blocks(pieces))
        self._firsts = [block.first_line for block in self._blocks]
        self.total_lines = sum(block.lines for block in self._blocks)
        self.size = separators + sum(_byte_size(*piece) for piece in pieces)
        self._keyed = any(text.find("PRIVATE KEY", a, b) != -1 for text, a, b in pieces)
        big = self.size >= IN_MEMORY_BYTES and folder is not None
        self._spill = _Spill(folder if big else None)
        self._lock = threading.Lock()
        self._closed = False

    @property
    def spilled_bytes(self) -> int:
        """Bytes of masked text written so far (on disk for big texts)."""
        return self._spill.size

    def _raw_lines(self, block: _Block) -> tuple[list[str], list[int]]:
        text = self._pieces[block.piece][0]
        if block.whole:
            found = _BREAKS.search(text, block.start, block.end)
            length = (found.start() if found is not None else block.end) - block.start
            return [text[block.start : block.start + min(length, _KEPT)]], [length]
        lines = text[block.start : block.end].splitlines()
        lengths = list(map(len, lines))
        if max(lengths, default=0) > _KEPT:
            lines = [line if len(line) <= _KEPT else line[:_KEPT] for line in lines]
        return lines, lengths

    def _mask(self, block: _Block, carry: str) -> str:
        """Mask `block` and spill it; return the key marker line still open after it."""
        lines, lengths = self._raw_lines(block)
        chunk = "\n".join(lines)
        text, base = (f"{carry}\n{chunk}", len(carry) + 1) if carry else (chunk, 0)
        spans = self.redact.spans(text, base)
        masked_text = apply_masks(text, spans, base)
        masked = masked_text.split("\n")
        if max(lengths, default=0) > VIEW_LINE_CHARS:
            starts = accumulate((len(line) + 1 for line in lines), initial=base)  # one more
            for number, (start, length) in enumerate(zip(starts, lengths, strict=False)):
                if length > VIEW_LINE_CHARS:
                    masked[number] = _cut(text, spans, start, length)
            masked_text = "\n".join(masked)
        if masked_text.isascii():  # one byte a character: no line needs encoding alone
            sizes: Iterable[int] = map(len, masked)
            data = masked_text.encode("ascii")
        else:
            encoded = [line.encode("utf-8", "surrogatepass") for line in masked]
            sizes, data = map(len, encoded), b"\n".join(encoded)
        block.offsets = array("Q", accumulate(map(add, sizes, repeat(1)), initial=0))
        block.spilled = self._spill.append(data + b"\n" if masked else b"")
        return _open_key_line(text) if self._keyed else ""

    def _ensure(self, indexes: range | list[int]) -> None:
        """Mask the blocks at `indexes` not masked yet (every block, in order, when keyed)."""
        with self._lock:
            if self._closed:
                raise BackendError(_CHANGED)
            if self._keyed:
                indexes = range(len(self._blocks))
            carry = ""
            for index in indexes:
                if self._blocks[index].offsets is None:
                    carry = self._mask(self._blocks[index], carry)
            if self._pieces and all(block.offsets is not None for block in self._blocks):
                self._pieces = []  # all masked: the raw text is no longer needed here

    def _block_lines(self, block: _Block, first: int, stop: int) -> list[str]:
        offsets = block.offsets
        assert offsets is not None  # masked by _ensure
        data = self._spill.read(block.spilled + offsets[first], offsets[stop] - offsets[first])
        return data.decode("utf-8", "surrogatepass").split("\n")[:-1]

    def _block_text(self, block: _Block) -> str:
        """The block's masked lines joined by `"\\n"` (no line break at the end)."""
        offsets = block.offsets
        assert offsets is not None  # masked by _ensure
        data = self._spill.read(block.spilled, offsets[-1])
        return data.decode("utf-8", "surrogatepass")[:-1]

    def page(self, offset: int, limit: int) -> list[str]:
        """Masked lines `offset` to `offset + limit` (fewer at the end)."""
        stop = min(offset + limit, self.total_lines)
        if offset >= stop:
            return []
        first = bisect.bisect_right(self._firsts, offset) - 1
        last = bisect.bisect_right(self._firsts, stop - 1) - 1
        self._ensure(range(first, last + 1))
        lines: list[str] = []
        for block in self._blocks[first : last + 1]:
            begin = max(offset - block.first_line, 0)
            end = min(stop - block.first_line, block.lines)
            lines += self._block_lines(block, begin, end)
        return lines

    def _may_hold(self, block: _Block, pattern: str) -> bool:
        pieces = self._pieces
        if not pieces:  # all masked already: search the masked text itself
            return True
        text = pieces[block.piece][0]
        end = min(block.end, block.start + _KEPT) if block.whole else block.end
        return text.find(pattern, block.start, end) != -1

    def grep(
        self, search: BlockSearch, literal: str | None = None
    ) -> Iterator[tuple[Iterable[int], list[str]]]:
        """The lines `search` finds, block by block: their 1-based line numbers and masked text.

        Args:
            search: The grep's search (`matching_lines`), shared by every file it searches.
            literal: Text every matching line holds, before masking as after (a literal pattern
                without `*`): only the blocks whose text holds it are masked and searched.

        Raises:
            BackendError: From `search`, when a regular expression runs over its time budget.
        """
        for index, block in enumerate(self._blocks):
            if literal is not None and not self._may_hold(block, literal):
                continue
            self._ensure([index])
            found, lines = search(self._block_text(block))
            if lines:
                yield map(add, found, repeat(block.first_line + 1)), lines

    def close(self) -> None:
        """Free the masked text (a later read of this object fails; get a new one)."""
        with self._lock:
            self._closed = True
            self._pieces = []
            self._spill.close()
