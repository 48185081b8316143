"""Record and replay at the chat-model boundary: `ReplayChatModel` wraps the run's chat model.

Every request the agent, its subagents or the summarizer send passes through the wrapper, which
computes its fingerprint (`fingerprint`) and asks the run's `CallLedger`:

- `auto`: a request recorded for this cell (in any of its complete recordings, the latest first)
  gets the recorded response, with no model call; any
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
from collections.abc import Callable, Iterator, Mapping, Sequence
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
from pydantic import ConfigDict, Field, PrivateAttr

from jupyter_deepagent._exceptions import ReplayMismatch
from jupyter_deepagent.harness.models.chat_call import call_settings, langsmith_params, with_stop
from jupyter_deepagent.harness.run_events.event_stream import current_agent
from jupyter_deepagent.trace.research_log.canon import CanonicalRequest, RequestCanon
from jupyter_deepagent.trace.research_log.difference import describe_difference
from jupyter_deepagent.trace.research_log.fingerprint import masked_strings
from jupyter_deepagent.trace.research_log.record import stored_calls
from jupyter_deepagent.trace.research_log.recorded import RecordedCall, Recording

__all__ = ["SERVED_FROM_LOG", "CallLedger", "ReplayChatModel"]

_REPLAY_MODES = ("auto", "strict", "off")
SERVED_FROM_LOG = "jupyter_deepagent_from_research_log"
"""Set (True) in the `response_metadata` of each response served from the log, so the thread's
checkpoint still tells, after a restart, that its tool calls came from a log (fingerprints leave
metadata out)."""


class CallLedger:
    """The model calls of one run: those recorded earlier to serve, and those made now.

    Args:
        recordings: The cell's complete recordings, the latest first (`Recording`s, or records
            as the log holds them). A request is served from the first that holds it.
        mode: "auto", "strict" or "off".
        cell: How the cell is named in errors ("cell 3", "cell abc123").
        redact: Masks secrets in what is stored.
        way_out: What to do about a mismatch, added to its message.
        carried: Recorded calls the run before left unserved, offered after the recordings.
    """

    def __init__(
        self,
        recordings: Sequence[Recording | Mapping[str, Any]],
        mode: str,
        cell: str,
        redact: Callable[[str], str] = str,
        way_out: str = "",
        carried: Sequence[RecordedCall] = (),
    ) -> None:
        if mode not in _REPLAY_MODES:
            msg = f"replay mode must be one of {', '.join(_REPLAY_MODES)}, not {mode!r}"
            raise ValueError(msg)
        self.mode = mode
        self.cell = cell
        self.redact = redact
        self.way_out = way_out
        self.canon = RequestCanon(redact)
        self._pending: deque[Recording | Mapping[str, Any] | tuple[RecordedCall, ...]] = deque(
            [*recordings, tuple(carried)]
        )
        """Recordings not read yet: an older one is read only when the newer ones lack a request."""
        self._groups: list[dict[str, deque[RecordedCall]]] = []
        self._read_more()
        self.calls: list[dict[str, Any]] = []
        self.served: list[RecordedCall] = []
        """The recorded call behind each call served from the log, in order."""
        self.mismatch: ReplayMismatch | None = None
        self._lock = threading.Lock()

    def _read_more(self) -> bool:
        """Read the next recording that holds calls into `_groups`; False when none is left."""
        while self._pending:
            source = self._pending.popleft()
            if isinstance(source, tuple):
                calls = source
            else:
                calls = (source if isinstance(source, Recording) else Recording(source)).calls
            waiting: dict[str, deque[RecordedCall]] = {}
            for call in calls:
                waiting.setdefault(call.fingerprint, deque()).append(call)
            if waiting:
                self._groups.append(waiting)
                return True
        return False

    @property
    def outcome(self) -> str:
        """ "replayed" (every call served from the log), "live", "mixed", or "none" (no call)."""
        kinds = {call["replayed"] for call in self.calls}
        if not kinds:
            return "none"
        if kinds == {True}:
            return "replayed"
        return "live" if kinds == {False} else "mixed"

    def replayed_recording(self) -> Recording | None:
        """The recording this run replayed, when every call was served from the log (the one
        that served the last call)."""
        if self.outcome != "replayed" or not self.served:
            return None
        return self.served[-1].recording

    def _following(self) -> list[RecordedCall]:
        """The unserved calls of the recordings this run follows (those that served a call, else
        the latest), in their recorded order."""
        sources = {id(call.recording) for call in self.served}
        waiting = [c for g in self._groups for q in g.values() for c in q]
        followed = [c for c in waiting if id(c.recording) in sources]
        if not followed and self._groups:
            followed = [c for q in self._groups[0].values() for c in q]
        return sorted(followed, key=lambda c: c.step)

    def unserved(self) -> list[RecordedCall]:
        """The recorded calls not served (yet) of the recordings this run followed: what a resume
        of this run may still need, when the run paused where its recording did not (code from
        the log waits for approval)."""
        with self._lock:
            return self._following()

    def serve(self, request: CanonicalRequest, live: bool) -> dict[str, Any] | None:
        """The recorded response for `request`, or None when the live model must answer.

        Raises:
            ReplayMismatch: Strict mode, or auto without a usable model (`live` False), and the
                request was not recorded.
        """
        with self._lock:
            step = len(self.calls) + 1
            if self.mode != "off":
                index = 0
                while index < len(self._groups) or self._read_more():
                    waiting = self._groups[index].get(request.fingerprint)
                    if waiting:
                        call = waiting.popleft()
                        self.served.append(call)
                        self._append(request, call.response, replayed=True)
                        return call.response
                    index += 1
            if self.mode == "strict" or not live:
                self.mismatch = self._mismatch(step, request, live)
                raise self.mismatch
        return None

    def record(self, request: CanonicalRequest, response: BaseMessage, seconds: float) -> None:
        """Keep a live call: its request and its whole response (secrets masked)."""
        frozen = getattr(self.redact, "frozen", None)  # the values to hide, gathered once
        redact = frozen() if callable(frozen) else self.redact
        stored = masked_strings(message_to_dict(response), redact)
        with self._lock:
            self._append(request, stored, replayed=False, seconds=seconds)

    def as_record(self) -> dict[str, Any]:
        """This run's calls as a record holds them (`Recording` reads it back)."""
        calls, messages, tools = stored_calls(self.calls, self.canon.messages, self.canon.tools)
        return {"v": 2, "messages": messages, "tools": tools, "calls": calls}

    def _append(
        self,
        request: CanonicalRequest,
        response: dict[str, Any],
        *,
        replayed: bool,
        seconds: float = 0.0,
    ) -> None:
        agent, task_id = current_agent()
        self.calls.append(
            {
                "step": len(self.calls) + 1,
                "fingerprint": request.fingerprint,
                "request": request.ref(),
                "response": response,
                "replayed": replayed,
                "agent": agent,
                "task_id": task_id,
                "seconds": round(seconds, 6),
            }
        )

    def _mismatch(self, step: int, request: CanonicalRequest, live: bool) -> ReplayMismatch:
        followed = self._following()
        why = "differs from the research log" if self._groups else "has no recording"
        text = f"{self.cell}, model call {step}: the request {why} ({self.mode} replay)."
        if self._groups:
            recorded = followed[0].request() if followed else None
            text += "\n" + describe_difference(recorded, self.canon.expand(request))
        if not live and self.mode != "strict":
            text += "\nNo usable model to ask instead."
        if self.way_out:
            text += "\n" + self.way_out
        return ReplayMismatch(text, cell=self.cell, step=step)


