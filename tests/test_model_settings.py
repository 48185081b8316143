"""Any model and its settings: a `[model]` table and `%agent config model.KEY=...` reach the model's
constructor, a secret among them is masked, `-m NAME` takes a chat model from a notebook variable,
and a `%%agent` cell runs through the real OpenAI client against a local server speaking the
OpenAI protocol (what Ollama, vLLM and llama.cpp servers speak)."""

from __future__ import annotations

import json

import pytest
from notebook_shell import Notebook, notebook, scripted  # noqa: F401 (a fixture)
from openai_server import Reply, openai_server
from provider_server import OPENAI_SERVER_ERROR

from jupyter_deepagent import InputError

pytest.importorskip("langchain_openai")

LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])
LOCAL_KEY = "sk-local" + "-model-key-5521"  # split: no key-shaped literal in the repo


def _toml(notebook: Notebook, text: str) -> None:
    (notebook.folder / ".deepagent.toml").write_text(text, encoding="utf-8")


def test_a_model_table_gives_the_name_and_the_keywords(notebook: Notebook) -> None:
    _toml(
        notebook,
        '[model]\nname = "openai:gpt-4.1-mini"\nbase_url = "http://127.0.0.1:9/v1"\n'
        "temperature = 0.2\nmax_tokens = 300\n",
    )
    config = notebook.session.config
    assert config.model == "openai:gpt-4.1-mini"
    assert config.model_settings == {
        "base_url": "http://127.0.0.1:9/v1",
        "temperature": 0.2,
        "max_tokens": 300,
    }


def test_config_adds_a_keyword_over_the_files_and_none_removes_it(notebook: Notebook) -> None:
    _toml(notebook, 'model = "openai:gpt-4.1-mini"\n[model_settings]\ntemperature = 0.2\n')
    with pytest.raises(InputError):  # the keywords go in [model], beside its name
        notebook.session.config  # noqa: B018 (reading it checks the files)
    _toml(notebook, '[model]\nname = "openai:gpt-4.1-mini"\ntemperature = 0.2\n')
    notebook.run("%agent config model.max_tokens=300 model.reasoning_effort=low")
    assert notebook.session.config.model_settings == {
        "temperature": 0.2,
        "max_tokens": 300,
        "reasoning_effort": "low",
    }
    shown = notebook.run("%agent config model.temperature=none")
    assert notebook.session.config.model_settings == {"max_tokens": 300, "reasoning_effort": "low"}
    [table] = shown.markdown
    assert "| model_settings | `max_tokens=300, reasoning_effort='low'` | %agent config |" in table


@pytest.mark.parametrize(
    "table",
    [
        '[model]\nname = "openai:gpt-4.1"\nmodel_provider = "anthropic"\n',
        '[model]\nname = "openai:gpt-4.1"\n"not a name" = 1\n',
        '[model]\nname = "openai:gpt-4.1"\ntemperature = 2026-12-01\n',
    ],
)
def test_a_bad_keyword_is_refused_naming_the_file(notebook: Notebook, table: str) -> None:
    _toml(notebook, table)
    with pytest.raises(InputError, match=r"\.deepagent\.toml"):
        notebook.session.config  # noqa: B018


def test_a_secret_keyword_is_masked_where_settings_are_shown(notebook: Notebook) -> None:
    _toml(notebook, f'[model]\nname = "openai:gpt-4.1-mini"\napi_key = "{LOCAL_KEY}"\n')
    [table] = notebook.run("%agent config").markdown
    assert "| model_settings | `api_key='***'` | .deepagent.toml |" in table
    assert LOCAL_KEY not in table
    assert LOCAL_KEY in notebook.session.secret_values()
    assert notebook.session.redactor()(f"the key is {LOCAL_KEY}") == "the key is ***"


def test_headers_and_a_urls_password_are_masked_too(notebook: Notebook) -> None:
    token, password = "gw-" + "live-token-7781", "pw-" + "local-3302"
    _toml(
        notebook,
        f'[model]\nname = "openai:gpt-4.1-mini"\nbase_url = "https://ana:{password}@gw.example/v1"\n'
        f'default_headers = {{Authorization = "Bearer {token}"}}\n',
    )
    [table] = notebook.run("%agent config").markdown
    assert token not in table and password not in table
    assert "'Authorization': '***'" in table and "https://ana:***@gw.example/v1" in table
    redact = notebook.session.redactor()
    assert token not in redact(f"sent Bearer {token}") and password not in redact(password)


