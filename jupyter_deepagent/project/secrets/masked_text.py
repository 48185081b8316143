"""Reading, searching and editing text as the agent sees it: with its secrets masked.

If a search matched the real text and only the lines it returned were masked, the agent could
still learn a key one character at a time (`grep("AIzaSyA[0-M]", regex=True)`: a match or
none); if an edit matched the real text, `edit(old="AIza", new="AIza~", replace_all=True)` would
break the key's exact spelling so that nothing masks it any more. So here every match runs on
the masked text, and an edit is refused when a line it touches holds a mask (`***`): its match
can then be neither inside a secret nor in the context that marks one (`password = "..."`
stays masked only while `password` is there).

Masks never cross a line break, so the masked text has the lines of the real one, and a match
on a line without a mask has the same position in both.

A text the agent wrote itself is given back as written, unmasked: the agent knows it already,
so masking it could protect nothing and would only tell which of its words are secrets (write
a word list, grep it for `***`). `AgentTexts` records the digest of each such text with the
file it was written to: that file (by its identity on disk, so a link to it or another spelling
of its name is the same file) is read back unmasked while its content is exactly that text. A
file the agent did not write is masked whatever its content, so writing a guess elsewhere tells
nothing about a file that might hold it; a file whose content changed since (the user, the kernel
or a tool changed it) is masked again.
"""

from __future__ import annotations

import bisect
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from jupyter_deepagent._exceptions import EditConflict, PermissionDenied
from jupyter_deepagent.backends import grep_texts
from jupyter_deepagent.backends.protocol import GrepMatch
from jupyter_deepagent.project.secrets.redaction import MASK, Redactor, Span, apply_masks, merged

__all__ = ["AgentTexts", "MaskedText", "MaskedTexts", "file_identity", "masked_grep", "masked_text"]


@dataclass(frozen=True)
class MaskedText:
    """A text as the agent sees it, and where its masks are in the real text."""

    raw: str
    spans: list[Span]
    text: str

    def _placeholders(self) -> list[Span]:
        """Where each `***` lies in the masked text."""
        found, shift = [], 0
        for start, end in self.spans:
            at = start - shift
            found.append((at, at + len(MASK)))
            shift += (end - start) - len(MASK)
        return found

    def _raw_position(self, masked_at: int, placeholders: list[Span]) -> int:
        """The real position of a masked position that lies outside every mask."""
        before = bisect.bisect_right([p[1] for p in placeholders], masked_at)
        shift = sum((end - start) - len(MASK) for start, end in self.spans[:before])
        return masked_at + shift

    def edited(self, path: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
        """Apply an exact-text edit found in the masked text to the real text.

        Args:
            path: The file's path, for messages.
            old: Text to find in the masked text (what the agent read).
            new: Its replacement.
            replace_all: Replace every occurrence instead of requiring exactly one.

        Returns:
            `(new real text, replacements)`.

        Raises:
            EditConflict: If `old` is empty, not found, or found more than once without
                `replace_all` (counted in the masked text).
            PermissionDenied: If a line the edit touches holds a masked secret.
        """
        if not old:
            msg = (
                f"Cannot edit {path}: the text to replace is empty. Give the exact text to change."
            )
            raise EditConflict(msg, path=path, matches=0)
        found = []
        at = self.text.find(old)
        while at != -1:
            found.append(at)
            at = self.text.find(old, at + len(old))
        if not found:
            msg = (
                f"The text to replace was not found in {path}. Read the file and copy the text "
                "exactly, including whitespace and indentation."
            )
            raise EditConflict(msg, path=path, matches=0)
        if len(found) > 1 and not replace_all:
            msg = (
                f"The text to replace was found {len(found)} times in {path}; give more "
                "surrounding context to make it unique, or pass replace_all=True."
            )
            raise EditConflict(msg, path=path, matches=len(found))
        placeholders = self._placeholders()
        for at in found:
            first = self.text.rfind("\n", 0, at) + 1
            last = self.text.find("\n", at + len(old))
            last = len(self.text) if last == -1 else last
            if any(start < last and end > first for start, end in placeholders):
                msg = (
                    f"Cannot edit {path} there: a line this edit touches holds a secret shown "
                    f"as {MASK}, and lines holding a secret cannot be changed by the agent. Edit "
                    "other lines, or ask the user to change this one."
                )
                raise PermissionDenied(msg, path=path)
        parts, position = [], 0
        for at in found:
            real = self._raw_position(at, placeholders)
            parts += [self.raw[position:real], new]
            position = real + len(old)
        parts.append(self.raw[position:])
        return "".join(parts), len(found)


def _line_spans(text: str, redact: Callable[[str], str]) -> list[Span]:
    """Spans for a plain masking function: every whole line it would change."""
    spans, position = [], 0
    for line in text.split("\n"):
        if line and redact(line) != line:
            spans.append((position, position + len(line)))
        position += len(line) + 1
    return spans


def masked_text(raw: str, redact: Callable[[str], str] | None) -> MaskedText:
    """`raw` masked by `redact` (a `Redactor` gives exact spans; any other function masks whole
    lines it would change)."""
    if redact is None or not raw:
        return MaskedText(raw, [], raw)
    if isinstance(redact, Redactor):
        spans = redact.spans(raw)
    else:
        spans = merged(_line_spans(raw, redact))
    return MaskedText(raw, spans, apply_masks(raw, spans))


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=20).digest()


