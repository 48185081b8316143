"""`%%agent` and `%agent` in a real IPython shell, end to end with scripted models."""

from __future__ import annotations

import html
import os
import subprocess
import sys

from IPython.core.error import UsageError
from langchain_core.messages import HumanMessage, ToolMessage
from notebook_shell import SCRIPTS, Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import MissingAPIKey, RunTrace
from jupyter_deepagent.jupyter.views.notebook_words import boxed


def test_load_ext_registers_the_magics_without_importing_langchain_langgraph_or_pandas() -> None:
    code = (
        "import sys\n"
        "from IPython.core.interactiveshell import InteractiveShell\n"
        "from traitlets.config import Config\n"
        "config = Config(); config.HistoryManager.hist_file = ':memory:'\n"
        "shell = InteractiveShell.instance(config=config)\n"
        "shell.run_line_magic('load_ext', 'jupyter_deepagent')\n"
        "assert 'agent' in shell.magics_manager.magics['cell']\n"
        "assert 'agent' in shell.magics_manager.magics['line']\n"
        "heavy = ('langchain', 'langchain_core', 'langgraph', 'pandas', 'ipywidgets', 'yaml',\n"
        "         'jupyter_deepagent.harness')\n"
        "print(','.join(m for m in heavy if m in sys.modules))\n"
    )
    # without the background imports (tests/test_first_cell.py), what %load_ext itself imports
    env = {**os.environ, "JUPYTER_DEEPAGENT_WARM_UP": "0"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert done.stdout.strip() == ""


def test_agent_reads_an_earlier_output_and_a_dataframe_and_shows_its_outputs(
    notebook: Notebook,
) -> None:
    notebook.run("import pandas as pd\nsales = pd.DataFrame({'region': ['North', 'South'], "
                 "'units': [120, 80]})")
    notebook.run("print('checksum', 6 * 7)")
    cell = notebook.run(f"%%agent -m scripted:{SCRIPTS / 'magic_notebook.yaml'}\nSummarize sales.")
    assert cell.error is None
    trace = notebook.shell.user_ns["_agent"]
    assert isinstance(trace, RunTrace)
    results = [m.text for m in trace.messages if isinstance(m, ToolMessage)]
    assert "checksum 42" in results[0]
    assert "North" in results[1] and "120" in results[1] and "units" in results[1]
    # live lines, then the answer, then the /outputs/ files
    assert "✓ read_file /notebook/outputs/2.txt" in cell.live_text
    assert "✓ write_file /outputs/summary.md" in cell.live_text
    assert cell.live_text.splitlines()[-1].startswith("done · 3 model calls")
    assert "North leads with **120 units**" in cell.markdown[0]
    assert "# Sales summary" in cell.markdown[1]
    [table] = [html for html in cell.bundles("text/html") if "jdi-frame" in html]
    assert "<table" in table and "North" in table
    files = [o.metadata["jupyter_deepagent"].get("path") for o in cell.displays
             if o.metadata.get("jupyter_deepagent", {}).get("path")]
    assert files == ["/outputs/summary.md", "/outputs/top.csv"]
    assert "application/vnd.jupyter.widget-view+json" in cell.displays[-1].data  # the inspector


def test_variables_are_interpolated_and_double_braces_stay_braces(notebook: Notebook) -> None:
    model = scripted("ok")
    notebook.session.configure(model=model)
    notebook.run("topic = 'glaciers'\nyear = 2024")
    cell = notebook.run('%%agent\nTell me about {topic} since {year}; keep {{"a": 1}} and {not a name}.')
    assert cell.error is None
    [human] = [m for m in model.requests[0].messages if isinstance(m, HumanMessage)]
    assert human.text == 'Tell me about glaciers since 2024; keep {"a": 1} and {not a name}.'


def test_an_unknown_variable_is_a_usage_error_naming_it_and_nothing_runs(notebook: Notebook) -> None:
    model = scripted("never sent")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nCompare {sales_2023} with last year.")
    assert isinstance(cell.error, UsageError)
    assert "{sales_2023}" in str(cell.error) and "{{sales_2023}}" in str(cell.error)
    assert model.requests == []


def test_bad_options_show_the_usage_and_run_nothing(notebook: Notebook) -> None:
    model = scripted("never sent")
    notebook.session.configure(model=model)
    for line in ("--bogus", "-t", "--into 2x", "--context nokey", "-t a --new", "-t 'bad name'"):
        cell = notebook.run(f"%%agent {line}\nhello")
        assert isinstance(cell.error, UsageError), line
        assert "usage: %%agent" in str(cell.error), line
    empty = notebook.run("%%agent\n   \n")
    assert isinstance(empty.error, UsageError)
    assert "needs a request" in str(empty.error)
    unknown = notebook.run("%agent frobnicate")
    assert isinstance(unknown.error, UsageError) and "usage: %agent config" in str(unknown.error)
    assert model.requests == []


def test_help_prints_every_option_and_command(notebook: Notebook) -> None:
    for source in ("%agent help", "%%agent --help\nignored"):
        cell = notebook.run(source)
        assert cell.error is None
        for word in ("--model", "--thread", "--new", "--into", "--context", "resume approve"):
            assert word in cell.stdout


def test_a_failing_tool_is_shown_and_the_run_goes_on(notebook: Notebook) -> None:
    notebook.session.configure(
        model=scripted(call("read_file", file_path="/workspace/missing.csv"), "It is missing.")
    )
    cell = notebook.run("%%agent\nRead the data.")
    assert cell.error is None
    assert "✗ read_file /workspace/missing.csv" in cell.live_text
    assert "does not exist" in cell.live_text
    assert cell.markdown[-1] == "It is missing."


def test_missing_api_key_stops_the_cell_naming_the_variable_and_the_offline_options(
    notebook: Notebook,
) -> None:
    cell = notebook.run("%%agent -m google_genai:gemini-2.5-flash\nhello")
    assert isinstance(cell.error, MissingAPIKey)
    message = str(cell.error)
    assert "GOOGLE_API_KEY" in message and ".env" in message and "scripted:" in message
    assert cell.error._render_traceback_() == [f"MissingAPIKey: {boxed('MissingAPIKey', message)}"]
    assert "_agent" not in notebook.shell.user_ns


def test_env_file_beside_the_notebook_is_read_and_only_names_are_shown(
    notebook: Notebook, monkeypatch
) -> None:
    monkeypatch.setenv("DEMO_SERVICE_TOKEN", "")
    monkeypatch.delenv("DEMO_SERVICE_TOKEN")
    (notebook.folder / ".env").write_text("DEMO_SERVICE_TOKEN=tok-secret-value-123\n")
    script = notebook.folder / "hello.yaml"
    script.write_text("profile: {max_input_tokens: 100000}\nscript: [Hello.]\n")
    cell = notebook.run("%%agent -m scripted:hello.yaml\nhi")
    assert cell.error is None
    assert "read DEMO_SERVICE_TOKEN from .env" in cell.live_text
    shown = cell.stdout + "".join(str(o.data) for o in cell.outputs)
    assert "tok-secret-value-123" not in shown


def test_config_sets_defaults_and_shows_where_each_comes_from(notebook: Notebook) -> None:
    (notebook.folder / "pyproject.toml").write_text(
        '[tool.jupyter-deepagent]\nmodel = "scripted:team.yaml"\nskills = ["skills/"]\n'
    )
    (notebook.folder / ".deepagent.toml").write_text('into = "findings"\n')
    cell = notebook.run("%agent config quiet=yes interrupt_on=write_file,edit_file")
    assert cell.error is None
    [table] = cell.markdown
    assert "| model | `scripted:team.yaml` | pyproject.toml [tool.jupyter-deepagent] |" in table
    assert "| into | `findings` | .deepagent.toml |" in table
    assert "| quiet | `True` | %agent config |" in table
    assert "| interrupt_on | `write_file, edit_file` | %agent config |" in table
    bad = notebook.run("%agent config colour=blue")
    assert isinstance(bad.error, UsageError) and "colour" in str(bad.error)
    (notebook.folder / ".deepagent.toml").write_text("into = 3\n")
    broken = notebook.run("%agent config")
    assert isinstance(broken.error, UsageError) and ".deepagent.toml" in str(broken.error)


def _table_rows(page: str) -> list[list[str]]:
    """The text of each table row's cells in an HTML page."""
    from html.parser import HTMLParser

    rows: list[list[str]] = []

    class Rows(HTMLParser):
        cell: list[str] | None = None

        def handle_starttag(self, tag, attrs):
            if tag == "tr":
                rows.append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag):
            if tag in ("td", "th") and self.cell is not None:
                rows[-1].append("".join(self.cell).strip())
                self.cell = None

        def handle_data(self, data):
            if self.cell is not None:
                self.cell.append(data)

    Rows().feed(page)
    return rows


