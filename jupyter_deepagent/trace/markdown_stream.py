"""A streamed answer as safe HTML, rendered again at a cost that follows its last block only.

While the model writes, the text only grows at its end, so every top-level Markdown block before
the last one is done once the last one has started after a blank line: `MarkdownStream` renders
and cleans such blocks once and keeps their HTML; each `html()` parses and cleans only the text
after them. Reference definitions seen so far still apply to later links. The HTML is for
display while the text streams in; the finished text is rendered whole (`markdown_html`), which
settles the few cases where a later line changes an earlier block (a definition for an earlier
`[link]`, a list item continued after a paragraph).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from jupyter_deepagent.trace.safe_html import clean_html, markdown_parser, wrap_html

if TYPE_CHECKING:
    from markdown_it.token import Token

__all__ = ["MarkdownStream"]

_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class MarkdownStream:
    """The Markdown text of one model call as it streams in, and its HTML so far."""

    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._done_at = 0  # characters of the text whose blocks are rendered in `_done_html`
        self._done_html: list[str] = []
        self._references: dict[str, object] = {}  # reference definitions in the blocks done

    @property
    def text(self) -> str:
        """The text so far."""
        if len(self._pieces) > 1:
            self._pieces = ["".join(self._pieces)]
        return self._pieces[0] if self._pieces else ""

    def append(self, piece: str) -> None:
        """Add text at the end."""
        self._pieces.append(piece)

    def html(self) -> str:
        """The text so far as cleaned HTML, in the `mathjax_ignore` block."""
        text = self.text
        tail = text[self._done_at :]
        parser = markdown_parser()
        env = {"references": dict(self._references)}
        tokens = parser.parse(tail, env)
        cut = self._last_block(tail, tokens)
        if cut is not None:
            index, offset = cut
            done = parser.renderer.render(tokens[:index], parser.options, env)
            self._done_html.append(clean_html(done, wrap=False))
            learnt = {"references": dict(self._references)}
            parser.parse(tail[:offset], learnt)  # the definitions in the blocks now done
            self._references = learnt["references"]
            self._done_at += offset
            tokens = tokens[index:]
        live = clean_html(parser.renderer.render(tokens, parser.options, env), wrap=False)
        return wrap_html("".join(self._done_html) + live)

    @staticmethod
    def _last_block(tail: str, tokens: Sequence[Token]) -> tuple[int, int] | None:
        """(token index, character offset in `tail`) of the last top-level block, when the blocks
        before it can no longer change: it starts after a blank line, at the line's first
        column (so it continues no list, quote or indented code before it)."""
        starts = [
            (i, t.map[0])
            for i, t in enumerate(tokens)
            if t.level == 0 and t.nesting >= 0 and t.map is not None
        ]
        if len(starts) < 2:
            return None
        index, line = starts[-1]
        offset, previous = 0, ""
        breaks = _LINE_BREAK.finditer(tail)
        for _ in range(line):
            found = next(breaks, None)
            if found is None:
                return None
            previous = tail[offset : found.start()]
            offset = found.end()
        if previous.strip() or offset >= len(tail) or tail[offset] in " \t":
            return None
        return index, offset
