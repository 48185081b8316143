"""A deterministic chat model that plays a script, for tests, demos and CI without a network.

`ScriptedChatModel` answers each call with the next step of its script, unless a rule matches the
conversation first, and records every request it was sent in `.requests`, so a test can assert on
exactly what the model saw. A conversation it has answered before (with the same tools bound)
gets the same answer again, so a notebook re-run from a rewound thread (Run All twice, a restart)
plays the same steps. It binds tools, streams word by word, reports token usage (four characters
a token, never below the context gauge's script-aware count) and its settings (temperature, max
tokens, stop sequences, which end a text reply), and can raise a provider's context-overflow
error on cue.
"""

from __future__ import annotations

import contextvars
import json
import math
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.base import LangSmithParams
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    SystemMessage,
    ToolCallChunk,
    UsageMetadata,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field, PrivateAttr

from jupyter_deepagent._exceptions import ScriptError
from jupyter_deepagent.harness.compression.tokens import (
    messages_tokens,
    tools_tokens,
    written_tokens,
)
from jupyter_deepagent.harness.models._script_format import (
    Draw,
    Rule,
    Step,
    compile_rule,
    compile_step,
    exhausted_error,
    read_script_file,
)
from jupyter_deepagent.harness.models.chat_call import (
    call_settings,
    conversation_key,
    langsmith_params,
    text_before_stop,
    with_stop,
)
from jupyter_deepagent.harness.run_events.event_stream import current_agent, current_sink

if TYPE_CHECKING:
    from langchain_core.language_models import LanguageModelInput
    from langchain_core.messages import ToolCall
    from langchain_core.runnables import Runnable

__all__ = ["ScriptedChatModel", "ScriptedRequest"]

_WORDS = re.compile(r"\S+\s*|\s+")


@dataclass(frozen=True)
class ScriptedRequest:
    """One call to the model: the messages it was sent, the tool schemas bound to it and the
    call's settings."""

    messages: list[BaseMessage]
    tools: list[dict[str, Any]]
    tool_choice: object = None
    params: dict[str, object] = field(default_factory=dict)
    """The settings the call was made with: the model's `temperature`, `max_tokens` and `stop`
    unless the call gave its own, a per-call `model`, and any other keyword of the call
    (`None` values left out)."""

    @property
    def system(self) -> str:
        """The text of the system message, or "" when there is none."""
        for message in self.messages:
            if isinstance(message, SystemMessage):
                return str(message.text)
        return ""

    @property
    def last(self) -> BaseMessage:
        """The last message of the request (the one rules match against)."""
        return self.messages[-1]

    @property
    def tool_names(self) -> list[str]:
        """Names of the bound tools, in the order they were bound."""
        return [tool.get("function", tool).get("name", "") for tool in self.tools]


def _caller(run_manager: CallbackManagerForLLMRun | None) -> str | None:
    """Which agent is calling: the harness's agent scope (a subagent's name and task), else
    LangChain's agent name in a checkpoint namespace nested in a tool call; None outside a run."""
    agent, task_id = current_agent()
    if task_id is not None:
        return f"subagent {agent!r}"
    metadata = (run_manager.metadata if run_manager is not None else None) or {}
    namespace = str(metadata.get("langgraph_checkpoint_ns") or "")
    name = metadata.get("lc_agent_name")
    if name and "|" in namespace:
        return f"subagent {name!r}"
    return "the main agent" if namespace or current_sink() is not None else None


_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "jupyter_deepagent_scripted_caller", default=None
)


@contextmanager
def _calling(run_manager: CallbackManagerForLLMRun | None) -> Iterator[None]:
    """Name the calling agent for the reply made inside the block (`_reply` keeps its signature
    for subclasses that override it)."""
    token = _CALLER.set(_caller(run_manager))
    try:
        yield
    finally:
        _CALLER.reset(token)


def _task(messages: Sequence[BaseMessage]) -> str:
    """A request's first human message, one line: a subagent's task."""
    for message in messages:
        if message.type == "human":
            return " ".join(str(message.text).split())
    return ""


def _chars(message: BaseMessage) -> int:
    content = message.content
    size = len(content) if isinstance(content, str) else len(json.dumps(content, default=str))
    for call in getattr(message, "tool_calls", None) or []:
        size += len(call["name"]) + len(json.dumps(call["args"], default=str))
    return size


