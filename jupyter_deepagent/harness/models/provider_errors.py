"""A provider's "no" in words a user can act on: `provider_refusal`.

When a model call fails for good (after the retries `call_policy` allows, or at once when a retry
cannot help), the provider's exception holds an HTTP status and the provider's error body
(Google's `{"error": {"code": 400, "status": "INVALID_ARGUMENT", "details": [{"reason":
"API_KEY_INVALID", ...}]}}`, Anthropic's and OpenAI's `{"error": {"type"/"code": ...}}`).
`provider_refusal` reads them and returns a `ProviderRefused` that says, in two sentences, what
happened (the key was refused, the quota is used up, the model does not exist, the key may not
use the model), which variable or setting to change, where the key was read from, and whether
sending the request again can help. The provider's error dict never reaches the message; its
own one-sentence message does, with anything key-like masked.

Where a key was read from: the variable the provider's client reads (`GOOGLE_API_KEY` before
`GEMINI_API_KEY`, `OPENAI_API_KEY`, `ANTHROPIC_API_KEY`...) "from the environment", unless the
chat model's `metadata[KEY_ORIGINS]` names another place for it (the project layer puts the
names its env file set there: "from .env beside the notebook"), or the model was given its key
as an argument.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from jupyter_deepagent._exceptions import ProviderRefused, ResearchAssistantError
from jupyter_deepagent.harness.models.label import model_label

__all__ = ["KEY_ORIGINS", "SETTINGS_KEY", "key_variables", "provider_refusal"]

KEY_ORIGINS = "jupyter_deepagent_key_origins"
"""Key of a chat model's `metadata`: {variable: where it was read from}, e.g.
`{"GOOGLE_API_KEY": ".env beside the notebook"}`."""

SETTINGS_KEY = "api_key"
"""The entry of `KEY_ORIGINS` saying where a key given as the model's `api_key` came from."""

_KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "google_genai": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
    "openai": ("OPENAI_API_KEY",),
    "azure_openai": ("AZURE_OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "mistralai": ("MISTRAL_API_KEY",),
    "groq": ("GROQ_API_KEY",),
    "fireworks": ("FIREWORKS_API_KEY",),
    "together": ("TOGETHER_API_KEY",),
    "deepseek": ("DEEPSEEK_API_KEY",),
    "xai": ("XAI_API_KEY",),
    "perplexity": ("PPLX_API_KEY",),
}
_NAMES = {"google_genai": "Google", "openai": "OpenAI", "azure_openai": "Azure OpenAI",
          "anthropic": "Anthropic"}  # fmt: skip
_KEY_ATTRIBUTES = ("google_api_key", "openai_api_key", "anthropic_api_key", "api_key")
_KEY_REASONS = frozenset(
    {
        "API_KEY_INVALID",
        "API_KEY_EXPIRED",
        "CONSUMER_SUSPENDED",  # a revoked key (Google: 403 PERMISSION_DENIED)
        "invalid_api_key",
        "authentication_error",
    }
)
_NO_QUOTA = frozenset({"insufficient_quota", "billing_hard_limit_reached"})
_KEY_LIKE = re.compile(r"\b(?:sk-|AIza)[A-Za-z0-9_\-*]{4,}")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_DELAY = re.compile(r"^(\d+(?:\.\d+)?)s$")
_MESSAGE_CHARS = 160
_CHAIN_DEPTH = 5


@dataclass(frozen=True)
class _Answer:
    """What the provider answered: the HTTP status, its code words and its message."""

    status: int | None
    words: frozenset[str]
    """The body's status, type, code and ErrorInfo reasons ("INVALID_ARGUMENT", "API_KEY_INVALID",
    "insufficient_quota", "authentication_error")."""
    tag: str
    """The code word shown after the status: the most specific one ("API_KEY_INVALID")."""
    message: str
    retry_after: float | None
    """Seconds the provider asks to wait (Google's RetryInfo), when it says."""


def key_variables(provider: str) -> tuple[str, ...]:
    """The environment variables a provider's client reads its key from, in its order."""
    return _KEY_VARIABLES.get(provider, ())


