"""A record's model calls as replay reads them, whatever the record's version.

Version 1 records hold each call's whole canonical request; version 2 records hold each message
and tool list once (`messages`, `tools`: digest -> canonical form) and each call's request as the
digests of its messages, written as "the first `keep` messages of call `from`, then `add`"
(see `record.stored_calls`). Either way a call's fingerprint is computed again here from the
canonical forms themselves (tool-call ids by position), so a record is matched by what it holds.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from jupyter_deepagent.trace.research_log.canon import expand_request
from jupyter_deepagent.trace.research_log.fingerprint import digest, ref_fingerprint, renumbered

__all__ = ["RecordedCall", "Recording", "message_digests"]


@dataclass(frozen=True, eq=False)
class RecordedCall:
    """One recorded model call: its fingerprint and response, and the recording it belongs to."""

    fingerprint: str
    response: dict[str, Any]
    step: int
    request_ref: dict[str, Any]
    recording: Recording = field(repr=False)

    def request(self) -> dict[str, Any]:
        """The whole canonical request (to show how a new one differs)."""
        return expand_request(self.request_ref, self.recording.messages, self.recording.tools)


def message_digests(calls: list[Any]) -> list[list[str]]:
    """Each stored call's message digests, its "from/keep/add" form resolved."""
    resolved: list[list[str]] = []
    for call in calls:
        stored = (call.get("request") or {}).get("messages", []) if isinstance(call, dict) else []
        if isinstance(stored, dict):
            base = stored.get("from")
            earlier = (
                resolved[base - 1] if isinstance(base, int) and 0 < base <= len(resolved) else []
            )
            keep = stored.get("keep", 0)
            stored = earlier[: keep if isinstance(keep, int) else 0] + list(stored.get("add", []))
        resolved.append([str(d) for d in stored] if isinstance(stored, list) else [])
    return resolved


class Recording:
    """One record of the research log, read for replay.

    Args:
        record: The record as the log holds it (version 1 or 2), or the calls of a run made in
            this process (`CallLedger.as_record`).
    """

    def __init__(self, record: Mapping[str, Any]) -> None:
        self.record = record
        self.hash = str(record.get("hash", ""))
        self.messages: dict[str, Any] = {}
        self.tools: dict[str, Any] = {}
        calls = [c for c in record.get("calls", []) if isinstance(c, dict)]
        refs = self._v2(record, calls) if record.get("v", 1) >= 2 else self._v1(calls)
        self.calls = tuple(
            RecordedCall(
                ref_fingerprint(ref["messages"], ref["tools"], ref["model"], ref["params"]),
                call.get("response") or {},
                int(call.get("step") or index + 1),
                ref,
                self,
            )
            for index, (call, ref) in enumerate(zip(calls, refs, strict=True))
        )

    def _v1(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        refs = []
        for call in calls:
            request = call.get("request") or {}
            digests = []
            for message in renumbered(request.get("messages", [])):
                found = digest(message)
                self.messages.setdefault(found, message)
                digests.append(found)
            tools = request.get("tools", [])
            self.tools.setdefault(digest(tools), tools)
            refs.append(_ref(digests, digest(tools), request))
        return refs

    def _v2(self, record: Mapping[str, Any], calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        true_messages = {}
        for key, message in (record.get("messages") or {}).items():
            found = true_messages[key] = digest(message)
            self.messages[found] = message
        true_tools = {}
        for key, tools in (record.get("tools") or {}).items():
            found = true_tools[key] = digest(tools)
            self.tools[found] = tools
        refs = []
        for call, digests in zip(calls, message_digests(calls), strict=True):
            request = call.get("request") or {}
            tools = str(request.get("tools"))
            refs.append(
                _ref(
                    [true_messages.get(d, d) for d in digests],
                    true_tools.get(tools, tools),
                    request,
                )
            )
        return refs

    @property
    def status(self) -> object:
        """How the recorded run ended ("ok", "interrupted", ...)."""
        return self.record.get("status")

    @property
    def kind(self) -> object:
        """ "run" for a cell's run, "resume" for a run resumed after a human decision."""
        return self.record.get("kind", "run")


def _ref(messages: list[str], tools: str, request: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "messages": messages,
        "tools": tools,
        "model": request.get("model"),
        "params": request.get("params", {}),
    }
