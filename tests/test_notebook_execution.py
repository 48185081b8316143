"""The example notebook, executed headless in a real ipykernel with nbclient, offline.

The kernels talk to the test over ZMQ on loopback: Python sockets may bind and connect to
127.0.0.1 only (`allow_hosts`), and each kernel keeps its IPython history in the test's own
folder (IPYTHONDIR), never the user's.
"""

from __future__ import annotations

import os
import queue
import shutil
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_client.manager import start_new_kernel
from nbclient import NotebookClient
from nbconvert import HTMLExporter

EXAMPLE = Path(__file__).parents[1] / "notebooks" / "01_first_research_run.ipynb"


def _outputs(cell: dict, key: str) -> list:
    return [o for o in cell.get("outputs", []) if key in o.get("data", {})]


def _rendered(cell: dict) -> list:
    """The outputs of text the kernel rendered to safe HTML (answers, files, tables)."""
    return [o for o in _outputs(cell, "text/html")
            if o["data"]["text/html"].startswith('<div class="jda-text')]


LOOPBACK_ONLY = pytest.mark.allow_hosts(["127.0.0.1"])


def _kernel_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The kernel's environment: no API key, IPython's files in the test's folder."""
    env = {k: v for k, v in os.environ.items() if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY")}
    return {**env, "IPYTHONDIR": str(tmp_path / "ipython"), **extra}


@LOOPBACK_ONLY
def test_first_research_run_notebook_executes_and_shows_the_agents_work(tmp_path: Path) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copytree(EXAMPLE.parent / "scripts", folder / "scripts")
    path = folder / EXAMPLE.name
    shutil.copy(EXAMPLE, path)
    notebook = nbformat.read(path, as_version=4)
    env = _kernel_env(
        tmp_path, JPY_SESSION_NAME=str(path), PYDEVD_DISABLE_FILE_VALIDATION="1"
    )
    client = NotebookClient(
        notebook,
        timeout=120,
        kernel_name="python3",
        resources={"metadata": {"path": str(folder)}},
    )
    client.execute(env=env)

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    agent_cell = next(cell for cell in code if cell.source.startswith("%%agent"))
    live = agent_cell.outputs[0]["data"]["text/plain"]
    assert live.startswith("agent · thread 01_first_research_run · scripted:")
    assert "✓ read_file /notebook/vars/stations.csv" in live
    assert "✓ grep pattern=mean warming /notebook/outputs/" in live
    assert "✓ write_file /outputs/summary.md" in live
    assert "todos: ✓ Read the stations table" in live
    assert live.splitlines()[-1].startswith("done · 6 model calls")
    answer, summary = _rendered(agent_cell)
    assert answer["data"]["text/plain"].startswith("**Svalbard warms fastest: 0.7 °C per decade**")
    assert "<strong>Svalbard warms fastest" in answer["data"]["text/html"]
    assert "| Svalbard | -2.9 | **0.7** |" in summary["data"]["text/plain"]
    assert "<td>Svalbard</td>" in summary["data"]["text/html"]
    assert agent_cell.outputs[-2]["metadata"] == {"jupyter_deepagent": {"path": "/outputs/summary.md"}}
    inspector = agent_cell.outputs[-1]["data"]  # last: the inspector, with its static fallback
    assert "application/vnd.jupyter.widget-view+json" in inspector
    assert inspector["text/plain"].startswith("Run: scripted:")
    assert 'data-section="filesystem"' in inspector["text/html"]
    saved = nbformat.from_dict(notebook)  # as JupyterLab saves it by default: no widget state
    saved.metadata.pop("widgets", None)
    page, _ = HTMLExporter().from_notebook_node(saved)  # the saved notebook, as a web page
    for section in ("system_prompt", "base", "todos", "filesystem", "subagents"):
        assert f'data-section="{section}"' in page
    assert 'class="jdi-gauge"' in page and "/outputs/summary.md" in page

    read = next(cell for cell in code if "_agent.messages" in cell.source)
    printed = "".join(o.get("text", "") for o in read.outputs)
    assert "Svalbard,-2.9,0.7" in printed  # the DataFrame, as CSV
    assert "4 stations, mean warming 0.50 °C per decade" in printed  # an earlier cell's output

    show = _rendered(code[-1])[0]["data"]["text/html"]
    assert "<td>1</td><td>system_prompt</td>" in show and "/notebook/" in show
    assert (folder / ".deepagent" / "checkpoints.sqlite").is_file()


SLOW_TOOL = """\
%load_ext jupyter_deepagent
import time
from langchain.tools import tool
from jupyter_deepagent.jupyter.magic.magics import get_session

@tool
def crawl(site: str) -> str:
    \"\"\"Crawl a site, page by page.\"\"\"
    for _ in range(3000):  # 30 s of work, unless stopped
        time.sleep(0.01)
    return "crawled"

get_session().tools.append(crawl)
"""


def _execute(client: Any, code: str, interrupt: Any = None) -> list[dict]:
    """Run `code`, calling `interrupt(outputs)` on each output until it returns True."""
    msg_id = client.execute(code)
    outputs: list[dict] = []
    interrupted = interrupt is None
    while True:
        try:
            message = client.get_iopub_msg(timeout=60)
        except queue.Empty:
            raise AssertionError(f"no output for 60 s; got {outputs}") from None
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "status" and content["execution_state"] == "idle":
            return outputs
        if kind in ("stream", "display_data", "update_display_data", "error"):
            outputs.append({"type": kind, **content})
            if not interrupted:
                interrupted = interrupt(outputs)


@LOOPBACK_ONLY
def test_the_stop_button_ends_a_running_tool_and_the_thread_goes_on(tmp_path: Path) -> None:
    (tmp_path / "crawl.yaml").write_text(
        "profile: {max_input_tokens: 100000}\n"
        "script:\n"
        "  - tool_calls: [{name: crawl, args: {site: example.org}}]\n"
        "  - Stopped crawling; here is what I have.\n"
    )
    env = _kernel_env(tmp_path)
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        assert not [o for o in _execute(client, SLOW_TOOL) if o["type"] == "error"]

        pressed: list[float] = []

        def press_stop_once_crawling(outputs: list[dict]) -> bool:
            live = outputs[-1].get("data", {}).get("text/plain", "")
            if "… crawl site=example.org" in live:
                pressed.append(time.monotonic())
                manager.interrupt_kernel()
                return True
            return False

        stopped = _execute(
            client, "%%agent -m scripted:crawl.yaml\ncrawl it", press_stop_once_crawling
        )
        took = time.monotonic() - pressed[0]
        [error] = [o for o in stopped if o["type"] == "error"]
        assert error["ename"] == "KeyboardInterrupt"
        assert took < 3, f"the stop took {took:.1f} s: the tool was waited for"
        live = [o["data"]["text/plain"] for o in stopped if o["type"] == "update_display_data"
                and o["data"]["text/plain"].startswith("agent ·")][-1]
        assert live.splitlines()[-1].startswith("interrupted")
        assert "✓ crawl" not in live  # the tool was stopped, not waited for
        assert "■ crawl site=example.org · stopped, no result" in live

        after = _execute(client, "%%agent -m scripted:crawl.yaml\nwhat do you have?")
        assert not [o for o in after if o["type"] == "error"]
        answers = [o["data"]["text/plain"] for o in after
                   if str(o.get("data", {}).get("text/html")).startswith('<div class="jda-text')]
        assert answers[0] == "Stopped "  # streamed word by word, then completed in place
        assert answers[-1] == "Stopped crawling; here is what I have."
        check = _execute(
            client,
            "print([m.type for m in _agent.messages][-3:], "
            "'interrupted by the user' in _agent.messages[-3].text)",
        )
        assert check[-1]["text"].strip() == "['tool', 'human', 'ai'] True"
        assert (tmp_path / "ipython" / "profile_default").is_dir()  # not the user's IPython folder
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


TOOLS_EXAMPLE = EXAMPLE.parent / "02_notebook_tools.ipynb"


@LOOPBACK_ONLY
def test_notebook_tools_notebook_executes_offline_with_tools_approval_and_a_figure(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "notebooks"
    folder.mkdir()
    shutil.copytree(EXAMPLE.parent / "scripts", folder / "scripts")
    path = folder / TOOLS_EXAMPLE.name
    shutil.copy(TOOLS_EXAMPLE, path)
    notebook = nbformat.read(path, as_version=4)
    env = _kernel_env(tmp_path, JPY_SESSION_NAME=str(path), PYDEVD_DISABLE_FILE_VALIDATION="1")
    client = NotebookClient(
        notebook, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(folder)}}
    )
    client.execute(env=env)

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert not [o for cell in code for o in cell.outputs if o.output_type == "error"]
    tools_cell, python_cell, resume_cell, last = (
        cell for cell in code if cell.source.startswith(("%%agent", "%agent", "print"))
    )
    live = tools_cell.outputs[0]["data"]["text/plain"]
    assert "✓ years_to_thaw station=Abisko" in live and "✓ to_fahrenheit celsius=0.7" in live
    printed = "".join(o.get("text", "") for o in tools_cell.outputs)
    assert "°C now" not in printed  # the tool's prints went to the agent, not the cell
    [answer] = _rendered(tools_cell)
    assert answer["data"]["text/plain"].startswith("**Abisko thaws first")

    assert _outputs(python_cell, "application/vnd.jupyter.widget-view+json")  # the buttons
    [calls] = [o for o in _rendered(python_cell)
               if o["metadata"].get("jupyter_deepagent", {}).get("kind") == "approval"]
    fallback = calls["data"]["text/plain"]
    assert "<pre><code>import matplotlib.pyplot as plt" in calls["data"]["text/html"]
    assert "```python\nimport matplotlib.pyplot as plt" in fallback
    assert "%agent resume approve" in fallback

    resumed = resume_cell.outputs[0]["data"]["text/plain"]
    assert "resume approve · thread 02_notebook_tools · scripted:scripted-python-tool" in resumed
    assert "✓ python code=import matplotlib.pyplot as plt" in resumed
    [figure] = _outputs(resume_cell, "image/png")
    assert figure["metadata"] == {"jupyter_deepagent": {"path": "/outputs/figure-1.png"}}
    assert last.outputs[0]["text"] == "mean warming: 0.50 °C per decade\n"