def test_model_names_a_notebook_variable_holding_a_chat_model(notebook: Notebook) -> None:
    notebook.shell.user_ns["my_model"] = scripted("From the notebook's own model.")
    cell = notebook.run("%%agent -m my_model\nwho answers?")
    assert cell.error is None
    assert cell.markdown == ["From the notebook's own model."]


def test_model_naming_a_variable_that_holds_no_chat_model_says_so(notebook: Notebook) -> None:
    # not a model called "x" at the default provider, which fails later as a missing key
    notebook.run("x = 5")
    cell = notebook.run("%%agent -m x\nwho answers?")
    assert cell.error is not None  # one line, as every option error
    assert str(cell.error).startswith(
        "The model 'x' names a notebook variable that holds int, not a chat model."
    )
    assert "Traceback" not in cell.stdout + cell.stderr


@LOOPBACK_ONLY
def test_an_agent_cell_runs_through_the_openai_client_against_a_local_server(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    replies = [
        Reply(error=OPENAI_SERVER_ERROR),  # retried, visibly
        Reply(
            tool_calls=[
                {
                    "name": "write_file",
                    "args": {"file_path": "/outputs/n.md", "content": "# Notes\nice"},
                }
            ]
        ),
        Reply(text="The notes are in /outputs/n.md.", prompt_tokens=900, cached_tokens=512),
    ]
    with openai_server(*replies) as server:
        _toml(
            notebook,
            f'model_retry_wait = 0\n[model]\nname = "openai:local-llama"\n'
            f'base_url = "{server.base_url}"\napi_key = "{LOCAL_KEY}"\n'
            # usage in a stream: langchain-openai asks for it only from OpenAI's own endpoint
            "temperature = 0.2\nmax_tokens = 300\nstream_usage = true\n",
        )
        cell = notebook.run("%%agent\nwrite the notes")
    assert cell.error is None, cell.error
    assert cell.markdown == ["The notes are in /outputs/n.md.", "# Notes\nice"]  # and the file
    [retry] = [line for line in cell.live_text.splitlines() if "retrying" in line]
    assert "Error code: 500" in retry
    sent = server.bodies[1]
    assert sent["model"] == "local-llama" and sent["temperature"] == 0.2
    assert 300 in (sent.get("max_tokens"), sent.get("max_completion_tokens"))
    assert "write_file" in {tool["function"]["name"] for tool in sent["tools"]}
    assert sent.get("stream") is True  # the answer streams into the cell
    assert server.headers[1]["authorization"] == f"Bearer {LOCAL_KEY}"
    result = server.bodies[2]["messages"][-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "call_2_0"
    trace = notebook.shell.user_ns["_agent"]
    [finished] = trace.of_type("run_finished")
    assert finished["tokens_in"] >= 900 and finished["tokens_in_cached"] >= 512
    everything = json.dumps(trace.events, default=str) + cell.stdout + cell.stderr
    assert LOCAL_KEY not in everything + json.dumps([o.data for o in cell.outputs], default=str)


@LOOPBACK_ONLY
def test_a_refusal_that_repeats_a_key_from_the_model_table_shows_it_masked(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    from provider_server import provider_answering

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    key = "gw-" + "live-7f3a9c2e5b1d4a6f8e0c"  # a gateway's key: no known shape to mask
    echoed = (401, {"error": {"message": f"Incorrect API key provided: {key}.",
                              "type": "invalid_request_error", "param": None,
                              "code": "invalid_api_key"}})
    with provider_answering(echoed) as server:
        _toml(notebook, f'[model]\nname = "openai:gpt-4.1-mini"\n'
                        f'base_url = "{server.url}/v1"\napi_key = "{key}"\n')
        cell = notebook.run("%%agent\nhello")
    assert cell.error is not None and "API key" in str(cell.error)
    shown = str(cell.error) + cell.stdout + cell.stderr + json.dumps(
        [o.data for o in cell.outputs], default=str)
    assert key not in shown and "***" in str(cell.error)
    assert "read from the model settings ([model] api_key)" in str(cell.error)  # where to fix it