def test_show_lists_the_prompt_sections_with_token_counts(notebook: Notebook) -> None:
    before = notebook.run("%agent show")
    assert before.error is None
    [shown] = before.rendered
    page = shown.data["text/html"]
    assert "as the next run sends it" in page
    rows = _table_rows(page)
    assert rows[0] == ["#", "section", "source", "tokens"]
    assert rows[1][:2] == ["1", "system_prompt"] and rows[2][:2] == ["2", "base"]
    assert "/notebook/" in page and "/outputs/" in page and "/memories/" in page
    assert "System prompt: 5 sections" in shown.data["text/plain"]  # a terminal's outline
    notebook.session.configure(model=scripted("ok"))
    notebook.run("%%agent --system 'Answer in French.'\nhello")
    after = notebook.run("%agent show").rendered[0].data["text/html"]
    assert "as sent in the last model call" in after
    assert "Answer in French." in after
    assert "Conversation: 2 messages" in after


def test_quiet_shows_only_the_answer(notebook: Notebook) -> None:
    notebook.session.configure(model=scripted(call("ls", path="/"), "Quiet answer."))
    cell = notebook.run("%%agent --quiet\nlist")
    assert cell.live_text == ""
    assert cell.markdown == ["Quiet answer."]


def test_todos_are_shown_as_they_change(notebook: Notebook) -> None:
    plan = [
        {"content": "read the data", "status": "completed"},
        {"content": "write the summary", "status": "in_progress"},
    ]
    notebook.session.configure(model=scripted(call("write_todos", todos=plan), "Done."))
    cell = notebook.run("%%agent\nplan it")
    assert "todos: ✓ read the data\n         ▶ write the summary" in cell.live_text


