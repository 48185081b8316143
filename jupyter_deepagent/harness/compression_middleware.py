"""Context compression as middleware: keeps every model request inside the window, losing nothing.

At tool time, a result over the offload limit goes to `/large_tool_results/` and the conversation
keeps a pointer with a 10-line preview. At each model call, what the model is sent is built from
the checkpoint by `ContextView`, cheapest step first:

1. aging: a result over `age_token_limit` the model has already replied to `keep_recent_turns`
   times is sent as a pointer to its file; a human message over the limit likewise;
2. past the trigger (85% of the window): old long `write_file`/`edit_file` arguments are cut;
3. still past it (or asked by `compact_conversation`): older messages are summarized, keeping the
   most recent 10% of the window; the folded text goes to `/conversation_history/<thread>.md`;
4. still over the window: the largest remaining messages become pointers.

A context-overflow error from the provider triggers one summarize-and-retry. Every step is a run
event, and each request gets a `context` event (tokens, window, trigger) a gauge can be drawn from.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from dataclasses import replace
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from jupyter_deepagent._exceptions import BackendError, ContextOverflow
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import bind_state_files, merge_files
from jupyter_deepagent.harness.compact_tool import compact_conversation_tool
from jupyter_deepagent.harness.compression_state import (
    COMPRESSION_KEY,
    FILESYSTEM_TOOLS,
    CompressionSettings,
    CompressionState,
)
from jupyter_deepagent.harness.context_view import OFFLOAD_PREVIEW, ContextView, ViewCache
from jupyter_deepagent.harness.events import current_agent, emit_event, run_step
from jupyter_deepagent.harness.offload import (
    HISTORY_DIR,
    LARGE_RESULTS_DIR,
    persist_text,
    pointer_text,
    safe_name,
    short_id,
)
from jupyter_deepagent.harness.summarize import asummarize, is_context_overflow, summarize
from jupyter_deepagent.harness.tokens import (
    ContextWindow,
    approx_tokens,
    calibration_factor,
    request_tokens,
    resolve_context_window,
)

__all__ = ["ContextCompressionMiddleware"]

_SOURCES = {"option": "context_window=", "profile": "the model's profile",
            "default": "the default for unknown models", "learned": "an earlier overflow"}


class _Call:
    """One model call's compression: the view, its state update, and what to send."""

    def __init__(self, view: ContextView, record: dict[str, Any], window: ContextWindow,
                 trigger: int, step: int, factor: float) -> None:
        self.view, self.record, self.window, self.trigger = view, record, window, trigger
        self.step, self.factor, self.attempt = step, factor, 0
        self.overflowed_at = 0


