"""`/outputs/`: files the agent writes for the cell it runs in, shown there when the run ends.

Each `%%agent` cell gets a fresh `OutputsBackend`. When the run ends, `output_displays` turns
every file into something `IPython.display.display` shows (and the notebook saves with the cell):
formatted text for `.md`, a DataFrame for `.csv`, an image for `.svg` and for `.png`/`.jpg`
written as base64 text, HTML, JSON, and plain text for anything else.

What the agent writes is shown as untrusted: Markdown is rendered to HTML in the kernel with its
raw HTML shown as text, then cleaned (`trace.safe_html.markdown_html`); an HTML page is cleaned
the same way (keeping its stylesheets: `clean_page_html`) and shown inside a sandboxed frame
where no script runs.
"""

from __future__ import annotations

import base64
import binascii
import html
import json
import re
from dataclasses import dataclass
from typing import Any

from jupyter_deepagent.backends import is_within, normalize_virtual_path
from jupyter_deepagent.backends.state import FileData, FileMapBackend
from jupyter_deepagent.jupyter.views.safe_display import FrameDisplay
from jupyter_deepagent.trace.safe_html import clean_page_html, markdown_html

__all__ = ["OutputsBackend", "fitted_height", "output_displays", "sandboxed_html"]

_IMAGE_SIGNATURES = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
}
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}


class OutputsBackend(FileMapBackend):
    """Text files kept in memory for one cell (not checkpointed: they live in the cell's output)."""

    def __init__(self) -> None:
        self._files: dict[str, FileData] = {}

    @property
    def files(self) -> dict[str, str]:
        """Path (inside the mount, e.g. `/summary.md`) -> text, sorted by path."""
        return {path: self._files[path]["content"] for path in sorted(self._files)}

    def _get(self, path: str) -> FileData | None:
        return self._files.get(path)

    def _put(self, path: str, data: FileData) -> None:
        self._files[path] = data

    def _drop(self, path: str) -> None:
        self._files.pop(path, None)

    def _files_under(self, folder: str) -> dict[str, FileData]:
        return {p: d for p, d in self._files.items() if p != folder and is_within(p, folder)}

    def read_text(self, path: str) -> str:
        """The whole text of a file, as written (the agent reads it through a `MaskedFolder`).

        Raises:
            FileNotFound: If there is no file at `path`.
            InvalidPath: If `path` is malformed or a folder.
        """
        return self._text(normalize_virtual_path(path))


@dataclass(frozen=True)
class _Bundle:
    """A ready-made MIME bundle for `display()`; its text/plain is what a terminal shows."""

    data: dict[str, Any]
    metadata: dict[str, Any]

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> tuple[dict, dict]:
        return self.data, self.metadata


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _image(path: str, text: str, mime: str, meta: dict[str, Any]) -> _Bundle:
    encoded = "".join(text.split())
    if encoded.startswith("data:") and "," in encoded:
        encoded = encoded.split(",", 1)[1]
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raw = b""
    if not raw.startswith(_IMAGE_SIGNATURES[mime]):
        note = f"[{path}: not a base64-encoded {mime.split('/')[1].upper()} image; shown as text]"
        return _Bundle({"text/plain": f"{note}\n{text[:2000]}"}, meta)
    label = f"[image {path}, {len(raw) / 1000:.1f} kB]"
    return _Bundle({mime: base64.b64encode(raw).decode("ascii"), "text/plain": label}, meta)


def _table(path: str, text: str, meta: dict[str, Any]) -> Any:
    import io

    import pandas as pd

    try:
        return FrameDisplay(pd.read_csv(io.StringIO(text)), meta)
    except (ValueError, pd.errors.ParserError) as exc:
        return _Bundle({"text/plain": f"[{path}: not readable as CSV ({exc})]\n{text}"}, meta)


def output_displays(files: dict[str, str], mount: str = "/outputs") -> list[tuple[str, Any]]:
    """One displayable object per file, as `(full path, object)`, in path order.

    Args:
        files: Path inside the mount -> text, as `OutputsBackend.files` gives them.
        mount: The folder the files are mounted at, used to name them.
    """
    shown = []
    for inner, text in sorted(files.items()):
        path = mount.rstrip("/") + inner
        meta = {"jupyter_deepagent": {"path": path}}
        suffix = _suffix(path)
        obj: Any
        if suffix in (".md", ".markdown"):
            obj = _Bundle({"text/html": markdown_html(text), "text/plain": text}, meta)
        elif suffix == ".csv":
            obj = _table(path, text, meta)
        elif suffix in _IMAGE_TYPES:
            obj = _image(path, text, _IMAGE_TYPES[suffix], meta)
        elif suffix == ".svg":
            obj = _Bundle({"image/svg+xml": text, "text/plain": f"[SVG image {path}]"}, meta)
        elif suffix in (".html", ".htm"):
            page = sandboxed_html(clean_page_html(text))
            obj = _Bundle({"text/html": page, "text/plain": f"[HTML {path}]"}, meta)
        elif suffix == ".json":
            obj = _json(path, text, meta)
        else:
            obj = _Bundle({"text/plain": text}, meta)
        shown.append((path, obj))
    return shown


_BLOCKS = re.compile(r"<(?:p|div|tr|li|h[1-6]|br|hr|pre|table|section|blockquote)\b", re.I)
_TAGS = re.compile(r"<[^>]*>")


def fitted_height(page: str, *, least: float = 4.0, most: float = 36.0) -> str:
    """A frame height for `page` that follows its content, from `least` to `most` em.

    The frame runs no script, so its content cannot be measured in the browser: the height is
    estimated from the page's block elements and text (about 90 characters a line).
    """
    text = " ".join(_TAGS.sub(" ", page).split())
    lines = len(_BLOCKS.findall(page)) + len(text) / 90
    return f"{min(max(lines * 1.6 + 2.0, least), most):.1f}em"


_FRAME_POLICY = (
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; img-src data:; font-src data:\">"
)


def sandboxed_html(page: str, height: str | None = None) -> str:
    """HTML that shows `page` inside a sandboxed frame: no scripts, no access to the notebook.

    The frame's `sandbox` attribute grants nothing (no `allow-scripts`, no `allow-same-origin`),
    so the page's own scripts, handlers and forms stay inert while its layout and styles show;
    and its content security policy lets it load nothing from anywhere (images and fonts only
    from `data:`), so a stylesheet's `url(...)` cannot tell another server what the page holds.
    Its height fits the content (`fitted_height`) unless given; the user can resize it.
    """
    height = height or fitted_height(page)
    source = html.escape(_FRAME_POLICY + page, quote=True)
    return (
        f'<iframe sandbox="" srcdoc="{source}" referrerpolicy="no-referrer" '
        f'style="width: 100%; height: {height}; border: 1px solid #d0d0d0; resize: vertical;">'
        "</iframe>"
    )


def _json(path: str, text: str, meta: dict[str, Any]) -> _Bundle:
    try:
        value = json.loads(text)
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
    except ValueError as exc:
        return _Bundle({"text/plain": f"[{path}: not valid JSON ({exc})]\n{text}"}, meta)
    except RecursionError:  # nested deeper than Python's parser goes: shown as the text it is
        note = f"[{path}: JSON nested too deeply to show as a tree; shown as text]"
        return _Bundle({"text/plain": f"{note}\n{text}"}, meta)
    data: dict[str, Any] = {"text/plain": pretty}
    if isinstance(value, (dict, list)):
        data["application/json"] = value
    return _Bundle(data, meta)
