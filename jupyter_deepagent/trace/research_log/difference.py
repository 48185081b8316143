"""How a request differs from its recording, in words a researcher can act on."""

from __future__ import annotations

import difflib
import json
from typing import Any

__all__ = ["describe_difference"]

_SHOWN_LINES = 38
"""Diff lines shown for a differing message (or, as a last resort, the whole request)."""


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


def _json_lines(value: object) -> list[str]:
    text = json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False, default=str)
    return text.splitlines()


def _diff(before: list[str], after: list[str]) -> list[str]:
    diff = difflib.unified_diff(before, after, "recorded", "now", lineterm="", n=1)
    return list(diff)[2 : 2 + _SHOWN_LINES]


def _message_difference(before: dict[str, Any] | None, after: dict[str, Any] | None) -> list[str]:
    """The lines that differ between two canonical messages: as text, else as JSON (a tool-call
    id, a tool result's status or name, a content block's field)."""
    shown = _diff(_message_lines(before) if before else [], _message_lines(after) if after else [])
    if any(line[:1] in "+-" for line in shown):
        return shown
    return _diff(_json_lines(before) if before else [], _json_lines(after) if after else [])


def describe_difference(recorded: dict[str, Any] | None, current: dict[str, Any]) -> str:
    """A readable account of how `current` differs from `recorded` (canonical requests): the
    model, the parameters, the tools, or the first differing message with a line diff; never
    empty when they differ (a JSON diff of the two shows what the others do not)."""
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
            parts.append(
                "tools: the same names, but their descriptions or schemas changed:\n"
                + "\n".join(_diff(_json_lines(recorded["tools"]), _json_lines(current["tools"])))
            )
    old, new = recorded.get("messages", []), current.get("messages", [])
    for index in range(max(len(old), len(new))):
        before = old[index] if index < len(old) else None
        after = new[index] if index < len(new) else None
        if before == after:
            continue
        shown = _message_difference(before, after)
        parts.append(f"message {index + 1} of {len(new)} differs:\n" + "\n".join(shown))
        break
    if parts:
        return "\n".join(parts)
    shown = _diff(_json_lines(recorded), _json_lines(current))
    return "the requests differ:\n" + "\n".join(shown) if shown else "the requests are equal"