class ContextCompressionMiddleware(AgentMiddleware):
    """Offloading, aging, summarization and overflow recovery (see the module docstring)."""

    state_schema = CompressionState

    def __init__(
        self,
        backend: BackendProtocol,
        model: Any,
        settings: CompressionSettings | None = None,
    ) -> None:
        super().__init__()
        self.backend = backend
        self.model = model
        settings = settings or CompressionSettings()
        if isinstance(settings.summarizer, str):
            from jupyter_deepagent.harness.model_resolution import resolve_model

            settings = replace(settings, summarizer=resolve_model(settings.summarizer))
        self.settings = settings
        self.window = resolve_context_window(model, self.settings.context_window)
        self.cache = ViewCache()
        self.tools = [compact_conversation_tool()] if self.settings.compaction_tool else []

    # -- run start --------------------------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        if self.window.source == "default":
            name = getattr(self.model, "model_name", None) or getattr(self.model, "model", None)
            emit_event(
                "warning",
                message=(
                    f"The model {name or type(self.model).__name__} reports no context window "
                    f"(max_input_tokens in its profile); assuming {self.window.tokens:,} tokens, "
                    f"so summarization starts at {self.settings.trigger(self.window):,}. Pass "
                    "context_window= to create_research_agent to set the real one."
                ),
                source="context_window",
            )
        return None

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # -- tool time: offload large results ---------------------------------------------------------
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        return self._offload(request, handler(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        return self._offload(request, await handler(request))

    def _offload(self, request: ToolCallRequest, result: Any) -> Any:
        name = request.tool_call["name"]
        if name in FILESYSTEM_TOOLS or name == "compact_conversation":
            return result
        message, others = _tool_message(result)
        if message is None or not isinstance(message.content, str):
            return result
        state = request.state if isinstance(request.state, dict) else {}
        limit = self.settings.offload_limit(self._window(state.get(COMPRESSION_KEY) or {}))
        if approx_tokens(message.content) <= limit:
            return result
        text = message.content
        stem = f"{safe_name(name, 'tool')}-{short_id(request.tool_call.get('id'), text)}"
        with bind_state_files(state.get("files")) as changes:
            try:
                offloaded = persist_text(self.backend, LARGE_RESULTS_DIR, stem, text)
            except BackendError as exc:
                emit_event("warning", step=run_step(state.get("messages", [])),
                           message=f"Could not offload the result of {name}: {exc}",
                           source=LARGE_RESULTS_DIR)
                return result
        stub = message.model_copy(update={
            "content": "This result was too large for the conversation. " + pointer_text(
                offloaded, f"The full result of {name}", text, OFFLOAD_PREVIEW),
            "response_metadata": {**message.response_metadata, "offloaded_to": offloaded.path},
        })
        emit_event("offloaded", step=run_step(state.get("messages", [])), path=offloaded.path,
                   tool=name, tool_call_id=request.tool_call.get("id"), tokens=offloaded.tokens,
                   lines=offloaded.lines, chars=offloaded.chars)
        update = dict(result.update) if isinstance(result, Command) and isinstance(
            result.update, dict) else {}
        update["messages"] = [stub if m is message else m for m in others] or [stub]
        update["files"] = merge_files(update.get("files"), changes)
        return Command(update=update)

    # -- model time: build the view, compress, call, recover from overflow -----------------------
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        state = request.state
        with bind_state_files(state.get("files")) as changes:
            call = self._prepare(request)
            job = call.view.summary_job() if self._wants_summary(call) else None
            if job is not None:
                text, sent = summarize(self.settings.summarizer, request.model, job.folded,
                                       self._summary_budget(call), call.view.transcript)
                self._apply(call, job, text, sent, state)
            self._fit(call)
            try:
                response = handler(self._request(request, call))
            except Exception as exc:
                if not is_context_overflow(exc):
                    raise
                job = self._overflow(call, exc)
                if job is not None:
                    text, sent = summarize(self.settings.summarizer, request.model, job.folded,
                                           self._summary_budget(call), call.view.transcript)
                    self._apply(call, job, text, sent, state, reason="overflow")
                self._retry_fit(call, exc)
                try:
                    response = handler(self._request(request, call))
                except Exception as again:
                    if is_context_overflow(again):
                        raise self._give_up(call, again) from again
                    raise
        return self._respond(call, response, changes)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        state = request.state
        with bind_state_files(state.get("files")) as changes:
            call = self._prepare(request)
            job = call.view.summary_job() if self._wants_summary(call) else None
            if job is not None:
                text, sent = await asummarize(self.settings.summarizer, request.model, job.folded,
                                              self._summary_budget(call), call.view.transcript)
                self._apply(call, job, text, sent, state)
            self._fit(call)
            try:
                response = await handler(self._request(request, call))
            except Exception as exc:
                if not is_context_overflow(exc):
                    raise
                job = self._overflow(call, exc)
                if job is not None:
                    text, sent = await asummarize(self.settings.summarizer, request.model,
                                                  job.folded, self._summary_budget(call),
                                                  call.view.transcript)
                    self._apply(call, job, text, sent, state, reason="overflow")
                self._retry_fit(call, exc)
                try:
                    response = await handler(self._request(request, call))
                except Exception as again:
                    if is_context_overflow(again):
                        raise self._give_up(call, again) from again
                    raise
        return self._respond(call, response, changes)

    # -- the steps --------------------------------------------------------------------------------
    def _window(self, record: dict[str, Any]) -> ContextWindow:
        learned = record.get("learned_window")
        if isinstance(learned, int) and learned < self.window.tokens:
            return ContextWindow(learned, "learned")
        return self.window

    def _prepare(self, request: ModelRequest) -> _Call:
        state = request.state
        record = dict(state.get(COMPRESSION_KEY) or {})
        messages = list(request.messages)
        step = run_step(state["messages"]) + 1
        factor = record.get("factor", 1.0)
        last = record.get("last") or {}
        at = last.get("at", -1)
        if 0 <= at < len(messages):
            usage = getattr(messages[at], "usage_metadata", None) or {}
            factor = calibration_factor(usage.get("input_tokens"), last.get("raw", 0), factor)
        window = self._window(record)
        view = ContextView(
            messages,
            overhead=request_tokens(request.system_message, [], request.tools),
            record=record, settings=self.settings, window=window, backend=self.backend,
            emit=lambda event_type, /, **fields: emit_event(event_type, step=step, **fields),
            cache=self.cache, factor=factor, transcript=self._transcript(record),
        )
        call = _Call(view, record, window, self.settings.trigger(window), step, factor)
        if call.view.total() > call.trigger:
            call.view.cut_old_arguments()
        return call

    def _transcript(self, record: dict[str, Any]) -> str:
        thread = record.get("thread")
        if not thread:
            try:
                from langgraph.config import get_config

                thread = get_config().get("configurable", {}).get("thread_id")
            except RuntimeError:
                thread = None
            _, task_id = current_agent()
            thread = f"{thread}-{task_id}" if thread and task_id else thread
            thread = str(thread) if thread else f"session-{uuid.uuid4().hex[:8]}"
        return f"{HISTORY_DIR}{safe_name(str(thread), 'session', 80)}.md"

    def _wants_summary(self, call: _Call) -> bool:
        return bool(call.record.get("compact")) or call.view.total() > call.trigger

    def _summary_budget(self, call: _Call) -> int:
        budget = call.window.fraction(0.5)
        summarizer_window = resolve_context_window(self.settings.summarizer)
        if summarizer_window.source == "profile":
            budget = min(budget, summarizer_window.fraction(0.5))
        return budget

    def _apply(self, call: _Call, job: Any, text: str, sent: int, state: Any,
               reason: str | None = None) -> None:
        if reason is None:
            reason = "compact" if call.record.get("compact") else "trigger"
        call.view.apply_summary(job, text, reason=reason, todos=state.get("todos"),
                                summarizer_tokens=sent)

    def _fit(self, call: _Call) -> None:
        call.view.shrink(call.window.tokens)

    def _request(self, request: ModelRequest, call: _Call) -> ModelRequest:
        call.attempt += 1
        view = call.view
        emit_event("context", step=call.step, tokens=view.total(), window=call.window.tokens,
                   trigger=call.trigger, window_source=call.window.source,
                   messages=len(view.entries), summaries=(view.summary or {}).get("count", 0),
                   pointers=sum(e.form in ("pointer", "bare") for e in view.entries),
                   attempt=call.attempt)
        return request.override(messages=view.sent)

    def _overflow(self, call: _Call, exc: BaseException) -> Any:
        sent = call.view.total()
        emit_event("context_overflow", step=call.step, tokens=sent, window=call.window.tokens,
                   error=f"{type(exc).__name__}: {str(exc)[:500]}", action="retry")
        learned = max(1_000, int(sent * 0.9))
        if learned < call.window.tokens:
            call.window = ContextWindow(learned, "learned")
            call.trigger = self.settings.trigger(call.window)
            call.view.window = call.window
            call.view.update["learned_window"] = learned
        call.overflowed_at = sent
        return call.view.summary_job()

    def _retry_fit(self, call: _Call, exc: BaseException) -> None:
        before = call.overflowed_at
        call.view.shrink(min(call.window.tokens, max(1, before // 2)))
        if call.view.total() >= before:
            raise self._give_up(call, exc, retried=False) from exc

    def _give_up(self, call: _Call, exc: BaseException, *, retried: bool = True) -> ContextOverflow:
        before = call.overflowed_at
        now = call.view.total()
        emit_event("context_overflow", step=call.step, tokens=now, window=call.window.tokens,
                   error=f"{type(exc).__name__}: {str(exc)[:500]}", action="raise")
        tried = (
            f"summarized older messages into {call.view.transcript} and moved large messages "
            f"to files, bringing it to about {now:,} tokens; the retry overflowed too"
            if retried else "nothing more could be summarized or moved to files"
        )
        first = self._window(call.record)
        msg = (
            f"The model rejected the request as longer than its context window: about "
            f"{before:,} tokens were sent (window {first.tokens:,} tokens, from "
            f"{_SOURCES[first.source]}). The harness {tried}. Set a smaller context_window= on "
            "create_research_agent, shorten the system prompt, tools or memory files, or use a "
            "model with a larger window."
        )
        return ContextOverflow(msg)

    def _respond(self, call: _Call, response: Any, changes: dict[str, Any]) -> Any:
        view = call.view
        update: dict[str, Any] = {
            key: sorted(value) if isinstance(value, set) else value
            for key, value in view.update.items()
        }
        update["last"] = {"raw": view.raw_total(), "tokens": view.total(),
                          "trigger": call.trigger, "at": len(view.messages)}
        update["factor"] = call.factor
        if call.record.get("compact"):
            update["compact"] = False
        if not call.record.get("thread"):
            update["thread"] = view.transcript[len(HISTORY_DIR):-3]
        state_update: dict[str, Any] = {COMPRESSION_KEY: update}
        if changes:
            state_update["files"] = dict(changes)
        return ExtendedModelResponse(model_response=response, command=Command(update=state_update))


def _tool_message(result: Any) -> tuple[ToolMessage | None, list[Any]]:
    """The tool's (last) ToolMessage, and all the messages it returned (empty for a bare one)."""
    if isinstance(result, ToolMessage):
        return result, []
    if isinstance(result, Command) and isinstance(result.update, dict):
        messages = list(result.update.get("messages", []))
        for position in range(len(messages) - 1, -1, -1):
            if isinstance(messages[position], ToolMessage):
                return messages[position], messages
    return None, []
