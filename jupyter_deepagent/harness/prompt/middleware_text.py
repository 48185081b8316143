"""What user middleware add to the system prompt, found without running the agent.

Each middleware's `wrap_model_call` is run once, outermost first, on an empty request whose
handler records the system message instead of calling a model. Middleware that need a real
conversation to decide their text contribute nothing here; at run time the `prompt` event shows
what they really added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest, ModelResponse
    from langchain_core.language_models import BaseChatModel

    from jupyter_deepagent.harness.agent_inputs import ChatModelInput, Middleware

_Handler = Callable[["ModelRequest"], "ModelResponse"]

__all__ = ["middleware_prompt_text"]


def middleware_prompt_text(
    middleware: Sequence[Middleware], model: ChatModelInput | None = None
) -> str:
    """The text the given middleware add to an empty system message ("" if none)."""
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage

    seen: list[str] = []

    def innermost(request: ModelRequest) -> ModelResponse:
        message = request.system_message
        seen.append(message.text if message is not None else "")
        return ModelResponse(result=[AIMessage(content="")])

    handler: _Handler = innermost
    for layer in reversed([m for m in middleware if _wraps_model(m, AgentMiddleware)]):
        handler = _wrap(layer, handler)
    request = ModelRequest(
        model=cast("BaseChatModel", model),  # only a stand-in: no model is called here
        messages=[],
        state={"messages": []},
        runtime=None,
    )
    try:
        handler(request)
    except Exception:
        return ""
    return seen[-1].strip() if seen else ""


def _wraps_model(layer: Middleware, base: type) -> bool:
    method = getattr(type(layer), "wrap_model_call", None)
    return method is not None and method is not getattr(base, "wrap_model_call", None)


def _wrap(layer: Middleware, inner: _Handler) -> _Handler:
    # what a layer returns reaches the layer around it as it is; only the system message is read
    return lambda request: cast("ModelResponse", layer.wrap_model_call(request, inner))
