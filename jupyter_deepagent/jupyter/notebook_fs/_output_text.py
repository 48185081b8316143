"""Jupyter outputs (kernel messages, saved nbformat outputs, IPython history) as text records.

Kernel messages and nbformat outputs share one shape (`stream` name/text, `data`/`metadata`
bundles, `ename`/`evalue`/`traceback`), so one set of functions serves the live capture and the
saved notebook. Images become a one-line note (type, pixel size, bytes), never base64.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from IPython.core.history import HistoryManager

__all__ = [
    "LiveCell",
    "LiveOutput",
    "OutputContent",
    "OutputKind",
    "OutputRecord",
    "clean_stream_text",
    "format_outputs",
    "history_outputs",
    "joined",
    "output_pieces",
    "output_record",
    "outputs_key",
]

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_OVERWRITTEN = re.compile(r"[^\n]*\r(?=[^\r\n])")
_RELOAD_NOTICE = re.compile(
    r"^The \S+ extension is already loaded\. To reload it, use:\n  %reload_ext \S+\n", re.M
)
"""IPython's notice when `%load_ext` runs again: about the kernel's state, not the cell's result,
printed only on a re-run (so the second pass of Run All would show the agent another notebook)."""
_TEXT_FALLBACKS = ("text/markdown", "text/latex", "application/json")
_HISTORY_KINDS = {"out_stream": "stdout", "err_stream": "stderr"}
_STREAM_TEXTS: OrderedDict[int, tuple[list[object], int, str]] = OrderedDict()
"""IPython's latest stream outputs joined from their writes (by the list of writes, with how
many it had): reading a big output again neither joins it again nor hashes a new copy."""
_STREAM_TEXTS_KEPT = 32
_STREAM_TEXTS_CHARS = 200_000_000
_STREAM_TEXTS_LOCK = threading.Lock()
_IMAGE_PREFIX_CHARS = 87_384  # base64 of the first 64 KB: enough to find any header's size

OutputContent = Mapping[str, Any]
"""A kernel message's content or an nbformat output: JSON, its fields (`name`, `text`, `data`,
`metadata`, `ename`, `traceback`...) read one by one, each checked where it is used."""

OutputKind = Literal["stdout", "stderr", "result", "display", "error", "note"]
"""What an output is: a stream, the cell's result (`Out[n]`), a display, an error, or a note."""


@dataclass(frozen=True)
class OutputRecord:
    """One output of a cell, as text (images are a note such as `[image/png 640x480, 12 KB]`)."""

    kind: OutputKind
    text: str


def joined(value: object) -> str:
    """Return nbformat's multiline value (a str or a list of str) as one str."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(str(part) for part in value)
    return "" if value is None else str(value)


def _strip_ansi(text: str) -> str:
    """Remove terminal colour and cursor escape codes (tracebacks and logs are full of them)."""
    return _ANSI.sub("", text) if "\x1b" in text else text


def clean_stream_text(text: str) -> str:
    """Show stream text as a notebook does: escape codes gone, text overwritten by `CR` dropped.

    A progress bar that rewrites its line a thousand times leaves only its last state.
    """
    text = _strip_ansi(text)
    if "\r" not in text:
        return text
    return _OVERWRITTEN.sub("", text.replace("\r\n", "\n"))


def _human_bytes(size: int) -> str:
    """Format a byte count the way the notes show it: `512 B`, `12 KB`, `1.4 MB`."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{max(1, round(size / 1024))} KB"
    return f"{size / (1024 * 1024):.1f} MB"


def _jpeg_size(raw: bytes) -> tuple[int, int] | None:
    index = 2
    while index + 9 < len(raw):
        if raw[index] != 0xFF:
            return None
        marker = raw[index + 1]
        if marker == 0xFF:  # fill byte
            index += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            index += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", raw[index + 5 : index + 9])
            return width, height
        index += 2 + int.from_bytes(raw[index + 2 : index + 4], "big")
    return None


def _pixel_size(mime: str, raw: bytes) -> tuple[int, int] | None:
    if mime == "image/png" and raw[:8] == b"\x89PNG\r\n\x1a\n" and len(raw) >= 24:
        width, height = struct.unpack(">II", raw[16:24])
        return width, height
    if mime == "image/gif" and raw[:4] == b"GIF8" and len(raw) >= 10:
        width, height = struct.unpack("<HH", raw[6:10])
        return width, height
    if mime == "image/jpeg" and raw[:2] == b"\xff\xd8":
        return _jpeg_size(raw)
    return None


