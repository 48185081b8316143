"""One text of `/notebook/` as the agent sees it: secrets masked, lines masked only when needed.

A cell that printed 50 MB must not be masked whole for every `ls`, `read_file` or `grep`. A
`MaskedView` splits the text into lines once and masks lines on demand, keeping what it masked:
a read masks its page, a literal grep masks only the lines that hold the pattern (a pattern
without `*` can only match a masked line that already held it), and only a regular-expression
grep masks every line (once). Lines longer than `VIEW_LINE_CHARS` are cut (the read tool shows
2,000 characters of a line anyway); each is masked on its first `VIEW_LINE_CHARS` plus a margin,
so a secret across the cut is still caught. A text holding a private-key block (whose lines
only mean something together) is masked whole, once.

Masks never cross a line break, so masking some lines gives what masking the whole text would.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from jupyter_deepagent.backends import grep_texts
from jupyter_deepagent.jupyter.redaction import Redactor, apply_masks

__all__ = ["VIEW_LINE_CHARS", "MaskedView", "MaskedViews"]

VIEW_LINE_CHARS = 10_000
"""Characters of one line shown in `/notebook/`; the rest is replaced by a note."""
_MARGIN = 4_096  # a secret starting before the cut and ending within this is still masked
_BATCH = 20_000  # lines masked together


def _cut(masked: str, raw_length: int) -> str:
    if raw_length <= VIEW_LINE_CHARS:
        return masked
    return f"{masked[:VIEW_LINE_CHARS]} … [{raw_length - VIEW_LINE_CHARS:,} more characters]"


class MaskedView:
    """The lines of `raw` with secrets masked by `redact`, masked on demand and kept.

    Args:
        raw: The text (split with `str.splitlines`, as every backend pages text).
        redact: The masking of the moment (a frozen `Redactor`).
    """

    def __init__(self, raw: str, redact: Redactor) -> None:
        self.redact = redact
        self.size = len(raw.encode("utf-8", "surrogatepass"))
        lines = raw.splitlines()
        self._lengths = [len(line) for line in lines]
        limit = VIEW_LINE_CHARS + _MARGIN
        self._raw = [line[:limit] if len(line) > limit else line for line in lines]
        self._masked: list[str | None] = [None] * len(lines)
        self._lock = threading.Lock()
        if "PRIVATE KEY" in raw:  # key blocks span lines: mask the whole text together
            self._mask(range(len(lines)))

    @property
    def total_lines(self) -> int:
        """How many lines the text has."""
        return len(self._raw)

    def _mask(self, indexes: range | list[int]) -> None:
        todo = [i for i in indexes if self._masked[i] is None]
        for first in range(0, len(todo), _BATCH):
            batch = todo[first : first + _BATCH]
            chunk = "\n".join(self._raw[i] for i in batch)
            masked = apply_masks(chunk, self.redact.spans(chunk)).split("\n")
            with self._lock:
                for i, line in zip(batch, masked, strict=True):
                    self._masked[i] = _cut(line, self._lengths[i])

    def page(self, offset: int, limit: int) -> list[str]:
        """Masked lines `offset` to `offset + limit`."""
        stop = min(offset + limit, len(self._raw))
        self._mask(range(offset, stop))
        return [line or "" for line in self._masked[offset:stop]]

    def text(self) -> str:
        """The whole masked text (masks every line)."""
        lines = self.page(0, len(self._raw))
        return "\n".join(lines) + ("\n" if lines else "")

    def grep(self, pattern: str, path: str, root: str, regex: bool) -> list[tuple[int, str]]:
        """`(1-based line number, masked line)` of the lines holding `pattern`.

        Raises:
            BackendError: If `regex` and the pattern is invalid or over its time budget.
        """
        if regex or "*" in pattern:
            found = grep_texts(pattern, [(path, self.text())], root, regex=regex)
            return [(match.line_number, match.line) for match in found]
        candidates = [i for i, line in enumerate(self._raw) if pattern in line]
        self._mask(candidates)
        shown = [(i + 1, self._masked[i] or "") for i in candidates]
        return [(number, line) for number, line in shown if pattern in line]


class MaskedViews:
    """The views of the texts read lately, by path, content and secrets; a view is made again
    only when its text or the set of secrets changed (a re-run cell, a new key).

    Args:
        max_bytes: Bytes of text kept in all (least recently used views dropped first).
    """

    def __init__(self, max_bytes: int = 256_000_000) -> None:
        self.max_bytes = max_bytes
        self._views: OrderedDict[tuple[str, int, int, int], MaskedView] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, path: str, raw: str, redact: Redactor, secrets: int) -> MaskedView:
        """The kept view of `raw`, or a new one.

        Args:
            path: The file the text belongs to.
            raw: The text.
            redact: The masking to use for a new view.
            secrets: `redact.fingerprint()`, computed once by the caller for many files.
        """
        key = (path, len(raw), hash(raw), secrets)
        with self._lock:
            found = self._views.get(key)
            if found is not None:
                self._views.move_to_end(key)
                return found
        made = MaskedView(raw, redact)
        with self._lock:
            if key not in self._views:
                self._views[key] = made
                self._bytes += made.size
            while self._bytes > self.max_bytes and len(self._views) > 1:
                self._bytes -= self._views.popitem(last=False)[1].size
        return made
