"""Markdown the agent wrote, made safe to render: its raw HTML is shown as text, never run.

JupyterLab renders Markdown produced in the running session as trusted, so `<script>`, or
`<img onerror=...>` in an answer or an `/outputs/*.md` file would run as the user's code (with the
user's Jupyter session). `escape_raw_html` turns every `<` outside code into `&lt;`, which Markdown
renders as a plain `<`; tables, emphasis, links, code and math stay as written.
"""

from __future__ import annotations

import re

__all__ = ["escape_raw_html"]

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_AUTOLINK = re.compile(r"<(?:https?|mailto):[^\s<>\"'`\\]*>", re.IGNORECASE)
_SCRIPT_LINK = re.compile(
    r"(\]\(\s*<?|^ {0,3}\[[^\]\n]+\]:\s*<?)(\s*)((?:java|vb)script\s*:)",
    re.IGNORECASE | re.MULTILINE,
)
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_TAG_OPENER = re.compile(r"<(?=[A-Za-z/!?])")


def escape_raw_html(markdown: str) -> str:
    """Escape the raw HTML of Markdown text, keeping its code and math exactly as written.

    Outside fenced code blocks, code spans, `$...$` and `$$...$$` math, and `<https://...>`
    autolinks, each `<` becomes `&lt;` (rendered as `<`, so `a < b` reads the same). Inside math,
    a `<` that could open a tag (`$a<b$`) becomes `\\lt ` (MathJax's `<`), so math stays math and
    never hides a tag from a renderer that reads it as text. Links to `javascript:` or
    `vbscript:` URLs are defused as well. Where it is unsure whether text is
    code or math, it escapes: the worst case is a visible `&lt;`, never a running script.

    Args:
        markdown: Markdown written by the agent (an answer, an `/outputs/` file).

    Returns:
        The same Markdown, safe to display as trusted.
    """
    out: list[str] = []
    prose: list[str] = []
    fence: tuple[str, int] | None = None
    for line in markdown.splitlines(keepends=True):
        if fence is not None:
            out.append(line)
            char, size = fence
            if re.fullmatch(f" {{0,3}}{re.escape(char)}{{{size},}}[ \t]*", line.rstrip("\r\n")):
                fence = None
            continue
        opening = _FENCE.match(line.rstrip("\r\n"))
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            out.append(_escape_inline("".join(prose)))
            prose = []
            out.append(line)
            fence = (opening.group(1)[0], len(opening.group(1)))
            continue
        prose.append(line)
    out.append(_escape_inline("".join(prose)))
    return "".join(out)


def _escape_inline(text: str) -> str:
    """Escape `<` in text outside code blocks, skipping code spans, math and autolinks."""
    if "<" not in text and "script" not in text.lower():
        return text
    text = _SCRIPT_LINK.sub(lambda m: m.group(1) + m.group(2) + "unsafe-" + m.group(3), text)
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "\\" and i + 1 < n:
            out.append(text[i : i + 2])  # an escaped character is literal (`\\<` shows `<`)
            i += 2
        elif char == "`":
            end = _code_span_end(text, i)
            out.append(text[i:end] if end > i else _run(text, i, "`"))
            i = end if end > i else i + len(_run(text, i, "`"))
        elif char == "$":
            end, stop = _math_end(text, i)
            if end > i:
                out.append(_TAG_OPENER.sub(r"\\lt ", text[i:end]))
                i = end
            else:  # not math: escape everything up to where the math reading gave up
                out.append(text[i:stop].replace("<", "&lt;"))
                i = stop
        elif char == "<":
            link = _AUTOLINK.match(text, i)
            if link:
                out.append(link.group(0))
                i = link.end()
            else:
                out.append("&lt;")
                i += 1
        else:
            out.append(char)
            i += 1
    return "".join(out)


def _run(text: str, start: int, char: str) -> str:
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return text[start:end]


def _paragraph_end(text: str, start: int) -> int:
    blank = _BLANK_LINE.search(text, start)
    return blank.start() if blank else len(text)


def _code_span_end(text: str, start: int) -> int:
    """The end of the code span opening at `start`, or `start` if its backticks stay unclosed.

    A closing run has exactly the opening's length; the span stays inside one paragraph.
    """
    opening = _run(text, start, "`")
    limit = _paragraph_end(text, start)
    i = start + len(opening)
    while i < limit:
        if text[i] == "`":
            closing = _run(text, i, "`")
            if len(closing) == len(opening) and i + len(closing) <= limit:
                return i + len(closing)
            i += len(closing)
        else:
            i += 1
    return start


def _math_end(text: str, start: int) -> tuple[int, int]:
    """Read `$...$` or `$$...$$` as JupyterLab does before it renders Markdown.

    It closes at the same delimiter once `{` and `}` balance (`\\{`, `\\}`, `\\$` do not count),
    and gives up at a blank line. A backtick inside makes it give up too (code and math would
    disagree). Returns `(end, start)` for math, or `(start, where it gave up)` otherwise.
    """
    delimiter = "$$" if text.startswith("$$", start) else "$"
    limit = _paragraph_end(text, start)
    i, braces = start + len(delimiter), 0
    while i < limit:
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "`":
            return start, limit
        elif char == "{":
            braces += 1
            i += 1
        elif char == "}":
            braces = max(braces - 1, 0)
            i += 1
        elif char == "$":
            token = "$$" if text.startswith("$$", i) else "$"
            if token == delimiter and braces == 0:
                end = i + len(token)
                return (end, start) if end - start > 2 * len(delimiter) else (start, end)
            i += len(token)
        else:
            i += 1
    return start, max(limit, start + len(delimiter))
