"""One research-log record: a run's events, its model calls and where it came from, secrets masked.

The events are the run's own (any schema version: they are taken as JSON-like dicts), with each
tool result's text replaced by a digest and a short head (the artifacts live in
`.deepagent/artifacts/`) and each model reply left to the record's `calls`, which hold the
canonical request and the whole response of every model call: agent, subagents and summarizer.
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any

from jupyter_deepagent.events import MODEL_CALL, RUN_FINISHED, TOOL_RESULT
from jupyter_deepagent.trace.research_log.fingerprint import masked_strings, text_digest

__all__ = ["run_record", "run_summary", "versions"]

_RECORD_VERSION = 1
_PACKAGES = ("jupyter-deepagent", "langchain", "langchain-core", "langgraph")


def versions() -> dict[str, str]:
    """Versions of this package, LangChain, LangGraph and Python."""
    found = {"python": platform.python_version()}
    for name in _PACKAGES:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "unknown"
    return found


def _slim(event: object) -> dict[str, Any]:
    data = dict(event) if isinstance(event, dict) else dict(getattr(event, "__dict__", {}))
    if data.get("type") == TOOL_RESULT and isinstance(data.get("content"), str):
        data["content"] = text_digest(data["content"])
    if data.get("type") == MODEL_CALL:
        data.pop("reply", None)  # the whole response is in the record's calls
    return data


def run_record(
    *,
    events: Iterable[object],
    calls: list[dict[str, Any]],
    cell_id: str | None,
    source_key: str,
    thread: str,
    mode: str,
    outcome: str,
    model: str,
    profile: object,
    redact: Callable[[str], str] = str,
) -> dict[str, Any]:
    """The record of one cell's run, ready for `ResearchLog.append`."""
    slim = [_slim(event) for event in events]
    finished: dict[str, object] = next(
        (e for e in reversed(slim) if e.get("type") == RUN_FINISHED), {}
    )
    record = {
        "v": _RECORD_VERSION,
        "kind": "run",
        "run_id": slim[0].get("run_id") if slim else None,
        "cell_id": cell_id,
        "source_key": source_key,
        "thread": thread,
        "status": finished.get("status", "error"),
        "mode": mode,
        "replay": outcome,
        "model": model,
        "profile": dict(profile) if isinstance(profile, dict) else None,
        "tokens_in": finished.get("tokens_in", 0),
        "tokens_out": finished.get("tokens_out", 0),
        "seconds": finished.get("seconds", 0),
        "versions": versions(),
        "calls": calls,
        "events": slim,
    }
    return masked_strings(record, redact)


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The compact provenance of a run kept in the cell's output metadata."""
    return {
        "run_id": record.get("run_id"),
        "model": record.get("model"),
        "calls": len(record.get("calls", [])),
        "tokens_in": record.get("tokens_in", 0),
        "tokens_out": record.get("tokens_out", 0),
        "replay": record.get("replay"),
        "log_hash": record.get("hash"),
    }
