"""Context compression as middleware: keeps every model request inside the window, losing nothing.

At tool time, a result over the offload limit goes to `/large_tool_results/` and the conversation
keeps a pointer with a 10-line preview (`offload`). At each model call, what the model is
sent is built from the checkpoint by `ContextView`, cheapest step first:

1. aging (`aging`): results over `age_token_limit` the model has already replied to
   `keep_recent_turns` times are sent as pointers to their files, in batches; a long human
   message likewise;
2. past the trigger (85% of the window): old long `write_file`/`edit_file` arguments are cut;
3. still past it, once the older history passes its share of the window, or when asked by
   `compact_conversation`: older messages are summarized, keeping the most recent 10% of the
   window; the folded text goes to `/conversation_history/<thread>.md`;
4. still over the window: the largest remaining messages become pointers.

With an Anthropic model, the request's messages get their cache breakpoints (`cache_marks`).

A context-overflow error from the provider triggers one summarize-and-retry. Every step is a run
event, and each request gets a `context` event (tokens, window, trigger) a gauge can be drawn from.

Aged results are written when they age, during the model call (returned as a `files` update with
`ExtendedModelResponse`), not when they arrive: results the run never ages cost no file, and the
compression record makes each write happen once. The model call's flow is written once as a
generator and driven by a sync and an async driver.
"""

from __future__ import annotations

import operator
import uuid
from collections.abc import Awaitable, Callable, Generator, Mapping
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langgraph.types import Command

from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import bind_state_files, state_files
from jupyter_deepagent.events import CONTEXT, CONTEXT_OVERFLOW, WARNING
from jupyter_deepagent.harness.artifact_folders import HISTORY_FOLDER
from jupyter_deepagent.harness.compression.cache_marks import places_cache_marks, with_cache_mark
from jupyter_deepagent.harness.compression.compact_tool import compact_conversation_tool
from jupyter_deepagent.harness.compression.offload import offload_tool_result, safe_name
from jupyter_deepagent.harness.compression.overflow import (
    gave_up,
    is_context_overflow,
    learned_window,
)
from jupyter_deepagent.harness.compression.state import (
    COMPRESSION_KEY,
    CompressionRecord,
    CompressionSettings,
    CompressionState,
    LastRequest,
)
from jupyter_deepagent.harness.compression.summarize import asummarize, summarize
from jupyter_deepagent.harness.compression.tokens import (
    ContextWindow,
    calibration_factor,
    request_tokens,
    resolve_context_window,
)
from jupyter_deepagent.harness.compression.view import ContextView
from jupyter_deepagent.harness.compression.view_entries import SummaryJob, ViewCache
from jupyter_deepagent.harness.models.label import model_label
from jupyter_deepagent.harness.run_events.event_stream import (
    current_agent,
    emit_event,
    first_in_run,
    run_step,
)
from jupyter_deepagent.harness.run_events.model_call_event import emit_model_call

if TYPE_CHECKING:
    from langchain.messages import AnyMessage

__all__ = ["ContextCompressionMiddleware"]

_Flow = Generator[tuple[str, Any], Any, Any]


class _Call:
    """One model call's compression: the view (and the window it must fit), what happened."""

    def __init__(
        self, view: ContextView, record: CompressionRecord, trigger: int, step: int, factor: float
    ) -> None:
        self.view, self.record, self.trigger = view, record, trigger
        self.step, self.factor = step, factor
        self.attempt = self.overflowed_at = 0

    @property
    def window(self) -> ContextWindow:
        """The window this request must fit: the view's, which an overflow may shrink."""
        return self.view.window


