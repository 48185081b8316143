"""Keys never reach the model through the notebook: the environment, cells that set or showed a
key, secret-named variables, `--context` values and saved outputs are all masked as ***."""

from __future__ import annotations

import nbformat
import pytest
from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend
from jupyter_deepagent.project.secrets.redaction import Redactor, is_secret_variable, looks_secret

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
        # plurals: a dict of keys is as secret as one key; a count of tokens is not
        ("API_KEYS", True), ("client_secrets", True), ("passwords", True), ("SECRETS", True),
        ("private_keys", True), ("access_tokens", True), ("refreshTokens", True),
        ("tokens", False), ("num_tokens", False), ("monkeys", False), ("keys", False),
        ("primary_keys", False),
    ],
)
def test_secret_looking_names(name: str, secret: bool) -> None:
    assert looks_secret(name) is secret


def test_values_of_secret_variables_and_values_set_in_code_are_masked() -> None:
    redact = Redactor(extra=lambda: ["short", "extra-secret-value"],
                      environ={"SERVICE_API_KEY": FAKE_KEY, "AUTH_MODE": "basic", "HOME": "/h"})
    assert redact(f"key={FAKE_KEY} mode=basic home=/h") == "key=*** mode=basic home=/h"
    assert redact("uses extra-secret-value and short") == "uses *** and short"  # guessable
    assert redact("%env MY_TOKEN=abc123") == "%env MY_TOKEN=***"
    assert redact("env: MY_TOKEN=abc123") == "env: MY_TOKEN=***"
    assert redact("%env LANG=C.UTF-8") == "%env LANG=C.UTF-8"
    assert redact("os.environ['GH_TOKEN'] = 'ghp_x1'") == "os.environ['GH_TOKEN'] = '***'"
    assert redact('{"password": "pw1", "user": "ada"}') == '{"password": "***", "user": "ada"}'
    assert redact("%%agent --context token=abc --context db='a b'") == (
        "%%agent --context token=*** --context db=***"
    )


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("admin", False), ("hunter2", False), ("password", False), ("qwerty123", False),
        ("Passw0rd", False), ("aaaaaaaaaaaaaaaa", False), ("abababab12121212", False),
        ("hunter2-horse", True), ("xK9mQ2vLpR", True), ("7d2f9c41aa03be77", True),
        ("3f2c1a9e-8b7d-4c6e-9f10-2a3b4c5d6e7f", True), (FAKE_KEY, True),
    ],
)
def test_only_values_too_long_and_random_to_guess_are_masked_by_value(
    value: str, masked: bool
) -> None:
    """A mask that depends on the value tells which guess is right: a user name or a short
    password is not masked by value (only where it is shown being set, by its name)."""
    redact = Redactor(extra=lambda: [value], environ={"DB_PASSWORD": value})
    assert (redact(f"login {value} ok") == "login *** ok") is masked
    assert redact(f"DB_PASSWORD={value}") == "DB_PASSWORD=***"


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
    view = NotebookBackend(notebook.shell)  # the cells run so far, by the names the agent sees
    cells = [i.path for folder in ("/cells", "/outputs") for i in view.ls(folder)]
    assert len(cells) == 7 + 4
    everything += [f"/notebook{path}" for path in cells]
    everything += ["/notebook/vars/settings.json", "/notebook/index.md"]
    everything += ["/notebook/history/executions.md"]
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


def test_keys_held_in_a_dict_or_as_bytes_are_masked_wherever_they_show(
    notebook: Notebook,
) -> None:
    in_dict, as_bytes = "9f86d081884c7d659a2feaa0c55ad015", "2c26b46b68ffc68ff99b453c1d304134"
    notebook.run(f"api_keys = {{'openai': '{in_dict}', 'nested': {{'maps': 'short'}}}}")
    notebook.run(f"OPENAI_API_KEY = b'{as_bytes}'")
    notebook.run("print(api_keys['openai'], OPENAI_API_KEY.decode())")
    view = NotebookBackend(notebook.shell)
    shown = [view.read(f"/cells/{i.path.rsplit('/', 1)[-1]}").lines for i in view.ls("/cells")]
    shown += [view.read(f"/outputs/{i.path.rsplit('/', 1)[-1]}").lines for i in view.ls("/outputs")]
    shown += [view.read("/index.md").lines, view.read("/vars/index.md").lines]
    text = "\n".join(line for lines in shown for line in lines)
    assert len(shown) == 3 + 1 + 2
    assert in_dict not in text and as_bytes not in text
    assert "***" in text
    assert "- api_keys: (hidden: looks like a secret)" in text


