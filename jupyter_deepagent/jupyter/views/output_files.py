"""The `/outputs/` files under a cell's answer: each shown as what it is, under a caption naming
its path, in the order the run wrote them.

`output_displays` turns every file into something `IPython.display.display` shows (and the
notebook saves with the cell): formatted text for `.md`, a DataFrame for `.csv`, an image for
`.svg` (in an `<img>`, where it runs no script) and for `.png`/`.jpg` written as base64 text,
HTML, JSON, and plain text for anything else. `show_files` places them, each under its caption.

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
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_deepagent.events import FILE_WRITTEN, MODEL_CALL
from jupyter_deepagent.jupyter.views.safe_display import FrameDisplay
from jupyter_deepagent.trace.safe_html import clean_page_html, markdown_html

__all__ = ["fitted_height", "output_displays", "show_files", "written_order"]

_MimeBundle = dict[str, object]
"""A display's data (MIME type -> content) or metadata, as `_repr_mimebundle_` returns them."""

_IMAGE_SIGNATURES = {
    "image/png": b"\x89PNG\r\n\x1a\n",
    "image/jpeg": b"\xff\xd8\xff",
}
_IMAGE_TYPES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg"}
_WRITING_TOOLS = ("write_file", "edit_file")


# -- one display per file ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Bundle:
    """A ready-made MIME bundle for `display()`; its text/plain is what a terminal shows."""

    data: _MimeBundle
    metadata: _MimeBundle

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[_MimeBundle, _MimeBundle]:
        return self.data, self.metadata


def _suffix(path: str) -> str:
    name = path.rsplit("/", 1)[-1]
    return "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""


def _image(path: str, text: str, mime: str, meta: _MimeBundle) -> _Bundle:
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


def _svg(path: str, text: str, meta: _MimeBundle) -> _Bundle:
    """An SVG file as an image: an `<img>` of it, where a browser runs none of its script and
    loads nothing it names. Not as `image/svg+xml`, which the classic Notebook puts into the page
    itself, where its `<script>` or `onload` would run (and reach the kernel)."""
    encoded = base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")
    tag = f'<img src="data:image/svg+xml;base64,{encoded}" alt="{html.escape(path)}">'
    return _Bundle({"text/html": tag, "text/plain": f"[SVG image {path}]"}, meta)


def _table(path: str, text: str, meta: _MimeBundle) -> FrameDisplay | _Bundle:
    import io

    import pandas as pd

    try:
        return FrameDisplay(pd.read_csv(io.StringIO(text)), meta)
    except (ValueError, pd.errors.ParserError) as exc:
        return _Bundle({"text/plain": f"[{path}: not readable as CSV ({exc})]\n{text}"}, meta)


def _json(path: str, text: str, meta: _MimeBundle) -> _Bundle:
    try:
        value = json.loads(text)
        pretty = json.dumps(value, indent=2, ensure_ascii=False)
    except ValueError as exc:
        return _Bundle({"text/plain": f"[{path}: not valid JSON ({exc})]\n{text}"}, meta)
    except RecursionError:  # nested deeper than Python's parser goes: shown as the text it is
        note = f"[{path}: JSON nested too deeply to show as a tree; shown as text]"
        return _Bundle({"text/plain": f"{note}\n{text}"}, meta)
    data: _MimeBundle = {"text/plain": pretty}
    if isinstance(value, (dict, list)):
        data["application/json"] = value
    return _Bundle(data, meta)