class ContextCompressionMiddleware(AgentMiddleware):
    """Offloading, aging, summarization and overflow recovery (see the module docstring).

    Args:
        backend: where offloaded results and transcripts are written.
        model: the agent's chat model (its profile gives the window).
        settings: the limits; `CompressionSettings()` by default.
    """

    state_schema = CompressionState

    def __init__(
        self, backend: BackendProtocol, model: Any, settings: CompressionSettings | None = None
    ) -> None:
        super().__init__()
        settings = settings or CompressionSettings()
        if isinstance(settings.summarizer, str):
            from jupyter_deepagent.harness.models.resolution import resolve_model

            summarizer = resolve_model(settings.summarizer, call_policy=settings.call_policy)
            settings = replace(settings, summarizer=summarizer)
        self.backend, self.model, self.settings = backend, model, settings
        self.model_label = model_label(model)
        self.cache_marks = places_cache_marks(model)
        self.window = resolve_context_window(model, settings.context_window)
        self.cache = ViewCache()
        self.tools = [compact_conversation_tool()] if settings.compaction_tool else []
        self._last_overhead: tuple[tuple[object, ...], int] | None = None

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Warn when the window is a guess: once per run, not again for each subagent."""
        key, main = ("context_window", self.model_label), current_agent()[1] is None
        if self.window.source == "default" and first_in_run(key, otherwise=main):
            emit_event(
                WARNING,
                source="context_window",
                message=(
                    f"The model {self.model_label} reports no context window "
                    f"(max_input_tokens in its profile); assuming {self.window.tokens:,} tokens, so "
                    f"summarization starts at {self.settings.trigger(self.window):,}. Pass "
                    "context_window= to create_research_agent to set the real one."
                ),
            )
        return None

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self.before_agent(state, runtime)

    # -- tool time --------------------------------------------------------------------------------
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
        state = request.state if isinstance(request.state, dict) else {}
        step = run_step(state.get("messages", []))
        limit = self.settings.offload_limit(self._window(state.get(COMPRESSION_KEY) or {}))
        return offload_tool_result(
            self.backend,
            request,
            result,
            limit,
            lambda event_type, /, **fields: emit_event(event_type, step=step, **fields),
        )

    # -- model time: the flow once, two drivers ---------------------------------------------------
    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> Any:
        with bind_state_files(state_files(request.state)) as changes:
            call = self._prepare(request)
            flow, value, error = self._flow(request, call), None, None
            while (effect := _resume(flow, value, error))[0] != "done":
                value, error = None, None
                try:
                    value = (
                        summarize(*effect[1]) if effect[0] == "summarize" else handler(effect[1])
                    )
                except Exception as exc:
                    error = exc
            return self._respond(call, effect[1], changes)

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> Any:
        with bind_state_files(state_files(request.state)) as changes:
            call = self._prepare(request)
            flow, value, error = self._flow(request, call), None, None
            while (effect := _resume(flow, value, error))[0] != "done":
                value, error = None, None
                try:
                    value = await (
                        asummarize(*effect[1]) if effect[0] == "summarize" else handler(effect[1])
                    )
                except Exception as exc:
                    error = exc
            return self._respond(call, effect[1], changes)

    def _flow(self, request: ModelRequest, call: _Call) -> _Flow:
        """Summarize if due, fit the window, call the model; on overflow, fold and retry once."""
        view = call.view
        due = self._due_summary(view, call)
        if due is not None:
            reason, job = due
            self._apply(call, job, (yield self._summarize(call, request, job)), request, reason)
        view.shrink(call.window.tokens)
        try:
            return (yield ("call", self._request(request, call)))
        except Exception as exc:
            if not is_context_overflow(exc):
                raise
            call.overflowed_at = view.total()
            emit_event(
                CONTEXT_OVERFLOW,
                step=call.step,
                tokens=call.overflowed_at,
                window=call.window.tokens,
                error=_brief(exc),
                action="retry",
            )
            self._learn(call)
            fold = view.summary_job()
            if fold is not None:
                self._apply(
                    call, fold, (yield self._summarize(call, request, fold)), request, "overflow"
                )
            view.shrink(min(call.window.tokens, max(1, call.overflowed_at // 2)))
            if view.total() >= call.overflowed_at:
                raise self._give_up(call, exc, retried=False) from exc
            try:
                return (yield ("call", self._request(request, call)))
            except Exception as again:
                if is_context_overflow(again):
                    raise self._give_up(call, again, retried=True) from again
                raise

    # -- the steps --------------------------------------------------------------------------------
    def _due_summary(self, view: ContextView, call: _Call) -> tuple[str, SummaryJob] | None:
        """Why this call summarizes, and what: the agent asked (`compact`); the request is past
        the trigger (and folding would help); or the older part of the conversation, what a
        summary folds, has grown past its share of the window (`history`)."""
        compact = bool(call.record.get("compact"))
        total = view.total()
        if compact:
            reason = "compact"
        elif total > call.trigger:
            reason = "trigger"
        elif self._history_is_long(view, call):
            reason = "history"
        else:
            return None
        job = view.summary_job()
        if job is None:
            return None
        if reason == "trigger" and not job.worth_it(total - call.trigger):
            return None
        history = self.settings.history_limit(call.window) or 0
        if reason == "history" and job.tokens(besides_summary=True) <= history:
            return None  # the last summary, folded again, does not count: it would refold it
        return reason, job

    def _history_is_long(self, view: ContextView, call: _Call) -> bool:
        """Whether the older part of the conversation may pass its share of the window: what a
        summary folds is at most the request less the prompt and the recent part it keeps (the
        summary job says how much it really folds)."""
        history = self.settings.history_limit(call.window)
        keep = self.settings.keep_tokens(call.window) or 0
        return history is not None and view.total() - view.overhead - keep > history

    def _window(self, record: CompressionRecord) -> ContextWindow:
        learned = record.get("learned_window")
        if isinstance(learned, int) and learned < self.window.tokens:
            return ContextWindow(learned, "learned")
        return self.window

    def _prepare(self, request: ModelRequest) -> _Call:
        state = request.state
        stored = state.get(COMPRESSION_KEY)
        record = cast("CompressionRecord", dict(stored) if isinstance(stored, Mapping) else {})
        messages: list[BaseMessage] = list(request.messages)
        step = run_step(state["messages"]) + 1
        factor = record.get("factor", 1.0)
        last: LastRequest | dict[str, int] = record.get("last") or {}
        at = last.get("at", -1)
        if 0 <= at < len(messages):  # the reply to the last request: what did it really cost?
            usage = getattr(messages[at], "usage_metadata", None) or {}
            factor = calibration_factor(usage.get("input_tokens"), last.get("raw", 0), factor)
        window = self._window(record)
        view = ContextView(
            messages,
            overhead=self._overhead(request),
            record=record,
            settings=self.settings,
            window=window,
            backend=self.backend,
            emit=lambda event_type, /, **fields: emit_event(event_type, step=step, **fields),
            cache=self.cache,
            factor=factor,
            transcript=self._transcript(record),
        )
        call = _Call(view, record, self.settings.trigger(window), step, factor)
        if view.total() > call.trigger or self._history_is_long(view, call):
            view.cut_old_arguments()  # the cheap step first, without a model call
        return call

    def _overhead(self, request: ModelRequest) -> int:
        """Tokens of the system message and the tool schemas: counted again only when they are
        not the very objects of the last call (a run sends the same ones at each call)."""
        sent = (request.system_message, *request.tools)
        last = self._last_overhead
        if last is not None and len(last[0]) == len(sent) and all(map(operator.is_, last[0], sent)):
            return last[1]
        tokens = request_tokens(request.system_message, [], request.tools)
        self._last_overhead = (sent, tokens)
        return tokens

    @staticmethod
    def _transcript(record: CompressionRecord) -> str:
        thread = record.get("thread")
        if not thread:
            try:
                from langgraph.config import get_config

                thread = get_config().get("configurable", {}).get("thread_id")
            except RuntimeError:  # called outside a graph run
                thread = None
            _, task_id = current_agent()
            thread = f"{thread}-{task_id}" if thread and task_id else thread
            thread = str(thread) if thread else f"session-{uuid.uuid4().hex[:8]}"
        return f"{HISTORY_FOLDER}{safe_name(str(thread), 'session', 80)}.md"

    def _summarize(self, call: _Call, request: ModelRequest, job: SummaryJob) -> tuple[str, Any]:
        """The effect that summarizes `job`: `summarize`'s arguments, for either driver."""
        budget = self._summary_budget(call)
        return "summarize", (
            self.settings.summarizer,
            request.model,
            job.folded,
            budget,
            call.view.transcript,
            partial(_summarizer_called, call.step),
            self.settings.call_policy,
            call.step,
        )

    def _summary_budget(self, call: _Call) -> int:
        budget = call.window.fraction(0.5)
        summarizer_window = resolve_context_window(self.settings.summarizer)
        if summarizer_window.source == "profile":
            budget = min(budget, summarizer_window.fraction(0.5))
        return budget

    @staticmethod
    def _apply(
        call: _Call, job: SummaryJob, result: tuple[str, int], request: ModelRequest, reason: str
    ) -> None:
        text, sent = result
        call.view.apply_summary(
            job, text, reason=reason, todos=request.state.get("todos"), summarizer_tokens=sent
        )

    def _request(self, request: ModelRequest, call: _Call) -> ModelRequest:
        call.attempt += 1
        view = call.view
        emit_event(
            CONTEXT,
            step=call.step,
            tokens=view.total(),
            window=call.window.tokens,
            trigger=call.trigger,
            window_source=call.window.source,
            messages=len(view.entries),
            summaries=view.summary.get("count", 0) if view.summary else 0,
            pointers=view.pointer_count(),
            attempt=call.attempt,
        )
        sent = view.sent
        for position in view.cache_marks() if self.cache_marks else ():
            sent = [*sent[:position], with_cache_mark(sent[position]), *sent[position + 1 :]]
        return request.override(messages=cast("list[AnyMessage]", sent))

    def _learn(self, call: _Call) -> None:
        window = learned_window(call.overflowed_at, call.window)
        if window is not call.window:
            call.view.window = window
            call.trigger = self.settings.trigger(window)
            call.view.update["learned_window"] = window.tokens

    def _give_up(self, call: _Call, exc: BaseException, *, retried: bool) -> Exception:
        now = call.view.total()
        emit_event(
            CONTEXT_OVERFLOW,
            step=call.step,
            tokens=now,
            window=call.window.tokens,
            error=_brief(exc),
            action="raise",
        )
        return gave_up(
            call.overflowed_at,
            now,
            self._window(call.record),
            call.view.transcript,
            retried=retried,
        )

    @staticmethod
    def _respond(call: _Call, response: Any, changes: dict[str, Any]) -> ExtendedModelResponse:
        view = call.view
        update = {
            key: sorted(value) if isinstance(value, set) else value
            for key, value in view.update.items()
        }
        update["last"] = {
            "raw": view.raw_total(),
            "tokens": view.total(),
            "trigger": call.trigger,
            "at": len(view.messages),
        }
        update["factor"] = call.factor
        if call.record.get("compact"):
            update["compact"] = False
        if not call.record.get("thread"):
            update["thread"] = view.transcript[len(HISTORY_FOLDER) : -len(".md")]
        state_update: dict[str, Any] = {COMPRESSION_KEY: update}
        if changes:
            state_update["files"] = dict(changes)
        return ExtendedModelResponse(model_response=response, command=Command(update=state_update))


def _resume(flow: _Flow, value: Any, error: Exception | None) -> tuple[str, Any]:
    """Hand the flow the last effect's value (or error); its next effect, or `("done", result)`."""
    try:
        return flow.throw(error) if error is not None else flow.send(value)
    except StopIteration as done:
        return "done", done.value


def _brief(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:500]}"


def _summarizer_called(
    step: int, model: Any, sent: list[Any], reply: AIMessage | None, seconds: float
) -> None:
    """The summarizer's own request, as a `model_call` event (so a run that summarized replays)."""
    emit_model_call(
        step=step, model=model, sent=sent, reply=reply, seconds=seconds, purpose="summarize"
    )
