"""Provider errors that say what to do: an invalid or expired key, a quota used up once the
retries are spent, an unknown model name, a model package that is not installed. Each is told
in a sentence or two naming the variable or setting to change, where the key was read from
(`.env` beside the notebook, or the environment) and whether running again helps; never the
provider's error dict, never the key.

The real provider clients (`langchain-google-genai`, `langchain-anthropic`, `langchain-openai`) talk to a local
server that answers with the providers' own error bodies (`provider_server`); the messages are
checked from Python (`create_research_agent`, `trace_run`) and as a notebook cell shows them.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.messages import HumanMessage
from notebook_shell import Notebook, notebook  # noqa: F401
from provider_server import (
    ANTHROPIC_INVALID_KEY,
    ANTHROPIC_NO_MODEL,
    ANTHROPIC_RATE_LIMIT,
    GEMINI_EXPIRED_KEY,
    GEMINI_INVALID_KEY,
    GEMINI_NO_MODEL,
    GEMINI_NO_PERMISSION,
    GEMINI_QUOTA,
    OPENAI_INVALID_KEY,
    OPENAI_NO_MODEL,
    OPENAI_NO_QUOTA,
    ProviderServer,
    gemini_suspended_key,
    provider_answering,
)

from jupyter_deepagent import ModelCallFailed, create_research_agent, trace_run
from jupyter_deepagent.harness.models.call_policy import ModelCallPolicy
from jupyter_deepagent.harness.models.resolution import resolve_model
from jupyter_deepagent._exceptions import (
    MissingAPIKey,
    ModelConfigurationError,
    ProviderRefused,
)
from jupyter_deepagent.jupyter.views.notebook_words import BOX_COLUMNS

pytest.importorskip("langchain_google_genai")

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
GOOGLE_KEY = "AIza" + "FAKE-provider-errors-4711"  # split: no key-shaped literal in the repo
ANTHROPIC_KEY = "sk-ant-" + "FAKE-provider-errors-4711"
GEMINI = "google_genai:gemini-2.5-flash"


def _sentences(text: str) -> int:
    """Sentences outside parentheses (the provider's own words are quoted in them)."""
    outside = re.sub(r"\([^()]*\)", "", text)
    return len([s for s in re.split(r"(?<=[.!?])\s+", outside.strip()) if s])


def _check_said_well(error: BaseException, *, variable: str, key: str) -> str:
    text = str(error)
    assert isinstance(error, ProviderRefused)
    assert 1 <= _sentences(text) <= 2, text
    assert variable in text
    assert "{" not in text and "'error'" not in text  # no provider error dict
    assert key not in text
    return text


def _gemini(monkeypatch: pytest.MonkeyPatch, server: ProviderServer) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", GOOGLE_KEY)
    monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)


def _run(model: Any, **settings: Any) -> BaseException:
    agent = create_research_agent(model, model_retry_wait=0.01, **settings)
    with pytest.raises(ModelCallFailed) as raised:
        trace_run(agent, {"messages": [HumanMessage(content="hello")]})
    return raised.value


@LOOPBACK_ONLY
@pytest.mark.parametrize("answer", [GEMINI_INVALID_KEY, GEMINI_EXPIRED_KEY],
                         ids=["invalid", "expired"])