def _image_note(mime: str, data: object, metadata: Mapping[str, object] | None = None) -> str:
    """Describe an image output in one line, e.g. `[image/png 640x480, 12 KB]`.

    Args:
        mime: The image's MIME type.
        data: Base64 text for binary images, the document itself for SVG.
        metadata: The output's metadata; its `width`/`height` are used when the image's own
            header cannot be read.

    Returns:
        The note: MIME type, pixel size when known, and size in bytes.
    """
    text = joined(data)
    size_px: tuple[int, int] | None = None
    if mime == "image/svg+xml" or not mime.startswith("image/"):
        size = len(text.encode("utf-8"))
    else:
        compact = "".join(text.split())
        padding = len(compact) - len(compact.rstrip("="))
        size = len(compact) * 3 // 4 - padding
        prefix = compact[: _IMAGE_PREFIX_CHARS - _IMAGE_PREFIX_CHARS % 4]
        prefix = prefix[: len(prefix) - len(prefix) % 4]
        try:
            size_px = _pixel_size(mime, base64.b64decode(prefix))
        except (binascii.Error, ValueError, struct.error):
            size_px = None
    shown = (metadata or {}).get(mime) if isinstance(metadata, Mapping) else None
    if size_px is None and isinstance(shown, Mapping):
        width, height = shown.get("width"), shown.get("height")
        if isinstance(width, int) and isinstance(height, int):
            size_px = (width, height)
    dims = f" {size_px[0]}x{size_px[1]}" if size_px else ""
    return f"[{mime}{dims}, {_human_bytes(max(size, 0))}]"


def _bundle_text(data: Mapping[str, object], metadata: Mapping[str, object] | None = None) -> str:
    """Render a MIME bundle as text: `text/plain` (or Markdown, LaTeX, JSON) plus image notes.

    A bundle with neither text nor images (say, HTML only) is described by a note per type.
    """
    parts: list[str] = []
    plain = data.get("text/plain")
    if plain is not None:
        parts.append(_strip_ansi(joined(plain)))
    else:
        for mime in _TEXT_FALLBACKS:
            if mime in data:
                value = data[mime]
                is_text = isinstance(value, str | list)
                parts.append(joined(value) if is_text else json.dumps(value, default=str))
                break
    images = [mime for mime in data if mime.startswith("image/")]
    parts.extend(_image_note(mime, data[mime], metadata) for mime in images)
    if not parts:
        parts.extend(_image_note(mime, data[mime]) for mime in data)
    return "\n".join(part for part in parts if part)


def _error_text(content: OutputContent) -> str:
    """Render an error output: `Name: value`, then the traceback without escape codes."""
    head = f"{content.get('ename', 'Error')}: {content.get('evalue', '')}"
    frames = content.get("traceback") or []
    body = _strip_ansi("\n".join(joined(frame) for frame in frames)).strip("\n")
    return f"{head}\n{body}" if body else head


def format_outputs(outputs: list[OutputRecord]) -> str:
    """Join outputs into the text of an outputs file: `[stdout]`, `[result]`... then the text."""
    blocks = [f"[{output.kind}]\n{output.text.rstrip()}".rstrip() for output in outputs]
    return "\n".join(blocks) + "\n" if blocks else ""


def _stripped_end(text: str) -> int:
    """`len(text.rstrip())`, without copying a long text."""
    end = len(text)
    while end:
        tail = text[max(0, end - 4096) : end]
        kept = tail.rstrip()
        if kept:
            return end - len(tail) + len(kept)
        end -= len(tail)
    return 0


def output_pieces(
    outputs: list[OutputRecord], header: str | None = None
) -> tuple[list[tuple[str, int, int]], int]:
    """The text `format_outputs` makes (after a `header` line), as slices of the outputs' own
    strings, never joined: a 50 MB output is paged without a copy of it.

    Returns:
        `(pieces, separators)`: `(text, start, end)` slices, each of whole lines, whose lines
        in order are the lines of the formatted text; and the bytes of the `"\\n"` that join
        them (one after each piece).
    """
    pieces: list[tuple[str, int, int]] = []
    if header is not None:
        pieces.append((header, 0, len(header)))
    for output in outputs:
        label = f"[{output.kind}]"
        pieces.append((label, 0, len(label)))
        end = _stripped_end(output.text)
        if end:
            pieces.append((output.text, 0, end))
    return pieces, len(pieces)


def outputs_key(outputs: list[OutputRecord]) -> tuple[tuple[str, int, int], ...]:
    """Changes when the outputs change: each one's kind, length and hash (a string keeps its
    hash once computed, so asking again about the same outputs costs nothing)."""
    return tuple((output.kind, len(output.text), hash(output.text)) for output in outputs)


