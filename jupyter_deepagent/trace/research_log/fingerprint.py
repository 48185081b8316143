"""Fingerprints of model requests: the same request gives the same hash in any process, on any
machine, on any day.

A request is reduced to its canonical form: each message as its type, text or content blocks,
tool calls (name, arguments, id) and tool-call id, without message ids, timestamps or provider
metadata; the tool schemas sorted by name; the model's label and parameters. Tool-call ids are
replaced by their position ("call-1", "call-2", ... in the order they first appear in the
request), so messages carrying random ids (few-shot examples) still match their recording.
Secrets are masked (`redact`) before hashing, so neither the hash nor the stored form depends on
a key. Tool results are kept as a digest and a short head.

The fingerprint hashes the digests of the request's parts (each message, the tool schemas) with
the model and parameters, so a request is stored and compared as a list of message digests.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "CallNumbers",
    "canonical_message",
    "canonical_params",
    "canonical_request",
    "digest",
    "fingerprint",
    "masked_strings",
    "message_call_ids",
    "ref_fingerprint",
    "renumbered",
    "text_digest",
    "tool_schemas",
    "with_call_ids",
]

_HEAD_CHARS = 200
"""Characters of a tool result kept beside its digest."""


def digest(value: object) -> str:
    """The sha256 (hex) of `value` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def text_digest(text: str) -> dict[str, str | int]:
    """A text as `{"sha256", "chars", "head"}`: enough to tell it apart and recognize it."""
    return {
        "sha256": hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest(),
        "chars": len(text),
        "head": text[:_HEAD_CHARS],
    }


def masked_strings(value: Any, redact: Callable[[str], str]) -> Any:
    """`value` (JSON-like data) with `redact` applied to every string in it."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {str(k): masked_strings(v, redact) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [masked_strings(v, redact) for v in value]
    return value


def canonical_message(message: object, redact: Callable[[str], str] = str) -> dict[str, Any]:
    """One message as data that does not change between runs (ids and metadata left out; its
    tool-call ids as they are: see `renumbered`)."""
    kind = getattr(message, "type", type(message).__name__)
    content = _unmarked(getattr(message, "content", message))
    out: dict[str, Any] = {"type": kind}
    if kind == "tool":
        text = content if isinstance(content, str) else json.dumps(content, default=str)
        out["content"] = text_digest(redact(text))
        out["name"] = getattr(message, "name", None)
        out["tool_call_id"] = getattr(message, "tool_call_id", None)
        out["status"] = getattr(message, "status", None)
        return out
    out["content"] = masked_strings(content, redact)
    calls = getattr(message, "tool_calls", None) or []
    if calls:
        out["tool_calls"] = [
            {
                "name": c.get("name"),
                "args": masked_strings(c.get("args", {}), redact),
                "id": c.get("id"),
            }
            for c in calls
        ]
    return out


def _unmarked(content: object) -> object:
    """Content without prompt-cache breakpoints (`cache_control`), which say where a provider
    may cache, not what the model reads: a text block left alone is its text again."""
    if not isinstance(content, list):
        return content
    blocks = [
        {k: v for k, v in block.items() if k != "cache_control"}
        if isinstance(block, dict)
        else block
        for block in content
    ]
    if len(blocks) == 1 and isinstance(blocks[0], dict) and set(blocks[0]) == {"type", "text"}:
        if blocks[0]["type"] == "text":
            return blocks[0]["text"]
    return blocks


def message_call_ids(message: dict[str, Any]) -> tuple[object, ...]:
    """The tool-call ids a canonical message names, in order (its calls', or the one it answers)."""
    if "tool_call_id" in message:
        return (message["tool_call_id"],)
    return tuple(call.get("id") for call in message.get("tool_calls", ()))


def with_call_ids(message: dict[str, Any], ids: Sequence[object]) -> dict[str, Any]:
    """A canonical message with its tool-call ids replaced by `ids` (as `message_call_ids`)."""
    if "tool_call_id" in message:
        return {**message, "tool_call_id": ids[0]}
    if not message.get("tool_calls"):
        return message
    calls = [{**call, "id": new} for call, new in zip(message["tool_calls"], ids, strict=True)]
    return {**message, "tool_calls": calls}


class CallNumbers:
    """Tool-call ids of one request numbered by first appearance: "call-1", "call-2", ..."""

    def __init__(self) -> None:
        self._numbers: dict[object, str] = {}

    @property
    def count(self) -> int:
        """How many ids are numbered so far."""
        return len(self._numbers)

    def first(self, count: int) -> CallNumbers:
        """The numbering as it was when only its first `count` ids were numbered."""
        earlier = CallNumbers()
        earlier._numbers = dict(itertools.islice(self._numbers.items(), count))
        return earlier

    def of(self, ids: Iterable[object]) -> tuple[object, ...]:
        """`ids` as their positional names (None stays None)."""
        out: list[object] = []
        for raw in ids:
            if raw is None:
                out.append(None)
                continue
            name = self._numbers.get(raw)
            if name is None:
                name = self._numbers[raw] = f"call-{len(self._numbers) + 1}"
            out.append(name)
        return tuple(out)


def renumbered(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Canonical messages with their tool-call ids replaced by position ("call-1", ...)."""
    numbers = CallNumbers()
    return [with_call_ids(m, numbers.of(message_call_ids(m))) for m in messages]


def tool_schemas(tools: Sequence[dict[str, Any]], redact: Callable[[str], str] = str) -> list[Any]:
    """Tool schemas as canonical data: masked, sorted by name."""
    return sorted(
        (masked_strings(tool, redact) for tool in tools),
        key=lambda tool: str(tool.get("function", tool).get("name", "")),
    )


def canonical_params(params: dict[str, Any]) -> dict[str, Any]:
    """Model parameters as canonical data: sorted, unset ones left out."""
    return {k: v for k, v in sorted(params.items()) if v is not None}


def canonical_request(
    messages: Sequence[object],
    tools: Sequence[dict[str, Any]],
    model: str,
    params: dict[str, Any],
    redact: Callable[[str], str] = str,
) -> dict[str, Any]:
    """A model request as canonical data: messages (tool-call ids by position), tool schemas (by
    name), model, parameters."""
    return {
        "messages": renumbered(canonical_message(m, redact) for m in messages),
        "tools": tool_schemas(tools, redact),
        "model": model,
        "params": canonical_params(params),
    }


def ref_fingerprint(
    message_digests: Sequence[str], tools_digest: str, model: object, params: object
) -> str:
    """The fingerprint of a request given as the digests of its messages and tool schemas."""
    return digest(
        {"messages": list(message_digests), "tools": tools_digest, "model": model, "params": params}
    )


def fingerprint(request: dict[str, Any]) -> str:
    """The hash of a canonical request (`canonical_request`)."""
    return ref_fingerprint(
        [digest(m) for m in request.get("messages", [])],
        digest(request.get("tools", [])),
        request.get("model"),
        request.get("params", {}),
    )
