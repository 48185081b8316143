"""Code from a research log is code the user approves: a log whose python call was rewritten (and
its hash chain recomputed, so `verify` passes) runs nothing until the user approves the code it
shows in this kernel; headless, only with `jupyter-deepagent run --approve-recorded`, which prints
each code block it runs."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401
from test_cli import LOOPBACK_ONLY, _cli
from test_replay import _fresh_kernel

from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

ASK = "%%agent --python\nadd up 0 to 9"
RESUME = "%agent resume approve"
HONEST = "total = sum(range(10))\nprint('total', total)"


def _evil(marker: Path) -> str:
    """Code that leaves a marker, then does what the honest code did (so the replay matches)."""
    return f"import pathlib\npathlib.Path({str(marker)!r}).write_text('owned')\n{HONEST}"


def _rewrite_code(notebook_path: Path, code: str) -> None:
    """The attack: every recorded python call's code replaced (in the responses and in the
    messages the requests repeat: fingerprints are computed from them), and the chain hashed
    again."""
    log = ResearchLog(log_path_for(notebook_path))
    records = log.records()
    log.path.unlink()
    for record in records:
        calls = [
            tool_call
            for recorded in record.get("calls", [])
            for tool_call in recorded["response"].get("data", {}).get("tool_calls", [])
        ]
        for message in record.get("messages", {}).values():
            calls += message.get("tool_calls", [])
        for tool_call in calls:
            if tool_call["name"] == "python":
                tool_call["args"]["code"] = code
        log.append({k: v for k, v in record.items() if k not in ("prev", "hash")})
    assert log.verify() == []


def _record(nb: Notebook, **settings: Any) -> None:
    nb.session.configure(model=scripted(call("python", code=HONEST), "The total is 45.",
                                        name="sums"), **settings)
    assert nb.run(ASK).error is None
    if settings.get("python_approval", True):
        assert nb.run(RESUME).error is None
    assert nb.shell.user_ns["total"] == 45


def _replay_kernel(nb: Notebook, **settings: Any) -> None:
    _fresh_kernel(nb)
    nb.session.configure(model=scripted(name="sums"), replay="strict", **settings)


def test_a_rehashed_log_runs_no_code_through_an_existing_resume_cell(
    notebook: Notebook, tmp_path: Path
) -> None:
    marker = tmp_path / "owned.txt"
    _record(notebook)
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook)

    paused = notebook.run(ASK)
    resumed = notebook.run(RESUME)  # the notebook's own resume cell, run by Run All

    assert not marker.exists()
    assert "waiting for approval" in paused.live_text
    assert "comes from the research log" in paused.live_text
    assert str(marker) in "\n".join(paused.markdown)  # the pause shows the code itself
    from jupyter_deepagent.jupyter.session.recorded_code import recorded_code_id

    code_id = recorded_code_id([{"name": "python", "args": {"code": _evil(marker)}}])
    [asked] = [text for text in paused.markdown if "Waiting for your approval" in text]
    assert f"`%agent resume approve {code_id}`" in asked  # the command that does approve it
    assert "`%agent resume approve`" not in asked
    assert resumed.error is not None
    message = str(resumed.error)
    assert "comes from the research log" in message
    assert str(marker) in message  # the code the user is asked about is the code shown
    assert "click Approve" in message and "--approve-recorded" in message


def test_a_resume_naming_the_codes_id_approves_exactly_that_code(
    notebook: Notebook, tmp_path: Path
) -> None:
    from jupyter_deepagent.jupyter.session.recorded_code import recorded_code_id

    marker = tmp_path / "owned.txt"
    _record(notebook)
    honest_id = recorded_code_id([{"name": "python", "args": {"code": HONEST}}])
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook)
    notebook.run(ASK)

    refused = notebook.run(RESUME)
    again = notebook.run(RESUME)  # two resume cells in a row (papermill --allow-errors)
    older = notebook.run(f"{RESUME} {honest_id}")  # an id written for the code once recorded
    assert not marker.exists()
    assert again.error is not None and older.error is not None
    assert f"The id {honest_id} is not this code's" in str(older.error)

    [shown_id] = re.findall(r"%agent resume approve ([0-9a-f]{16})", str(refused.error))
    assert notebook.run(f"{RESUME} {shown_id}").error is None  # the person read it and typed it
    assert marker.read_text() == "owned"


def test_a_pause_on_recorded_code_still_needs_approval_after_a_kernel_restart(
    notebook: Notebook, tmp_path: Path
) -> None:
    marker = tmp_path / "owned.txt"
    _record(notebook)
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook)
    assert "waiting for approval" in notebook.run(ASK).live_text

    notebook.restart()  # the pause is in the thread's checkpoint; this kernel never saw the log
    notebook.session.configure(model=scripted(name="sums"), python=True)
    resumed = notebook.run(RESUME)

    assert resumed.error is not None and "comes from the research log" in str(resumed.error)
    assert not marker.exists()


def test_code_approved_with_the_button_runs_and_its_text_is_approved_for_this_kernel(
    notebook: Notebook, tmp_path: Path
) -> None:
    marker = tmp_path / "owned.txt"
    _record(notebook)
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook)

    _approve_with_the_button(notebook.run(ASK))
    assert marker.read_text() == "owned"

    marker.unlink()
    notebook.run(ASK)  # Run All again in this kernel: the same code, approved here already
    assert notebook.run(RESUME).error is None
    assert marker.exists()


def test_recorded_code_pauses_even_when_python_approval_is_off(
    notebook: Notebook, tmp_path: Path
) -> None:
    marker = tmp_path / "owned.txt"
    _record(notebook, python_approval=False)
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook, python_approval=False)

    paused = notebook.run(ASK)

    assert not marker.exists()
    assert "waiting for approval" in paused.live_text
    assert notebook.run(RESUME).error is not None
    assert not marker.exists()


def _approve_with_the_button(paused: Any) -> None:
    from test_approval_buttons import WIDGET_VIEW, Prompt, click

    [bundle] = [o.data[WIDGET_VIEW] for o in paused.displays if WIDGET_VIEW in o.data
                and o.metadata.get("jupyter_deepagent", {}).get("kind") == "approval-buttons"]
    click(Prompt(bundle).button("Approve"))


def test_with_python_approval_off_one_click_runs_the_code_once_with_no_second_pause(
    notebook: Notebook, tmp_path: Path
) -> None:
    marker = tmp_path / "owned.txt"
    _record(notebook, python_approval=False)
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook, python_approval=False)

    _approve_with_the_button(notebook.run(ASK))

    assert marker.read_text() == "owned"
    assert notebook.shell.user_ns["_agent"].final_text == "The total is 45."


def test_a_subagent_cannot_run_recorded_code_nobody_approved(
    notebook: Notebook, tmp_path: Path
) -> None:
    """With python approval off, a subagent's python call from the log is refused by the tool."""
    marker = tmp_path / "owned.txt"
    delegate = call("task", description="Add up 0 to 9.", subagent_type="general-purpose")
    notebook.session.configure(
        model=scripted(delegate, call("python", code=HONEST), "45.", "The total is 45.",
                       name="sums"), python_approval=False)
    assert notebook.run(ASK).error is None and notebook.shell.user_ns["total"] == 45
    _rewrite_code(notebook.path, _evil(marker))
    _replay_kernel(notebook, python_approval=False)

    notebook.run(ASK)

    assert not marker.exists()
    result = next(e for e in notebook.shell.user_ns["_agent"].events
                  if e.get("type") == "tool_result" and e.get("tool") == "python")
    assert "comes from the research log and was not approved" in str(result)


