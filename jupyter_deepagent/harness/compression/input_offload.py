"""Tool inputs: old `write_file`/`edit_file` calls whose long arguments are already applied to a
file are sent with a pointer to that file in place of the text (the checkpoint keeps it whole)."""

from __future__ import annotations

from collections.abc import Collection

from langchain_core.messages import AIMessage, ToolCall

__all__ = ["cut_file_arguments", "long_file_writes"]

_FILE_WRITERS = {"write_file": ("content",), "edit_file": ("old_string", "new_string")}
"""Tools whose long text arguments end up in a file, and those arguments."""

_KEEP_CHARS = 200


def long_file_writes(message: AIMessage, limit: int, done: Collection[str]) -> list[ToolCall]:
    """The file-writing calls of `message` whose text arguments exceed `limit` characters
    together and that are not in `done` yet."""
    found = []
    for call in message.tool_calls:
        fields = _FILE_WRITERS.get(call.get("name", ""))
        if not fields or call.get("id") in done:
            continue
        args = call.get("args", {})
        if sum(len(str(args.get(name, ""))) for name in fields) > limit:
            found.append(call)
    return found


def cut_file_arguments(message: AIMessage, cut: Collection[str]) -> AIMessage:
    """A copy of `message` whose file-writing calls with ids in `cut` carry a pointer to the file
    in place of each long text argument (provider-specific raw copies of the calls dropped)."""
    calls = []
    for call in message.tool_calls:
        fields = _FILE_WRITERS.get(call.get("name", ""))
        if fields and call.get("id") in cut:
            args = dict(call.get("args", {}))
            path = args.get("file_path", "the file")
            for name in fields:
                value = args.get(name)
                if isinstance(value, str) and len(value) > _KEEP_CHARS:
                    args[name] = (
                        f"[{len(value):,} characters, already applied to {path}; "
                        "read_file it for the current text]"
                    )
            call = {**call, "args": args}
        calls.append(call)
    kwargs = {
        key: value
        for key, value in message.additional_kwargs.items()
        if key not in ("tool_calls", "function_call")
    }
    return message.model_copy(update={"tool_calls": calls, "additional_kwargs": kwargs})
