"""LangChain's todo list (the `write_todos` tool and `todos` state), prompt text left to the assembly."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, TodoListMiddleware
from langchain.agents.middleware.todo import PlanningState
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

__all__ = ["TodoMiddleware"]

PARALLEL_TODOS_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. Please call "
    "it only once per model invocation to update the todo list."
)
"""What each of several `write_todos` calls in one reply gets instead (LangChain's own words)."""


class TodoMiddleware(AgentMiddleware):
    """`TodoListMiddleware`'s tool and state, without its system-prompt edit (the todo section is
    assembled with the others, so it shows up in the PromptAssembly like every other section).

    LangChain refuses several `write_todos` calls in one reply in an `after_model` hook, a graph
    step of its own after every model call; here the call itself is refused, at tool time, with
    the same error message for each of them, and the model call costs no extra step.
    """

    state_schema = PlanningState

    def __init__(self) -> None:
        super().__init__()
        self.tools = list(TodoListMiddleware().tools)

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        return _refused(request) or handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        return _refused(request) or await handler(request)


def _refused(request: ToolCallRequest) -> ToolMessage | None:
    """The error for a `write_todos` call made beside another one in the same reply, else None."""
    call = request.tool_call
    if call["name"] != "write_todos":
        return None
    state = request.state if isinstance(request.state, dict) else {}
    for message in reversed(state.get("messages", [])):
        if isinstance(message, AIMessage):
            if sum(c["name"] == "write_todos" for c in message.tool_calls) < 2:
                return None
            return ToolMessage(
                content=PARALLEL_TODOS_ERROR, tool_call_id=call["id"], status="error"
            )
    return None