def provider_refusal(exc: BaseException, model: object, attempts: int) -> ProviderRefused | None:
    """The error to raise for a model call that failed with `exc` and will not be sent again,
    when the provider refused it for a reason the user can fix; None for any other failure
    (a network error, a server error, a bad request, this project's own errors).

    Args:
        exc: What the last attempt raised.
        model: The chat model (or a wrapper with `inner`, or a bound model) that was called.
        attempts: How many times the request was sent.
    """
    if isinstance(exc, ResearchAssistantError):
        return None
    answer = _answer(exc)
    reason = _reason(exc, answer)
    if answer is None or reason is None:
        return None
    label = model_label(model)
    provider, _, name = label.partition(":")
    who = _NAMES.get(provider, provider)
    variable, origin = _key_in_use(model, provider)
    code = " ".join(str(part) for part in (answer.status, answer.tag) if part)
    said = _said(answer.message)
    detail = f"{code}: {said}" if said and code else said or code
    if reason == "key":
        message = (
            f"{who} refused the API key in {variable}, read from {origin} ({detail}). Put a "
            f"valid key in {variable} there; running again with this key will not help."
        )
        setting, retry_helps = variable, False
    elif reason == "permission":
        message = (
            f"{who} does not let the API key in {variable} (read from {origin}) use {name} "
            f"({detail}). Use a key with access to it in {variable}, or change `model`; running "
            "again will not help."
        )
        setting, retry_helps = variable, False
    elif reason == "model" and not answer.words and (base := _base_url(model)):
        message = (
            f"The server at {base} answered {answer.status or 'not found'} for the model {name}, "
            f"and not with {who}'s own error: the address may be wrong. Check `base_url` (an "
            "OpenAI-compatible server's usually ends in /v1) and the model name; running again "
            "will not help."
        )
        setting, retry_helps = "base_url", False
    elif reason == "model":
        message = (
            f"{who} has no model {name!r} for this key ({detail}). Change `model` to a model "
            f"name {who} lists; running again will not help."
        )
        setting, retry_helps = "model", False
    elif answer.words & _NO_QUOTA:
        message = (
            f"{who} refused the call: the account of the API key in {variable} (read from "
            f"{origin}) has no quota left ({detail}). Add credit or raise its plan, or put "
            f"another key in {variable}; running again will not help until then."
        )
        setting, retry_helps = variable, False
    else:
        tried = f"{attempts} attempts" if attempts > 1 else "1 attempt, no retries"
        wait = f" ({who} asks to wait {answer.retry_after:g} s)" if answer.retry_after else ""
        message = (
            f"{who} refused the call: the quota or rate limit of the API key in {variable} "
            f"(read from {origin}) is used up ({detail}; {tried}). Running again later may "
            f"help{wait}; so may more retries with longer waits (model_retries, "
            f"model_retry_wait), or a key with more quota in {variable}."
        )
        setting, retry_helps = variable, True
    return ProviderRefused(
        message,
        model=label,
        error_type=type(exc).__name__,
        reason=reason,
        setting=setting,
        retry_helps=retry_helps,
        status=answer.status,
    )


def _reason(exc: BaseException, answer: _Answer | None) -> str | None:
    """ "key", "permission", "model" or "quota", by LangChain's class of `exc` (its provider
    packages classify by status) or by the status the provider answered; None otherwise."""
    from langchain_core.exceptions import (
        ModelAuthenticationError,
        ModelNotFoundError,
        ModelPermissionDeniedError,
        ModelRateLimitError,
    )

    status = answer.status if answer else None
    words = answer.words if answer else frozenset()
    if isinstance(exc, ModelAuthenticationError) or status == 401 or words & _KEY_REASONS:
        return "key"
    if isinstance(exc, ModelPermissionDeniedError) or status == 403:
        return "permission"
    if isinstance(exc, ModelNotFoundError) or status == 404 or "model_not_found" in words:
        return "model"
    if isinstance(exc, ModelRateLimitError) or status == 429:
        return "quota"
    return None


