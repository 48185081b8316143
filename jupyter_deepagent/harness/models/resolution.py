"""Turn a model specification (an instance, `"provider:model"`, `"scripted:path"`) into a model.

LangChain and the provider packages are imported inside `resolve_model`, so importing this module
costs nothing. Errors say what to do; an API key's value never appears in any of them.
"""

from __future__ import annotations

import os
import re
import traceback
from typing import TYPE_CHECKING, Any

from jupyter_deepagent._exceptions import MissingAPIKey, ModelConfigurationError

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy

__all__ = ["DEFAULT_PROVIDER", "resolve_model"]

DEFAULT_PROVIDER = "google_genai"
"""The provider of a bare model name such as `"gemini-2.5-flash"`."""

_GOOGLE_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
_GOOGLE_KEY_KWARGS = ("api_key", "google_api_key")
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSWORD|CREDENTIAL", re.IGNORECASE)
_KEY_VARIABLE = re.compile(r"\b[A-Z][A-Z0-9_]*_API_KEY\b")
_ALIASES = {"google": "google_genai", "gemini": "google_genai", "googleai": "google_genai"}


def _offline_options(provider: str = "") -> str:
    scripted = "model='scripted:path/to/script.yaml' (a ScriptedChatModel that plays a script)"
    if provider == "ollama":
        return f"To work without a model service, use {scripted}."
    return f"To work offline, use {scripted} or model='ollama:<model>' (a local Ollama model)."


def _missing_key(provider: str, variables: tuple[str, ...]) -> MissingAPIKey:
    names = " or ".join(variables) if variables else "its API key variable"
    example = variables[0] if variables else "PROVIDER_API_KEY"
    msg = (
        f"No API key for the {provider!r} model provider: set {names}. "
        f"In a notebook, put a line `{example}=<your key>` in a .env file beside the notebook "
        "(KEY=value lines; it is read before every %%agent run); otherwise set the variable before "
        f"starting Jupyter or the script. Do not use `%env {example}=...`: that saves the key "
        "into the notebook. "
        f"{_offline_options()}"
    )
    return MissingAPIKey(msg, variables=variables)


def _providers() -> dict[str, str]:
    """Known provider names mapped to the pip package that implements each."""
    from langchain.chat_models import base

    registry: dict[str, tuple[str, str, object]] = getattr(base, "_BUILTIN_PROVIDERS", {})
    packages = {name: entry[0].split(".")[0].replace("_", "-") for name, entry in registry.items()}
    return packages or {
        "anthropic": "langchain-anthropic",
        "google_genai": "langchain-google-genai",
        "ollama": "langchain-ollama",
        "openai": "langchain-openai",
    }


def _secrets(kwargs: dict[str, object]) -> list[str]:
    """Values that must never be shown: secret-looking kwargs and environment variables."""
    values: list[object] = [v for k, v in os.environ.items() if _SECRET_NAME.search(k)]
    for key, value in kwargs.items():
        if _SECRET_NAME.search(key):
            reveal = getattr(value, "get_secret_value", None)
            values.append(reveal() if callable(reveal) else value)
    return sorted({v for v in values if isinstance(v, str) and len(v) >= 4}, key=len, reverse=True)


def _describe_failure(
    exc: Exception, provider: str, name: str, kwargs: dict[str, object]
) -> tuple[ModelConfigurationError, bool]:
    """Build the error for a failed construction; also say whether the original shows a secret."""
    original = "".join(traceback.format_exception(exc))
    text = str(exc)
    leaked = False
    for secret in _secrets(kwargs):
        if secret in original:
            leaked = True
            text = text.replace(secret, "***")
    lowered = text.lower()
    if "api key" in lowered or "api_key" in lowered:
        found = tuple(dict.fromkeys(_KEY_VARIABLE.findall(text)))
        variables = _GOOGLE_KEYS if provider == "google_genai" else found
        return _missing_key(provider, variables), leaked
    msg = (
        f"Could not create the {provider!r} model {name!r}: {type(exc).__name__}: {text}\n"
        "Check the model name and the keyword arguments passed with it."
    )
    return ModelConfigurationError(msg), leaked


