"""What a finished `task` produced: its structured response as JSON data, its last words and the
files it wrote."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from jupyter_deepagent.backends.state import FileData
from jupyter_deepagent.harness.artifact_folders import HARNESS_FOLDERS

__all__ = ["last_ai_text", "structured_as_dict", "written_paths"]

_WRITING_TOOLS = ("write_file", "edit_file")


def structured_as_dict(value: Any) -> dict[str, Any] | None:
    """A structured response as plain JSON data (pydantic model, dataclass, TypedDict or dict)."""
    if value is None:
        return None
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    if not isinstance(value, Mapping):
        value = {"value": value}
    return json.loads(json.dumps(dict(value), ensure_ascii=False, default=str))


def last_ai_text(messages: list[Any]) -> str:
    """The text of the last AI message that has any, stripped ("" if none does)."""
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            text = message.text if isinstance(message.text, str) else str(message.content)
            if text.strip():
                return text.strip()
    return ""


def written_paths(messages: list[Any], changed: Mapping[str, FileData | None]) -> list[str]:
    """Files the subagent wrote: successful write_file/edit_file calls (any backend), then other
    paths its state changed (a compiled subagent writing `files` itself)."""
    failed = {
        message.tool_call_id
        for message in messages
        if getattr(message, "type", None) == "tool" and getattr(message, "status", "") == "error"
    }
    paths: list[str] = []
    for message in messages:
        for call in getattr(message, "tool_calls", None) or []:
            path = str(call.get("args", {}).get("file_path", ""))
            if call["name"] in _WRITING_TOOLS and path and call.get("id") not in failed:
                path = "/" + path.lstrip("/")
                if path not in paths:
                    paths.append(path)
    for path, data in sorted(changed.items()):
        if data is not None and path not in paths and not path.startswith(HARNESS_FOLDERS):
            paths.append(path)
    return paths
