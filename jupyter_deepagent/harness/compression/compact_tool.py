"""`compact_conversation`: lets the agent summarize its own history between tasks (opt-in).

The tool only asks: the next model call summarizes, as if the trigger had been reached. It
refuses, politely, while the conversation is under half of the trigger, where summarizing would
lose detail for little room.
"""

from __future__ import annotations

from langchain.tools import ToolRuntime
from langchain_core.messages import ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.types import Command

from jupyter_deepagent.events import COMPACTION_REFUSED
from jupyter_deepagent.harness.compression.state import COMPRESSION_KEY
from jupyter_deepagent.harness.run_events.event_stream import emit_event, run_step

__all__ = ["compact_conversation_tool"]

_COMPACT_DESCRIPTION = (
    "Summarize the older part of this conversation to free room in the context window. Use it "
    "between tasks, when what came before is finished and only its results matter. The full "
    "text stays readable in /conversation_history/. Refused while the conversation is still "
    "small."
)


def _compact(runtime: ToolRuntime) -> Command | str:
    state = runtime.state if isinstance(runtime.state, dict) else {}
    last = (state.get(COMPRESSION_KEY) or {}).get("last") or {}
    tokens, trigger = int(last.get("tokens", 0)), int(last.get("trigger", 0))
    threshold = trigger // 2
    step = run_step(state.get("messages", []))
    if not trigger or tokens < threshold:
        emit_event(COMPACTION_REFUSED, step=step, tokens=tokens, threshold=threshold)
        return (
            f"Not compacting yet: the conversation uses about {tokens:,} tokens, under half "
            f"({threshold:,}) of the {trigger:,} at which it is summarized automatically, so "
            "there is plenty of room and nothing would be gained. Carry on with the task."
        )
    message = ToolMessage(
        content=(
            f"Compaction scheduled: the conversation ({tokens:,} tokens) will be summarized "
            "before your next step; the full text will stay readable in /conversation_history/."
        ),
        tool_call_id=runtime.tool_call_id or "",
        name="compact_conversation",
    )
    return Command(update={COMPRESSION_KEY: {"compact": True}, "messages": [message]})


def compact_conversation_tool() -> BaseTool:
    """The `compact_conversation` tool (no arguments)."""
    return StructuredTool.from_function(
        func=_compact, name="compact_conversation", description=_COMPACT_DESCRIPTION
    )
