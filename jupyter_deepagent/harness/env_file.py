"""Read API keys from a `.env` file, the safe alternative to `%env KEY=...` in a notebook.

Only names are ever returned or reported: a value, or a line that failed to parse, may be a secret.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

__all__ = ["load_env_file"]

_LINE = re.compile(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$")


def _unquote(value: str) -> str | None:
    """Strip matching quotes, or a trailing ` # comment` from a bare value; None if malformed."""
    if value[:1] in ("'", '"'):
        quote = value[0]
        end = value.find(quote, 1)
        if end == -1:
            return None
        rest = value[end + 1 :].strip()
        if rest and not rest.startswith("#"):
            return None
        return value[1:end]
    return re.split(r"\s+#", value, maxsplit=1)[0].strip()


def load_env_file(path: str | os.PathLike[str]) -> list[str]:
    """Set environment variables from `KEY=value` lines, without overriding ones already set.

    Blank lines and `#` comments are skipped, a leading `export ` is allowed, and single or
    double quotes around the value are removed. Malformed lines are skipped silently: they are
    never echoed, since they may hold a secret.

    Args:
        path: The file to read, typically `.env` beside the notebook.

    Returns:
        The names of the variables this call set (never their values); `[]` if the file does
        not exist.

    Raises:
        OSError: The file exists but cannot be read (for example, permission denied).
    """
    file = Path(path)
    if not file.is_file():
        return []
    loaded: list[str] = []
    for raw_line in file.read_text(encoding="utf-8", errors="replace").splitlines():
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            continue
        name, value = match.group(1), _unquote(match.group(2).strip())
        if value is None or name in os.environ:
            continue
        os.environ[name] = value
        loaded.append(name)
    return loaded
