"""A subagent's whole conversation as Markdown: what it was asked, every tool call and result, and
its report. Saved under `/subagents/<task-id>.md` so the task stays inspectable after it returns.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["render_transcript"]


def _fence(text: str, language: str = "") -> str:
    """A fenced block longer than any backtick run inside `text`, so any content stays intact."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{language}\n{text.rstrip()}\n{fence}"


def _text(message: Any) -> str:
    text = getattr(message, "text", None)
    if isinstance(text, str):
        return str(text)
    content = getattr(message, "content", message)
    return content if isinstance(content, str) else json.dumps(content, default=str, indent=2)


def _render_message(index: int, message: Any, agent: str) -> str:
    kind = getattr(message, "type", "message")
    text = _text(message).strip()
    if kind == "human":
        return f"## {index}. Task\n\n{text}"
    if kind == "ai":
        parts = [f"## {index}. {agent}"]
        if text:
            parts.append(text)
        for call in getattr(message, "tool_calls", None) or []:
            args = json.dumps(call.get("args", {}), ensure_ascii=False, indent=2, default=str)
            title = f"Tool call `{call['name']}` (`{call.get('id')}`):"
            parts.append(f"{title}\n\n{_fence(args, 'json')}")
        return "\n\n".join(parts)
    if kind == "tool":
        status = " — error" if getattr(message, "status", "success") == "error" else ""
        title = f"## {index}. Result of `{getattr(message, 'name', None) or 'tool'}`"
        title += f" (`{getattr(message, 'tool_call_id', '')}`){status}"
        return f"{title}\n\n{_fence(text or '(empty)')}"
    return f"## {index}. {kind}\n\n{text}"


def render_transcript(
    *,
    task_id: str,
    subagent: str,
    description: str,
    messages: Sequence[Any],
    status: str,
    started_at: str,
    seconds: float,
    tokens_in: int,
    tokens_out: int,
    files_written: Sequence[str] = (),
    structured: Mapping[str, Any] | None = None,
    error: str | None = None,
) -> str:
    """The Markdown transcript of one task: a summary, then every message in order."""
    lines = [
        f"# Task {task_id}",
        "",
        f"- subagent: `{subagent}`",
        f"- status: {status}",
        f"- started: {started_at} ({seconds:.2f} s)",
        f"- tokens: {tokens_in:,} in, {tokens_out:,} out",
    ]
    if files_written:
        lines.append("- files written: " + ", ".join(f"`{path}`" for path in files_written))
    blocks = ["\n".join(lines)]
    if not messages or getattr(messages[0], "type", None) != "human":
        blocks.append(f"## Task\n\n{description.strip()}")
    blocks.extend(
        _render_message(index, message, subagent) for index, message in enumerate(messages, 1)
    )
    if structured is not None:
        body = json.dumps(structured, ensure_ascii=False, indent=2, default=str)
        blocks.append(f"## Structured result\n\n{_fence(body, 'json')}")
    if error:
        blocks.append(f"## Error\n\n{_fence(error)}")
    return "\n\n".join(blocks) + "\n"
