"""One file of the `/notebook/` view: rendered when read, masked once, searched in blocks.

`NotebookBackend` lists the files of the live notebook (cell sources, outputs, variables,
the saved notebook) as `NotebookFile`s; each knows how to give its text, its masked and kept
`PagedText` view, its size and, for tables, its pages and chunks of rows without rendering the
whole table. `grep_file` searches one of them, stopping at the match limit in force.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import islice, repeat
from operator import add

from jupyter_deepagent.backends import BlockSearch, current_match_limit, grep_texts
from jupyter_deepagent.backends.protocol import FileInfo, GrepMatch
from jupyter_deepagent.jupyter.notebook_fs.paged_store import PagedTextStore, PiecesOf
from jupyter_deepagent.jupyter.notebook_fs.paged_text import PagedText
from jupyter_deepagent.project.secrets.redaction import Redactor

__all__ = ["FileMasking", "NotebookFile", "grep_file", "redacted_table"]


@dataclass(frozen=True, slots=True)
class FileMasking:
    """How the files of one call are masked: the kept texts, the masking, its fingerprint."""

    store: PagedTextStore
    redact: Redactor
    fingerprint: int


@dataclass(slots=True)
class NotebookFile:
    """A file of the view, rendered only when read (`pages` reads a table without rendering it).

    `text` is the real text; a file with `masking` (every one but the tables, which are masked
    page by page) is read and searched through its `view()`. `pieces` and `key` give a big text
    without joining it, and say when it changed without hashing it anew (outputs).
    """

    path: str
    text: Callable[[], str]
    size: Callable[[], int | None] | None = None
    pages: Callable[[int, int], tuple[list[str], int]] | None = None
    chunks: Callable[[], Iterator[list[str]]] | None = None
    modified_at: datetime | None = None
    masking: FileMasking | None = None
    pieces: PiecesOf | None = None
    key: Callable[[], Hashable] | None = None

    def view(self) -> PagedText:
        """The masked text, kept from an earlier call while its content is unchanged."""
        assert self.masking is not None  # only masked files have a view
        if self.pieces is not None and self.key is not None:
            pieces, key = self.pieces, self.key()
        else:
            text = self.text()
            pieces, key = (lambda: ([(text, 0, len(text))], 0)), (len(text), hash(text))
        masking = self.masking
        return masking.store.get(self.path, key, pieces, masking.redact, masking.fingerprint)

    def may_hold(self, literal: str) -> bool:
        """False when the raw text does not hold `literal` (so no masked line can)."""
        if self.pieces is None:
            return literal in self.text()
        return any(text.find(literal, a, b) != -1 for text, a, b in self.pieces()[0])

    def info(self) -> FileInfo:
        """The file's listing entry (its masked size for masked texts)."""
        if self.size is not None:
            size = self.size()
        elif self.masking is not None:
            size = self.view().size
        else:
            size = len(self.text().encode("utf-8", "surrogatepass"))
        return FileInfo(path=self.path, size=size or 0, modified_at=self.modified_at)


def grep_file(
    file: NotebookFile, search: BlockSearch, pattern: str, regex: bool, literal: str | None
) -> list[GrepMatch]:
    """The lines of `file` that `search` finds, in order: masked texts block by block, tables
    in chunks of rows. Inside `limiting_matches(n)`, at most `n`, the limit marked reached when
    the file holds more.

    Args:
        file: The file (its `path` is the one the matches name).
        search: The grep's search (`matching_lines`), shared by every file it searches.
        pattern: The pattern, for files searched as one text.
        regex: Whether `pattern` is a regular expression.
        literal: Text every matching line holds (a literal pattern without `*`), else None.

    Raises:
        BackendError: If a regular expression runs over the grep's time budget.
    """
    path = file.path
    if file.masking is not None:
        if literal is not None and not file.may_hold(literal):
            return []  # no line of it can match once masked either
        blocks: Iterable[tuple[Iterable[int], list[str]]] = file.view().grep(search, literal)
    elif file.chunks is None:
        return grep_texts(pattern, [(path, file.text())], path, regex=regex)
    else:
        blocks = _chunk_hits(search, file.chunks())
    cap = current_match_limit()
    matches: list[GrepMatch] = []
    for numbers, lines in blocks:
        if cap is not None and len(matches) + len(lines) > cap.limit:
            keep = cap.limit - len(matches)
            matches += map(GrepMatch, repeat(path), islice(numbers, keep), lines[:keep])
            cap.reached = True
            break  # the file's later lines come after `cap.limit` matches
        matches += map(GrepMatch, repeat(path), numbers, lines)
    return matches


def _chunk_hits(
    search: BlockSearch, chunks: Iterator[list[str]]
) -> Iterator[tuple[Iterable[int], list[str]]]:
    first = 1
    for chunk in chunks:
        found, lines = search("\n".join(chunk))
        yield map(add, found, repeat(first)), lines
        first += len(chunk)


def redacted_table(file: NotebookFile, redact: Redactor) -> NotebookFile:
    """`file` (a table) with its text, pages and chunks masked by `redact`."""
    pages, chunks = file.pages, file.chunks
    assert pages is not None  # only tables page
    return replace(
        file,
        text=lambda: redact(file.text()),
        pages=lambda offset, limit: _redact_page(redact, pages(offset, limit)),
        chunks=(lambda: (redact.lines(chunk) for chunk in chunks()))
        if chunks is not None
        else None,
    )


def _redact_page(redact: Redactor, page: tuple[list[str], int]) -> tuple[list[str], int]:
    lines, total = page
    return redact.lines(lines), total
