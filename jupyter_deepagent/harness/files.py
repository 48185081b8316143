"""Reading whole text files through any backend (memory files, skills)."""

from __future__ import annotations

from jupyter_deepagent.backends.protocol import BackendProtocol

__all__ = ["read_text"]

_PAGE = 5000


def read_text(backend: BackendProtocol, path: str) -> str:
    """The whole text of a file, paging through `backend.read`.

    Raises:
        BackendError: the file is missing, binary, too large or the path is invalid.
    """
    lines: list[str] = []
    offset = 0
    while True:
        page = backend.read(path, offset=offset, limit=_PAGE)
        lines.extend(page.lines)
        if page.next_offset is None:
            return "\n".join(lines)
        offset = page.next_offset
