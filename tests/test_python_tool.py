"""The python tool: opt-in, approved by default, runs in the notebook's namespace, saves figures,
and stops runaway code at its time limit while the conversation goes on."""

from __future__ import annotations

import base64
import json

import pytest

from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.jupyter.tools.call_time_limit import TimeLimitExceeded, time_limit


def python(code: str) -> dict:
    return call("python", code=code)


def results(model) -> list[ToolMessage]:
    return [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]


STATIONS = (
    "import pandas as pd\n"
    "stations = pd.DataFrame({'station': ['Svalbard', 'Utqiagvik', 'Tiksi', 'Abisko'],\n"
    "                         'warming': [0.7, 0.5, 0.5, 0.3]})"
)


def test_the_python_tool_is_absent_unless_enabled(notebook: Notebook) -> None:
    model = scripted("no python here", "python now", "python by default")
    notebook.session.configure(model=model)
    notebook.run("%%agent\nhello")
    assert "python" not in model.requests[0].tool_names
    notebook.run("%%agent --python\nhello again")
    assert "python" in model.requests[1].tool_names
    notebook.run("%agent config python=true")
    notebook.run("%%agent\nand again")
    assert "python" in model.requests[2].tool_names


def test_a_statistic_over_a_dataframe_leaves_a_variable_for_the_next_cell(
    notebook: Notebook,
) -> None:
    notebook.run(STATIONS)
    code = (
        "mean_warming = stations['warming'].mean()\n"
        "print(f'mean warming {mean_warming:.2f} C per decade')\n"
        "stations.sort_values('warming', ascending=False)"
    )
    model = scripted(python(code), "The mean is 0.50.")
    notebook.session.configure(model=model, python_approval=False)
    cell = notebook.run("%%agent --python\nWhat is the mean warming?")
    assert cell.error is None
    assert "✓ python code=mean_warming = stations['warming'].mean" in cell.live_text
    [result] = results(model)
    assert "printed:\nmean warming 0.50 C per decade" in result.text
    assert "value: DataFrame (4 × 2):" in result.text
    assert result.text.index("Svalbard") < result.text.index("Abisko")  # sorted, as a head
    assert "mean warming" not in cell.stdout  # captured into the result, not the cell
    assert notebook.run("print(round(mean_warming, 2))").stdout == "0.5\n"


def test_every_call_waits_for_approval_by_default_showing_the_code(notebook: Notebook) -> None:
    model = scripted(python("answer = 6 * 7"), "Set it.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --python\nset answer")
    assert "waiting for approval" in cell.live_text
    assert "```python\nanswer = 6 * 7\n```" in cell.markdown[-1]
    assert "answer" not in notebook.shell.user_ns
    notebook.run("%agent resume approve")
    assert notebook.shell.user_ns["answer"] == 42


def test_an_error_returns_a_short_traceback_of_the_agents_code(notebook: Notebook) -> None:
    code = "def ratio(a, b):\n    return a / b\n\nprint('before')\nratio(1, 0)"
    model = scripted(python(code), "Division by zero.")
    notebook.session.configure(model=model, python_approval=False)
    cell = notebook.run("%%agent --python\ndivide")
    assert "✗ python" in cell.live_text
    assert "ZeroDivisionError: division by zero" in cell.live_text
    [result] = results(model)
    assert result.status == "error"
    assert result.text.startswith("ZeroDivisionError: division by zero")
    assert "line 5, in <module>\n    ratio(1, 0)" in result.text
    assert "line 2, in ratio\n    return a / b" in result.text
    assert "python_tool.py" not in result.text  # only the agent's own frames
    assert "printed:\nbefore" in result.text


def test_a_matplotlib_figure_is_saved_to_outputs_and_shown_under_the_cell(
    notebook: Notebook,
) -> None:
    notebook.run(STATIONS)
    code = (
        "import matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "fig, ax = plt.subplots()\n"
        "ax.bar(stations['station'], stations['warming'])\n"
        "ax.set_ylabel('warming (C per decade)')"
    )
    model = scripted(python(code), "Plotted.")
    notebook.session.configure(model=model, python_approval=False)
    cell = notebook.run("%%agent --python\nplot the warming")
    assert cell.error is None
    [result] = results(model)
    assert "saved and shown under the cell: /outputs/figure-1.png" in result.text
    [png] = [o.data["image/png"] for o in cell.outputs
             if o.metadata.get("jupyter_deepagent", {}).get("path") == "/outputs/figure-1.png"]
    assert base64.b64decode(png).startswith(b"\x89PNG\r\n\x1a\n")
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []  # closed, so the inline backend does not show it twice
    assert "fig" in notebook.shell.user_ns