def test_outputs_files_of_every_kind_are_displayed(notebook: Notebook) -> None:
    import base64

    png = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
    files = {
        "/outputs/a.md": "# Title",
        "/outputs/b.svg": "<svg xmlns='http://www.w3.org/2000/svg' onload='alert(1)'></svg>",
        "/outputs/c.png": f"data:image/png;base64,{png}",
        "/outputs/d.html": "<b>bold</b>",
        "/outputs/e.json": '{"n": 1}',
        "/outputs/f.png": "not an image",
        "/outputs/g.txt": "plain words",
    }
    steps = [call("write_file", file_path=path, content=text) for path, text in files.items()]
    notebook.session.configure(model=scripted(*steps, "All written."))
    cell = notebook.run("%%agent\nwrite them all")
    shown = {o.metadata["jupyter_deepagent"]["path"]: o.data for o in cell.outputs
             if "path" in o.metadata.get("jupyter_deepagent", {})}
    assert list(shown) == list(files)
    assert shown["/outputs/a.md"]["text/plain"] == "# Title"
    assert "<h1>Title</h1>" in shown["/outputs/a.md"]["text/html"]  # rendered in the kernel
    # an image, where its script never runs: not markup in the page (as the classic Notebook
    # shows image/svg+xml)
    svg = shown["/outputs/b.svg"]
    assert "image/svg+xml" not in svg and "<svg" not in svg["text/html"]
    prefix = '<img src="data:image/svg+xml;base64,'
    assert svg["text/html"].startswith(prefix)
    encoded = svg["text/html"][len(prefix):].split('"', 1)[0]
    assert base64.b64decode(encoded).decode() == files["/outputs/b.svg"]
    assert shown["/outputs/c.png"]["image/png"] == png
    page = shown["/outputs/d.html"]["text/html"]
    assert page.startswith('<iframe sandbox="" srcdoc="')
    source = html.unescape(page.split('srcdoc="', 1)[1].split('"', 1)[0])
    # the page loads nothing from anywhere: its stylesheet cannot send what it holds elsewhere
    assert source == ('<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
                      "style-src 'unsafe-inline'; img-src data:; font-src data:\"><b>bold</b>")
    assert shown["/outputs/e.json"]["application/json"] == {"n": 1}
    assert "not a base64-encoded PNG" in shown["/outputs/f.png"]["text/plain"]
    assert shown["/outputs/g.txt"] == {"text/plain": "plain words"}