def test_keys_in_a_list_are_masked_and_a_vocabulary_is_not(notebook: Notebook) -> None:
    listed = "3f2c1a9e8b7d4c6e9f102a3b4c5d6e7f"
    notebook.run(f"service_tokens = ['{listed}']")
    notebook.run("id2token = {0: 'glaciological', 1: 'Kilimanjaro-summit-ice'}")
    notebook.run("print(service_tokens[0], id2token[1])")
    view = NotebookBackend(notebook.shell)
    output = view.read(f"/outputs/{view.ls('/outputs')[-1].path.rsplit('/', 1)[-1]}").lines
    index = "\n".join(view.read("/vars/index.md").lines)
    assert output[-1] == "*** Kilimanjaro-summit-ice"  # a key; a word of a vocabulary
    assert "- service_tokens: (hidden: looks like a secret)" in index


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Authorization: Bearer eyJraWQiOi.abc-123_def", "Authorization: Bearer ***"),
        ('curl -H "Authorization: Basic dXNlcjpwYXNzd29yZA=="',
         'curl -H "Authorization: Basic ***"'),
        ("aws AKIAIOSFODNN7EXAMPLE ok", "aws *** ok"),
        ("maps AIza" + "SyA1234567890abcdefghijklmnopqrstu", "maps ***"),
        ("gh ghp_abcdefghijklmnopqrstuvwxyz0123456789", "gh ***"),
        ("slack xoxb-1234567890-abcdefghij", "slack ***"),
        ("openai sk-proj-abcdefghijklmnopqrstuvwx", "openai ***"),
        ("jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.dozjgNryP4J3jVmNHl0w5N", "jwt ***"),
        ("postgres://ada:s3cret-pw@db:5432/x", "postgres://ada:***@db:5432/x"),
        ("export GITHUB_TOKEN=abc123def456", "export GITHUB_TOKEN=***"),
        ("X-Api-Key: 0a1b2c3d4e5f", "X-Api-Key: ***"),
        ('{"password": "pa\\"ss\\\\word-42", "user": "ada"}', '{"password": "***", "user": "ada"}'),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIEab\ncdEF==\n-----END RSA PRIVATE KEY-----\nok",
         "***\n***\n***\n***\nok"),
        # not secrets: prose, ordinary names, code reading a key, long runs of letters
        ("the task-force-of-the-union-army marched", "the task-force-of-the-union-army marched"),
        ("the bearer of news; author = 'Ada'", "the bearer of news; author = 'Ada'"),
        ("token_count = 123456789; max_tokens = 4096",
         "token_count = 123456789; max_tokens = 4096"),
        ('api_key = os.environ["MAPS_API_KEY"]', 'api_key = os.environ["MAPS_API_KEY"]'),
        # Python spellings: an annotation before `=`, a string prefix
        ('OPENAI_API_KEY: str = "sk-abc123def456"', 'OPENAI_API_KEY: str = "***"'),
        ("DB_PASSWORD: Final = 'hunter2-horse'", "DB_PASSWORD: Final = '***'"),
        ('SERVICE_TOKEN = b"tok-3f2c1a9e8b7d"', 'SERVICE_TOKEN = b"***"'),
        ("max_tokens: int = 4096", "max_tokens: int = 4096"),
        ('def load(api_key: str, model = "gpt-4o-mini"):',  # another parameter's default
         'def load(api_key: str, model = "gpt-4o-mini"):'),
        ('cache_key = f"{dataset}-{version}"', 'cache_key = f"{dataset}-{version}"'),  # a template
        ('STRIPE_KEY = """rk_3f2c1a9e8b7d4c6e"""', 'STRIPE_KEY = """***"""'),
        ('key = os.getenv("SENDGRID_API_KEY", "SG.x1y2z3w4")', 'key = os.getenv("SENDGRID_API_KEY", "***")'),
        ("os.environ.get('GH_TOKEN', 'gh-3f2c1a9e')", "os.environ.get('GH_TOKEN', '***')"),
        ('os.getenv("HOME", "/home/ada")', 'os.getenv("HOME", "/home/ada")'),
        ("ACGT" * 20, "ACGT" * 20),
        # a notebook file's JSON: a cell's source line is a JSON string, its quotes escaped
        ('    "DB_PASSWORD = \\"hunter2-Staging\\"\\n",', '    "DB_PASSWORD = \\"***\\"\\n",'),
        ('"wandb_api_token = \\"d3b0c442\\""', '"wandb_api_token = \\"***\\""'),
        ('"title = \\"Passwords, a history\\""', '"title = \\"Passwords, a history\\""'),
        ('"config = {\\"password\\": \\"hunter2-Staging\\"}\\n",',
         '"config = {\\"password\\": \\"***\\"}\\n",'),
        ('"os.environ[\\"DB_PASSWORD\\"] = \\"hunter2-Staging\\"\\n",',
         '"os.environ[\\"DB_PASSWORD\\"] = \\"***\\"\\n",'),
        ('"os.environ.setdefault(\\"DB_PASSWORD\\", \\"hunter2x\\")\\n",',
         '"os.environ.setdefault(\\"DB_PASSWORD\\", \\"***\\")\\n",'),
        # and as the JSON string of a cell's source writes them: quotes, triple quotes, a prefix, a tab
        ("\"DB_PASSWORD = 'Zq8h\\\\'unter2Xy'\"", "\"DB_PASSWORD = '***'\""),
        ("\"DB_PASSWORD = \\\"\\\"\\\"Zq8hunter2Xy\\\"\\\"\\\"\"", "\"DB_PASSWORD = \\\"\\\"\\\"***\\\"\\\"\\\"\""),
        ("\"DB_PASSWORD = b\\\"Zq8hunter2Xy\\\"\"", "\"DB_PASSWORD = b\\\"***\\\"\""),
        ("\"DB_PASSWORD\\t= \\\"Zq8hunter2Xy\\\"\"", "\"DB_PASSWORD\\t= \\\"***\\\"\""),
        # the password's own quote, escaped in Python and again in JSON: no tail left after it
        ('"DB_PASSWORD = \\"pa\\\\\\"ss-word-123\\"\\n",', '"DB_PASSWORD = \\"***\\"\\n",'),
    ],
)
def test_common_credential_shapes_are_masked_and_ordinary_text_is_not(
    text: str, shown: str
) -> None:
    assert Redactor(environ={})(text) == shown


