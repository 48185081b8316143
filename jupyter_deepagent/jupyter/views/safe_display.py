"""Displays of text the model or agent wrote: HTML the page shows but never runs, and the text as
written for terminals.

`SafeHTML` carries HTML the kernel rendered and cleaned (`trace.safe_html`) with its `text/plain`
twin; `markdown` makes one from Markdown; `FrameDisplay` shows a DataFrame of such text out of
MathJax's reach; `code_span` quotes any text as Markdown code. None of them imports IPython.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from jupyter_deepagent.trace.safe_html import markdown_html

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FrameDisplay", "SafeHTML", "code_span", "markdown"]


class SafeHTML:
    """Text for the page as HTML the kernel rendered and cleaned (`text/html`), and the text
    itself (`text/plain`) for terminals and viewers that show no HTML.

    Args:
        html: Cleaned HTML (from `markdown_html` or `clean_html`); never model text as is.
        plain: The text as written.
        metadata: The output's metadata (`{"jupyter_deepagent": {...}}`).
    """

    def __init__(self, html: str, plain: str, metadata: Mapping[str, object] | None = None) -> None:
        self.html = html
        self.plain = plain
        self.metadata = metadata or {}

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], Mapping[str, object]]:
        return {"text/html": self.html, "text/plain": self.plain}, self.metadata


class FrameDisplay:
    """A DataFrame (subagent results, an `/outputs/*.csv`) as `trace.results.frame_html` shows
    it: captioned with the variable that holds it, within the cell's width, every cell escaped
    and the whole cleaned, inside a `mathjax_ignore` block (a `$` in a cell stays a `$`).

    Args:
        frame: The DataFrame.
        metadata: The output's metadata (an `/outputs/` file's path).
        caption: The name of the variable that holds the frame (`agent_results`), or None.
    """

    def __init__(
        self,
        frame: pd.DataFrame,
        metadata: Mapping[str, object] | None = None,
        *,
        caption: str | None = None,
    ) -> None:
        self.frame = frame
        self.metadata = metadata or {}
        self.caption = caption

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, str], Mapping[str, object]]:
        from jupyter_deepagent.trace.results import frame_html

        plain = repr(self.frame)
        if self.caption:
            plain = f"{self.caption}:\n{plain}"
        return {"text/plain": plain, "text/html": frame_html(self.frame, self.caption)}, (
            self.metadata
        )


def markdown(text: str, metadata: Mapping[str, object] | None = None) -> SafeHTML:
    """Markdown (the model's, an agent-written file's, or the kernel's own tables naming threads
    and users) as an object `display()` shows as safe HTML, and as the text in a terminal."""
    return SafeHTML(markdown_html(text), text, metadata)


def code_span(text: str) -> str:
    """`text` as a Markdown code span whatever backticks it holds (a tool name, arguments)."""
    if not text:
        return "` `"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    padded = text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ")
    return f"{fence} {text} {fence}" if padded else f"{fence}{text}{fence}"