def test_terminal_ipython_gets_plain_lines() -> None:
    from contextlib import redirect_stdout
    from io import StringIO

    from jupyter_deepagent.jupyter.views.render import CellView

    printed = StringIO()
    with redirect_stdout(printed):
        view = CellView(rich=False)
        view.start("agent · thread t · scripted")
        view.on_event({"type": "tool_call", "tool": "grep", "tool_call_id": "1",
                       "args": {"pattern": "CO2", "path": "/workspace/"}})
        view.on_event({"type": "tool_result", "tool": "grep", "tool_call_id": "1",
                       "seconds": 0.012, "error": None})
        view.on_event({"type": "subagent_started", "task_id": "t1", "agent": "researcher",
                       "subagent": "researcher", "description": "find sources"})
        view.on_event({"type": "subagent_finished", "task_id": "t1", "agent": "researcher",
                       "subagent": "researcher", "status": "ok", "seconds": 3.2})
        view.on_token(None)
        for piece in ("Two ", "sources ", "agree."):
            view.on_token(piece)
        view.end("done")
        view.answer("Two sources agree.")
    lines = printed.getvalue().splitlines()
    assert lines[0] == "agent · thread t · scripted"
    assert lines[1] == "  ✓ grep pattern=CO2 /workspace/ · 12 ms"
    assert lines[2] == "  ⇢ researcher #1 started: find sources"
    assert lines[3] == "  ⇠ researcher #1 ok · 3.2 s"
    assert lines[4] == "Two sources agree."
    assert lines[5].startswith("done · 0 model calls")
    assert len(lines) == 6


