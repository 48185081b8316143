"""`ChainedMiddleware`: several middleware run by LangChain as one.

`create_agent` wraps every `wrap_model_call` and `wrap_tool_call` a middleware defines in a
LangSmith span and a layer of its own composition, whether tracing is on or not: tens of
microseconds a call for each middleware in a running graph, more than several of these layers cost
themselves. The harness's own layers (budget, prompt, compression, cache breakpoints, retries, events,
tool errors) are run as one middleware that chains their hooks itself, in the same order and with
the same results as if each were in the stack:

- a layer's handler returns a `ModelResponse` (an inner layer's `AIMessage` is normalized, and
  an `ExtendedModelResponse`'s command is kept aside, as LangChain does), so each layer sees what
  it would see in the stack;
- the state schema is the union of the layers' schemas, the tools are theirs, and `before_agent`
  runs each layer's in order, each seeing the updates of those before it.

What it does not do, and refuses: layers with `before_model`, `after_model` or `after_agent` hooks
(each needs a graph node of its own), a `before_agent` that may jump, a model-call command that
jumps or resumes, and two layers updating the same state key in one call (LangChain would apply
both through the key's reducer; the harness's layers never do, only compression updates state).

LangSmith shows one span for the chain (`ResearchHarness.wrap_model_call`) instead of one per layer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast, get_type_hints

from langchain.agents.middleware import (
    AgentMiddleware,
    AgentState,
    ModelRequest,
    ModelResponse,
)
from langchain.agents.middleware.types import ExtendedModelResponse, ToolCallRequest
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.types import Command
from typing_extensions import TypedDict

__all__ = ["ChainedMiddleware"]

_ModelHandler = Callable[[ModelRequest], Any]
_ToolHandler = Callable[[ToolCallRequest], Any]


def _defines(layer: AgentMiddleware, hook: str) -> bool:
    """Whether `layer`'s class has its own `hook` (sync or async), as LangChain decides it."""
    return any(
        getattr(type(layer), name) is not getattr(AgentMiddleware, name)
        for name in (hook, f"a{hook}")
    )


class ChainedMiddleware(AgentMiddleware):
    """`layers`, outermost first, as one middleware (see the module docstring).

    Args:
        layers: the middleware to chain; none may define `before_model`, `after_model` or
            `after_agent` (they would need graph nodes of their own).
        name: the middleware's name (its graph node and LangSmith span).

    Raises:
        ValueError: a layer defines a hook the chain does not run, or a `before_agent` that
            may jump.
    """

    def __init__(self, layers: Sequence[AgentMiddleware], *, name: str) -> None:
        super().__init__()
        for layer in layers:
            for hook in ("before_model", "after_model", "after_agent"):
                if _defines(layer, hook):
                    msg = f"{layer.name} defines {hook}, which ChainedMiddleware does not run"
                    raise ValueError(msg)
            for hook in ("before_agent", "abefore_agent"):
                if getattr(getattr(type(layer), hook), "__can_jump_to__", None):
                    msg = f"{layer.name}.{hook} may jump, which ChainedMiddleware does not do"
                    raise ValueError(msg)
        self.layers = tuple(layers)
        self._name = name
        self._model_layers = [m for m in self.layers if _defines(m, "wrap_model_call")]
        self._tool_layers = [m for m in self.layers if _defines(m, "wrap_tool_call")]
        self._starters = [m for m in self.layers if _defines(m, "before_agent")]
        self.tools = [tool for layer in self.layers for tool in getattr(layer, "tools", ())]
        hints: dict[str, Any] = {}
        for layer in self.layers:
            hints.update(get_type_hints(layer.state_schema, include_extras=True))
        make_schema = cast("Callable[[str, dict[str, Any]], type]", TypedDict)  # at run time
        self.state_schema = make_schema(f"{name}State", hints)

    @property
    def name(self) -> str:
        """The chain's name (it names the graph node and the LangSmith span)."""
        return self._name

    # -- run start --------------------------------------------------------------------------------
    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        update: dict[str, Any] = {}
        for layer in self._starters:
            if type(layer).before_agent is AgentMiddleware.before_agent:
                msg = f"{layer.name} has only an async before_agent: run the agent with ainvoke"
                raise NotImplementedError(msg)
            seen = cast("AgentState", {**state, **update})  # with the updates before this layer
            _merge_start(update, layer, layer.before_agent(seen, runtime))
        return update or None

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        update: dict[str, Any] = {}
        for layer in self._starters:
            seen = cast("AgentState", {**state, **update})  # with the updates before this layer
            if type(layer).abefore_agent is AgentMiddleware.abefore_agent:  # a sync hook only
                _merge_start(update, layer, layer.before_agent(seen, runtime))
            else:
                _merge_start(update, layer, await layer.abefore_agent(seen, runtime))
        return update or None

    # -- model calls ------------------------------------------------------------------------------
    def wrap_model_call(self, request: ModelRequest, handler: _ModelHandler) -> Any:
        def innermost(sent: ModelRequest) -> _Composed:
            return _composed(handler(sent), [])

        call: Callable[[ModelRequest], _Composed] = innermost
        for layer in reversed(self._model_layers):
            call = _model_layer(layer.wrap_model_call, call)
        return call(request).result()

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
    ) -> Any:
        async def innermost(sent: ModelRequest) -> _Composed:
            return _composed(await handler(sent), [])

        call: Callable[[ModelRequest], Awaitable[_Composed]] = innermost
        for layer in reversed(self._model_layers):
            call = _async_model_layer(layer.awrap_model_call, call)
        return (await call(request)).result()

    # -- tool calls -------------------------------------------------------------------------------
    def wrap_tool_call(
        self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], ToolMessage | Command]
    ) -> ToolMessage | Command:
        call: _ToolHandler = handler
        for layer in reversed(self._tool_layers):
            call = _tool_layer(layer.wrap_tool_call, call)
        return cast("ToolMessage | Command", call(request))

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command]],
    ) -> ToolMessage | Command:
        call: Callable[[ToolCallRequest], Awaitable[Any]] = handler
        for layer in reversed(self._tool_layers):
            call = _tool_layer(layer.awrap_tool_call, call)
        return cast("ToolMessage | Command", await call(request))


