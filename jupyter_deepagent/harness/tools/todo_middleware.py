"""LangChain's todo list (the `write_todos` tool and `todos` state), prompt text left to the assembly."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from langchain.agents.middleware import ModelRequest, ModelResponse, TodoListMiddleware

__all__ = ["TodoMiddleware"]


class TodoMiddleware(TodoListMiddleware):
    """`TodoListMiddleware` without its own system-prompt edit: the todo section is assembled
    with the others, so it shows up in the PromptAssembly like every other section."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse:
        return handler(request)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse:
        return await handler(request)
