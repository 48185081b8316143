"""Keys never reach the model through the notebook: the environment, cells that set or showed a
key, secret-named variables, `--context` values and saved outputs are all masked as ***."""

from __future__ import annotations

import nbformat
import pytest
from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.redaction import Redactor, is_secret_variable, looks_secret

FAKE_KEY = "fake-api-key-7d2f9c41"
CELL_TOKEN = "tok-typed-in-a-cell-5521"
CONTEXT_TOKEN = "ctx-token-for-tools-8814"
PASSWORD = "hunter2-correct-horse"
FILE_KEY = "key-from-dotenv-3318"
SECRETS = (FAKE_KEY, CELL_TOKEN, CONTEXT_TOKEN, PASSWORD, FILE_KEY)


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("OPENAI_API_KEY", True), ("GITHUB_TOKEN", True), ("db_password", True),
        ("dbPassword", True), ("AWS_SECRET_ACCESS_KEY", True), ("HTTP_AUTH", True),
        ("GOOGLE_APPLICATION_CREDENTIALS", True), ("accesstoken", True),
        ("monkey", False), ("author", False), ("tokenizer", False), ("max_tokens", False),
        ("PWD", False), ("PATH", False), ("KeyError", False),
    ],
)
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_values_of_secret_variables_and_values_set_in_code_are_masked() -> None:
    redact = Redactor(extra=lambda: ["short", "extra-secret-value"],
                      environ={"SERVICE_API_KEY": FAKE_KEY, "AUTH_MODE": "basic", "HOME": "/h"})
    assert redact(f"key={FAKE_KEY} mode=basic home=/h") == "key=*** mode=basic home=/h"
    assert redact("uses extra-secret-value and short") == "uses *** and ***"
    assert redact("%env MY_TOKEN=abc123") == "%env MY_TOKEN=***"
    assert redact("env: MY_TOKEN=abc123") == "env: MY_TOKEN=***"
    assert redact("%env LANG=C.UTF-8") == "%env LANG=C.UTF-8"
    assert redact("os.environ['GH_TOKEN'] = 'ghp_x1'") == "os.environ['GH_TOKEN'] = '***'"
    assert redact('{"password": "pw1", "user": "ada"}') == '{"password": "***", "user": "ada"}'
    assert redact("%%agent --context token=abc --context db='a b'") == (
        "%%agent --context token=*** --context db=***"
    )


def test_the_environment_and_secret_text_variables_stay_out_of_vars() -> None:
    import os

    assert is_secret_variable("env", os.environ)
    assert is_secret_variable("api_key", "abc")
    assert not is_secret_variable("token_counts", [1, 2, 3])
    assert not is_secret_variable("notes", "abc")


def _save_notebook_with_output(notebook: Notebook, text: str) -> None:
    cell = nbformat.v4.new_code_cell("os.environ", execution_count=1)
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), notebook.path)


def test_no_tool_result_the_model_receives_holds_a_key(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_SERVICE_API_KEY", FAKE_KEY)
    monkeypatch.delenv("DEMO_FILE_KEY", raising=False)
    monkeypatch.delenv("MY_TOKEN", raising=False)
    (notebook.folder / ".env").write_text(f"DEMO_FILE_KEY={FILE_KEY}\n")
    _save_notebook_with_output(notebook, f"DEMO_SERVICE_API_KEY {FAKE_KEY}\n")
    notebook.run("import os\nenv = os.environ\nsnapshot = dict(os.environ)")
    notebook.run("key = os.environ['DEMO_SERVICE_API_KEY']\nprint('using', key)")
    notebook.run("os.environ")
    notebook.run(f"%env MY_TOKEN={CELL_TOKEN}")
    notebook.run(f"db_password = '{PASSWORD}'\nsettings = {{'password': db_password}}")
    notebook.session.configure(model=scripted("ok"))
    first = notebook.run(f"%%agent --context token={CONTEXT_TOKEN}\nhello")
    assert first.error is None
    notebook.run("print(os.environ['DEMO_FILE_KEY'][:30])")

    everything = ["/notebook/vars/index.md", "/notebook/saved/outputs/1.txt"]
    everything += [f"/notebook/cells/{n}.py" for n in range(1, 9)]
    everything += [f"/notebook/outputs/{n}.txt" for n in (2, 3, 4, 7)]
    everything += ["/notebook/vars/settings.json"]
    steps = [call("read_file", file_path=path) for path in everything]
    parts = ("fake-api", "tok-", "2f9c")
    steps += [call("grep", pattern=part, path="/notebook/") for part in parts]
    steps += [call("glob", pattern="**", path="/notebook/"), "done"]
    notebook.session.configure(model=scripted(*steps))
    cell = notebook.run("%%agent\nread the whole notebook")
    assert cell.error is None

    results = [m.text for m in notebook.shell.user_ns["_agent"].messages
               if isinstance(m, ToolMessage)]
    assert len(results) == len(steps) - 1
    leaked = [(s, r) for r in results for s in SECRETS if s in r]
    assert leaked == []
    errors = [t for t in results[:-4] if "Error" in t]
    assert errors == []
    index = results[0]
    assert "- env: (hidden: looks like a secret)" in index
    assert "- db_password: (hidden: looks like a secret)" in index
    assert "- snapshot: (hidden: looks like a secret)" in index
    assert "DEMO_SERVICE_API_KEY ***" in results[1]  # the saved output, masked