def resolve_model(
    model: str | BaseChatModel, *, call_policy: ModelCallPolicy | None = None, **kwargs: Any
) -> BaseChatModel:
    """Return a chat model for `model`.

    - a `BaseChatModel` instance is returned unchanged;
    - `"scripted:path/to/script.yaml"` loads a `ScriptedChatModel` (path relative to the
      working directory; `kwargs` are ignored: a script has no sampling settings);
    - `"provider:model"` goes through LangChain's `init_chat_model` with `kwargs`;
    - a bare name such as `"gemini-2.5-flash"` means `"google_genai:gemini-2.5-flash"`.

    Nothing here changes the process: API keys are read from `os.environ` as it is. (The
    notebook layer reads the notebook's `.env` file into it before every run.)

    Args:
        model: The model instance or specification string.
        call_policy: For a `"provider:model"` of Google, OpenAI or Anthropic: give the client
            the policy's timeout and turn its own silent retries off (the harness retries, see
            `ModelCallPolicy`); `kwargs` naming `timeout` or `max_retries` still win. A model
            instance and a scripted model are left as they are.
        **kwargs: Passed to the provider's chat model (e.g. `temperature`).

    Returns:
        The chat model.

    Raises:
        TypeError: `model` is neither a string nor a `BaseChatModel`.
        MissingAPIKey: The provider needs an API key that is not set (checked before
            construction for Google Gemini: GOOGLE_API_KEY or GEMINI_API_KEY).
        ModelConfigurationError: The provider is unknown, its package is not installed, or the
            model cannot be constructed with these arguments.
        ScriptError: A `scripted:` file is missing or malformed.
    """
    if not isinstance(model, str):
        from langchain_core.language_models.chat_models import BaseChatModel

        if isinstance(model, BaseChatModel):
            return model
        msg = f"model must be a 'provider:model' string or a BaseChatModel, not {type(model)!r}"
        raise TypeError(msg)

    spec = model.strip()
    provider, colon, name = spec.partition(":")
    if not colon:
        provider, name = DEFAULT_PROVIDER, spec
    provider = provider.strip().replace("-", "_").lower()
    name = name.strip()
    if not name:
        msg = f"Model {model!r} has no model name; write it as 'provider:model', e.g. "
        msg += "'google_genai:gemini-2.5-flash' or 'scripted:path/to/script.yaml'."
        raise ModelConfigurationError(msg)

    if provider == "scripted":
        from jupyter_deepagent.harness.models.scripted_model import (
            ScriptedChatModel,
        )

        return ScriptedChatModel.from_file(name)

    packages = _providers()
    if provider not in packages:
        hint = f" Did you mean '{_ALIASES[provider]}'?" if provider in _ALIASES else ""
        msg = (
            f"Unknown model provider {provider!r} in {model!r}.{hint} Use one of: scripted, "
            f"{', '.join(sorted(packages))}."
        )
        raise ModelConfigurationError(msg)

    if provider == "google_genai":
        has_key = any(os.environ.get(var, "").strip() for var in _GOOGLE_KEYS)
        if not has_key and not any(kwargs.get(k) for k in _GOOGLE_KEY_KWARGS):
            raise _missing_key(provider, _GOOGLE_KEYS)

    from langchain.chat_models import init_chat_model

    if call_policy is not None:
        kwargs = {**call_policy.client_options(provider), **kwargs}
    try:
        return init_chat_model(name, model_provider=provider, **kwargs)
    except ImportError as exc:
        package = packages[provider]
        msg = (
            f"The {provider!r} model provider needs the {package} package, which is not "
            f"installed: run `pip install {package}` in the kernel's environment "
            f"(e.g. `%pip install {package}`) and restart the kernel, or change `model` to "
            f"another provider. {_offline_options(provider)}"
        )
        raise ModelConfigurationError(msg) from exc
    except Exception as exc:
        error, leaked = _describe_failure(exc, provider, name, kwargs)
        if not leaked:
            raise error from exc
    # Raised outside the except block so the original exception, which shows a secret, is not
    # attached as __context__ either.
    raise error from None
