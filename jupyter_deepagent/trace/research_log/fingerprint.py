"""Fingerprints of model requests: the same request gives the same hash in any process, on any
machine, on any day.

A request is reduced to its canonical form: each message as its type, text or content blocks,
tool calls (name, arguments, id) and tool-call id, without message ids, timestamps or provider
metadata; the tool schemas sorted by name; the model's label and parameters. Everything is dumped
as JSON with sorted keys. Secrets are masked (`redact`) before hashing, so neither the hash nor
the stored form depends on a key. Tool results are kept as a digest and a short head.
"""

from __future__ import annotations

import difflib
import hashlib
import json
from collections.abc import Callable, Sequence
from typing import Any

__all__ = [
    "canonical_request",
    "describe_difference",
    "digest",
    "fingerprint",
    "masked_strings",
    "text_digest",
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


def _canonical_message(message: object, redact: Callable[[str], str] = str) -> dict[str, Any]:
    """One message as data that does not change between runs (ids and metadata left out)."""
    kind = getattr(message, "type", type(message).__name__)
    content = getattr(message, "content", message)
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


def canonical_request(
    messages: Sequence[object],
    tools: Sequence[dict[str, Any]],
    model: str,
    params: dict[str, Any],
    redact: Callable[[str], str] = str,
) -> dict[str, Any]:
    """A model request as canonical data: messages, tool schemas (by name), model, parameters."""
    schemas = sorted(
        (masked_strings(tool, redact) for tool in tools),
        key=lambda tool: str(tool.get("function", tool).get("name", "")),
    )
    return {
        "messages": [_canonical_message(m, redact) for m in messages],
        "tools": schemas,
        "model": model,
        "params": {k: v for k, v in sorted(params.items()) if v is not None},
    }


def fingerprint(request: dict[str, Any]) -> str:
    """The hash of a canonical request (`canonical_request`)."""
    return digest(request)


def _message_lines(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, dict) and "sha256" in content:  # a tool result
        text = f"(tool result, {content['chars']} chars) {content['head']}"
    elif isinstance(content, str):
        text = content
    else:
        text = json.dumps(content, sort_keys=True, ensure_ascii=False, default=str)
    lines = [f"[{message.get('type')}] {line}" for line in text.splitlines() or [""]]
    for call in message.get("tool_calls", []):
        args = json.dumps(call.get("args"), sort_keys=True, ensure_ascii=False, default=str)
        lines.append(f"[{message.get('type')}] -> {call.get('name')}({args})")
    return lines


def describe_difference(recorded: dict[str, Any] | None, current: dict[str, Any]) -> str:
    """A readable account of how `current` differs from `recorded` (canonical requests): the
    model, the parameters, the tools, or the first differing message with a line diff."""
    if recorded is None:
        return "nothing was recorded at this step (the recording ends earlier)"
    parts = []
    if recorded.get("model") != current.get("model"):
        parts.append(f"model: recorded {recorded.get('model')!r}, now {current.get('model')!r}")
    if recorded.get("params") != current.get("params"):
        parts.append(f"parameters: recorded {recorded.get('params')}, now {current.get('params')}")
    if recorded.get("tools") != current.get("tools"):
        names = [
            sorted(t.get("function", t).get("name", "") for t in r.get("tools", []))
            for r in (recorded, current)
        ]
        if names[0] != names[1]:
            parts.append(f"tools: recorded {names[0]}, now {names[1]}")
        else:
            parts.append("tools: the same names, but their descriptions or schemas changed")
    old, new = recorded.get("messages", []), current.get("messages", [])
    for index in range(max(len(old), len(new))):
        before = old[index] if index < len(old) else None
        after = new[index] if index < len(new) else None
        if before == after:
            continue
        diff = difflib.unified_diff(
            _message_lines(before) if before else [],
            _message_lines(after) if after else [],
            "recorded",
            "now",
            lineterm="",
            n=1,
        )
        shown = list(diff)[2:40]
        parts.append(f"message {index + 1} of {len(new)} differs:\n" + "\n".join(shown))
        break
    return "\n".join(parts) or "the requests differ only in ways not shown"
