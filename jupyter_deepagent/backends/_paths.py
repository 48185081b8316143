"""Virtual paths: one normal form (`/a/b`, root `/`) and the refusal of every hostile shape.

Every backend calls `normalize_virtual_path` first, so a path that could mean something else on
another system (`..`, `C:`, `\\\\server`, `%2e%2e`, `~`) never reaches storage.
"""

from __future__ import annotations

import re

from jupyter_deepagent._exceptions import FileNotFound, InvalidPath

__all__ = [
    "child_name",
    "folder_prefix",
    "is_within",
    "normalize_virtual_path",
    "not_found",
    "parent_folder",
    "relative_to",
]

_MAX_NAME_BYTES = 255
"""Longest allowed path component, in UTF-8 bytes (the common filesystem limit)."""

_MAX_PATH_BYTES = 4096
"""Longest allowed path, in UTF-8 bytes."""

_ENCODED_SEPARATOR = re.compile(r"%(2e|2f|5c)", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_DRIVE = re.compile(r"^[A-Za-z]:")


def _invalid(path: str, why: str) -> InvalidPath:
    shown = path if len(path) <= 120 else path[:117] + "..."
    msg = f"{shown!r} is not a valid path: {why}. Use an absolute path like '/notes/a.md'."
    return InvalidPath(msg, path=shown)


def normalize_virtual_path(path: str) -> str:
    """Return the normal form of a virtual path: absolute, `/`-separated, no trailing slash.

    `notes/a.md`, `/notes//./a.md` and `/notes/a.md/` all become `/notes/a.md`; `""` is `/`.

    Args:
        path: A virtual path as given by a user or a model.

    Returns:
        The normalized path; the root is `/`.

    Raises:
        TypeError: If `path` is not a string.
        InvalidPath: If the path holds `..`, a NUL or control character, a backslash, a
            percent-encoded dot or slash, a leading `~`, a drive letter, a component over 255
            bytes, or is over 4096 bytes.
    """
    if not isinstance(path, str):
        msg = f"a path must be a str, not {type(path).__name__}"
        raise TypeError(msg)
    if _CONTROL.search(path):
        raise _invalid(path, "it contains a NUL byte or a control character")
    if "\\" in path:
        raise _invalid(path, "it contains a backslash; separate folders with '/'")
    if _ENCODED_SEPARATOR.search(path):
        raise _invalid(path, "it contains a percent-encoded dot or slash (%2e, %2f, %5c)")
    try:
        size = len(path.encode("utf-8"))
    except UnicodeEncodeError:
        raise _invalid(path, "it is not valid Unicode text") from None
    if size > _MAX_PATH_BYTES:
        raise _invalid(path, f"it is {size} bytes long, over the limit of {_MAX_PATH_BYTES}")
    parts = [part for part in path.split("/") if part not in ("", ".")]
    for part in parts:
        if part == "..":
            raise _invalid(path, "'..' is not allowed; name the folder you mean from '/'")
        if len(part.encode("utf-8")) > _MAX_NAME_BYTES:
            raise _invalid(path, f"a name is over {_MAX_NAME_BYTES} bytes long")
    if parts and parts[0].startswith("~"):
        raise _invalid(path, "'~' (a home folder) has no meaning here")
    if parts and _DRIVE.match(parts[0]):
        raise _invalid(path, "drive letters like 'C:' have no meaning here")
    return "/" + "/".join(parts)


def parent_folder(path: str) -> str:
    """Return the folder holding normalized `path` (`/a/b` -> `/a`, `/a` -> `/`)."""
    return path.rsplit("/", 1)[0] or "/"


def folder_prefix(path: str) -> str:
    """Return a normalized folder path with a trailing slash (`/` stays `/`)."""
    return path if path.endswith("/") else path + "/"


def is_within(path: str, folder: str) -> bool:
    """Tell whether normalized `path` is `folder` itself or lies under it."""
    return path == folder or path.startswith(folder_prefix(folder))


def relative_to(path: str, folder: str) -> str:
    """Return normalized `path` relative to `folder`, without a leading slash."""
    return path[len(folder_prefix(folder)) :] if path != folder else ""


def child_name(path: str, folder: str) -> tuple[str, bool]:
    """Return the direct child of `folder` that leads to `path`, and whether it is a folder."""
    head, _, rest = relative_to(path, folder).partition("/")
    return head, bool(rest)


def not_found(path: str, *, what: str = "") -> FileNotFound:
    """Build the FileNotFound error for `path`, pointing at its parent folder."""
    parent = parent_folder(path)
    subject = f"{what} {path}" if what else path
    msg = f"{subject} does not exist. Use ls({folder_prefix(parent)!r}) to see what is there."
    return FileNotFound(msg, path=path)
