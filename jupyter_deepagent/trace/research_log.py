"""The research log: `<notebook>.agentlog.jsonl`, one record per agent run, hash chained.

Each line is a JSON object whose `prev` is the `hash` of the line before ("" for the first) and
whose `hash` is the sha256 of the line's own JSON without `hash` (sorted keys). Editing, removing
or reordering a line breaks the chain at that line, which `verify` reports. Lines are only ever
appended. A record names its cell (`cell_id`, `source_key`), and holds the run's events and, for
each model call, the canonical request and the full response (see `run_record`). A run resumed
after an approval is a record of kind "resume" of the cell whose turn it continues, numbered
(`resume`: 1, 2, ...) and holding the human `decision`.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["LOG_SUFFIX", "LogProblem", "ResearchLog", "log_path_for"]

LOG_SUFFIX = ".agentlog.jsonl"


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


class ResearchLog:
    """Reads and appends the research log of one notebook.

    Args:
        path: The `.agentlog.jsonl` file (see `log_path_for`); it need not exist yet.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def exists(self) -> bool:
        """Tell whether the log file exists."""
        return self.path.is_file()

    def _lines(self) -> Iterator[tuple[int, str]]:
        if not self.path.is_file():
            return
        with self.path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if line.strip():
                    yield number, line

    def records(self) -> list[dict[str, Any]]:
        """Every record, in order (lines that are not JSON objects are skipped; see `verify`).

        Raises:
            OSError: The file exists but cannot be read.
        """
        found = []
        for _, line in self._lines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict):
                found.append(record)
        return found

    def last_hash(self) -> str:
        """The `hash` of the last line ("" when the log is empty).

        Raises:
            OSError: The file exists but cannot be read.
        """
        records = self.records()
        return str(records[-1].get("hash", "")) if records else ""

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Add `record` as a new line chained to the last one; returns it with `prev` and `hash`.

        Raises:
            OSError: The log cannot be written (its folder is read-only, the disk is full...).
            TypeError: The record holds a value JSON cannot represent.
        """
        chained = {**record, "prev": self.last_hash()}
        chained.pop("hash", None)
        chained["hash"] = _line_hash(chained)
        # written in its own key order (a tool call's arguments keep theirs); hashed sorted
        line = json.dumps(chained, ensure_ascii=False, separators=(",", ":"))
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line + "\n")
            handle.flush()
            os.fsync(handle.fileno())
        return chained

    def verify(self) -> list[LogProblem]:
        """Check every line: JSON, its own hash, and its link to the line before.

        Raises:
            OSError: The file exists but cannot be read.
        """
        if not self.path.is_file():
            return [LogProblem(0, f"{self.path.name} does not exist")]
        problems: list[LogProblem] = []
        previous = ""
        for number, line in self._lines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                problems.append(LogProblem(number, f"not JSON ({exc.msg})"))
                previous = ""
                continue
            if not isinstance(record, dict):
                problems.append(LogProblem(number, "not a JSON object"))
                continue
            if record.get("prev") != previous:
                problems.append(LogProblem(
                    number, "the chain is broken: it does not follow the line before "
                    "(a line was removed, inserted or reordered)"))
            if record.get("hash") != _line_hash(record):
                problems.append(LogProblem(number, "its content does not match its hash "
                                           "(the line was edited)"))
            previous = str(record.get("hash", ""))
        return problems

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
        for record in self.records():
            if record.get("kind") != kind or record.get("status") not in ("ok", "interrupted"):
                continue
            if resume and record.get("resume") != resume:
                continue
            if cell_id and record.get("cell_id") == cell_id:
                by_id = record
            if record.get("source_key") == source_key:
                by_source = record
        return by_id or by_source
