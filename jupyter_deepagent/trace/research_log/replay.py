"""Record and replay at the chat-model boundary: `ReplayChatModel` wraps the run's chat model.

Every request the agent, its subagents or the summarizer send passes through the wrapper, which
computes its fingerprint (`fingerprint`) and asks the run's `CallLedger`:

- `auto`: a request recorded for this cell gets the recorded response, with no model call; any
  other request calls the live model, and the call is recorded. Without a usable model, a request
  that is not recorded raises `ReplayMismatch` with the difference and the way out.
- `strict`: a request that is not recorded raises `ReplayMismatch` naming the cell, the step and
  a readable difference of the messages, tools or model.
- `off`: every request calls the live model (and is recorded).
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.base import LangSmithParams
from langchain_core.language_models.chat_models import BaseChatModel, generate_from_stream
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    message_to_dict,
    messages_from_dict,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr

from jupyter_deepagent._exceptions import ReplayMismatch
from jupyter_deepagent.harness.run_events.event_stream import current_agent
from jupyter_deepagent.trace.research_log.fingerprint import (
    canonical_request,
    describe_difference,
    fingerprint,
    masked_strings,
)

__all__ = ["SERVED_FROM_LOG", "CallLedger", "ReplayChatModel"]

_REPLAY_MODES = ("auto", "strict", "off")
SERVED_FROM_LOG = "jupyter_deepagent_from_research_log"
"""Set (True) in the `response_metadata` of each response served from the log, so the thread's
checkpoint still tells, after a restart, that its tool calls came from a log (fingerprints leave
metadata out)."""


class CallLedger:
    """The model calls of one run: those recorded earlier to serve, and those made now.

    Args:
        recorded: The `calls` of the cell's last record (each `{fingerprint, request, response}`).
        mode: "auto", "strict" or "off".
        cell: How the cell is named in errors ("cell 3", "cell abc123").
        redact: Masks secrets in what is stored.
        way_out: What to do about a mismatch, added to its message.
    """

    def __init__(
        self,
        recorded: list[dict[str, Any]],
        mode: str,
        cell: str,
        redact: Callable[[str], str] = str,
        way_out: str = "",
    ) -> None:
        if mode not in _REPLAY_MODES:
            msg = f"replay mode must be one of {', '.join(_REPLAY_MODES)}, not {mode!r}"
            raise ValueError(msg)
        self.mode = mode
        self.cell = cell
        self.redact = redact
        self.way_out = way_out
        self.recorded = list(recorded)
        self._waiting: dict[str, deque[dict[str, Any]]] = {}
        for call in self.recorded:
            self._waiting.setdefault(call["fingerprint"], deque()).append(call)
        self.calls: list[dict[str, Any]] = []
        self.mismatch: ReplayMismatch | None = None
        self._lock = threading.Lock()

    @property
    def outcome(self) -> str:
        """ "replayed" (every call served from the log), "live", "mixed", or "none" (no call)."""
        kinds = {call["replayed"] for call in self.calls}
        if not kinds:
            return "none"
        if kinds == {True}:
            return "replayed"
        return "live" if kinds == {False} else "mixed"

    def unserved(self) -> list[dict[str, Any]]:
        """The recorded calls not served (yet): what a resume of this run may still need, when
        the run paused where its recording did not (code from the log waits for approval)."""
        with self._lock:
            return [call for waiting in self._waiting.values() for call in waiting]

    def serve(self, request: dict[str, Any], live: bool) -> dict[str, Any] | None:
        """The recorded response for `request`, or None when the live model must answer.

        Raises:
            ReplayMismatch: Strict mode, or auto without a usable model (`live` False), and the
                request was not recorded.
        """
        digest = fingerprint(request)
        with self._lock:
            step = len(self.calls) + 1
            if self.mode != "off":
                waiting = self._waiting.get(digest)
                if waiting:
                    call = waiting.popleft()
                    self._append(digest, request, call["response"], replayed=True)
                    return call["response"]
            if self.mode == "strict" or not live:
                self.mismatch = self._mismatch(step, request, live)
                raise self.mismatch
        return None

    def record(self, request: dict[str, Any], response: BaseMessage, seconds: float) -> None:
        """Keep a live call: its request and its whole response (secrets masked)."""
        stored = masked_strings(message_to_dict(response), self.redact)
        with self._lock:
            self._append(fingerprint(request), request, stored, replayed=False, seconds=seconds)

    def _append(
        self,
        digest: str,
        request: dict[str, Any],
        response: dict[str, Any],
        *,
        replayed: bool,
        seconds: float = 0.0,
    ) -> None:
        agent, task_id = current_agent()
        self.calls.append(
            {
                "step": len(self.calls) + 1,
                "fingerprint": digest,
                "request": request,
                "response": response,
                "replayed": replayed,
                "agent": agent,
                "task_id": task_id,
                "seconds": round(seconds, 6),
            }
        )

    def _mismatch(self, step: int, request: dict[str, Any], live: bool) -> ReplayMismatch:
        served = {c["fingerprint"] for c in self.calls if c["replayed"]}
        unserved = [c for c in self.recorded if c["fingerprint"] not in served]
        closest = unserved[0] if unserved else None
        why = "differs from the research log" if self.recorded else "has no recording"
        text = f"{self.cell}, model call {step}: the request {why} ({self.mode} replay)."
        if self.recorded:
            text += "\n" + describe_difference(closest and closest["request"], request)
        if not live and self.mode != "strict":
            text += "\nNo usable model to ask instead."
        if self.way_out:
            text += "\n" + self.way_out
        return ReplayMismatch(text, cell=self.cell, step=step)


def _tool_schema(tool: Any) -> dict[str, Any]:
    try:
        return convert_to_openai_tool(tool)
    except Exception:
        return {"name": str(getattr(tool, "name", tool))}


class ReplayChatModel(BaseChatModel):
    """A chat model that answers from a research log and records what the live model says.

    Attributes:
        inner: The live chat model (None when none could be made, e.g. no API key).
        ledger: The run's `CallLedger`.
        on_served: Called with each response served from the log: its tool calls come from
            the log, not from a model answering now, so the caller can hold back their code.
        label: The model's "provider:model" label, as events and fingerprints name it.
        params: The model's parameters that go into fingerprints (temperature, max tokens).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any = None
    ledger: Any = None
    label: str = "unknown"
    params: dict[str, Any] = Field(default_factory=dict)
    redact: Any = None
    on_served: Any = None
    """Called with each response the research log serves (as the message the agent gets)."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return self.label.split(":", 1)[0]

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        provider, _, name = self.label.partition(":")
        return {"ls_provider": provider, "ls_model_name": name or provider, "ls_model_type": "chat"}

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        """Bind tools as given; they are converted for the live model only when it is called."""
        return self.bind(tools=list(tools), **kwargs)

    def _request(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> dict[str, Any]:
        tools = kwargs.get("tools") or []
        params = dict(self.params)
        params.update({k: v for k, v in kwargs.items() if k != "tools"})
        if stop:
            params["stop"] = list(stop)
        redact = self.redact or str
        params = masked_strings(
            {
                k: repr(v)
                if not isinstance(v, (str, int, float, bool, type(None), list, dict))
                else v
                for k, v in params.items()
            },
            redact,
        )
        return canonical_request(
            messages, [_tool_schema(t) for t in tools], self.label, params, redact
        )

    def _inner_call(self, kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """The live model and the keyword arguments its own `_generate`/`_stream` expect."""
        tools = kwargs.get("tools")
        if not tools:
            return self.inner, {k: v for k, v in kwargs.items() if k != "tools"}
        rest = {k: v for k, v in kwargs.items() if k != "tools"}
        bound = self.inner.bind_tools(tools, **rest)
        model = getattr(bound, "bound", bound)
        return model, dict(getattr(bound, "kwargs", {}))

    def _served(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[dict[str, Any], BaseMessage | None]:
        request = self._request(messages, stop, kwargs)
        response = self.ledger.serve(request, live=self.inner is not None)
        if response is None:
            return request, None
        message = messages_from_dict([response])[0]
        message.response_metadata = {**message.response_metadata, SERVED_FROM_LOG: True}
        if self.on_served is not None:
            self.on_served(message)
        return request, message

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """The recorded response, or the live model's (then recorded).

        Raises:
            ReplayMismatch: See `CallLedger.serve`.
        """
        request, recorded = self._served(messages, stop, kwargs)
        if recorded is not None:
            return ChatResult(generations=[ChatGeneration(message=recorded)])
        model, live_kwargs = self._inner_call(kwargs)
        started = time.perf_counter()
        result = model._generate(messages, stop=stop, run_manager=run_manager, **live_kwargs)
        self.ledger.record(request, result.generations[0].message, time.perf_counter() - started)
        return result

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """The recorded response as one chunk, or the live model's chunks (then recorded).

        Raises:
            ReplayMismatch: See `CallLedger.serve`.
        """
        request, recorded = self._served(messages, stop, kwargs)
        if recorded is not None:
            yield ChatGenerationChunk(message=_as_chunk(recorded))
            return
        model, live_kwargs = self._inner_call(kwargs)
        started = time.perf_counter()
        if type(model)._stream is BaseChatModel._stream:  # the live model cannot stream
            result = model._generate(messages, stop=stop, run_manager=run_manager, **live_kwargs)
            message = result.generations[0].message
            self.ledger.record(request, message, time.perf_counter() - started)
            yield ChatGenerationChunk(message=_as_chunk(message))
            return
        chunks = []
        for chunk in model._stream(messages, stop=stop, run_manager=run_manager, **live_kwargs):
            chunks.append(chunk)
            yield chunk
        message = generate_from_stream(iter(chunks)).generations[0].message
        self.ledger.record(request, message, time.perf_counter() - started)


def _as_chunk(message: BaseMessage) -> AIMessageChunk:
    calls = getattr(message, "tool_calls", None) or []
    return AIMessageChunk(
        content=message.content,
        tool_call_chunks=[
            {"name": c["name"], "args": json.dumps(c["args"]), "id": c.get("id"), "index": i}
            for i, c in enumerate(calls)
        ],
        usage_metadata=getattr(message, "usage_metadata", None)
        if isinstance(message, AIMessage)
        else None,
        response_metadata=dict(message.response_metadata),
        additional_kwargs=dict(message.additional_kwargs),
        chunk_position="last",
    )