def test_a_refused_key_names_the_variable_and_says_running_again_will_not_help(
    monkeypatch: pytest.MonkeyPatch, answer: tuple[int, dict[str, Any]],
) -> None:
    with provider_answering(answer) as server:
        _gemini(monkeypatch, server)
        error = _run(GEMINI, model_retries=2)

    text = _check_said_well(error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert text.startswith("Google refused the API key in GOOGLE_API_KEY, read from the "
                           "environment (400 API_KEY_INVALID: API key ")
    assert "will not help" in text
    assert server.requests == 1  # not retried: it would fail again
    assert (error.reason, error.setting, error.retry_helps, error.status) == (
        "key", "GOOGLE_API_KEY", False, 400)
    assert error.__cause__ is None and error.__context__ is None  # no provider frames kept


@LOOPBACK_ONLY
def test_a_suspended_key_is_a_refused_key_and_its_value_is_not_repeated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with provider_answering(gemini_suspended_key(GOOGLE_KEY)) as server:
        _gemini(monkeypatch, server)
        error = _run(GEMINI, model_retries=2)

    text = _check_said_well(error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert "(403 CONSUMER_SUSPENDED: Permission denied: Consumer 'api_key:***' has been " in text
    assert (error.reason, error.retry_helps, server.requests) == ("key", False, 1)


@LOOPBACK_ONLY
def test_a_quota_used_up_is_told_once_the_retries_are_spent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with provider_answering(GEMINI_QUOTA) as server:
        _gemini(monkeypatch, server)
        error = _run(GEMINI, model_retries=2)

    text = _check_said_well(error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert server.requests == 3
    assert "(429 RESOURCE_EXHAUSTED: You exceeded your current quota" in text
    assert "3 attempts" in text and "Google asks to wait 26 s" in text
    assert "Running again later may help" in text and "model_retries" in text
    assert (error.reason, error.retry_helps) == ("quota", True)
    assert "https://" not in text  # only the provider's first sentence


@LOOPBACK_ONLY
def test_an_unknown_model_name_says_to_change_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    with provider_answering(GEMINI_NO_MODEL) as server:
        _gemini(monkeypatch, server)
        error = _run("google_genai:gemini-9-flash", model_retries=2)

    text = _check_said_well(error, variable="`model`", key=GOOGLE_KEY)
    assert text.startswith("Google has no model 'gemini-9-flash' for this key (404 NOT_FOUND: "
                           "models/gemini-9-flash is not found")
    assert "will not help" in text and server.requests == 1
    assert (error.reason, error.setting) == ("model", "model")


@LOOPBACK_ONLY
def test_a_key_without_access_to_the_model_says_which_key_and_which_model(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with provider_answering(GEMINI_NO_PERMISSION) as server:
        _gemini(monkeypatch, server)
        error = _run("google_genai:gemini-3-pro-preview", model_retries=2)

    text = _check_said_well(error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert text.startswith("Google does not let the API key in GOOGLE_API_KEY (read from the "
                           "environment) use gemini-3-pro-preview (403 PERMISSION_DENIED: ")
    assert "change `model`" in text and "will not help" in text
    assert (error.reason, server.requests) == ("permission", 1)


@LOOPBACK_ONLY
@pytest.mark.parametrize(
    ("answer", "reason", "said"),
    [
        (ANTHROPIC_INVALID_KEY, "key",
         "Anthropic refused the API key in ANTHROPIC_API_KEY, read from the environment "
         "(401 authentication_error: invalid x-api-key)."),
        (ANTHROPIC_RATE_LIMIT, "quota", "(429 rate_limit_error: This request would exceed"),
        (ANTHROPIC_NO_MODEL, "model",
         "Anthropic has no model 'claude-9-sonnet' for this key (404 not_found_error: "
         "model: claude-9-sonnet)."),
    ],
    ids=["key", "rate-limit", "model"],
)
def test_anthropics_refusals_are_said_the_same_way(
    monkeypatch: pytest.MonkeyPatch, answer: tuple[int, dict[str, Any]], reason: str, said: str,
) -> None:
    pytest.importorskip("langchain_anthropic")
    with provider_answering(answer) as server:
        monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
        error = _run("anthropic:claude-9-sonnet", model_retries=1)

    text = _check_said_well(error, variable="ANTHROPIC_API_KEY" if reason != "model" else "model",
                            key=ANTHROPIC_KEY)
    assert said in text
    assert error.reason == reason
    assert server.requests == (2 if reason == "quota" else 1)


@pytest.fixture
def openai_not_installed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """`langchain_openai` fails to import, as when it is not installed; LangChain's cache of the
    provider classes it found (a test before may have imported it) is emptied around the test."""
    from langchain.chat_models import base

    found = getattr(base, "_get_chat_model_creator", None)
    clear = getattr(found, "cache_clear", lambda: None)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # its import fails
    clear()
    yield
    clear()


def test_a_model_package_that_is_not_installed_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, openai_not_installed: None,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "FAKE-not-installed")

    with pytest.raises(ModelConfigurationError) as raised:
        create_research_agent("openai:gpt-4o-mini")

    text = str(raised.value)
    assert "`pip install langchain-openai`" in text and "restart the kernel" in text
    assert "`model`" in text  # or choose another model


# -- as a notebook cell shows them ---------------------------------------------------------------

def _shown(cell: Any) -> str:
    return json.dumps([o.data for o in cell.outputs]) + cell.stdout + cell.stderr + str(cell.error)


def _box(cell: Any) -> list[str]:
    """The lines of the cell's error box, as IPython renders the error."""
    [text] = cell.error._render_traceback_()
    return text.splitlines()


def _fits_the_box(lines: list[str], message: str) -> None:
    assert all(len(line) <= BOX_COLUMNS for line in lines), lines
    assert " ".join(lines) == f"{type_name(lines)}: {message}"  # broken between words only


def type_name(lines: list[str]) -> str:
    return lines[0].split(":", 1)[0]


@LOOPBACK_ONLY
def test_in_a_notebook_a_refused_key_read_from_env_says_so_in_one_box(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with provider_answering(GEMINI_INVALID_KEY) as server:
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        (notebook.folder / ".env").write_text(f"GOOGLE_API_KEY={GOOGLE_KEY}\n")
        cell = notebook.run(f"%%agent -m {GEMINI}\nhello")

    text = _check_said_well(cell.error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert "GOOGLE_API_KEY, read from .env beside the notebook" in text
    assert "will not help" in text
    assert GOOGLE_KEY not in _shown(cell) and "'error'" not in _shown(cell)
    assert "run the cell again to retry" not in _shown(cell)
    _fits_the_box(_box(cell), " ".join(text.split()))
    assert cell.live_text.splitlines()[-1].startswith("failed: ProviderRefused")


@LOOPBACK_ONLY
def test_in_a_notebook_a_key_from_the_environment_is_named_as_such(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with provider_answering(GEMINI_QUOTA) as server:
        _gemini(monkeypatch, server)
        notebook.run("%agent config model_retries=1 model_retry_wait=0.01")
        cell = notebook.run(f"%%agent -m {GEMINI}\nhello")

    text = _check_said_well(cell.error, variable="GOOGLE_API_KEY", key=GOOGLE_KEY)
    assert "the API key in GOOGLE_API_KEY (read from the environment) is used up" in text
    assert "2 attempts" in text and server.requests == 2


def test_the_missing_key_message_breaks_between_words_in_its_box(notebook: Notebook) -> None:
    cell = notebook.run(f"%%agent -m {GEMINI}\nhello")

    assert isinstance(cell.error, MissingAPIKey)
    assert "\n" not in str(cell.error)  # the message itself stays one line for Python
    _fits_the_box(_box(cell), str(cell.error))


def test_a_missing_model_package_in_a_notebook_names_the_pip_command(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, openai_not_installed: None,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "FAKE-not-installed")

    cell = notebook.run("%%agent -m openai:gpt-4o-mini\nhello")

    assert isinstance(cell.error, ModelConfigurationError)
    text = str(cell.error)
    assert "`%pip install langchain-openai`" in text and "`%%agent -m scripted:" in text
    _fits_the_box(_box(cell), text)


# -- OpenAI, through its real client (langchain-openai over the openai SDK), pointed at the local
# server by `base_url`, as a gateway or a local OpenAI-compatible server is.

@LOOPBACK_ONLY
@pytest.mark.parametrize(
    ("answer", "reason", "said"),
    [
        (OPENAI_INVALID_KEY, "key", "(401 invalid_api_key: Incorrect API key provided: ***)"),
        (OPENAI_NO_QUOTA, "quota", "has no quota left"),
        (OPENAI_NO_MODEL, "model", "OpenAI has no model 'gpt-9'"),
    ],
    ids=["key", "no-quota", "model"],
)
def test_openais_answers_are_read_the_same_way(
    monkeypatch: pytest.MonkeyPatch, answer: tuple[int, dict[str, Any]], reason: str, said: str,
) -> None:
    pytest.importorskip("langchain_openai")
    key = "sk-" + "FAKE-openai-4711"
    monkeypatch.setenv("OPENAI_API_KEY", key)
    with provider_answering(answer) as server:
        policy = ModelCallPolicy(timeout=30, retries=2, first_wait=0.01)  # the client's own off
        model = resolve_model("openai:gpt-9", call_policy=policy, base_url=f"{server.url}/v1")
        refused = _run(model, model_retries=2)

    text = _check_said_well(refused, variable="OPENAI_API_KEY" if reason != "model" else "model",
                            key=key)
    assert said in text and "****" not in text and "https://" not in text
    assert isinstance(refused, ProviderRefused)
    assert (refused.reason, refused.retry_helps) == (reason, False)
    assert server.requests == 1  # none of these is retried: each would fail again


@LOOPBACK_ONLY
def test_a_wrong_base_url_is_named_not_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    # an Ollama server asked without /v1 answers a bare 404, not OpenAI's error
    pytest.importorskip("langchain_openai")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + "FAKE-openai-4711")
    with provider_answering((404, "404 page not found")) as server:  # type: ignore[arg-type]
        policy = ModelCallPolicy(timeout=30, retries=0, first_wait=0.01)
        model = resolve_model("openai:qwen2.5-coder", call_policy=policy, base_url=server.url)
        refused = _run(model, model_retries=0)

    assert isinstance(refused, ProviderRefused)
    text = str(refused)
    assert f"The server at {server.url}" in text and "`base_url`" in text and "/v1" in text
    assert (refused.reason, refused.setting, refused.retry_helps) == ("model", "base_url", False)