def test_a_runaway_loop_is_stopped_by_the_time_limit_and_the_thread_goes_on(
    notebook: Notebook,
) -> None:
    model = scripted(
        python("count = 0\nwhile True:\n    count += 1"),
        "That ran too long.",
        "Still here.",
    )
    notebook.session.configure(model=model, python_approval=False, python_timeout=1)
    cell = notebook.run("%%agent --python\nloop")
    assert cell.error is None
    assert "✗ python" in cell.live_text and "TimeLimitExceeded" in cell.live_text
    [result] = results(model)
    assert "stopped after 1 s (python_timeout)" in result.text
    assert notebook.shell.user_ns["count"] > 0  # what it set before the stop stays
    assert cell.markdown[-1] == "That ran too long."
    after = notebook.run("%%agent\nare you there?")
    assert after.error is None and after.markdown[-1] == "Still here."
    assert notebook.run("print('kernel ok')").stdout == "kernel ok\n"


def test_code_that_catches_exception_is_still_stopped() -> None:
    import time

    began = time.monotonic()
    try:
        with time_limit(0.2):
            while True:
                try:
                    time.sleep(0.001)
                except Exception:  # what careless code does
                    pass
    except TimeLimitExceeded:
        pass
    assert time.monotonic() - began < 10
    with time_limit(5):  # a block that ends in time leaves nothing behind
        total = sum(range(1000))
    time.sleep(0.1)
    assert total == 499500


def test_what_the_code_prints_is_masked_like_the_notebooks_files(
    notebook: Notebook, monkeypatch
) -> None:
    monkeypatch.setenv("DEMO_SERVICE_TOKEN", "tok-secret-value-123")
    model = scripted(python("import os\nprint(os.environ['DEMO_SERVICE_TOKEN'])"), "ok")
    notebook.session.configure(model=model, python_approval=False)
    notebook.run("%%agent --python\nprint the token")
    [result] = results(model)
    assert "tok-secret-value-123" not in result.text and "***" in result.text


DISPLAYED_KEY = "wx-Key-7Fq2-from-the-environment-4411"  # no known shape: masked by its value


@pytest.mark.parametrize(
    ("shown", "saved"),
    [
        ("JSON(cfg)", "/outputs/display-1.json"),
        ("Markdown(f\"The service uses `{cfg['in_use']}`\")", "/outputs/display-1.md"),
        ("HTML(f\"<b>key</b> {cfg['in_use']}\")", "/outputs/display-1.html"),
    ],
)
def test_a_display_saved_under_outputs_is_read_back_masked_but_shown_to_the_user(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch, shown: str, saved: str
) -> None:
    """`display(JSON(cfg))` in the python tool saved the key to /outputs/display-1.json, and
    reading that file back gave it to the model."""
    monkeypatch.setenv("WEATHER_API_KEY", DISPLAYED_KEY)
    notebook.run(
        "import os\ncfg = {'endpoint': 'https://wx.example', "
        "'in_use': os.environ['WEATHER_API_KEY']}"
    )
    model = scripted(
        python(f"from IPython.display import HTML, JSON, Markdown, display\ndisplay({shown})"),
        call("read_file", file_path=saved),
        call("grep", pattern="Fq2", path="/outputs/", output_mode="content"),
        call("grep", pattern="wx-[A-Z]", path="/outputs/", regex=True, output_mode="content"),
        call("glob", pattern="**", path="/outputs/"),
        call("edit_file", file_path=saved, old_string="Key-", new_string="Key~",
             replace_all=True),
        call("read_file", file_path=saved),
        "done",
    )
    notebook.session.configure(model=model, python_approval=False)
    cell = notebook.run("%%agent --python\nshow the configuration")
    assert cell.error is None
    ran, first_read, grep, regex, listing, edit, last_read = [r.text for r in results(model)]
    assert f"saved and shown under the cell: {saved}" in ran
    assert "***" in first_read and first_read == last_read
    assert grep.startswith("No matches") and regex.startswith("No matches")
    assert saved in listing
    assert "not found" in edit
    sent = json.dumps([m.model_dump() for r in model.requests for m in r.messages], default=str)
    assert DISPLAYED_KEY not in sent and "from-the-environment" not in sent
    shown_to_user = [repr(o.data) for o in cell.outputs
                     if o.metadata.get("jupyter_deepagent", {}).get("path") == saved]
    assert shown_to_user and DISPLAYED_KEY in shown_to_user[0]  # the user sees the real output
