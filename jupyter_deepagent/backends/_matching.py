"""Text matching shared by every backend: glob patterns, grep over files, exact-text edits.

Backends only enumerate their files; which ones match, which lines hit and what an edit does is
decided here, once, so every backend answers the same question the same way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from jupyter_deepagent._exceptions import BackendError, EditConflict
from jupyter_deepagent.backends._paths import relative_to
from jupyter_deepagent.backends.protocol import GrepMatch

__all__ = [
    "compile_glob",
    "expand_braces",
    "file_filter_matches",
    "glob_matches",
    "grep_texts",
    "replace_exact",
]


def expand_braces(pattern: str) -> list[str]:
    """Expand `{a,b}` alternatives (nested allowed); unbalanced braces stay literal.

    Args:
        pattern: A glob pattern such as `**/*.{md,txt}`.

    Returns:
        Every alternative, in order, e.g. `["**/*.md", "**/*.txt"]`.
    """
    depth, start = 0, -1
    commas: list[int] = []
    for i, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start, commas = i, []
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                if not commas:
                    # `{x}` has no alternatives: keep it literal, expand what follows.
                    return [pattern[: i + 1] + rest for rest in expand_braces(pattern[i + 1 :])]
                head, tail = pattern[:start], pattern[i + 1 :]
                bounds = [start, *commas, i]
                options = [pattern[a + 1 : b] for a, b in zip(bounds, bounds[1:], strict=False)]
                return [
                    expanded
                    for option in options
                    for expanded in expand_braces(head + option + tail)
                ]
        elif char == "," and depth == 1:
            commas.append(i)
    return [pattern]


def _translate(pattern: str) -> str:
    """Turn one brace-free glob into a regular expression body."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        if char == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                i += 2
                if at_start and pattern.startswith("/", i):
                    out.append("(?:.*/)?")  # `**/`: zero or more folders
                    i += 1
                elif at_start and i == n:
                    out.append(".*")  # trailing `**`: everything below
                else:
                    out.append("[^/]*")  # `a**b` inside a name acts like `*`
                continue
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            start = i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1
            end = pattern.find("]", start + 1 if pattern[start : start + 1] == "]" else start)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = pattern[i + 1 : end]
                negate = body[:1] in ("!", "^")
                body = body[1:] if negate else body
                body = "".join("\\" + c if c in "\\[]^&~|" else c for c in body)
                out.append(f"[^/{body}]" if negate else f"(?!/)[{body}]")
                i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


@lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """Compile a glob (`**`, `*`, `?`, `[abc]`, `{a,b}`) into one anchored regular expression.

    Args:
        pattern: The glob; a leading `/` is ignored by callers that match relative paths.

    Returns:
        A compiled pattern to use with `fullmatch`.

    Raises:
        BackendError: If the pattern cannot be compiled (e.g. a reversed range `[z-a]`).
    """
    alternatives = [_translate(option) for option in expand_braces(pattern)]
    try:
        return re.compile("(?:" + "|".join(alternatives) + ")", re.DOTALL)
    except re.error as exc:
        msg = f"invalid glob pattern {pattern!r}: {exc.msg}. Use *, **, ?, [abc] and {{a,b}}."
        raise BackendError(msg) from exc


def glob_matches(pattern: str, path: str, root: str) -> bool:
    """Tell whether file `path` (under folder `root`) matches `pattern`.

    A pattern starting with `/` is matched against the whole virtual path; otherwise against the
    path relative to `root` (so `*.md` matches only files directly in `root`).
    """
    if pattern.startswith("/"):
        return compile_glob(pattern).fullmatch(path) is not None
    return compile_glob(pattern).fullmatch(relative_to(path, root)) is not None


def file_filter_matches(file_glob: str, path: str, root: str) -> bool:
    """Tell whether a grep `glob` filter keeps `path`: the basename, or relative path if `/`."""
    if "/" in file_glob:
        return glob_matches(file_glob, path, root)
    return compile_glob(file_glob).fullmatch(path.rsplit("/", 1)[-1]) is not None


def grep_texts(
    pattern: str,
    files: Iterable[tuple[str, str]],
    root: str,
    file_glob: str | None = None,
    regex: bool = False,
) -> list[GrepMatch]:
    """Find the lines containing `pattern` in `(path, text)` pairs, sorted by path and line.

    Args:
        pattern: A literal substring, or a Python regular expression when `regex` is true.
        files: The candidate files under `root`, as `(virtual path, text)`.
        root: The folder searched from, for relative `file_glob` patterns.
        file_glob: Only search files whose name (or relative path, if it holds `/`) matches.
        regex: Treat `pattern` as a regular expression (`re.search` on each line).

    Returns:
        One GrepMatch per matching line (1-based line numbers). Texts holding a NUL are skipped.

    Raises:
        BackendError: If `regex` is true and the pattern does not compile.
    """
    if regex:
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            msg = (
                f"invalid regular expression {pattern!r}: {exc}. Fix the pattern, or pass "
                "regex=False to search for the text literally."
            )
            raise BackendError(msg) from exc

        def hit(line: str) -> bool:
            return compiled.search(line) is not None
    else:

        def hit(line: str) -> bool:
            return pattern in line

    matches: list[GrepMatch] = []
    for path, text in files:
        if "\x00" in text or (file_glob and not file_filter_matches(file_glob, path, root)):
            continue
        for number, line in enumerate(text.splitlines(), start=1):
            if hit(line):
                matches.append(GrepMatch(path=path, line_number=number, line=line))
    matches.sort(key=lambda match: (match.path, match.line_number))
    return matches


def replace_exact(path: str, text: str, old: str, new: str, replace_all: bool) -> tuple[str, int]:
    """Apply an exact-text edit and return the new text and how many occurrences were replaced.

    Args:
        path: The file's virtual path, for messages.
        text: The file's current text.
        old: The exact text to replace; must be non-empty.
        new: Its replacement.
        replace_all: Replace every occurrence instead of requiring exactly one.

    Returns:
        `(new_text, replacements)`.

    Raises:
        EditConflict: If `old` is empty or not found (`matches == 0`), or found more than once
            without `replace_all` (`matches` is the count).
    """
    if not old:
        msg = f"Cannot edit {path}: the text to replace is empty. Give the exact text to change."
        raise EditConflict(msg, path=path, matches=0)
    count = text.count(old)
    if count == 0:
        msg = (
            f"The text to replace was not found in {path}. Read the file and copy the text "
            "exactly, including whitespace and indentation."
        )
        raise EditConflict(msg, path=path, matches=0)
    if count > 1 and not replace_all:
        msg = (
            f"The text to replace was found {count} times in {path}; give more surrounding "
            "context to make it unique, or pass replace_all=True."
        )
        raise EditConflict(msg, path=path, matches=count)
    return text.replace(old, new), count
