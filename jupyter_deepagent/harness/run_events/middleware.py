"""Reports each model call and tool call as run events (timings, tokens, sizes, errors, todos,
files written).

A `model_call` event carries the whole reply and a `tool_result` the tool's whole text, so a
recorded run holds everything needed to play it again without the model or the tools.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command

from jupyter_deepagent.events import FILE_WRITTEN, TODOS, TOOL_CALL, TOOL_RESULT
from jupyter_deepagent.harness.run_events.event_stream import emit_event, run_step, summarize_args
from jupyter_deepagent.harness.run_events.model_call_event import as_ai_message, emit_model_call

__all__ = ["RunEventsMiddleware"]

# file tools -> the argument holding the text they write (a `file_written` event's `chars`)
_FILE_WRITING_TOOLS = {"write_file": "content", "edit_file": "new_string"}


class RunEventsMiddleware(AgentMiddleware):
    """Innermost middleware: times the model and the tools themselves."""

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        started = time.perf_counter()
        response = handler(request)
        self._model_event(request, response, time.perf_counter() - started)
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        started = time.perf_counter()
        response = await handler(request)
        self._model_event(request, response, time.perf_counter() - started)
        return response

    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        step = self._tool_started(request)
        started = time.perf_counter()
        try:
            result = handler(request)
        except Exception as exc:
            self._tool_finished(request, None, time.perf_counter() - started, step, exc)
            raise
        self._tool_finished(request, result, time.perf_counter() - started, step)
        return result

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        step = self._tool_started(request)
        started = time.perf_counter()
        try:
            result = await handler(request)
        except Exception as exc:
            self._tool_finished(request, None, time.perf_counter() - started, step, exc)
            raise
        self._tool_finished(request, result, time.perf_counter() - started, step)
        return result

    # -- event building ---------------------------------------------------------------------------
    @staticmethod
    def _model_event(request: ModelRequest, response: ModelResponse, seconds: float) -> None:
        system = [request.system_message] if request.system_message is not None else []
        emit_model_call(
            step=run_step(request.state["messages"]) + 1,
            model=request.model,
            sent=[*system, *request.messages],
            reply=as_ai_message(response),
            seconds=seconds,
            purpose="agent",
        )

    @staticmethod
    def _tool_started(request: ToolCallRequest) -> int:
        call = request.tool_call
        step = run_step(request.state["messages"]) if isinstance(request.state, dict) else 0
        emit_event(
            TOOL_CALL,
            step=step,
            tool=call["name"],
            tool_call_id=call.get("id"),
            args=summarize_args(call.get("args", {})),
        )
        return step

    @staticmethod
    def _tool_finished(
        request: ToolCallRequest,
        result: ToolMessage | Command | None,
        seconds: float,
        step: int,
        exc: BaseException | None = None,
    ) -> None:
        call = request.tool_call
        message = _tool_message(result)
        content = str(message.text) if message is not None else ""
        error = None
        if exc is not None:
            error = f"{type(exc).__name__}: {exc}"
        elif message is not None and message.status == "error":
            error = content
        emit_event(
            TOOL_RESULT,
            step=step,
            tool=call["name"],
            tool_call_id=call.get("id"),
            content=content,
            chars=len(content),
            seconds=round(seconds, 6),
            error=error,
        )
        if call["name"] == "write_todos" and error is None:
            emit_event(TODOS, step=step, todos=list(call.get("args", {}).get("todos", [])))
        if call["name"] in _FILE_WRITING_TOOLS and error is None:
            args = call.get("args", {})
            text = args.get(_FILE_WRITING_TOOLS[call["name"]])
            emit_event(
                FILE_WRITTEN,
                step=step,
                path=str(args.get("file_path", "")),
                tool=call["name"],
                chars=len(text) if isinstance(text, str) else 0,
            )


def _tool_message(result: ToolMessage | Command | None) -> ToolMessage | None:
    if isinstance(result, ToolMessage):
        return result
    if isinstance(result, Command) and isinstance(result.update, dict):
        for message in result.update.get("messages", []):
            if isinstance(message, ToolMessage):
                return message
    return None