def _answer(exc: BaseException) -> _Answer | None:
    """The provider's answer in `exc` or its causes: the first with an HTTP status or an error
    body. A LangChain error without either (a scripted model's) is answered by its message."""
    current: BaseException | None = exc
    for _ in range(_CHAIN_DEPTH):
        if current is None:
            break
        body = next(
            (
                value
                for value in (getattr(current, name, None) for name in ("details", "body"))
                if isinstance(value, dict)
            ),
            None,
        )
        status = _status(current)
        if body is not None or status is not None:
            return _read_body(cast("dict[str, object]", body or {}), status)
        current = current.__cause__ or current.__context__
    from langchain_core.exceptions import ModelError

    if isinstance(exc, ModelError):
        return _Answer(None, frozenset(), "", str(exc), None)
    return None


def _status(exc: BaseException) -> int | None:
    for name in ("status_code", "code"):
        value = getattr(exc, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and 400 <= value < 600:
            return value
    return None


def _read_body(body: Mapping[str, object], status: int | None) -> _Answer:
    """Read `{"error": {...}}` (Google, OpenAI, Anthropic) or the error object itself."""
    error = body.get("error")
    found = cast("Mapping[str, object]", error if isinstance(error, dict) else body)
    if status is None and isinstance(found.get("code"), int):
        status = cast("int", found["code"])
    words = [str(found[k]) for k in ("status", "type", "code") if isinstance(found.get(k), str)]
    reasons: list[str] = []
    retry_after = None
    details = found.get("details")
    for detail in details if isinstance(details, list) else []:
        if not isinstance(detail, dict):
            continue
        if isinstance(detail.get("reason"), str):
            reasons.append(detail["reason"])
        delay = _DELAY.match(str(detail.get("retryDelay", "")))
        if delay:
            retry_after = float(delay.group(1))
    tag = (reasons or list(reversed(words)) or [""])[0]
    message = found.get("message")
    return _Answer(
        status,
        frozenset([*words, *reasons]),
        tag,
        message if isinstance(message, str) else "",
        retry_after,
    )


def _said(message: str) -> str:
    """The provider's message, its first sentence, shortened, with anything key-like masked."""
    text = " ".join(message.split())
    for value in sorted(_secret_values(), key=len, reverse=True):
        text = text.replace(value, "***")
    text = _KEY_LIKE.sub("***", text)
    first = re.split(r"(?<=\.)\s", text, maxsplit=1)[0].rstrip(".")
    return first if len(first) <= _MESSAGE_CHARS else first[: _MESSAGE_CHARS - 1] + "…"


def _secret_values() -> list[str]:
    return [v for k, v in os.environ.items() if _SECRET_NAME.search(k) and len(v) >= 4]


def _base_url(model: object) -> str | None:
    """The address a model was pointed at (`base_url`), when it was given one."""
    inner = getattr(model, "inner", None) or model  # the research log's recording wrapper
    inner = getattr(inner, "bound", inner)
    for attribute in ("openai_api_base", "base_url", "anthropic_api_url"):
        value = getattr(inner, attribute, None)
        if isinstance(value, str) and value and "api.openai.com" not in value:
            return value if "anthropic.com" not in value else None
    return None


def _key_in_use(model: object, provider: str) -> tuple[str, str]:
    """The variable the model's key came from and where that was read, e.g. ("GOOGLE_API_KEY",
    "the environment"); for a key given as an argument ("its api_key argument", "the code")."""
    inner = getattr(model, "inner", None) or model  # the research log's recording wrapper
    inner = getattr(inner, "bound", inner)
    given = None
    for attribute in _KEY_ATTRIBUTES:
        value = getattr(inner, attribute, None)
        reveal = getattr(value, "get_secret_value", None)
        value = reveal() if callable(reveal) else value
        if isinstance(value, str) and value:
            given = value
            break
    metadata = getattr(inner, "metadata", None)
    origins = metadata.get(KEY_ORIGINS, {}) if isinstance(metadata, dict) else {}
    variables = key_variables(provider)
    for variable in variables:
        value = os.environ.get(variable, "").strip()
        if value and (given is None or given == value):
            origin = origins.get(variable) if isinstance(origins, dict) else None
            return variable, str(origin or "the environment")
    if given is not None:
        origin = origins.get(SETTINGS_KEY) if isinstance(origins, dict) else None
        return "the api_key argument", str(origin or "the code that made the model")
    return (variables[0] if variables else "its API key variable"), "the environment"
