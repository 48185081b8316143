"""The `database_url` setting: a `postgresql://` URL that moves conversations and `/memories/` from
the SQLite files beside the notebook to a shared PostgreSQL server.

It may carry a password, so it is a secret: shown only masked (`postgresql://ana:***@db:5432/lab`),
never written into a notebook or its research log, and its password is masked in everything the
agent is sent. `JUPYTER_DEEPAGENT_DATABASE_URL` (set once in a JupyterHub's environment) wins over
every other source; better still, keep the password out of the URL (in `~/.pgpass` or
`PGPASSWORD`, which libpq reads).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, unquote, urlsplit

from jupyter_deepagent._exceptions import InputError

__all__ = [
    "DATABASE_URL_VARIABLE",
    "DatabaseAddress",
    "check_database_url",
    "database_address",
    "database_password",
    "database_secrets",
    "environment_database_url",
    "libpq_credential_files",
    "mask_database_url",
]

DATABASE_URL_VARIABLE = "JUPYTER_DEEPAGENT_DATABASE_URL"
_SCHEMES = ("postgresql", "postgres")
# the password runs from the user's ":" to the last "@" of the URL (a raw "@" may be in it)
_PASSWORD = re.compile(
    r"(?P<head>\b(?:postgres(?:ql)?)://[^:/@\s]*:)(?P<secret>\S*)(?=@[^@\s]*)", re.IGNORECASE
)
_QUERY_PASSWORD = re.compile(r"(?P<head>[?&](?:ssl)?password=)(?P<secret>[^&\s]*)", re.IGNORECASE)
_BAD_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})")


@dataclass(frozen=True)
class DatabaseAddress:
    """Where a database URL points, for messages (never the password)."""

    host: str
    port: int
    database: str
    user: str

    def __str__(self) -> str:
        return (
            f"{self.host}:{self.port}"
            if not self.host.startswith("/")
            else (f"the unix socket in {self.host} (port {self.port})")
        )


def mask_database_url(text: str) -> str:
    """`text` with the password of every PostgreSQL URL in it replaced by `***`."""
    text = _PASSWORD.sub(lambda m: m.group("head") + "***", text)
    return _QUERY_PASSWORD.sub(lambda m: m.group("head") + "***", text)


def database_password(url: str) -> str | None:
    """The password a URL carries (in its user part or as `?password=`), to mask it elsewhere."""
    secrets = database_secrets(url)
    return secrets[0] if secrets else None


def database_secrets(url: str) -> list[str]:
    """Every spelling of the URL's passwords (as written and decoded, `?password=` and
    `?sslpassword=` too), longest first, so a message can be cleaned of each."""
    found = [
        m.group("secret") for pattern in (_PASSWORD, _QUERY_PASSWORD) for m in pattern.finditer(url)
    ]
    spellings = {spelling for secret in found if secret for spelling in (secret, unquote(secret))}
    return sorted(spellings, key=len, reverse=True)


def check_database_url(value: str, source: str) -> str:
    """`value` if it is empty (SQLite) or a `postgresql://` URL.

    Raises:
        InputError: Another scheme, or not a URL; the message is masked and names the source.
    """
    value = value.strip()
    if not value:
        return ""
    scheme = value.partition("://")[0].lower() if "://" in value else ""
    if scheme not in _SCHEMES:
        msg = (
            f"{source}: database_url must be a postgresql:// URL (for example "
            "postgresql://USER@HOST:5432/DATABASE), or empty for the SQLite files beside the "
            f"notebook; got {mask_database_url(value)!r}"
        )
        raise InputError(msg, source=source)
    value = scheme + value[len(scheme) :]  # libpq reads "postgresql://" in lower case only
    try:
        urlsplit(value).port  # noqa: B018 - a malformed port raises here
    except ValueError as exc:
        msg = f"{source}: database_url {mask_database_url(value)!r} is malformed: {exc}"
        raise InputError(msg, source=source) from None
    if _BAD_ESCAPE.search(value):
        msg = (
            f"{source}: database_url {mask_database_url(value)!r} has a '%' that does not start "
            "a %XX escape: write a '%' in a user name or password as %25."
        )
        raise InputError(msg, source=source)
    return value


def database_address(url: str) -> DatabaseAddress:
    """Host, port, database and user of a URL, with libpq's defaults (PGHOST, 5432...)."""
    parts = urlsplit(url)
    query = {key: values[0] for key, values in parse_qs(parts.query).items() if values}
    host = query.get("host") or parts.hostname or os.environ.get("PGHOST") or "localhost"
    port = query.get("port") or parts.port or os.environ.get("PGPORT") or 5432
    user = unquote(parts.username or "") or query.get("user") or os.environ.get("PGUSER", "")
    database = unquote(parts.path.lstrip("/")) or query.get("dbname") or user
    try:
        number = int(port)
    except ValueError:
        number = 5432
    return DatabaseAddress(host=host, port=number, database=database, user=user)


def environment_database_url() -> str | None:
    """`JUPYTER_DEEPAGENT_DATABASE_URL` when set (it wins over the files and `%agent config`)."""
    value = os.environ.get(DATABASE_URL_VARIABLE, "").strip()
    return value or None


def libpq_credential_files() -> tuple[Path, ...]:
    """The password and service files libpq was pointed at (`PGPASSFILE`, `PGSERVICEFILE`),
    to hide from the agent wherever they are (the default names are in `hidden_paths`)."""
    named = (os.environ.get(variable, "").strip() for variable in ("PGPASSFILE", "PGSERVICEFILE"))
    return tuple(Path(value).expanduser() for value in named if value)
