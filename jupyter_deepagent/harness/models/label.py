"""`model_label`: the one way every event and message names a chat model ("provider:model")."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["MODEL_METADATA_KEY", "model_label"]

MODEL_METADATA_KEY = "jupyter_deepagent_model"
"""Key of the compiled agent's config metadata that holds its model's label."""


def model_label(model: object) -> str:
    """Name a chat model, a bound model or a model string as "provider:model".

    The provider is LangChain's own name for it (`ls_provider`, e.g. `google_genai`, `anthropic`),
    else the model's `_llm_type` (`scripted` for `ScriptedChatModel`); a model string is kept as
    given, with the default provider added to a bare name.
    """
    if isinstance(model, str):
        if ":" in model:
            return model
        from jupyter_deepagent.harness.models.resolution import DEFAULT_PROVIDER

        return f"{DEFAULT_PROVIDER}:{model}"
    model = getattr(model, "bound", model)  # a RunnableBinding from bind_tools
    model = cast("BaseChatModel", model)  # or what looks like one: each lookup below may fail
    try:
        params = dict(model._get_ls_params())
    except Exception:
        params = {}
    provider = params.get("ls_provider")
    if not provider or provider == type(model).__name__.lower():  # LangChain's class-name guess
        provider = getattr(model, "_llm_type", None) or type(model).__name__
    name = params.get("ls_model_name")
    for attribute in ("model_name", "model", "name"):
        if name:
            break
        value = getattr(model, attribute, None)
        name = value if isinstance(value, str) else None
    return f"{provider}:{name}" if name else str(provider)