def file_identity(path: str | os.PathLike[str]) -> tuple[int, int, int] | None:
    """The file at `path` as the disk knows it (device, inode and the time its inode last
    changed: the same through a link or another spelling of its name, another once the file is
    replaced, rewritten or its inode reused), or None when there is none."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return found.st_dev, found.st_ino, found.st_ctime_ns


class AgentTexts:
    """The texts the agent wrote itself, each with the file it wrote it to (`place`: a file's
    identity): that file is read back as written while it holds exactly that text.

    A text counts only in the file it was written to: the same content elsewhere (the user's
    file, which the agent guessed) is not the agent's, or a guess written to a scratch file
    would unmask, or unlock for changes, any file it matched. Kept by the session for
    `/workspace/`, so a file the agent wrote in an earlier run of the kernel is still its own; a
    file whose text changed since is not.
    """

    def __init__(self) -> None:
        self._written: dict[Hashable, bytes] = {}
        self._lock = threading.Lock()

    def wrote(self, place: Hashable | None, text: str) -> None:
        """Record that the agent wrote the whole of `text` (it knows every word) to `place`
        (None: a file that cannot be named, recorded nowhere); only its last text counts."""
        if place is None:
            return
        with self._lock:
            self._written[place] = _digest(text)

    def forget(self, place: Hashable | None) -> None:
        """Record that someone else wrote the file at `place`, or that it is gone: a file made
        there later is not the agent's, whatever it holds."""
        with self._lock:
            self._written.pop(place, None)

    def is_own(self, place: Hashable | None, raw: str) -> bool:
        """Whether `raw`, the whole text of the file at `place`, is exactly what the agent last
        wrote there."""
        if place is None:
            return False
        with self._lock:
            return self._written.get(place) == _digest(raw)


class MaskedTexts:
    """The masked texts of the files read last, kept until their content or the secrets change
    (paging through a big file masks it once); a text the agent wrote to a file (`own`) is given
    back as written there.

    Args:
        max_chars: Characters of real text kept in all (least recently used dropped first).
        own: The texts the agent wrote (by default, a record of this object's own).
        place: The identity of the file at a path (`file_identity` for files on disk); by
            default the path itself (a folder where each file has one name).
    """

    def __init__(
        self,
        max_chars: int = 64_000_000,
        own: AgentTexts | None = None,
        place: Callable[[str], Hashable | None] | None = None,
    ) -> None:
        self.max_chars = max_chars
        self.own = own if own is not None else AgentTexts()
        self.place: Callable[[str], Hashable | None] = place or _same_path
        self._kept: OrderedDict[tuple[str, int, int, int], MaskedText] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()

    def wrote(self, path: str, text: str, *, replaced: Hashable | None = None) -> None:
        """Record that the agent wrote the whole of `text` to `path` (call it after the write:
        a file replaced atomically is a new file); `replaced` is the file it replaced (its
        `place` before the write), forgotten, since the disk may give its identity to another."""
        self.own.forget(replaced)
        self.own.wrote(self.place(path), text)

    def forget(self, path: str) -> None:
        """Record that someone else wrote the file at `path`, or that it is gone (call it before
        a delete: a gone file has no identity on disk)."""
        self.own.forget(self.place(path))

    def owns(self, path: str, raw: str) -> bool:
        """Whether `raw`, the file at `path`'s whole text, is exactly what the agent wrote there
        (an edit of such a text leaves the agent's own text: ask before the edit is written)."""
        return self.own.is_own(self.place(path), raw)

    def get(self, path: str, raw: str, redact: Callable[[str], str] | None) -> MaskedText:
        """`masked_text(raw, redact)`, from the cache when this text was masked the same way;
        `raw` itself when it is the text the agent wrote at `path`."""
        if self.owns(path, raw):
            return MaskedText(raw, [], raw)
        secrets = redact.fingerprint() if isinstance(redact, Redactor) else id(redact)
        key = (path, len(raw), hash(raw), secrets)
        with self._lock:
            found = self._kept.get(key)
            if found is not None:
                self._kept.move_to_end(key)
                return found
        made = masked_text(raw, redact)
        with self._lock:
            if key not in self._kept and len(raw) <= self.max_chars:
                self._kept[key] = made
                self._chars += len(raw)
            while self._chars > self.max_chars and self._kept:
                self._chars -= len(self._kept.popitem(last=False)[1].raw)
        return made


def _same_path(path: str) -> str:
    return path


def masked_grep(
    pattern: str,
    files: Iterable[tuple[str, str]],
    root: str,
    mask: Callable[[str, str], str],
    file_glob: str | None = None,
    regex: bool = False,
) -> list[GrepMatch]:
    """`grep_texts` over the masked texts of `(path, real text)` files; `mask(path, real)`
    gives the masked text.

    A literal pattern without `*` can only be found in a masked text where it is found in the
    real one (a mask is `***`), so files without it in their real text are not masked at all.
    """
    literal_skip = not regex and "*" not in pattern

    def texts() -> Iterable[tuple[str, str]]:
        for path, raw in files:
            if literal_skip and pattern not in raw:
                continue
            yield path, mask(path, raw)

    return grep_texts(pattern, texts(), root, file_glob=file_glob, regex=regex)