def output_record(output_type: str, content: OutputContent) -> OutputRecord | None:
    """Turn a kernel message or nbformat output (`stream`, `execute_result`...) into a record.

    Args:
        output_type: The message type or nbformat `output_type`.
        content: The message content, or the nbformat output itself.

    Returns:
        The record, or None for types that are not outputs.
    """
    if output_type == "stream":
        kind: OutputKind = "stderr" if content.get("name") == "stderr" else "stdout"
        return OutputRecord(kind, clean_stream_text(joined(content.get("text"))))
    if output_type in ("execute_result", "display_data", "update_display_data"):
        text = _bundle_text(content.get("data") or {}, content.get("metadata") or {})
        return OutputRecord("result" if output_type == "execute_result" else "display", text)
    if output_type == "error":
        return OutputRecord("error", _error_text(content))
    return None


def _stream_text(writes: object) -> str:
    """The text of one of IPython's stream outputs (a list of writes), cleaned, without a copy
    when one write holds it all (`print(text)` writes the text, then a line break that the
    outputs file drops anyway), else joined once and kept for the next calls."""
    if not isinstance(writes, list):
        return clean_stream_text(joined(writes))
    count = len(writes)
    while count > 1 and isinstance(writes[count - 1], str) and not writes[count - 1].strip():
        count -= 1  # trailing line breaks: format_outputs strips them
    if count == 1 and isinstance(writes[0], str):
        return clean_stream_text(writes[0])
    with _STREAM_TEXTS_LOCK:
        kept = _STREAM_TEXTS.get(id(writes))
        if kept is not None and kept[0] is writes and kept[1] == len(writes):
            _STREAM_TEXTS.move_to_end(id(writes))
            return kept[2]
    text = clean_stream_text(joined(writes))
    with _STREAM_TEXTS_LOCK:
        _STREAM_TEXTS[id(writes)] = (writes, len(writes), text)
        kept_chars = sum(len(entry[2]) for entry in _STREAM_TEXTS.values())
        while len(_STREAM_TEXTS) > 1 and (
            len(_STREAM_TEXTS) > _STREAM_TEXTS_KEPT or kept_chars > _STREAM_TEXTS_CHARS
        ):
            kept_chars -= len(_STREAM_TEXTS.popitem(last=False)[1][2])
    return text


def history_outputs(history: HistoryManager, count: int) -> list[OutputRecord]:
    """A cell's outputs as IPython's history manager kept them (no kernel needed).

    IPython 9 keeps streams, results and displays in `outputs` and errors in `exceptions`;
    IPython 8 only the results' reprs.

    Args:
        history: The shell's `history_manager`.
        count: The execution count.

    Returns:
        The records, in the order the cell produced them, the error last.
    """
    records: list[OutputRecord] = []
    record: OutputRecord | None
    by_count = getattr(history, "outputs", None)
    if isinstance(by_count, Mapping):
        for item in list(by_count.get(count) or ()):
            output_type, bundle = getattr(item, "output_type", ""), getattr(item, "bundle", {})
            if output_type in _HISTORY_KINDS:
                kind: OutputKind = "stderr" if output_type == "err_stream" else "stdout"
                record = OutputRecord(kind, _stream_text(bundle.get("stream")))
            else:
                record = output_record(output_type, {"data": bundle})
            if record is not None:
                records.append(record)
    else:  # IPython 8: only the results' reprs
        result = (getattr(history, "output_hist_reprs", None) or {}).get(count)
        if result is not None:
            records.append(OutputRecord("result", str(result)))
    error = (getattr(history, "exceptions", None) or {}).get(count)
    if isinstance(error, Mapping):
        records.append(OutputRecord("error", _error_text(error)))
    return records


@dataclass
class LiveOutput:
    """One output of a running cell as it grows: its kind, its parts, its display id."""

    kind: OutputKind
    parts: list[str]
    display_id: str | None = None


@dataclass
class LiveCell:
    """What the kernel sent for one execution so far (outputs, counted and capped)."""

    source: str | None = None
    cell_id: str | None = None
    seen_input: bool = False
    outputs: list[LiveOutput] = field(default_factory=list)
    clear_pending: bool = False
    chars: int = 0
    dropped: int = 0

    def records(self) -> list[OutputRecord]:
        """The outputs as records (streams cleaned), with a note of what was not kept."""
        records = []
        for output in self.outputs:
            text = "".join(output.parts)
            if output.kind in ("stdout", "stderr"):
                text = _RELOAD_NOTICE.sub("", clean_stream_text(text))
                if not text:
                    continue
            records.append(OutputRecord(output.kind, text))
        if self.dropped:
            note = f"{self.dropped:,} more characters of output were not recorded"
            records.append(OutputRecord("note", note))
        return records
