"""What the model reads about the file tools: their descriptions, argument schemas and the
system-prompt section on the virtual filesystem.

Kept apart from the tool code so the words can be reviewed (and overridden) on their own.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from jupyter_deepagent.harness.tools._format import MAX_ENTRIES, MAX_LINE_CHARS, GrepOutputMode

__all__ = [
    "FILESYSTEM_TOOL_NAMES",
    "READ_LIMIT",
    "TOOL_DESCRIPTIONS",
    "DeleteArgs",
    "EditFileArgs",
    "GlobArgs",
    "GrepArgs",
    "LsArgs",
    "ReadFileArgs",
    "WriteFileArgs",
    "filesystem_prompt",
]

FILESYSTEM_TOOL_NAMES = ("ls", "read_file", "write_file", "edit_file", "delete", "glob", "grep")
"""Every file tool, in the order they are built and listed."""

READ_LIMIT = 200
"""Lines `read_file` returns when the model gives no limit."""

_FILE = "Absolute virtual path of the file, starting with '/', e.g. '/notes/plan.md'."
_FOLDER = "Absolute virtual path of the folder to search, e.g. '/notes'. Default '/', everything."

TOOL_DESCRIPTIONS: dict[str, str] = {
    "ls": (
        "List the files and folders directly inside a folder, with each file's size and last "
        "modification time. Folder names end in '/'. Use it to see what exists before reading; "
        "to find files anywhere below a folder, use glob."
    ),
    "read_file": (
        "Read a text file as numbered lines ('line number<TAB>text'; numbers start at 1). "
        f"Returns up to `limit` lines (default {READ_LIMIT}) starting at the 0-based line "
        "`offset`; when more follow, the output ends with the exact call that reads the next "
        f"page. Lines over {MAX_LINE_CHARS:,} characters are cut. Read a file before you edit or "
        "overwrite it, and page through long files rather than re-reading them."
    ),
    "write_file": (
        "Create a file, or replace the whole content of an existing one (missing parent folders "
        "are implied). To change part of an existing file, use edit_file instead. Good for "
        "saving notes, drafts and intermediate results you will need later."
    ),
    "edit_file": (
        "Replace exact text in a file. `old_string` must match the file character for "
        "character, whitespace and indentation included, without the line numbers read_file "
        "adds, and must occur exactly once unless replace_all is true. Read the file first; if "
        "the text occurs several times, include surrounding lines to make it unique."
    ),
    "delete": (
        "Delete a file, or a folder with everything inside it. This cannot be undone; check the "
        "path with ls first."
    ),
    "glob": (
        "Find files by pattern below a folder (`path`); returns their paths, one per line. '*' "
        "matches within a name, '**' any folders, '?' one character, '[abc]' one of a set and "
        "'{a,b}' either alternative. A pattern without '/' matches file names at any depth "
        "('*.md' finds every Markdown file); one with '/' matches the path relative to `path` "
        "('data/**/*.csv'), and a leading '/' anchors it there ('/*.md': only the files "
        "directly in `path`). Names starting with '.' are matched only by a pattern part that "
        "starts with '.' ('.env', '.github/**/*.yml'), and '**' does not enter such folders."
    ),
    "grep": (
        "Search the contents of text files below a folder. The pattern is literal text unless "
        "regex is true (then a Python regular expression). output_mode 'files_with_matches' "
        "(default) lists matching files, 'content' shows 'path:line_number: text', 'count' "
        f"shows 'path: matches'. At most {MAX_ENTRIES} results are shown; narrow with path "
        "and glob."
    ),
}


class LsArgs(BaseModel):
    """Arguments of `ls`."""

    path: str = Field(
        default="/", description="Absolute virtual path of the folder to list. Default '/'."
    )


class ReadFileArgs(BaseModel):
    """Arguments of `read_file`."""

    file_path: str = Field(description=_FILE)
    offset: int = Field(
        default=0, description="0-based line to start from: 0 is the first line. Default 0."
    )
    limit: int = Field(
        default=READ_LIMIT, description=f"Most lines to return. Default {READ_LIMIT}."
    )


class WriteFileArgs(BaseModel):
    """Arguments of `write_file`."""

    file_path: str = Field(description=_FILE)
    content: str = Field(description="The file's full new text.")


class EditFileArgs(BaseModel):
    """Arguments of `edit_file`."""

    file_path: str = Field(description=_FILE)
    old_string: str = Field(description="Exact text to replace, as it appears in the file.")
    new_string: str = Field(description="Text to put in its place (may be empty to remove it).")
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence instead of requiring exactly one. Default false.",
    )


class DeleteArgs(BaseModel):
    """Arguments of `delete`."""

    file_path: str = Field(description="Absolute virtual path of the file or folder to delete.")


class GlobArgs(BaseModel):
    """Arguments of `glob`."""

    pattern: str = Field(
        description="A name pattern ('*.py', at any depth) or a path pattern relative to "
        "`path` ('src/**/*.py')."
    )
    path: str = Field(default="/", description=_FOLDER)


class GrepArgs(BaseModel):
    """Arguments of `grep`."""

    pattern: str = Field(description="Text to find in each line (a regex only if regex=true).")
    path: str = Field(default="/", description=_FOLDER)
    glob: str | None = Field(
        default=None,
        description="Only search files matching this glob, as glob matches it: '*.md' (names, "
        "at any depth) or 'notes/**/*.md'. Default all.",
    )
    regex: bool = Field(
        default=False,
        description="Treat pattern as a Python regular expression. Default false (literal).",
    )
    output_mode: GrepOutputMode = Field(
        default="files_with_matches",
        description="'files_with_matches' (default), 'content' or 'count'.",
    )


_PROMPT_LINES: dict[str, str] = {
    "ls": "- `ls`: list a folder.",
    "read_file": "- `read_file`: read a file as numbered lines, a page at a time.",
    "write_file": "- `write_file`: create a file or replace its content.",
    "edit_file": "- `edit_file`: replace exact text in a file.",
    "delete": "- `delete`: delete a file or folder.",
    "glob": "- `glob`: find files by pattern (`*.md` at any depth, `data/*.{csv,json}`).",
    "grep": "- `grep`: find text in files (literal unless `regex=True`).",
}


def filesystem_prompt(tool_names: Iterable[str]) -> str:
    """The system-prompt section on the virtual filesystem, naming only the given file tools.

    Args:
        tool_names: Names of the tools the agent has; names that are not file tools are ignored.

    Returns:
        The section's text (without a heading), or "" when no file tool is among the names.
    """
    present = set(tool_names)
    names = [name for name in FILESYSTEM_TOOL_NAMES if name in present]
    if not names:
        return ""
    lines = [
        "You have a virtual filesystem for notes, drafts, data and intermediate results. "
        "Paths are absolute and start with `/` (e.g. `/notes/plan.md`); there is no working "
        "directory and no `..`.",
        "",
        *(_PROMPT_LINES[name] for name in names),
    ]
    tips = []
    if "read_file" in present and present & {"edit_file", "write_file"}:
        tips.append("- Read a file before you edit or overwrite it.")
    if "edit_file" in present:
        tips.append("- Prefer `edit_file` for small changes to an existing file.")
    if "read_file" in present:
        tips.append("- Page through long files with `offset` and `limit`.")
    if "write_file" in present:
        tips.append(
            "- Keep long material (sources, notes, drafts) in files instead of repeating it in "
            "your replies; mention the path instead."
        )
    if tips:
        lines += ["", *tips]
    return "\n".join(lines)