def test_code_the_log_recorded_honestly_still_needs_this_kernels_approval(
    notebook: Notebook,
) -> None:
    """A recorded approval is never enough, whoever wrote the log."""
    _record(notebook)
    _replay_kernel(notebook)
    notebook.run(ASK)

    refused = notebook.run(RESUME)

    assert refused.error is not None and "total = sum(range(10))" in str(refused.error)
    assert "total" not in notebook.shell.user_ns


SUMS = """\
profile: {max_input_tokens: 100000}
script:
  - tool_calls: [{name: python, args: {code: "total = sum(range(10))\\nprint('total', total)"}}]
  - The total is 45.
"""


def _sums_notebook(folder: Path) -> tuple[Path, Path]:
    """A notebook whose agent cell runs python once, its script beside it; and the path of the
    marker the attack's code would leave."""
    (folder / "sums.yaml").write_text(SUMS)
    path = folder / "sums.ipynb"
    book = nbformat.v4.new_notebook()
    book.cells = [nbformat.v4.new_code_cell(s) for s in (
        "%load_ext jupyter_deepagent", "%%agent -m scripted:sums.yaml --python\nadd up",
        RESUME, "print(total)")]
    nbformat.write(book, path)
    return path, folder / "owned.txt"


@LOOPBACK_ONLY
def test_headless_replay_refuses_recorded_code_unless_approve_recorded_which_prints_it(
    tmp_path: Path,
) -> None:
    path, marker = _sums_notebook(tmp_path)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        shutil.rmtree(tmp_path / ".deepagent", ignore_errors=True)  # a fresh clone
        return _cli(tmp_path, "run", str(path), "--no-progress", *args)

    recorded = run()
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    _rewrite_code(path, _evil(marker))
    checked = _cli(tmp_path, "verify", str(path), "--chain-only")
    assert checked.returncode == 0, checked.stdout  # the chain is intact: verify cannot tell
    assert "does not prove who wrote it" in checked.stdout
    assert "holds 1 recorded code-running call (python)" in checked.stdout

    refused = run("--replay", "strict")
    assert not marker.exists()
    assert refused.returncode != 0
    assert "--approve-recorded" in refused.stderr

    approved = run("--replay", "strict", "--approve-recorded")
    assert marker.read_text() == "owned"
    assert _evil(marker) in approved.stderr
    assert "code from the research log" in approved.stderr


