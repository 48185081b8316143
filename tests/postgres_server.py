"""A throwaway PostgreSQL server for the storage tests: `initdb` into a temporary folder, `pg_ctl`
start listening only on a unix socket in that folder (no TCP port, so pytest-socket's ban on the
network stays whole), stop and delete at the end of the session.

Debian's binaries live in /usr/lib/postgresql/<version>/bin (its standard layout); `pg_config
--bindir` is asked first. PostgreSQL refuses to run as root, so under root the server runs as the
`postgres` user (made by Debian's package) or `nobody`. Without the binaries the tests that need
the server skip, saying how to install them, unless JUPYTER_DEEPAGENT_REQUIRE_POSTGRES=1 (CI).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PostgresServer", "find_binaries", "missing_reason"]

REQUIRE_VARIABLE = "JUPYTER_DEEPAGENT_REQUIRE_POSTGRES"
INSTALL_HINT = (
    "PostgreSQL's server binaries (initdb, pg_ctl) are not installed, so the PostgreSQL storage "
    "tests are skipped: install them with `apt-get install postgresql` (Debian/Ubuntu) or put "
    "their folder on PATH"
)


def find_binaries() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`, or None."""
    candidates: list[str] = []
    if shutil.which("pg_config"):
        result = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True)
        candidates.append(result.stdout.strip())
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)
    if shutil.which("initdb"):
        candidates.append(str(Path(shutil.which("initdb") or "").parent))
    for folder in candidates:
        if folder and (Path(folder) / "initdb").is_file() and (Path(folder) / "pg_ctl").is_file():
            return Path(folder)
    return None


def missing_reason() -> str | None:
    """Why the server cannot be started here (None when it can)."""
    return None if find_binaries() is not None else INSTALL_HINT


def _run_as() -> list[str]:
    """The command prefix that runs the server as an unprivileged user when this is root."""
    if os.geteuid() != 0:
        return []
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        return ["runuser", "-u", name, "--"]
    msg = "running as root without a `postgres` or `nobody` user to run PostgreSQL as"
    raise RuntimeError(msg)


@dataclass
class PostgresServer:
    """A running server; `url(database)` connects to it over its unix socket."""

    folder: Path
    binaries: Path
    user: str = "deepagent"

    @classmethod
    def start(cls) -> PostgresServer:
        """initdb + pg_ctl start in a new temporary folder (a short path: socket names are
        limited to about 100 characters)."""
        binaries = find_binaries()
        if binaries is None:
            raise RuntimeError(INSTALL_HINT)
        folder = Path(tempfile.mkdtemp(prefix="pg-"))
        server = cls(folder, binaries)
        prefix = _run_as()
        if prefix:
            owner = pwd.getpwnam(prefix[2])
            os.chown(folder, owner.pw_uid, owner.pw_gid)
        data = folder / "data"
        server._run(prefix, "initdb", "-D", str(data), "-U", server.user, "--auth=trust",
                    "--no-sync", "-E", "UTF8", "--locale=C")
        options = f"-k {folder} -c listen_addresses='' -c fsync=off -c max_connections=200"
        server._run(prefix, "pg_ctl", "-D", str(data), "-o", options, "-l",
                    str(folder / "server.log"), "-w", "-t", "60", "start")
        return server

    def _run(self, prefix: list[str], program: str, *args: str) -> None:
        result = subprocess.run([*prefix, str(self.binaries / program), *args],
                                capture_output=True, text=True, cwd=self.folder)
        if result.returncode != 0:
            log = self.folder / "server.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            msg = f"{program} failed: {result.stderr or result.stdout}\n{tail}"
            raise RuntimeError(msg)

    def url(self, database: str = "postgres") -> str:
        """A `postgresql://` URL for `database` over the server's unix socket."""
        return f"postgresql://{self.user}@/{database}?host={self.folder}"

    def create_database(self, name: str) -> str:
        """A new, empty database; returns its URL."""
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its folder."""
        try:
            self._run(_run_as(), "pg_ctl", "-D", str(self.folder / "data"), "-m", "fast",
                      "-w", "stop")
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)