class ReplayChatModel(BaseChatModel):
    """A chat model that answers from a research log and records what the live model says.

    Attributes:
        inner: The live chat model (None when none could be made, e.g. no API key).
        ledger: The run's `CallLedger`.
        on_served: Called with each response served from the log: its tool calls come from
            the log, not from a model answering now, so the caller can hold back their code.
        label: The model's "provider:model" label, as events and fingerprints name it.
        params: The model's parameters that go into fingerprints (temperature, max tokens).
        temperature: A temperature given to the wrapper itself (over `params`); like
            `max_tokens`, it is fingerprinted and reported, the live model keeps its own.
        max_tokens: Likewise.
        stop: Stop sequences given to the wrapper itself (over `params`): sent to the live
            model with each call that gives none, and fingerprinted.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    inner: Any = None
    ledger: Any = None
    label: str = "unknown"
    params: dict[str, Any] = Field(default_factory=dict)
    temperature: float | None = None
    max_tokens: int | None = None
    stop: list[str] | None = None
    redact: Any = None
    on_served: Any = None
    """Called with each response the research log serves (as the message the agent gets)."""

    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return self.label.split(":", 1)[0]

    def _settings(self) -> dict[str, Any]:
        """`params`, under the settings given to the wrapper itself."""
        own = {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": self.stop}
        return call_settings(self.params, own)

    def _stop(self, stop: list[str] | None) -> list[str] | None:
        """The call's stop sequences, else the model's."""
        configured = self._settings().get("stop") if stop is None else stop
        return [str(text) for text in configured] if isinstance(configured, list) else None

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """LangChain's tracing parameters: provider and model from the label (a call's own
        `model=` instead), and the call's temperature, max tokens and stop sequences."""
        provider, _, name = self.label.partition(":")
        settings = call_settings(self._settings(), with_stop(self._stop(stop), kwargs))
        return langsmith_params(provider, name or provider, settings)

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        """Bind tools as given; they are converted for the live model only when it is called."""
        return self.bind(tools=list(tools), **kwargs)

    def _request(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> CanonicalRequest:
        tools = kwargs.get("tools") or []
        params = self._settings()
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
        canon: RequestCanon = self.ledger.canon
        return canon.request(messages, tools, self.label, params)

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
    ) -> tuple[CanonicalRequest, BaseMessage | None]:
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
        stop = self._stop(stop)
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
        stop = self._stop(stop)
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
