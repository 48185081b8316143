"""One research-log record: a run's events, its model calls and where it came from, secrets masked.

The events are the run's own (any schema version: they are taken as JSON-like dicts), with each
tool result's text replaced by a digest and a short head (the artifacts live in
`.deepagent/artifacts/`) and each model reply left to the record's `calls`, which hold the
request and the whole response of every model call: agent, subagents and summarizer.

Version 2 keeps the record linear in the run: each canonical message and each tool list is
stored once (`messages`, `tools`: digest -> canonical form), and each call's request names its
messages by digest, as "the first `keep` messages of the earlier call `from`, then `add`"
(a request repeats the history of the one before it). Version 1 records (each request whole)
are still read (`recorded.Recording`).
"""

from __future__ import annotations

import platform
from collections.abc import Callable, Iterable
from importlib import metadata
from typing import Any

from jupyter_deepagent.events import MODEL_CALL, RUN_FINISHED, TOOL_RESULT
from jupyter_deepagent.trace.research_log.fingerprint import masked_strings, text_digest
from jupyter_deepagent.trace.research_log.log import READABLE_VERSION

__all__ = ["run_record", "run_summary", "stored_calls", "versions"]

_PACKAGES = ("jupyter-deepagent", "langchain", "langchain-core", "langgraph")
_CACHE_TOTALS = ("tokens_in_cached", "tokens_in_cache_write")
"""The run's prompt-cache totals, kept in the record only when a provider reported them."""
_COST_TOTALS = ("cost", "cost_unpriced_calls", "budget")
"""What the run cost (priced when it ran) and how its budget ended it, when `run_finished` says
(a record made before prices existed has none: its events' tokens can still be priced)."""


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


def _shared_prefix(a: list[str], b: list[str]) -> int:
    size = min(len(a), len(b))
    for index in range(size):
        if a[index] is not b[index] and a[index] != b[index]:
            return index
    return size


def stored_calls(
    calls: list[dict[str, Any]], messages: dict[str, Any], tools: dict[str, Any]
) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    """A run's calls (each request as `CanonicalRequest.ref`) as a record stores them: each
    request's messages as a shared prefix of an earlier call's plus the rest, and the message
    and tool tables narrowed to what the calls name."""
    out: list[dict[str, Any]] = []
    last_of: dict[tuple[object, object], int] = {}
    used_messages: dict[str, Any] = {}
    used_tools: dict[str, Any] = {}
    for index, call in enumerate(calls):
        request = dict(call.get("request") or {})
        digests = list(request.get("messages") or [])
        for found in digests:
            if found not in used_messages and found in messages:
                used_messages[found] = messages[found]
        if request.get("tools") in tools:
            used_tools[request["tools"]] = tools[request["tools"]]
        lane = (call.get("agent"), call.get("task_id"))
        best, keep = -1, 0
        for earlier in {last_of.get(lane, -1), index - 1} - {-1}:
            shared = _shared_prefix(calls[earlier]["request"]["messages"], digests)
            if shared > keep:
                best, keep = earlier, shared
        if keep:
            request["messages"] = {"from": best + 1, "keep": keep, "add": digests[keep:]}
        out.append({**call, "request": request})
        last_of[lane] = index
    return out, used_messages, used_tools


def run_record(
    *,
    events: Iterable[object],
    calls: list[dict[str, Any]],
    messages: dict[str, Any],
    tools: dict[str, Any],
    cell_id: str | None,
    source_key: str,
    thread: str,
    mode: str,
    outcome: str,
    model: str,
    profile: object,
    redact: Callable[[str], str] = str,
    parts_masked: bool = False,
) -> dict[str, Any]:
    """The record of one cell's run, ready for `ResearchLog.append` (`calls` as the run's
    `CallLedger` holds them, `messages` and `tools` its canonical forms by digest).

    `parts_masked`: the events, messages and responses were masked as they were made, with the
    secret values `redact` hides (none became secret during the run), so only the record's own
    fields are masked here; otherwise the whole record is masked again."""
    stored, used_messages, used_tools = stored_calls(calls, messages, tools)
    slim = [_slim(event) for event in events]
    finished: dict[str, object] = next(
        (e for e in reversed(slim) if e.get("type") == RUN_FINISHED), {}
    )
    record = {
        "v": READABLE_VERSION,
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
        **{key: finished[key] for key in _CACHE_TOTALS if key in finished},
        **{key: finished[key] for key in _COST_TOTALS if key in finished},
        "seconds": finished.get("seconds", 0),
        "versions": versions(),
    }
    parts = {"messages": used_messages, "tools": used_tools, "calls": stored, "events": slim}
    if not parts_masked:
        return masked_strings({**record, **parts}, redact)
    return {**masked_strings(record, redact), **parts}


def run_summary(record: dict[str, Any]) -> dict[str, Any]:
    """The compact provenance of a run kept in the cell's output metadata."""
    return {
        "run_id": record.get("run_id"),
        "model": record.get("model"),
        "calls": len(record.get("calls", [])),
        "tokens_in": record.get("tokens_in", 0),
        "tokens_out": record.get("tokens_out", 0),
        **{key: record[key] for key in _CACHE_TOTALS if key in record},
        **{key: record[key] for key in _COST_TOTALS if key in record},
        "seconds": record.get("seconds", 0),
        "replay": record.get("replay"),
        "log_hash": record.get("hash"),
    }