class ScriptedChatModel(BaseChatModel):
    """A chat model that replies from a script and records what it was sent.

    The step is chosen from the conversation: a conversation answered before (the same system
    prompt, user and assistant turns and tool calls, and the same tools bound; tool results may
    differ) gets the same reply again, ids included. Otherwise the first unused rule whose
    `when` occurs in the last message (and whose `when_system` occurs in the system message)
    answers, else the next script step. A step is a string,
    an `AIMessage`, `{"content": ..., "tool_calls": [{"name", "args", "id"?}], "usage"?: {...}}`
    (`usage`: `input_tokens`, `output_tokens`, `input_token_details` the reply reports instead of
    the estimate, e.g. `{"input_token_details": {"cache_read": 800}}`), or
    `{"raise": "context_overflow" | "error" | "rate_limit" | "timeout", "message": ...}`.
    Missing tool-call ids become `call_1`, `call_2`, ... in the order replies are made.
    Subagents share the model and draw from the same script, so give each a rule matching its
    task; when the script runs out, the error names which agent drew which step
    (docs/scripted-models.md).

    Example:
        >>> model = ScriptedChatModel(script=["Hello!"])
        >>> model.invoke("hi").content
        'Hello!'
    """

    script: list[object] = Field(default_factory=list)
    """The replies, played in order."""
    rules: list[object] = Field(default_factory=list)
    """`{"when": substring, "when_system": substring, "reply": step, "repeat": bool}` entries."""
    name: str | None = "scripted"
    """Reported as the model name in `response_metadata` (a call's own `model=` instead)."""
    temperature: float | None = None
    """Reported to LangChain's tracing and in each request's `params`; the replies are scripted."""
    max_tokens: int | None = None
    """Reported to LangChain's tracing and in each request's `params`; replies are not cut."""
    stop: list[str] | None = None
    """Stop sequences: a scripted text reply ends before the first one it contains, as a
    provider's would (a call's own `stop` replaces them)."""

    _steps: list[Step] = PrivateAttr(default_factory=list)
    _rules: list[Rule] = PrivateAttr(default_factory=list)
    _next: int = PrivateAttr(default=0)
    _ids: int = PrivateAttr(default=0)
    _requests: list[ScriptedRequest] = PrivateAttr(default_factory=list)
    _draws: list[Draw] = PrivateAttr(default_factory=list)
    _answered: dict[str, AIMessage] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _schemas: dict[int, tuple[object, dict[str, object]]] = PrivateAttr(default_factory=dict)

    def model_post_init(self, context: object, /) -> None:
        """Validate every step and rule now, so a broken script fails before the first call.

        Raises:
            ScriptError: A step or rule is malformed; the message names its index.
        """
        super().model_post_init(context)
        self._steps = [compile_step(s, f"step {i}") for i, s in enumerate(self.script)]
        self._rules = [compile_rule(r, f"rule {i}") for i, r in enumerate(self.rules)]

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedChatModel:
        """Load a script from YAML (`.yaml`/`.yml`) or JSON.

        The file holds either a list of steps or `{"script": [...], "rules": [...],
        "profile": {...}, "name": ...}`.

        Raises:
            ScriptError: The file is missing, unreadable, not YAML/JSON, or a step is malformed;
                the message names the file and the step.
        """
        path = Path(path)
        data = read_script_file(path)
        try:
            return cls(**data)
        except ScriptError as exc:
            msg = f"{path}: {exc}"
            raise ScriptError(msg) from exc

    @property
    def requests(self) -> list[ScriptedRequest]:
        """Every request sent to the model so far, in call order (a copy of the record)."""
        with self._lock:
            return list(self._requests)

    @property
    def remaining(self) -> int:
        """How many script steps have not been played yet (rules not counted)."""
        with self._lock:
            return len(self._steps) - self._next

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _settings(self, kwargs: Mapping[str, object]) -> dict[str, object]:
        """The call's settings (see `ScriptedRequest.params`)."""
        own = {"temperature": self.temperature, "max_tokens": self.max_tokens, "stop": self.stop}
        return call_settings(own, kwargs)

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> LangSmithParams:
        """LangChain's tracing parameters: provider `scripted`, the model's name (a call's own
        `model=` instead) and the call's temperature, max tokens and stop sequences."""
        settings = self._settings(with_stop(stop, kwargs))
        return langsmith_params(self._llm_type, self.name or self._llm_type, settings)

    def bind_tools(
        self,
        tools: Sequence[dict[str, object] | type | Callable[..., object] | BaseTool],
        **kwargs: object,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools as OpenAI-style schemas; they reach the model and `.requests[i].tools`.

        Raises:
            ValueError: A tool cannot be converted to a schema.
        """
        return self.bind(tools=[self._schema(tool) for tool in tools], **kwargs)

    def _schema(
        self, tool: dict[str, object] | type | Callable[..., object] | BaseTool
    ) -> dict[str, object]:
        """A tool's OpenAI-style schema; a `BaseTool`'s is converted once (an agent binds its
        tools again at every model call)."""
        if not isinstance(tool, BaseTool):
            return convert_to_openai_tool(tool)
        known = self._schemas.get(id(tool))
        if known is not None and known[0] is tool:
            return known[1]
        schema = convert_to_openai_tool(tool)
        if len(self._schemas) > 1_000:
            self._schemas.clear()
        self._schemas[id(tool)] = (tool, schema)  # the tool kept: its id is not reused
        return schema

    def _reply(self, messages: list[BaseMessage], kwargs: Mapping[str, object]) -> AIMessage:
        tools = kwargs.get("tools") or []
        settings = self._settings(kwargs)
        request = ScriptedRequest(
            list(messages),
            list(tools) if isinstance(tools, list | tuple) else [],
            kwargs.get("tool_choice"),
            settings,
        )
        key = conversation_key(messages, request.tools, request.tool_choice)
        with self._lock:
            self._requests.append(request)
            call = len(self._requests)
            known = self._answered.get(key)
            if known is not None:
                reply = known.model_copy(deep=True)
            else:
                played = self._next
                step = self._pick(request)
                caller = _CALLER.get()
                if step is None:
                    last = str(request.last.text) if request.messages else ""
                    raise exhausted_error(call, caller, len(self._steps), last, self._draws)
                source = f"step {played}" if self._next > played else "a rule"
                subagent = (caller or "").startswith("subagent")
                self._draws.append(Draw(call, source, caller, _task(messages) if subagent else ""))
                if step.error is not None:
                    raise step.error(step.error_message)
                assert step.reply is not None  # a step is a reply or an error
                calls = [self._with_id(tool_call) for tool_call in step.reply.tool_calls]
                reply = step.reply.model_copy(update={"tool_calls": calls}, deep=True)
                self._answered[key] = reply.model_copy(deep=True)
        if isinstance(reply.content, str):
            reply.content = text_before_stop(reply.content, settings.get("stop"))
        given: Mapping[str, Any] = reply.usage_metadata or {}  # the step's, over the estimate
        # four characters a token, as for English, but never below the context gauge's own
        # script-aware count: a provider's tokenizer does not count Chinese four to a token
        if "input_tokens" in given:
            tokens_in = int(given["input_tokens"])
        else:
            sent = sum(_chars(m) for m in messages) + len(json.dumps(request.tools, default=str))
            counted = messages_tokens(messages) + tools_tokens(request.tools)
            tokens_in = max(math.ceil(sent / 4), counted)
        if "output_tokens" in given:
            tokens_out = int(given["output_tokens"])
        else:
            tokens_out = max(math.ceil(_chars(reply) / 4), written_tokens(reply))
        reply.usage_metadata = UsageMetadata(
            input_tokens=tokens_in, output_tokens=tokens_out, total_tokens=tokens_in + tokens_out
        )
        if "input_token_details" in given:
            reply.usage_metadata["input_token_details"] = given["input_token_details"]
        model = settings.get("model")
        name = model if isinstance(model, str) else self.name
        reply.response_metadata = {**reply.response_metadata, "model_name": name}
        return reply

    def _with_id(self, tool_call: ToolCall) -> ToolCall:
        if tool_call.get("id"):
            return tool_call
        self._ids += 1
        return {**tool_call, "id": f"call_{self._ids}"}

    def _pick(self, request: ScriptedRequest) -> Step | None:
        """The first unused matching rule, else the next step (None when none is left)."""
        last, system = str(request.last.text) if request.messages else "", request.system
        for rule in self._rules:
            if rule.used or (rule.when is not None and rule.when not in last):
                continue
            if rule.when_system is not None and rule.when_system not in system:
                continue
            rule.used = not rule.repeat
            return rule.step
        if self._next < len(self._steps):
            self._next += 1
            return self._steps[self._next - 1]
        return None

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> ChatResult:
        """Reply with the next scripted step.

        Raises:
            ScriptError: The script is exhausted and no rule matches; the message names which
                agent drew which steps.
            ContextOverflowError: The step is `{"raise": "context_overflow"}`.
            ModelAPIError: The step is `{"raise": "error"}` (other kinds likewise).
        """
        with _calling(run_manager):
            reply = self._reply(messages, with_stop(stop, kwargs))
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: object,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream the next step word by word; tool calls and usage come in the final chunk.

        Raises:
            ScriptError: The script is exhausted and no rule matches; the message names which
                agent drew which steps.
            ContextOverflowError: The step is `{"raise": "context_overflow"}`.
            ModelAPIError: The step is `{"raise": "error"}` (other kinds likewise).
        """
        with _calling(run_manager):
            reply = self._reply(messages, with_stop(stop, kwargs))
        content = reply.content
        pieces = _WORDS.findall(content) if isinstance(content, str) else [content]
        for piece in pieces:
            yield ChatGenerationChunk(message=AIMessageChunk(content=piece))
        tool_call_chunks = [
            ToolCallChunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
            for i, c in enumerate(reply.tool_calls)
        ]
        last = AIMessageChunk(
            content="" if isinstance(content, str) else [],
            tool_call_chunks=tool_call_chunks,
            usage_metadata=reply.usage_metadata,
            response_metadata=reply.response_metadata,
            additional_kwargs=reply.additional_kwargs,
            chunk_position="last",
        )
        yield ChatGenerationChunk(message=last)
