"""`model_label`: the one way every view, event and message names a chat model ("provider:model");
`answered_by`: the one word every view uses for what answered a run's model calls."""

from __future__ import annotations

from operator import is_
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

__all__ = ["MODEL_METADATA_KEY", "SCRIPTED", "answered_by", "model_label"]

MODEL_METADATA_KEY = "jupyter_deepagent_model"
"""Key of the compiled agent's config metadata that holds its model's label."""

SCRIPTED = "scripted"
"""The provider of a `ScriptedChatModel`'s label (its `_llm_type`), and the word for its answers."""


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
    fields = getattr(model, "__dict__", None)
    if fields is None:  # no fields to watch for a change: worked out each time
        return _label(cast("BaseChatModel", model))
    if "bound" in fields:  # a RunnableBinding from bind_tools (a field: no getattr miss to pay)
        return model_label(fields["bound"])
    values = tuple(fields.values())
    last = _last_label[0]
    if last[0] is model and len(last[1]) == len(values) and all(map(is_, last[1], values)):
        return last[2]  # the model of the last call, none of its fields set since
    label = _label(cast("BaseChatModel", model))
    _last_label[0] = (model, values, label)
    return label


_NAME_FIELDS = ("model_name", "model", "name")
_last_label: list[tuple[object, tuple[object, ...], str]] = [(None, (), "")]
"""The last model labelled, its field values then, and its label: every model call asks again
for the same model, and a provider's parameters cost microseconds to read."""


def _label(model: BaseChatModel) -> str:
    model = getattr(model, "bound", model)  # a binding that is not a pydantic model
    try:
        params = dict(model._get_ls_params())
    except Exception:
        params = {}
    provider = params.get("ls_provider")
    if not provider or provider == type(model).__name__.lower():  # LangChain's class-name guess
        provider = getattr(model, "_llm_type", None) or type(model).__name__
    name = params.get("ls_model_name")
    for attribute in _NAME_FIELDS:
        if name:
            break
        value = getattr(model, attribute, None)
        name = value if isinstance(value, str) else None
    return f"{provider}:{name}" if name else str(provider)


def answered_by(outcome: str, model: str) -> str:
    """What answered a run's model calls, in the word every view uses for it.

    "replayed": every call was answered from the research log; "scripted": by a
    `ScriptedChatModel` (no model service was asked); "live": by a real provider; "mixed": some
    from the log, the others by the model; "none": the run made no model call.

    Args:
        outcome: How the research log's `CallLedger` served the calls ("replayed", "live",
            "mixed" or "none"), as a record of the log holds it.
        model: The run's model label (`model_label`), as the record holds it.
    """
    if outcome == "live" and str(model).partition(":")[0] == SCRIPTED:
        return SCRIPTED
    return outcome