def test_escaped_spellings_of_a_known_value_are_masked() -> None:
    password = 'pa"ss\\wo\'rd-42'
    redact = Redactor(extra=lambda: [password], environ={})
    import json

    spellings = [json.dumps(password)[1:-1], password.replace('"', '""'), repr(password)[1:-1]]
    for spelling in spellings:
        assert redact(f"x,{spelling},y") == "x,***,y"


def test_a_secret_set_in_the_environment_mid_run_is_masked_in_a_text_masked_before() -> None:
    environ = {"HOME": "/home/me"}
    redact = Redactor(environ=environ)
    key = "kq8Zr2vXw9Lm4Tn7"
    result = "rows of a table\n" * 200 + f"the service answered with {key}\n"  # a long result
    assert key in redact(result) and key in redact.frozen()(result)
    environ["SERVICE_API_KEY"] = key
    assert key not in redact(result) and key not in redact.frozen()(result)
    del environ["SERVICE_API_KEY"]
    assert key in redact(result)


@pytest.mark.parametrize(
    "text",
    ["x" * 40_000, "key" * 13_334, "ACGT" * 7_500, "key=" * 10_000, 'a="' * 13_334,
     "sk-" * 13_334, "password: " * 4_000, "eyJ" * 13_334 + ".", "https://a:" * 4_000],
)
def test_masking_a_long_run_takes_linear_time(text: str) -> None:
    import time

    start = time.perf_counter()
    Redactor(extra=lambda: ["some-secret-value"], environ={})(text)
    assert time.perf_counter() - start < 5  # was 67 s for a 40,000-character word


def test_a_password_with_a_quote_and_a_backslash_is_masked_in_vars_json_and_csv(
    notebook: Notebook,
) -> None:
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend

    notebook.run(
        "import pandas as pd\n"
        "db_password = 'pa\"ss\\\\word-42'\n"
        "settings = {'db': {'password': db_password, 'user': 'ada'}}\n"
        "logins = pd.DataFrame({'user': ['ada'], 'login': [db_password]})\n"
        "only_here = {'service': {'secret': 'qu\"ote\\\\d-only-in-dict'}}"
    )
    fs = notebook.session.filesystem(OutputsBackend())
    texts = {
        path: "\n".join(fs.read(path).lines)
        for path in ("/notebook/vars/settings.json", "/notebook/vars/logins.csv",
                     "/notebook/vars/only_here.json")
    }
    for text in texts.values():
        assert "***" in text
        assert "word-42" not in text and "only-in-dict" not in text and "ote" not in text
    assert '"user": "ada"' in texts["/notebook/vars/settings.json"]
    assert "ada," in texts["/notebook/vars/logins.csv"]
    for pattern in ("word-42", "pa", "only-in-dict"):
        found = fs.grep(pattern, "/notebook/vars/")
        assert all("word-42" not in m.line and "only-in-dict" not in m.line for m in found)