class _LikeJupyterLab(NotebookClient):
    """Sends each cell's metadata in the request that runs it, as JupyterLab does."""

    cell_metadata: dict[str, object]  # set before each cell runs

    def _send(self, code: str, **options: object) -> str:
        content = {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                   "allow_stdin": False, "stop_on_error": True}
        message = self.kc.session.msg("execute_request", content, metadata=self.cell_metadata)
        self.kc.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    async def async_execute_cell(self, cell: Any, cell_index: int, **kw: Any) -> Any:
        vars(self.kc)["execute"] = self._send
        self.cell_metadata = {**cell.metadata, "cellId": cell.get("id")}
        return await super().async_execute_cell(cell, cell_index, **kw)


@LOOPBACK_ONLY
def test_a_cells_own_metadata_cannot_approve_recorded_code(tmp_path: Path) -> None:
    """JupyterLab copies a cell's metadata into the request that runs it: a shared notebook whose
    agent cell carries the headless runner's approval (even with a token of its own) runs no
    code from a rewritten log, since the runner's token is made for the kernel it starts."""
    import asyncio
    import os

    from jupyter_deepagent.jupyter.session.recorded_code import headless_metadata

    path, marker = _sums_notebook(tmp_path)
    recorded = _cli(tmp_path, "run", str(path), "--no-progress")
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    _rewrite_code(path, _evil(marker))

    book = nbformat.read(path, as_version=4)
    for cell in book.cells:
        cell.metadata.update(headless_metadata("approve", "a-token-the-notebook-made"))
    env = {**os.environ, "JPY_SESSION_NAME": str(path), "JUPYTER_DEEPAGENT_REPLAY": "strict"}
    client = _LikeJupyterLab(book, timeout=120, kernel_name="python3",
                             resources={"metadata": {"path": str(tmp_path)}})

    async def run_all() -> None:
        async with client.async_setup_kernel(env=env):
            for index, cell in enumerate(book.cells):
                try:
                    await client.async_execute_cell(cell, index)
                except CellExecutionError:
                    break

    asyncio.run(run_all())
    assert not marker.exists(), "code from the rewritten log ran"
    shown = "".join(str(o.get("text", "")) + str(o.get("evalue", "")) for c in book.cells
                    for o in c.get("outputs", []))
    assert "RecordedCodeNotApproved" in shown or "Approve" in shown, shown[-2000:]


def test_the_code_running_check_keys_on_the_tool_name_and_a_runs_code_mark() -> None:
    from langchain_core.tools import tool

    from jupyter_deepagent.jupyter.session.recorded_code import runs_code

    @tool
    def lookup(query: str) -> str:
        """Look something up."""
        return query

    assert runs_code("python")
    assert not runs_code("read_file") and not runs_code(lookup)
    lookup.metadata = {"runs_code": True}
    assert runs_code(lookup)


def test_code_from_the_log_is_shown_with_its_invisible_characters_escaped() -> None:
    from jupyter_deepagent.jupyter.session.recorded_code import refusal_text

    code = "x = 1  # \u202e tidy\n\x1b[1A\x1b[2Kimport os\n"  # reorders; erases a terminal line
    text = refusal_text([{"name": "python", "args": {"code": code}}])
    assert "\u202e" not in text and "\x1b" not in text
    assert "\\u202e" in text and "\\x1b[1A" in text and "invisible characters" in text


def test_a_marked_tool_whose_recorded_arguments_arrive_converted_is_still_refused() -> None:
    # the log recorded {"limit": "5"}; the tool's schema hands the function limit=5, so the
    # arguments the tool sees differ from the ones the log served
    from langchain_core.messages import AIMessage
    from langchain_core.tools import tool

    from jupyter_deepagent import RUNS_CODE
    from jupyter_deepagent.jupyter.session.recorded_code import RecordedCode

    @tool
    def query_rows(cond: str, limit: int) -> str:
        """Rows matching a pandas query."""
        return cond

    query_rows.metadata = {RUNS_CODE: True}
    recorded = RecordedCode()
    recorded.code_running([query_rows])
    evil = "@__builtins__.__import__('os').system('x')"
    recorded.note_served(AIMessage("", tool_calls=[
        {"name": "query_rows", "args": {"cond": evil, "limit": "5"}, "id": "c1"}]))
    with pytest.raises(PermissionError, match="comes from the research log"):
        recorded.gate("query_rows", {"cond": evil, "limit": 5})
    recorded.approve("query_rows", {"cond": evil, "limit": "5"})  # the pause showed it: approved
    recorded.gate("query_rows", {"cond": evil, "limit": 5})  # now it runs
