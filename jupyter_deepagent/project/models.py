"""The chat models a folder's agent uses: made from the configured `model`, kept across runs.

A model is kept per spec, so a scripted model plays on from cell to cell, and made again when the
environment changes, so a key added to `.env` takes effect at the next run, or when a `scripted:`
file changes (its modification time or size), so an edited script plays from its first step at the
next run. The env file is read (through `ApiKeys`) before each model is looked up. LangChain
loads with the first model. A script that sets no context window plays with the default one
without a warning (it runs offline: there is no real window to guess).

Errors are the harness's, which advise Python arguments, plus a note when the env file has a line
for the missing key that could not be read; each face says them in its own words (the kernel's
`Session.model`, the server's `served_agent`). Each provider model carries, in its `metadata`,
which of its variables the env file set (`KEY_ORIGINS`), so a key the provider refuses later is
named with where it was read from (".env beside the notebook", else the environment).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_deepagent.project.secrets.keys import ApiKeys

if TYPE_CHECKING:
    from langchain_core.language_models.chat_models import BaseChatModel

    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy
    from jupyter_deepagent.project.settings.agent_config import AgentConfig

__all__ = ["ModelCache", "call_policy", "model_label"]


def model_label(model: object) -> str:
    """A short name for a model spec or chat model object (its model name, else its class)."""
    if isinstance(model, str):
        return model
    for attribute in ("model_name", "model", "name"):
        value = getattr(model, attribute, None)
        if isinstance(value, str) and value:
            return value
    return type(model).__name__


def call_policy(settings: AgentConfig) -> ModelCallPolicy:
    """The `ModelCallPolicy` of an `AgentConfig`'s model timeout and retry settings.

    Raises:
        ValueError: A setting out of range (the config checks them first).
    """
    from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy

    return ModelCallPolicy(
        settings.model_timeout, settings.model_retries, settings.model_retry_wait
    )


class ModelCache:
    """Makes the chat models of a kernel session or a served agent, and keeps them.

    Args:
        keys: The keys; the env file is loaded into them before each lookup.
    """

    def __init__(self, keys: ApiKeys) -> None:
        self.keys = keys
        self._models: dict[tuple[object, ...], BaseChatModel] = {}

    def get(
        self,
        spec: str | BaseChatModel,
        notebook_dir: Path,
        env_file: str,
        call_policy: ModelCallPolicy | None = None,
        *,
        keywords: Mapping[str, object] | None = None,
    ) -> BaseChatModel:
        """The chat model for `spec`: "provider:model", "scripted:path.yaml" or a model object.

        A relative scripted path and `env_file` are relative to `notebook_dir`. `call_policy`
        gives a provider's client its timeout and turns its own retries off. `keywords` go to
        a provider's model (`init_chat_model`); a scripted model and a model object take none.

        Raises:
            MissingAPIKey: The provider's key is not set (the message points at an env file line
                that could not be read, if there is one).
            ModelConfigurationError: The model cannot be created.
            InputError: The env file cannot be read.
        """
        from jupyter_deepagent._exceptions import MissingAPIKey
        from jupyter_deepagent.harness.models.resolution import resolve_model

        self.keys.load(notebook_dir / env_file, env_file)
        if not isinstance(spec, str):
            return resolve_model(spec)
        if spec.startswith("scripted:"):
            return self._scripted(spec, notebook_dir)
        given = dict(keywords or {})
        key = (spec, hash(frozenset(os.environ.items())), call_policy, repr(sorted(given.items())))
        if key not in self._models:
            try:
                self._models[key] = resolve_model(spec, call_policy=call_policy, **given)
            except MissingAPIKey as exc:
                msg = str(exc) + self.keys.unreadable_note(exc.variables, env_file)
                raise MissingAPIKey(msg, variables=exc.variables) from None
        model = self._models[key]
        self._mark_key_origins(model, env_file, settings_key="api_key" in given)
        return model

    def _mark_key_origins(
        self, model: BaseChatModel, env_file: str, *, settings_key: bool = False
    ) -> None:
        """Put into `model.metadata` which variables the env file set (see `KEY_ORIGINS`), and
        whether the key came from the model settings (`[model] api_key`)."""
        from jupyter_deepagent.harness.models.provider_errors import KEY_ORIGINS, SETTINGS_KEY

        metadata = dict(model.metadata or {})
        origins = self.keys.origins(env_file)
        if settings_key:
            origins = {**origins, SETTINGS_KEY: "the model settings ([model] api_key)"}
        if metadata.get(KEY_ORIGINS) != origins:
            metadata[KEY_ORIGINS] = origins
            model.metadata = metadata

    def _scripted(self, spec: str, notebook_dir: Path) -> BaseChatModel:
        """The scripted model for `spec`, loaded again when its file changed since last time.

        Raises:
            ScriptError: The script file is missing or malformed.
        """
        from jupyter_deepagent.harness.compression.tokens import DEFAULT_CONTEXT_WINDOW
        from jupyter_deepagent.harness.models.resolution import resolve_model

        script = Path(spec.removeprefix("scripted:"))
        path = script if script.is_absolute() else notebook_dir / script
        try:
            stat = path.stat()
            version: tuple[int, int] | None = (stat.st_mtime_ns, stat.st_size)
        except OSError:
            version = None  # resolve_model says what is wrong with the file
        key = (f"scripted:{path}", version)
        if key not in self._models:
            model = resolve_model(f"scripted:{path}", env_file=None)
            profile = dict(getattr(model, "profile", None) or {})
            if not profile.get("max_input_tokens"):  # no window to guess: no warning
                model.profile = {**profile, "max_input_tokens": DEFAULT_CONTEXT_WINDOW}
            stale = [k for k in self._models if k[0] == key[0]]
            for old in stale:
                del self._models[old]
            self._models[key] = model
        return self._models[key]
