"""LangChain's todo list (the `write_todos` tool and `todos` state), prompt text left to the assembly."""

from __future__ import annotations

from typing import Any

from langchain.agents.middleware import AgentMiddleware
from langchain.agents.middleware.todo import (
    WRITE_TODOS_TOOL_DESCRIPTION,
    PlanningState,
    Todo,
    WriteTodosInput,
)
from langchain.tools import ToolRuntime
from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import StructuredTool
from langgraph.types import Command

__all__ = ["PARALLEL_TODOS_ERROR", "TodoMiddleware"]

PARALLEL_TODOS_ERROR = (
    "Error: The `write_todos` tool should never be called multiple times in parallel. Please call "
    "it only once per model invocation to update the todo list."
)
"""What each of several `write_todos` calls in one reply gets instead (LangChain's own words)."""


class TodoMiddleware(AgentMiddleware):
    """`TodoListMiddleware`'s tool (same name, description and schema) and state, without its
    system-prompt edit: the todo section is assembled with the others, so it shows up in the
    PromptAssembly like every other section.

    LangChain refuses several `write_todos` calls in one reply in an `after_model` hook, a graph
    step of its own after every model call; here the tool refuses them itself, each with the same
    error, so the middleware adds no step and no wrapper to any call.
    """

    state_schema = PlanningState

    def __init__(self) -> None:
        super().__init__()
        self.tools = [
            StructuredTool.from_function(
                name="write_todos",
                description=WRITE_TODOS_TOOL_DESCRIPTION,
                func=_write_todos,
                coroutine=_awrite_todos,
                args_schema=WriteTodosInput,
                infer_schema=False,
            )
        ]


def _write_todos(runtime: ToolRuntime[Any, Any], todos: list[Todo]) -> Command[Any] | ToolMessage:
    """Replace the todo list, unless the reply making this call makes another one too."""
    call_id = runtime.tool_call_id or ""
    if _parallel(runtime.state):
        return ToolMessage(content=PARALLEL_TODOS_ERROR, tool_call_id=call_id, status="error")
    return Command(
        update={
            "todos": todos,
            "messages": [ToolMessage(f"Updated todo list to {todos}", tool_call_id=call_id)],
        }
    )


async def _awrite_todos(
    runtime: ToolRuntime[Any, Any], todos: list[Todo]
) -> Command[Any] | ToolMessage:
    return _write_todos(runtime, todos)


def _parallel(state: object) -> bool:
    """Whether the last reply calls `write_todos` more than once."""
    messages = state.get("messages", []) if isinstance(state, dict) else []
    for message in reversed(messages):
        if isinstance(message, AIMessage):
            return sum(call["name"] == "write_todos" for call in message.tool_calls) > 1
    return False
