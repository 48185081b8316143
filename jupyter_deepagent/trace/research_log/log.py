"""The research log: `<notebook>.agentlog.jsonl`, one record per agent run, hash chained.

Each line is a JSON object whose `prev` is the `hash` of the record before ("" for the first)
and whose `hash` is the sha256 of the line's own JSON without `hash` (sorted keys). Editing,
removing or reordering a record breaks the chain there, which `verify` reports. Lines are only
ever appended. A record names its cell (`cell_id`, `source_key`), and holds the run's events and,
for each model call, its request (by the digests of its messages) and the full response (see
`record.run_record`). The file is read once per `ResearchLog` (again only when it changed). A run
resumed after an approval is a record of kind "resume" of the cell whose turn it continues,
numbered (`resume`: 1, 2, ...) and holding the human `decision`.

What the chain proves (`VERIFY_SCOPE`): that no record was changed, dropped or reordered since
it was written; not who wrote it. It has no key, so anyone can write a log whose chain verifies:
code a log holds runs only once the user approves it (see `jupyter.session.recorded_code`).

A damaged line (the writer was killed mid-append or the disk filled up, leaving an incomplete
last line; bytes that are not UTF-8, such as a character cut in the middle) is skipped and
reported with its number, never glued to: an append after it starts on a fresh line and chains
to the last intact record, so the chain resumes after the damage. Every intact record is read,
replayed and checked; a complete record glued to a fragment by an older writer is recovered.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: appends are not locked
    fcntl = None  # type: ignore[assignment]  # the module is absent there; checked before use

__all__ = [
    "LOG_SUFFIX",
    "READABLE_VERSION",
    "VERIFY_SCOPE",
    "LogProblem",
    "ResearchLog",
    "log_path_for",
]

LOG_SUFFIX = ".agentlog.jsonl"
VERIFY_SCOPE = (
    "The hash chain proves the log's integrity: no record was changed, dropped or reordered "
    "since it was written. It does not prove who wrote it: anyone can write a log whose chain "
    "verifies, so code from a log runs only once you approve it."
)
_RECORD_START = b'{"v":'  # how every record line begins (its keys keep the order written)


def log_path_for(notebook: str | os.PathLike[str]) -> Path:
    """The research log beside a notebook: `analysis.ipynb` -> `analysis.ipynb.agentlog.jsonl`."""
    path = Path(notebook)
    return path.with_name(path.name + LOG_SUFFIX)


def _line_hash(record: dict[str, Any]) -> str:
    body = {k: v for k, v in record.items() if k != "hash"}
    text = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class LogProblem:
    """Something `verify` found wrong, with the line (1-based; 0 for the whole log)."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}" if self.line else self.message


