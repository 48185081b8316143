"""Tool time: a result over the offload limit is written to `/large_tool_results/` as it arrives,
and the conversation gets a pointer with its size and first ten lines instead.

Filesystem tools are exempt (`read_file` pages instead; the content already is a file). The file
write goes through `bind_state_files`, so with a `StateBackend` the file comes back as a `files`
update in the tool's `Command`, merged with whatever the tool itself returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import bind_state_files, merge_files
from jupyter_deepagent.events import OFFLOADED, WARNING
from jupyter_deepagent.harness.artifact_folders import LARGE_RESULTS_FOLDER
from jupyter_deepagent.harness.compression.offload import (
    persist_text,
    pointer_text,
    safe_name,
    short_id,
)
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.harness.tools.filesystem import FILESYSTEM_TOOL_NAMES

__all__ = ["offload_tool_result"]

_OFFLOAD_PREVIEW = 10
"""Lines of an offloaded result shown in the conversation."""

_EXEMPT_TOOLS = frozenset({*FILESYSTEM_TOOL_NAMES, "compact_conversation"})


def offload_tool_result(
    backend: BackendProtocol,
    request: ToolCallRequest,
    result: Any,
    limit: int,
    emit: Callable[..., Any],
) -> Any:
    """`result` unchanged, or, when its text is over `limit` tokens, a `Command` carrying the
    pointer message and the file written (`emit` reports `offloaded` or a warning)."""
    name = request.tool_call["name"]
    if name in _EXEMPT_TOOLS:
        return result
    message, messages = _tool_message(result)
    if message is None or not isinstance(message.content, str):
        return result
    text = message.content
    if approx_tokens(text) <= limit:
        return result
    state = request.state if isinstance(request.state, dict) else {}
    call_id = request.tool_call.get("id")
    with bind_state_files(state.get("files")) as changes:
        try:
            offloaded = persist_text(
                backend,
                LARGE_RESULTS_FOLDER,
                f"{safe_name(name, 'tool')}-{short_id(call_id, text)}",
                text,
            )
        except BackendError as exc:
            emit(
                WARNING,
                message=f"Could not offload the result of {name}: {exc}",
                source=LARGE_RESULTS_FOLDER,
            )
            return result
    pointer = "This result was too large for the conversation. " + pointer_text(
        offloaded, f"The full result of {name}", text, _OFFLOAD_PREVIEW
    )
    stub = message.model_copy(
        update={
            "content": pointer,
            "response_metadata": {**message.response_metadata, "offloaded_to": offloaded.path},
        }
    )
    emit(
        OFFLOADED,
        path=offloaded.path,
        tool=name,
        tool_call_id=call_id,
        tokens=offloaded.tokens,
        lines=offloaded.lines,
        chars=offloaded.chars,
    )
    update = dict(result.update or {}) if isinstance(result, Command) else {}
    update["messages"] = [stub if m is message else m for m in messages] or [stub]
    update["files"] = merge_files(update.get("files"), changes)
    return Command(update=update)


def _tool_message(result: Any) -> tuple[ToolMessage | None, list[Any]]:
    """The tool's (last) ToolMessage, and all the messages it returned (empty for a bare one)."""
    if isinstance(result, ToolMessage):
        return result, []
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = list(result.update.get("messages", []))
        for message in reversed(messages):
            if isinstance(message, ToolMessage):
                return message, messages
    return None, []