def output_displays(files: dict[str, str], mount: str = "/outputs") -> list[tuple[str, object]]:
    """One displayable object per file, as `(full path, object)`, in path order.

    Args:
        files: Path inside the mount -> text, as `OutputsBackend.files` gives them.
        mount: The folder the files are mounted at, used to name them.
    """
    shown: list[tuple[str, object]] = []
    for inner, text in sorted(files.items()):
        path = mount.rstrip("/") + inner
        meta: _MimeBundle = {"jupyter_deepagent": {"path": path}}
        suffix = _suffix(path)
        obj: FrameDisplay | _Bundle
        if suffix in (".md", ".markdown"):
            obj = _Bundle({"text/html": markdown_html(text), "text/plain": text}, meta)
        elif suffix == ".csv":
            obj = _table(path, text, meta)
        elif suffix in _IMAGE_TYPES:
            obj = _image(path, text, _IMAGE_TYPES[suffix], meta)
        elif suffix == ".svg":
            obj = _svg(path, text, meta)
        elif suffix in (".html", ".htm"):
            page = _sandboxed_html(clean_page_html(text))
            obj = _Bundle({"text/html": page, "text/plain": f"[HTML {path}]"}, meta)
        elif suffix == ".json":
            obj = _json(path, text, meta)
        else:
            obj = _Bundle({"text/plain": text}, meta)
        shown.append((path, obj))
    return shown


# -- an HTML page in a sandboxed frame ---------------------------------------------------------

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


def _sandboxed_html(page: str, height: str | None = None) -> str:
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


# -- the files under the answer ----------------------------------------------------------------


def _show(obj: object) -> None:
    from IPython.display import display

    display(obj)


class _Caption:
    """The line above an `/outputs/` file naming it."""

    def __init__(self, path: str) -> None:
        self.path = path

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[_MimeBundle, _MimeBundle]:
        from jupyter_deepagent.trace.safe_html import clean_html

        caption = (  # the agent chose the name: escaped, and cleaned inside the caption's own box
            '<div style="font-family: var(--jp-ui-font-family, sans-serif); font-size: 12px; '
            "color: var(--jp-ui-font-color2, #5f6368); border-top: 1px solid "
            'var(--jp-border-color2, #dadce0); padding-top: 4px; margin-top: 4px">'
            f"{clean_html(f'<code>{html.escape(self.path)}</code>')}</div>"
        )
        return (
            {"text/html": caption, "text/plain": f"── {self.path} ──"},
            {"jupyter_deepagent": {"caption": self.path}},
        )


def _called_paths(event: Mapping[str, object]) -> list[object]:
    """The `file_path` of each `write_file`/`edit_file` call in a `model_call` event's reply."""
    reply: Any = event.get("reply") or {}  # `message_to_dict`'s JSON, read as it comes
    data = reply.get("data") or {}
    return [
        (call.get("args") or {}).get("file_path")
        for call in data.get("tool_calls") or []
        if call.get("name") in _WRITING_TOOLS
    ]


def written_order(events: Iterable[Mapping[str, object]], mount: str = "/outputs/") -> list[str]:
    """Paths under `mount` in the order the run wrote them: the order of the `write_file` and
    `edit_file` calls in the model's replies (calls of one reply run concurrently, so the order
    they finish in, which `file_written` events follow, changes from run to run; their order in
    the reply does not). When there are `file_written` events, only the files they name count."""
    events = list(events)
    written = [e.get("path") for e in events if e.get("type") == FILE_WRITTEN]
    called: list[object] = []
    for event in events:
        if event.get("type") == MODEL_CALL:
            called += _called_paths(event)
    done = set(written) if written else set(called)
    order: list[str] = []
    for path in [*called, *written]:
        if isinstance(path, str) and path in done and path.startswith(mount) and path not in order:
            order.append(path)
    return order


def show_files(
    displays: list[tuple[str, object]],
    *,
    rich: bool,
    order: Iterable[str] = (),
    place: Callable[[object], None] | None = None,
) -> None:
    """The `/outputs/` files (from `output_displays`), each under a caption naming its path, in
    the order they were written (`order`; files not in it follow by path)."""
    place = place or _show
    rank = {path: index for index, path in enumerate(order)}
    ordered = sorted(displays, key=lambda item: (rank.get(item[0], len(rank)), item[0]))
    for path, obj in ordered:
        if rich:
            place(_Caption(path))
        else:
            print(f"── {path} ──")
        place(obj)
