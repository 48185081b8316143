"""resolve_model: from a model string to a chat model."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from jupyter_deepagent import (
    MissingAPIKey,
    ModelConfigurationError,
    ScriptedChatModel,
    resolve_model,
)
from jupyter_deepagent.harness.models import resolution as model_resolution

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"
FAKE_KEY = "fake-gemini-key-7f3a9c1e55"


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No Google key in the environment and an empty working directory (no stray .env)."""
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.setenv(name, "placeholder")  # so teardown restores the original state
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _everything_shown(exc: BaseException) -> str:
    return "".join(traceback.format_exception(exc)) + repr(exc)


def test_instance_is_returned_unchanged() -> None:
    model = ScriptedChatModel(script=["hi"])

    assert resolve_model(model) is model


def test_scripted_path_loads_the_script(no_keys: Path) -> None:
    (no_keys / "demo.yaml").write_text("- hello from the script\n", encoding="utf-8")

    model = resolve_model("scripted:demo.yaml")

    assert isinstance(model, ScriptedChatModel)
    assert model.invoke("hi").content == "hello from the script"


def test_missing_key_says_what_to_do(no_keys: Path) -> None:
    with pytest.raises(MissingAPIKey) as info:
        resolve_model("gemini-2.5-flash")

    message = str(info.value)
    for needle in ("GOOGLE_API_KEY", "GEMINI_API_KEY", ".env", "%env", "scripted:", "ollama:"):
        assert needle in message
    assert info.value.variables == ("GOOGLE_API_KEY", "GEMINI_API_KEY")
    assert isinstance(info.value, ModelConfigurationError)


def test_resolving_a_model_leaves_the_environment_alone(no_keys: Path) -> None:
    # reading .env is the notebook's job (before every run), not the harness's
    (no_keys / ".env").write_text(f"GEMINI_API_KEY={FAKE_KEY}\n", encoding="utf-8")
    before = dict(os.environ)

    with pytest.raises(MissingAPIKey):
        resolve_model("google_genai:gemini-2.5-flash")

    assert dict(os.environ) == before


def test_gemini_model_is_built_offline_and_hides_the_key(
    no_keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langchain_google_genai import ChatGoogleGenerativeAI

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)

    model = resolve_model("google_genai:gemini-2.5-flash", temperature=0)

    assert isinstance(model, ChatGoogleGenerativeAI)
    assert FAKE_KEY not in repr(model)
    assert FAKE_KEY not in str(model)
    if model.profile is not None and "max_input_tokens" in model.profile:
        assert model.profile["max_input_tokens"] > 100_000


def test_key_as_keyword_argument_is_accepted(no_keys: Path) -> None:
    model = resolve_model("gemini-2.5-flash", google_api_key=FAKE_KEY)

    assert FAKE_KEY not in repr(model)


def test_construction_failure_never_shows_the_key(
    no_keys: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    caplog.set_level(logging.DEBUG)

    with pytest.raises(ModelConfigurationError) as info:
        resolve_model("google_genai:gemini-2.5-flash", temperature="very hot")

    assert "temperature" in str(info.value)
    assert FAKE_KEY not in _everything_shown(info.value)
    assert FAKE_KEY not in caplog.text


def test_provider_error_quoting_the_key_is_redacted(
    no_keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain.chat_models

    def leaky(*_args: object, **_kwargs: object) -> None:
        msg = f"invalid credentials {FAKE_KEY} for project"
        raise ValueError(msg)

    monkeypatch.setenv("GOOGLE_API_KEY", FAKE_KEY)
    monkeypatch.setattr(langchain.chat_models, "init_chat_model", leaky)

    with pytest.raises(ModelConfigurationError) as info:
        resolve_model("google_genai:gemini-2.5-flash")

    assert "invalid credentials *** for project" in str(info.value)
    assert FAKE_KEY not in _everything_shown(info.value)


def test_key_rejected_at_construction_becomes_missing_api_key(
    no_keys: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import langchain.chat_models

    def no_key(*_args: object, **_kwargs: object) -> None:
        msg = "The api_key client option must be set or OPENAI_API_KEY"
        raise ValueError(msg)

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", no_key)

    with pytest.raises(MissingAPIKey) as info:
        resolve_model("openai:gpt-4o-mini")

    assert info.value.variables == ("OPENAI_API_KEY",)
    assert "scripted:" in str(info.value)


def test_unknown_provider_lists_valid_ones(no_keys: Path) -> None:
    with pytest.raises(ModelConfigurationError) as info:
        resolve_model("gemini:gemini-2.5-flash")

    message = str(info.value)
    assert "'gemini'" in message
    assert "google_genai" in message
    assert "ollama" in message
    assert "scripted" in message


def test_missing_provider_package_names_it(no_keys: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import langchain.chat_models

    def not_installed(*_args: object, **_kwargs: object) -> None:
        msg = "No module named 'langchain_mistralai'"
        raise ImportError(msg)

    monkeypatch.setattr(langchain.chat_models, "init_chat_model", not_installed)

    with pytest.raises(ModelConfigurationError, match="pip install langchain-mistralai"):
        resolve_model("mistralai:mistral-large-latest")


def test_wrong_type_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        resolve_model(42)  # type: ignore[arg-type]


def test_importing_the_module_does_not_import_langchain() -> None:
    code = (
        "import sys, jupyter_deepagent.harness.models.resolution\n"
        "print(any(m.split('.')[0] in ('langchain', 'langchain_core') for m in sys.modules))"
    )

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout

    assert out.strip() == "False"
    assert model_resolution.DEFAULT_PROVIDER == "google_genai"
