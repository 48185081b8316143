"""What user middleware add to the system prompt, found without running the agent.

Each middleware's `wrap_model_call` is run once, outermost first, on an empty request whose
handler records the system message instead of calling a model. Middleware that need a real
conversation to decide their text contribute nothing here; at run time the `prompt` event shows
what they really added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

__all__ = ["middleware_prompt_text"]


def middleware_prompt_text(middleware: Sequence[Any], model: Any = None) -> str:
    """The text the given middleware add to an empty system message ("" if none)."""
    from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
    from langchain_core.messages import AIMessage

    seen: list[str] = []

    def innermost(request: Any) -> Any:
        message = request.system_message
        seen.append(message.text if message is not None else "")
        return ModelResponse(result=[AIMessage(content="")])

    handler: Callable[[Any], Any] = innermost
    for layer in reversed([m for m in middleware if _wraps_model(m, AgentMiddleware)]):
        handler = _wrap(layer, handler)
    request = ModelRequest(model=model, messages=[], state={"messages": []}, runtime=None)
    try:
        handler(request)
    except Exception:
        return ""
    return seen[-1].strip() if seen else ""


def _wraps_model(layer: Any, base: type) -> bool:
    method = getattr(type(layer), "wrap_model_call", None)
    return method is not None and method is not getattr(base, "wrap_model_call", None)


def _wrap(layer: Any, inner: Callable[[Any], Any]) -> Callable[[Any], Any]:
    return lambda request: layer.wrap_model_call(request, inner)