def test_a_bearer_token_typed_in_a_cell_is_masked_in_the_notebook_view(
    notebook: Notebook,
) -> None:
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend

    token = "Zm9vYmFyLXRva2VuLTc3MjE"
    notebook.run(f'headers = {{"Authorization": "Bearer {token}"}}\nprint(headers)')
    notebook.run(f"!echo curl -H 'Authorization: Bearer {token}' https://example.org")
    fs = notebook.session.filesystem(OutputsBackend())
    shown = [
        "\n".join(fs.read(path).lines)
        for path in ("/notebook/cells/1.py", "/notebook/outputs/1.txt", "/notebook/cells/2.py")
    ]
    assert all("Bearer ***" in text and token not in text for text in shown)
    assert fs.grep(token[:6], "/notebook/") == []


def test_interpolated_secrets_reach_neither_the_model_nor_the_checkpoint(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEATHER_API_KEY", "wx-key-from-environment-4411")
    notebook.run(
        "import os\n"
        "api_token = 'tok-named-secret-9930'\n"
        "cfg = os.environ['WEATHER_API_KEY']\n"
        "conn = {'host': 'db.local', 'password': 'pw-in-a-dict-5521'}\n"
        "aws = 'AKIAIOSFODNN7EXAMPLE'\n"
        "topic = 'glaciers'"
    )
    model = scripted("ok")
    notebook.session.configure(model=model)
    cell = notebook.run(
        "%%agent\nUse {api_token} and {cfg} and {conn} and {aws} for {topic}; {os.environ}"
    )
    assert cell.error is None
    sent = model.requests[0].messages[-1].text
    assert sent == (
        "Use *** and *** and {'host': 'db.local', 'password': '***'} and *** for glaciers; ***"
    )
    stored = "".join(
        p.read_bytes().decode("latin-1") for p in (notebook.folder / ".deepagent").rglob("*")
        if p.is_file()
    )
    for secret in ("tok-named-secret-9930", "wx-key-from-environment-4411", "pw-in-a-dict-5521",
                   "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in stored and secret not in sent


def test_names_in_the_option_line_are_masked_like_the_request_but_context_gets_the_value(
    notebook: Notebook,
) -> None:
    """`--system "{api_key}"` sent the key raw (the option line was interpolated unmasked);
    `--context` values are for tools only, so a tool still gets the real key."""
    key = "AIza" + "SyOpt1onLine-Key_0123456789abcdefgh"
    notebook.run(
        f"api_key = {key!r}\n"
        "region = 'arctic'\n"
        "from langchain.tools import ToolRuntime\n"
        "from jupyter_deepagent import agent_tool\n"
        "@agent_tool\n"
        "def check_key(runtime: ToolRuntime[dict]) -> str:\n"
        '    """Tell whether the service key arrived."""\n'
        f"    return 'key arrived' if runtime.context['key'] == {key!r} else 'wrong key'\n"
    )
    model = scripted(call("check_key"), "ok")
    notebook.session.configure(model=model)
    cell = notebook.run(
        '%%agent --system "Call the service with {api_key} for {region}." '
        "--context key={api_key}\nhello"
    )
    assert cell.error is None
    sent = "\n".join(m.text for request in model.requests for m in request.messages)
    assert "Call the service with *** for arctic." in sent
    assert key not in sent and key[:12] not in sent
    assert "key arrived" in sent  # the tool got the real value through --context
    stored = "".join(
        p.read_bytes().decode("latin-1") for p in (notebook.folder / ".deepagent").rglob("*")
        if p.is_file()
    )
    assert key not in stored


def test_a_context_value_that_breaks_the_option_lines_quoting_is_given_whole_never_shown(
    notebook: Notebook,
) -> None:
    """A real value with a quote in it used to break the second split of the line, whose error
    showed the line with the real value in the cell (and so in the saved notebook)."""
    key = 'sk-Quote"Inside-0123456789abcdefghijklmnop'
    notebook.run(
        f"api_key = {key!r}\n"
        "from langchain.tools import ToolRuntime\n"
        "from jupyter_deepagent import agent_tool\n"
        "@agent_tool\n"
        "def check_key(runtime: ToolRuntime[dict]) -> str:\n"
        '    """Tell whether the service key arrived."""\n'
        f"    return 'key arrived' if runtime.context['key'] == {key!r} else 'wrong key'\n"
    )
    model = scripted(call("check_key"), "ok")
    notebook.session.configure(model=model)
    cell = notebook.run('%%agent --system "Be brief." --context key={api_key}\nhello')
    assert cell.error is None
    assert key not in cell.stdout + cell.stderr
    assert all(key not in str(output.data) for output in cell.outputs)
    sent = "\n".join(m.text for request in model.requests for m in request.messages)
    assert "key arrived" in sent and key not in sent