def _decoded(raw: bytes) -> tuple[Any, str]:
    """A line's JSON value, or None and why it is damaged."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, (
            f"not UTF-8 text at byte {exc.start + 1} (a character cut in the middle: "
            "the line was not written completely)"
        )
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return None, f"not JSON ({exc.msg})"
    if not isinstance(value, dict):
        return None, "not a JSON object"
    return value, ""


def _glued(raw: bytes) -> dict[str, Any] | None:
    """A complete record at the end of a damaged line (appended to a fragment by a writer that
    did not start on a fresh line), if there is one whose own hash holds."""
    at = raw.find(_RECORD_START, 1)
    while at > 0:
        value, _ = _decoded(raw[at:])
        if value is not None and value.get("hash") == _line_hash(value):
            return value
        at = raw.find(_RECORD_START, at + 1)
    return None


@dataclass
class _Scan:
    """A log read once: its intact records with their line numbers, and its damaged lines."""

    records: list[tuple[int, dict[str, Any]]]
    damaged: list[LogProblem]
    ends_open: bool
    """The file does not end with a newline (an append must start a fresh line)."""
    lines: int = 0
    """How many lines the file has (the last one incomplete when `ends_open`)."""
    last_hash: str = ""
    """The `hash` of the last record that parsed, read or skipped for its shape (a newer
    format's record too: the next line chains to it, so the newer version's chain holds)."""


READABLE_VERSION = 2
"""The newest record format this version reads (`v`), and the one it writes."""

_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "v": (int,),
    "kind": (str,),
    "calls": (list,),
    "events": (list,),
    "messages": (dict,),
    "tools": (dict,),
    "params": (dict,),
    "profile": (dict, type(None)),
    "cell_id": (str, type(None)),
    "source_key": (str, type(None)),
    "thread": (str, type(None)),
    "prev": (str,),
    "hash": (str,),
}
"""What each field of a record holds, where it has one: a record edited by hand into another
shape is skipped and named, not read into a crash."""


def _shape_problem(record: dict[str, Any]) -> str | None:
    """Why a record that parsed cannot be read (None when it can): a newer format, a field of
    the wrong type, calls or events that are not objects."""
    for field, types in _FIELD_TYPES.items():
        value = record.get(field)
        if field in record and (not isinstance(value, types) or isinstance(value, bool)):
            shown = type(value).__name__ if value is not None else "null"
            return (
                f"its field {field!r} holds {shown}, not {' or '.join(_names(types))} "
                "(edited by hand?); restore the line from version control, or delete it"
            )
    version = record.get("v", 1)
    if version > READABLE_VERSION:
        return (
            f"written in record format {version} by a newer jupyter-deepagent (this one reads "
            f"format {READABLE_VERSION} and older): upgrade jupyter-deepagent to replay it"
        )
    for field in ("calls", "events"):
        if not all(isinstance(item, dict) for item in record.get(field, ())):
            return (
                f"its {field!r} are not all objects (edited by hand?); restore the line from "
                "version control, or delete it"
            )
    return None


def _names(types: tuple[type, ...]) -> list[str]:
    named = {int: "a number", str: "text", list: "a list", dict: "an object"}
    return [named.get(kind, "null") for kind in types]


_NO_LOCKS = frozenset({errno.ENOSYS, errno.ENOLCK, errno.EOPNOTSUPP, errno.EINVAL})
"""What `flock` raises on a filesystem without locks (Lustre without `-o flock`, NFS `nolock`,
some FUSE mounts): the append goes on unlocked, as it would without `fcntl`."""


def _lock(handle: BinaryIO) -> None:
    """Hold an exclusive lock on the open log until it is closed, where the filesystem has
    locks."""
    if fcntl is None:
        return
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
    except OSError as exc:
        if exc.errno not in _NO_LOCKS:
            raise


class ResearchLog:
    """Reads and appends the research log of one notebook.

    Args:
        path: The `.agentlog.jsonl` file (see `log_path_for`); it need not exist yet.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._read: tuple[tuple[int, int, int], _Scan] | None = None
        """The last scan and the file's (inode, size, mtime) it was read at."""

    def exists(self) -> bool:
        """Tell whether the log file exists."""
        return self.path.is_file()

    def _stamp(self) -> tuple[int, int, int] | None:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return None
        return (stat.st_ino, stat.st_size, stat.st_mtime_ns)

    def _scan(self) -> _Scan:
        """The log as read once: again only when the file changed since (another writer)."""
        stamp = self._stamp()
        if stamp is None:
            return _Scan([], [], ends_open=False)
        if self._read is not None and self._read[0] == stamp:
            return self._read[1]
        scan = self._read_scan(self.path.read_bytes())
        self._read = (stamp, scan)
        return scan

    def _read_scan(self, data: bytes) -> _Scan:
        records: list[tuple[int, dict[str, Any]]] = []
        damaged: list[LogProblem] = []
        last_hash = ""
        lines = data.split(b"\n")
        last = len(lines) - (1 if data.endswith(b"\n") else 0)
        for number, raw in enumerate(lines[:last], 1):
            if not raw.strip():
                continue
            value, why = _decoded(raw)
            if value is not None:
                if isinstance(value.get("hash"), str):
                    last_hash = value["hash"]
                problem = _shape_problem(value)
                if problem is None:
                    records.append((number, value))
                else:
                    damaged.append(LogProblem(number, f"skipped: {problem}"))
                continue
            glued = _glued(raw)
            if glued is not None:
                if isinstance(glued.get("hash"), str):
                    last_hash = glued["hash"]
                problem = _shape_problem(glued)
                if problem is None:
                    records.append((number, glued))
                    why += "; the complete record glued after it was recovered"
                else:
                    why += f"; the record glued after it was skipped too: {problem}"
            damaged.append(
                LogProblem(
                    number,
                    f"damaged, skipped: {why}; an incomplete or "
                    "corrupted record (the writer was stopped "
                    "mid-append, or the disk was full)",
                )
            )
        return _Scan(records, damaged, bool(data) and not data.endswith(b"\n"), last, last_hash)

    def records(self) -> list[dict[str, Any]]:
        """Every intact record, in order (damaged lines are skipped; see `damage`).

        Raises:
            OSError: The file exists but cannot be read.
        """
        return [record for _, record in self._scan().records]

    def numbered_records(self) -> Iterator[tuple[int, dict[str, Any]]]:
        """Every intact record with its line number (1-based), in order.

        Raises:
            OSError: The file exists but cannot be read.
        """
        yield from self._scan().records

    def damage(self) -> list[LogProblem]:
        """The damaged lines (incomplete, not UTF-8, not JSON), each skipped by every reader.

        Raises:
            OSError: The file exists but cannot be read.
        """
        return self._scan().damaged

    def last_hash(self) -> str:
        """The `hash` of the last record, the one the next is chained to ("" when there is
        none).

        Raises:
            OSError: The file exists but cannot be read.
        """
        return self._scan().last_hash

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Add `record` as a new line chained to the last intact one; returns it with `prev` and
        `hash`. After an incomplete last line it starts on a fresh line (never glued to it).
        The file is locked (`flock`) while the last line is read and the new one written, so
        two processes appending at once keep one chain.

        Raises:
            OSError: The log cannot be written (its folder is read-only, the disk is full...).
            TypeError: The record holds a value JSON cannot represent.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("ab") as handle:
            _lock(handle)  # two kernels appending at once: one after the other, each
            # chained to the other's line
            scan = self._scan()  # under the lock: the line another writer just added counts
            previous = scan.last_hash
            chained = {**record, "prev": previous}
            chained.pop("hash", None)
            chained["hash"] = _line_hash(chained)
            # written in its own key order (a tool call's arguments keep theirs); hashed sorted
            line = json.dumps(chained, ensure_ascii=False, separators=(",", ":"))
            try:
                data = (line + "\n").encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate (a model's text can hold one): escaped
                data = (json.dumps(chained, separators=(",", ":")) + "\n").encode("ascii")
            handle.write(("\n" if scan.ends_open else "").encode() + data)
            handle.flush()
            os.fsync(handle.fileno())
            stamp = self._stamp()  # the lock goes with the file, closed below
        if stamp is not None:  # the file as this append left it: no need to read it again
            number = scan.lines + 1
            records = [*scan.records, (number, chained)]
            self._read = (
                stamp,
                _Scan(records, scan.damaged, False, number, str(chained["hash"])),
            )
        return chained

    def verify(self) -> list[LogProblem]:
        """Check every line: intact, its own hash, and its link to the record before.

        What this proves is `VERIFY_SCOPE`: integrity (nothing changed, dropped or reordered
        since it was written), not who wrote the log. A damaged line is reported and skipped;
        the chain resumes after it when the next record links to the last intact one.

        Raises:
            OSError: The file exists but cannot be read.
        """
        if not self.path.is_file():
            return [LogProblem(0, f"{self.path.name} does not exist")]
        self._read = None  # checked as it is now, whatever was read before
        scan = self._scan()
        problems: list[LogProblem] = []
        broken: set[int] = set()
        damaged_at = [p.line for p in scan.damaged]
        previous, previous_line = "", 0
        for number, record in scan.records:
            skipped = [n for n in damaged_at if previous_line < n < number]
            if record.get("prev") != previous:
                broken.add(number)
                why = "the chain is broken: it does not follow the line before "
                why += (
                    f"(the damaged line {skipped[-1]} held the record it follows)"
                    if skipped
                    else "(a line was removed, inserted or reordered)"
                )
                problems.append(LogProblem(number, why))
            if record.get("hash") != _line_hash(record):
                problems.append(
                    LogProblem(number, "its content does not match its hash (the line was edited)")
                )
            previous, previous_line = str(record.get("hash", "")), number
        for problem in scan.damaged:
            after = next((n for n, _ in scan.records if n >= problem.line), None)
            if after is None:
                tail = "no record follows it"
            elif after in broken:
                tail = f"the chain is broken at line {after}"
            else:
                tail = f"the chain resumes at line {after}"
            problems.append(LogProblem(problem.line, f"{problem.message}; {tail}"))
        return sorted(problems, key=lambda p: p.line)

    def recordings_for(
        self, cell_id: str | None, source_key: str, resume: int = 0
    ) -> list[dict[str, Any]]:
        """Every complete record of a cell, the latest first: those with its frontend id, then
        those with its text's key. A run that failed or was stopped does not count.

        `resume` > 0 asks for the records of that resume of the cell's turn (kind "resume").

        Raises:
            OSError: The file exists but cannot be read.
        """
        by_id: list[dict[str, Any]] = []
        by_source: list[dict[str, Any]] = []
        kind = "resume" if resume else "run"
        for _, record in reversed(self._scan().records):
            if record.get("kind") != kind or record.get("status") not in ("ok", "interrupted"):
                continue
            if resume and record.get("resume") != resume:
                continue
            if cell_id and record.get("cell_id") == cell_id:
                by_id.append(record)
            elif record.get("source_key") == source_key:
                by_source.append(record)
        return by_id + by_source

    def latest_for(
        self, cell_id: str | None, source_key: str, resume: int = 0
    ) -> dict[str, Any] | None:
        """The last complete record of a cell: by its frontend id when it has one, else (or when
        none matches) by its text's key. A run that failed or was stopped does not count.

        `resume` > 0 asks for the record of that resume of the cell's turn (kind "resume": the
        run that continued it after a human decision, 1 for the first) instead of the cell's.

        Raises:
            OSError: The file exists but cannot be read.
        """
        by_id = by_source = None
        kind = "resume" if resume else "run"
        for _, record in self._scan().records:
            if record.get("kind") != kind or record.get("status") not in ("ok", "interrupted"):
                continue
            if resume and record.get("resume") != resume:
                continue
            if cell_id and record.get("cell_id") == cell_id:
                by_id = record
            if record.get("source_key") == source_key:
                by_source = record
        return by_id or by_source
