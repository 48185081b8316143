"""The canonical form of a run's requests, each message masked and hashed once.

A long run sends its whole history with every request; masking and hashing it again each time
made a cell's cost per step grow with the run. `RequestCanon` keeps, per message (by its id, or
the object itself when it has none, checked against its content), the masked canonical form and,
per numbering of its tool-call ids, its digest: a request then costs a few lookups per message.
The canonical forms are kept once each, by digest (`messages`, `tools`), for the run's record.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from jupyter_deepagent.trace.research_log.fingerprint import (
    CallNumbers,
    canonical_message,
    canonical_params,
    digest,
    message_call_ids,
    ref_fingerprint,
    tool_schemas,
    with_call_ids,
)

__all__ = ["CanonicalRequest", "RequestCanon", "ToolLike", "expand_request", "tool_schema"]

_TOOL_SETS_KEPT = 64
"""Tool lists remembered by identity (a run binds one or a few; more means new objects)."""
_LANES_KEPT = 16
"""Conversations (the agent's, each subagent's, the summarizer's) whose last request is kept."""


@dataclass
class _Walked:
    """The last request of one conversation, as walked: its messages (and their contents), their
    digests, and how many tool-call ids were numbered before each."""

    objects: list[object]
    contents: list[object]
    digests: list[str]
    counts: list[int]
    numbers: CallNumbers

    def shared(self, objects: list[object]) -> int:
        """How far `objects` repeats this request (from its second message: the first, the system
        prompt, is made anew for each request), when the first holds no tool-call id in either.
        A message repeats when it is the same one, or one made again alike (a tool result shown
        as a pointer to its artifact, rebuilt for each request)."""
        if len(self.counts) < 2 or self.counts[1] != 0:
            return 0
        end = min(len(objects), len(self.objects))
        index = 1
        while index < end and _alike(objects[index], self.objects[index], self.contents[index]):
            index += 1
        return index


def _alike(new: object, old: object, old_content: object) -> bool:
    """Whether `new` has the canonical form `old` had when its content was `old_content`."""
    content = getattr(new, "content", None)
    if new is old and content is old_content:
        return True
    return (
        type(new) is type(old)
        and (content is old_content or content == old_content)
        and _extra(new) == _extra(old)
        and getattr(new, "tool_calls", None) == getattr(old, "tool_calls", None)
    )


@dataclass(frozen=True)
class CanonicalRequest:
    """A request as stored: its messages and tool schemas by digest, model, parameters."""

    messages: tuple[str, ...]
    tools: str
    model: str
    params: dict[str, Any]
    fingerprint: str

    def ref(self) -> dict[str, Any]:
        """The request as a record's call holds it (before `record` shortens its messages)."""
        return {
            "messages": list(self.messages),
            "tools": self.tools,
            "model": self.model,
            "params": self.params,
        }


def expand_request(
    ref: dict[str, Any], messages: dict[str, Any], tools: dict[str, Any]
) -> dict[str, Any]:
    """A stored request (message and tool digests) as the full canonical request it stands for."""
    return {
        "messages": [messages.get(d, {"missing": d}) for d in ref.get("messages", [])],
        "tools": tools.get(str(ref.get("tools")), []),
        "model": ref.get("model"),
        "params": ref.get("params", {}),
    }


class _Entry:
    """One message's canonical form, with what it was made from (to tell it still applies)."""

    __slots__ = ("by_ids", "calls", "canonical", "content", "extra", "ids", "kind", "source")

    def __init__(self, message: object, canonical: dict[str, Any]) -> None:
        content = getattr(message, "content", None)
        self.source = message  # held, so an identity key is never reused by another object
        self.kind = getattr(message, "type", None)
        self.content = list(content) if isinstance(content, list) else content
        self.calls = getattr(message, "tool_calls", None)
        self.extra = _extra(message)
        self.canonical = canonical
        self.ids = message_call_ids(canonical)
        self.by_ids: dict[tuple[object, ...], str] = {}

    def applies_to(self, message: object) -> bool:
        if self.source is not message:
            if getattr(message, "type", None) != self.kind or _extra(message) != self.extra:
                return False
            if getattr(message, "tool_calls", None) != self.calls:
                return False
        content = getattr(message, "content", None)
        return content is self.content or content == self.content


def _extra(message: object) -> tuple[object, ...]:
    return tuple(getattr(message, k, None) for k in ("name", "tool_call_id", "status"))


ToolLike = Mapping[str, Any] | type | Callable[..., Any] | BaseTool
"""A tool as a model is bound to it: a schema, a class, a function or a LangChain tool."""


def tool_schema(tool: ToolLike) -> dict[str, Any]:
    """A bound tool as its OpenAI schema (its name alone when it cannot be converted)."""
    try:
        return convert_to_openai_tool(tool)
    except Exception:
        return {"name": str(getattr(tool, "name", tool))}


class RequestCanon:
    """Canonical requests of one run, each message masked and hashed once.

    Args:
        redact: Masks secrets in every string before it is hashed or kept.
    """

    def __init__(self, redact: Callable[[str], str] = str) -> None:
        self.redact = redact
        self.messages: dict[str, dict[str, Any]] = {}
        """digest -> canonical message (tool-call ids by position), each kept once"""
        self.tools: dict[str, list[Any]] = {}
        """digest -> canonical tool schemas"""
        self._entries: dict[object, _Entry] = {}
        self._tool_sets: dict[tuple[int, ...], tuple[tuple[object, ...], str]] = {}
        self._lanes: dict[int, _Walked] = {}
        """id of a request's second message (its conversation's first) -> its last request"""

    def _entry(self, message: object) -> _Entry:
        key: object = getattr(message, "id", None)
        if not (isinstance(key, str) and key):
            content = getattr(message, "content", None)
            # a message without an id (the system prompt, made anew for each request) is known
            # by its text, so it is masked once, not once per request
            key = (
                ("text", getattr(message, "type", None), content)
                if isinstance(content, str)
                else ("object", id(message))
            )
        entry = self._entries.get(key)
        if entry is None or not entry.applies_to(message):
            entry = self._entries[key] = _Entry(message, canonical_message(message, self.redact))
        return entry

    def _message_digest(self, entry: _Entry, numbers: CallNumbers) -> str:
        ids = numbers.of(entry.ids) if entry.ids else ()
        found = entry.by_ids.get(ids)
        if found is None:
            canonical = with_call_ids(entry.canonical, ids)
            found = entry.by_ids[ids] = digest(canonical)
            self.messages.setdefault(found, canonical)
        return found

    def _tools_digest(self, tools: Sequence[ToolLike]) -> str:
        key = tuple(id(tool) for tool in tools)
        known = self._tool_sets.get(key)
        if known is not None and all(a is b for a, b in zip(known[0], tools, strict=True)):
            return known[1]
        schemas = tool_schemas([tool_schema(tool) for tool in tools], self.redact)
        found = digest(schemas)
        self.tools.setdefault(found, schemas)
        if len(self._tool_sets) >= _TOOL_SETS_KEPT:
            self._tool_sets.clear()
        self._tool_sets[key] = (tuple(tools), found)
        return found

    def request(
        self,
        messages: Sequence[object],
        tools: Sequence[ToolLike],
        model: str,
        params: dict[str, Any],
    ) -> CanonicalRequest:
        """The canonical form and fingerprint of a request (`params` already masked).

        The part of the history the conversation's last request also sent (the same message
        objects) is taken from it: a step costs what it adds, plus a walk over the history."""
        objects = list(messages)
        numbers = CallNumbers()
        digests: list[str] = []
        counts: list[int] = []
        index = 0
        if objects:
            first = self._entry(objects[0])
            counts.append(0)
            digests.append(self._message_digest(first, numbers))
            index = 1
            last = self._lanes.get(id(objects[1])) if len(objects) > 1 else None
            shared = last.shared(objects) if last is not None and not first.ids else 0
            if last is not None and shared > 1:
                digests += last.digests[1:shared]
                counts += last.counts[1:shared]
                known = last.counts[shared] if shared < len(last.counts) else last.numbers.count
                numbers, index = last.numbers.first(known), shared
        for message in objects[index:]:
            counts.append(numbers.count)
            digests.append(self._message_digest(self._entry(message), numbers))
        if len(objects) > 1:
            if len(self._lanes) >= _LANES_KEPT:
                self._lanes.clear()
            contents = [getattr(m, "content", None) for m in objects]
            self._lanes[id(objects[1])] = _Walked(objects, contents, digests, counts, numbers)
        tools_digest = self._tools_digest(tools)
        params = canonical_params(params)
        return CanonicalRequest(
            tuple(digests),
            tools_digest,
            model,
            params,
            ref_fingerprint(digests, tools_digest, model, params),
        )

    def expand(self, request: CanonicalRequest) -> dict[str, Any]:
        """The full canonical request (to show how it differs from a recording)."""
        return expand_request(request.ref(), self.messages, self.tools)
