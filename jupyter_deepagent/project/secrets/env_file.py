"""Read API keys from a `.env` file, the safe alternative to `%env KEY=...` in a notebook.

Only names are ever returned or reported: a value, or a line that failed to parse, may be a secret.
A malformed line for a name (an unclosed quote) is reported by that name, so "GOOGLE_API_KEY is
not set" can say why; a line without a name is reported by its number.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["EnvFileEntries", "read_env_file"]

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


@dataclass(frozen=True)
class EnvFileEntries:
    """What an env file holds: the values of its well-formed lines, and the names of the others."""

    values: dict[str, str] = field(default_factory=dict)
    malformed: list[str] = field(default_factory=list)
    """Names whose line could not be read (e.g. an unclosed quote), or `line N` without a name."""


def read_env_file(path: str | os.PathLike[str]) -> EnvFileEntries:
    """Parse `KEY=value` lines without touching the environment.

    Blank lines and `#` comments are skipped, a leading `export ` is allowed, single or double
    quotes around a value are removed, and a bare value ends before ` #`. A later line for the
    same name wins. A malformed line is never echoed, since it may hold a secret: it is named.

    Returns:
        The entries; empty if the file does not exist (or is a folder).

    Raises:
        OSError: The file exists but cannot be read (for example, permission denied).
    """
    file = Path(path)
    if not file.is_file():
        return EnvFileEntries()
    entries = EnvFileEntries()
    for number, raw_line in enumerate(
        file.read_text(encoding="utf-8", errors="replace").splitlines(), 1
    ):
        line = raw_line.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            entries.malformed.append(f"line {number}")
            continue
        name, value = match.group(1), _unquote(match.group(2).strip())
        if value is None:
            entries.malformed.append(name)
            entries.values.pop(name, None)
            continue
        entries.values[name] = value
    return entries