def _merge_start(update: dict[str, Any], layer: AgentMiddleware, more: object) -> None:
    """Add a layer's `before_agent` update to the chain's."""
    if more is None:
        return
    if not isinstance(more, dict):
        msg = f"{layer.name}.before_agent returned {type(more).__name__}, not a state update"
        raise TypeError(msg)
    _add_update(update, more, "before the agent starts")


def _add_update(update: dict[str, Any], more: dict[str, Any], when: str) -> None:
    """Add one layer's state update to the chain's; a key another layer set already is refused
    (the state's reducers do not run between layers)."""
    if twice := sorted(more.keys() & update.keys()):
        msg = f"two layers of the chain set the state key {twice[0]!r} {when}"
        raise RuntimeError(msg)
    update.update(more)


@dataclass(slots=True)
class _Composed:
    """What the layers inside one have returned: the response and their state updates."""

    response: ModelResponse
    commands: list[Command]

    def result(self) -> ModelResponse | ExtendedModelResponse:
        """The chain's result: the response, with the layers' state updates as one command."""
        if not self.commands:
            return self.response
        update: dict[str, Any] = {}
        for command in self.commands:
            _add_update(update, _update_of(command), "in one call")
        return ExtendedModelResponse(model_response=self.response, command=Command(update=update))


def _composed(result: object, inner: list[Command]) -> _Composed:
    """A layer's result, with the commands of the layers inside it (theirs first, as LangChain
    accumulates them): an `AIMessage` becomes a `ModelResponse`, an `ExtendedModelResponse`
    gives its command."""
    if isinstance(result, ExtendedModelResponse):
        commands = [*inner, result.command] if result.command is not None else inner
        return _Composed(result.model_response, commands)
    if isinstance(result, AIMessage):
        return _Composed(ModelResponse(result=[result]), inner)
    return _Composed(cast("ModelResponse", result), inner)


def _update_of(command: Command) -> dict[str, Any]:
    """A layer's command as state updates; a command that jumps or resumes is refused, as
    LangChain refuses it from a model-call hook."""
    if command.goto or command.resume is not None or command.graph is not None:
        msg = "a model-call layer's command may only update the state (no goto, resume or graph)"
        raise NotImplementedError(msg)
    update = command.update
    if update is None:
        return {}
    return dict(update) if not isinstance(update, dict) else update


def _model_layer(
    wrap: Callable[[ModelRequest, _ModelHandler], Any],
    inner: Callable[[ModelRequest], _Composed],
) -> Callable[[ModelRequest], _Composed]:
    """`wrap` around `inner`: its handler gives it a `ModelResponse` and keeps the commands of
    the last attempt (a retry drops those of the attempts before)."""

    def call(request: ModelRequest) -> _Composed:
        kept: list[Command] = []

        def handler(sent: ModelRequest) -> ModelResponse:
            kept.clear()  # an attempt that fails leaves no update behind
            composed = inner(sent)
            kept[:] = composed.commands
            return composed.response

        return _composed(wrap(request, handler), kept)

    return call


def _async_model_layer(
    wrap: Callable[[ModelRequest, Callable[[ModelRequest], Awaitable[Any]]], Awaitable[Any]],
    inner: Callable[[ModelRequest], Awaitable[_Composed]],
) -> Callable[[ModelRequest], Awaitable[_Composed]]:
    """`_model_layer` for the async hooks."""

    async def call(request: ModelRequest) -> _Composed:
        kept: list[Command] = []

        async def handler(sent: ModelRequest) -> ModelResponse:
            kept.clear()
            composed = await inner(sent)
            kept[:] = composed.commands
            return composed.response

        return _composed(await wrap(request, handler), kept)

    return call


def _tool_layer(wrap: Callable[[ToolCallRequest, Any], Any], inner: Any) -> Any:
    """`wrap` around `inner` (tool results pass between layers as they are, as in LangChain)."""
    return lambda request: wrap(request, inner)
