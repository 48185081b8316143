"""The masked texts of `/notebook/`, kept between calls and runs, each masked once.

One `PagedTextStore` belongs to the kernel's `OutputCapture`, so every run of the session finds
the texts its earlier runs masked. A text is made again only when its content or the set of
secrets changes (a cell that ran again, a new key): the old one is dropped with its spill file
at once. Spill files are unnamed temporary files inside a private folder (mode 0700) that the
store makes on first need and removes on `close()` (the extension's unload) or at exit; no
mount of the agent reaches it.
"""

from __future__ import annotations

import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from jupyter_deepagent.jupyter.notebook_fs.paged_text import PagedText, Piece
from jupyter_deepagent.project.secrets.redaction import Redactor

__all__ = ["PagedTextStore", "PiecesOf"]

PiecesOf = Callable[[], tuple[list[Piece], int]]
"""Returns a text as pieces of whole lines and the bytes of separators between them."""


class PagedTextStore:
    """Masked texts by path, made on first need and kept until their content changes.

    Args:
        max_bytes: Bytes of text kept in all (least recently used texts dropped first).
    """

    def __init__(self, max_bytes: int = 2_000_000_000) -> None:
        self.max_bytes = max_bytes
        self._texts: OrderedDict[str, tuple[Hashable, PagedText]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    @property
    def folder(self) -> str | None:
        """The private folder of the spill files, once one was needed."""
        return self._folder.name if self._folder is not None else None

    def _spill_folder(self) -> str:
        with self._lock:
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="deepagent-notebook-")
            return self._folder.name

    def get(
        self, path: str, key: Hashable, pieces: PiecesOf, redact: Redactor, fingerprint: int
    ) -> PagedText:
        """The kept text of `path` if its `key` and the secrets are unchanged, else a new one.

        Args:
            path: The file the text belongs to.
            key: Changes whenever the content changes (lengths and hashes of its parts).
            pieces: Gives the text, called only when a new one is made.
            redact: The masking to use for a new text.
            fingerprint: `redact.fingerprint()` (which secrets it masks), computed once by the
                caller for many files.
        """
        wanted = (key, fingerprint)
        with self._lock:
            found = self._texts.get(path)
            if found is not None and found[0] == wanted:
                self._texts.move_to_end(path)
                return found[1]
        parts, separators = pieces()
        made = PagedText(parts, redact, self._spill_folder, separators)
        dropped: list[PagedText] = []
        with self._lock:
            found = self._texts.get(path)
            if found is not None and found[0] == wanted:  # another thread made it meanwhile
                dropped.append(made)
                made = found[1]
            else:
                if found is not None:
                    dropped.append(found[1])
                    self._bytes -= found[1].size
                self._texts[path] = (wanted, made)
                self._bytes += made.size
            while self._bytes > self.max_bytes and len(self._texts) > 1:
                _, (_, old) = self._texts.popitem(last=False)
                self._bytes -= old.size
                dropped.append(old)
        for text in dropped:
            text.close()
        return made

    def spilled_bytes(self) -> int:
        """Bytes of masked text the kept texts hold (in spill files, or in memory when small)."""
        with self._lock:
            return sum(text.spilled_bytes for _, text in self._texts.values())

    def close(self) -> None:
        """Drop every text and remove the spill folder."""
        with self._lock:
            texts = [text for _, text in self._texts.values()]
            self._texts.clear()
            self._bytes = 0
            folder, self._folder = self._folder, None
        for text in texts:
            text.close()
        if folder is not None:
            folder.cleanup()