def test_subagent_results_are_shown_and_assigned_to_the_into_variable(notebook: Notebook) -> None:
    def task(topic: str) -> dict:
        return {"name": "task", "args": {"description": f"Find sources on {topic}.",
                                          "subagent_type": "general-purpose"}}

    model = scripted(
        {"tool_calls": [task("permafrost"), task("sea ice")]},
        "Both reports are in.",
        rules=[{"when": "Find sources on", "reply": "Three sources found.", "repeat": True}],
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --into findings\nsurvey the literature")
    assert cell.error is None
    frame = notebook.shell.user_ns["findings"]
    assert frame["description"].tolist() == [
        "Find sources on permafrost.",
        "Find sources on sea ice.",
    ]
    assert frame["result"].tolist() == ["Three sources found.", "Three sources found."]
    live = cell.live_text  # two runs of one subagent told apart, each started before finished
    assert "⇢ general-purpose #1 started: Find sources on permafrost." in live
    assert "⇢ general-purpose #2 started: Find sources on sea ice." in live
    assert live.index("#1 started") < live.index("⇠ general-purpose #1 ok")
    assert live.index("#2 started") < live.index("⇠ general-purpose #2 ok")
    [done] = [line for line in live.splitlines() if "⇠ general-purpose #2" in line]
    assert done.endswith("· Find sources on sea ice.")
    assert "<table" in [html for html in cell.bundles("text/html") if "jdi-frame" in html][-1]
    assert "agent_results" not in notebook.shell.user_ns
    streamed = [o.data["text/plain"] for o in cell.outputs
                if str(o.data.get("text/html")).startswith('<div class="jda-text')]
    assert "Both reports are in." in streamed
    assert not [text for text in streamed if "Three sources" in text]  # subagents' words stay out
    # the summary line counts every model call, as the inspector does: 2 by the agent, 1 each
    trace = notebook.shell.user_ns["_agent"]
    assert trace.of_type("run_finished")[0]["model_calls"] == 4
    assert live.splitlines()[-1].startswith("done · 4 model calls")


def test_the_answer_streams_into_one_display_that_ends_as_the_final_answer(
    notebook: Notebook,
) -> None:
    notebook.session.configure(model=scripted("The glaciers lost **267 Gt** a year."))
    cell = notebook.run("%%agent\nhow much ice?")
    place = cell.outputs[1]  # its place, kept above the inspector
    assert place.data == {"text/html": "", "text/plain": ""}
    streamed = [o for o in cell.outputs
                if (o.transient or {}).get("display_id") == place.transient["display_id"]]
    assert streamed[1].data["text/plain"] == "The "  # shown at the first word
    assert "<p>The</p>" in streamed[1].data["text/html"]
    assert cell.markdown == ["The glaciers lost **267 Gt** a year."]
    [answer] = cell.rendered
    assert "<strong>267 Gt</strong>" in answer.data["text/html"]


def test_html_the_agent_writes_cannot_run_in_the_notebook(notebook: Notebook) -> None:
    notebook.session.configure(
        model=scripted(
            call("write_file", file_path="/outputs/report.html",
                 content="<b>Report</b><script>alert(document.cookie)</script>"),
            call("write_file", file_path="/outputs/notes.md",
                 content="# Notes\n<img src=x onerror=\"alert(1)\">\n\n`<kept>`"),
            "Done.",
        )
    )
    cell = notebook.run("%%agent\nwrite a report")
    shown = {o.metadata["jupyter_deepagent"]["path"]: o.data for o in cell.outputs
             if "path" in o.metadata.get("jupyter_deepagent", {})}
    page = shown["/outputs/report.html"]["text/html"]
    assert page.startswith('<iframe sandbox="" srcdoc="') and "allow-scripts" not in page
    assert "script" not in page and "&lt;b&gt;Report&lt;/b&gt;" in page  # cleaned, then framed
    notes = shown["/outputs/notes.md"]["text/html"]
    assert "<h1>Notes</h1>" in notes and "<img" not in notes
    assert "&lt;img src=x onerror" in notes and "<code>&lt;kept&gt;</code>" in notes


def test_a_failed_model_call_is_one_line_without_the_providers_frames_or_key(
    notebook: Notebook, monkeypatch
) -> None:
    from langchain_core.language_models import BaseChatModel

    from jupyter_deepagent import ModelCallFailed

    monkeypatch.setenv("DEMO_PROVIDER_API_KEY", "demo-provider-key-4417")

    class UnreachableModel(BaseChatModel):
        model_name: str = "demo:unreachable"

        @property
        def _llm_type(self) -> str:
            return "unreachable"

        def bind_tools(self, tools, **kwargs):
            return self

        def _generate(self, messages, stop=None, run_manager=None, **kwargs):
            headers = {"x-api-key": "demo-provider-key-4417"}  # as an HTTP client holds them
            raise ConnectionError(f"cannot reach the service (sent {headers})")

    notebook.session.configure(model=UnreachableModel(), model_retry_wait=0)
    notebook.run("%xmode Verbose")
    cell = notebook.run("%%agent\nhello")
    error = cell.error
    assert isinstance(error, ModelCallFailed)
    assert str(error).startswith(
        "the model call to unreachable:demo:unreachable failed: ConnectionError: cannot reach "
        "the service"
    )
    assert "demo-provider-key-4417" not in str(error) and "***" in str(error)
    assert error.__cause__ is None and error.__context__ is None
    assert error._render_traceback_() == [f"ModelCallFailed: {boxed('ModelCallFailed', str(error))}"]
    assert "demo-provider-key-4417" not in cell.stdout + cell.stderr
    assert cell.live_text.splitlines()[-1].startswith("failed: ModelCallFailed")
    retries = [line for line in cell.live_text.splitlines() if "↻ retrying" in line]
    assert len(retries) == 2 and all("ConnectionError: cannot reach" in r for r in retries)
    assert "demo-provider-key-4417" not in cell.live_text
    trace = notebook.shell.user_ns["_agent"]
    assert isinstance(trace, RunTrace) and trace.of_type("run_finished")[0]["status"] == "error"
    assert "demo-provider-key-4417" not in repr(trace.events)


def test_env_file_is_read_again_at_each_run_and_never_overrides_the_real_environment(
    notebook: Notebook, monkeypatch
) -> None:
    import os

    monkeypatch.setenv("DEMO_REAL_TOKEN", "from-the-real-environment")
    monkeypatch.setenv("DEMO_FILE_TOKEN", "")
    monkeypatch.delenv("DEMO_FILE_TOKEN")  # removed again after the test, whatever the run set
    env = notebook.folder / ".env"
    notebook.session.configure(model=scripted("one", "two", "three"))
    env.write_text("DEMO_FILE_TOKEN=first-value-1\nDEMO_REAL_TOKEN=from-the-file\n")
    first = notebook.run("%%agent\none")
    assert "read DEMO_FILE_TOKEN from .env" in first.live_text
    assert os.environ["DEMO_REAL_TOKEN"] == "from-the-real-environment"
    env.write_text("DEMO_FILE_TOKEN=fixed-value-2\n")
    second = notebook.run("%%agent\ntwo")
    assert os.environ["DEMO_FILE_TOKEN"] == "fixed-value-2"
    assert "from .env" not in second.live_text  # already known: no note again
    env.write_text("")
    notebook.run("%%agent\nthree")
    assert "DEMO_FILE_TOKEN" not in os.environ
    assert os.environ["DEMO_REAL_TOKEN"] == "from-the-real-environment"


def test_a_malformed_env_line_is_reported_by_name_only(notebook: Notebook) -> None:
    (notebook.folder / ".env").write_text('GOOGLE_API_KEY = "AIza-unclosed-quote\n')
    cell = notebook.run("%%agent -m google_genai:gemini-2.5-flash\nhello")
    assert isinstance(cell.error, MissingAPIKey)
    message = str(cell.error)
    assert ".env has a line for GOOGLE_API_KEY, but it could not be read" in message
    assert "AIza-unclosed-quote" not in message + cell.stdout + cell.live_text


def test_raw_html_in_the_answer_is_shown_as_text_while_streaming_and_at_the_end(
    notebook: Notebook,
) -> None:
    notebook.session.configure(model=scripted('Done. <img src=x onerror="alert(1)"> and `<kept>`'))
    cell = notebook.run("%%agent\nsummarize")
    streamed = [o.data["text/html"] for o in cell.outputs if "text/html" in o.data]
    assert not [text for text in streamed if "<img" in text]
    assert cell.markdown == ['Done. <img src=x onerror="alert(1)"> and `<kept>`']  # as written
    [answer] = cell.rendered
    shown = answer.data["text/html"]
    assert "&lt;img src=x onerror=" in shown and "<code>&lt;kept&gt;</code>" in shown


def test_a_long_streamed_answer_is_redrawn_every_quarter_second_at_most_then_shown_whole(
    monkeypatch,
) -> None:
    from jupyter_deepagent.jupyter.views import render
    from jupyter_deepagent.trace.safe_html import markdown_html

    now = [0.0]  # a model writing 50 pieces a second, on a clock of the test's own
    shown: list[tuple[float, object]] = []

    class Handle:
        def update(self, obj):
            shown.append((now[0], obj))

    def show(obj, **_):
        shown.append((now[0], obj))
        return Handle()

    monkeypatch.setattr(render, "_clock", lambda: now[0])
    monkeypatch.setattr(render, "show", show)
    text = "".join(f"Paragraph {i} with **bold** and `code`.\n\n- a\n- b\n\n" for i in range(400))
    view = render.CellView(rich=True)
    view.start("agent · thread t · scripted")
    view.on_token(None)
    for start in range(0, len(text), 4):
        now[0] += 0.02
        view.on_token(text[start:start + 4])
    view.answer(text, {"replay": "live"})
    streamed = [(at, obj) for at, obj in shown if isinstance(obj, render.SafeHTML)][1:]
    pieces = len(text) // 4
    assert len(streamed) < pieces / 10  # far fewer redraws than pieces
    times = [at for at, _ in streamed[:-1]]
    assert all(b - a >= 0.25 for a, b in zip(times, times[1:]))
    assert all(text.startswith(obj.plain) for _, obj in streamed)
    final = streamed[-1][1]
    assert final.html == markdown_html(text) and final.plain == text
    assert final.metadata == {"jupyter_deepagent": {"kind": "answer", "run": {"replay": "live"}}}
