"""Run events as short text: the one-line pieces the cell view is made of (arguments, retries,
compression steps); durations and token counts are `trace.figures`', as every view
says them."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from jupyter_deepagent.events import OFFLOADED
from jupyter_deepagent.trace.figures import duration

if TYPE_CHECKING:
    from jupyter_deepagent.events import ModelRetryEvent, OffloadedEvent, SummarizedEvent

__all__ = [
    "compression_line",
    "retry_line",
    "short_args",
    "short_text",
]

_PATH_ARGS = ("file_path", "path")
_BODY_ARGS = ("content", "old_string", "new_string")


def short_text(value: object, limit: int = 60) -> str:
    """`value` (text, or any JSON value) on one line of at most `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def short_args(args: object, limit: int = 90) -> str:
    """A tool call's arguments (as `summarize_args` gives them) on one short line: paths bare,
    text bodies as their true size, lists as their length, other values as key=value."""
    if not isinstance(args, dict):
        return short_text(args, limit)
    parts = []
    for key, value in args.items():
        kind, size = _size(value)
        text = value["head"] if kind == "chars" and isinstance(value, dict) else value
        if key in _PATH_ARGS:
            parts.append(short_text(text))
        elif key in _BODY_ARGS and kind == "chars":
            parts.append(f"({size:,} chars)")
        elif kind == "items":
            parts.append(f"{key}=[{size:,} items]")
        else:
            parts.append(f"{key}={short_text(text, 40)}")
    return short_text(" ".join(parts), limit)


def _size(value: object) -> tuple[str | None, int]:
    """("chars", n) for a text, ("items", n) for a list, whole or as `summarize_args` cut it."""
    if isinstance(value, str):
        return "chars", len(value)
    if isinstance(value, list):
        return "items", len(value)
    if isinstance(value, dict) and len(value) == 2 and "head" in value:
        for kind in ("chars", "items"):
            count = value.get(kind)
            if isinstance(count, int):
                return kind, count
    return None, 0


def compression_line(event: OffloadedEvent | SummarizedEvent) -> str:
    """What an `offloaded` or `summarized` event did, in a few words."""
    if event["type"] == OFFLOADED:
        return f"{event.get('tool', 'result')} result saved to {event.get('path')}"
    before, after = event.get("tokens_before"), event.get("tokens_after")
    return f"summarized older messages ({before} → {after} tokens)"


def retry_line(event: ModelRetryEvent) -> str:
    """A `model_retry` event as "retrying in 2 s (attempt 2 of 3): ConnectError: ..."."""
    wait = float(event.get("wait") or 0)
    when = f"{wait:g} s" if wait >= 1 else duration(wait)
    attempt, attempts = int(event.get("attempt") or 1), event.get("attempts")
    line = f"retrying in {when} (attempt {attempt + 1} of {attempts})"
    if event.get("purpose") == "summarize":
        line = "summarizer " + line
    return f"{line}: {short_text(event.get('error', ''), 120)}"
