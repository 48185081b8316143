"""The kernel session: threads and memories that survive a restart, the notebook's filesystem and
its sandbox, a stop mid-run, and approvals answered in the next cell."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from langchain.tools import ToolRuntime, tool
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from notebook_shell import Notebook, call, notebook, scripted  # noqa: F401

from jupyter_deepagent import BackendError, InvalidPath, PermissionDenied
from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend


def texts(request) -> list[str]:
    return [m.text for m in request.messages if not m.type == "system"]


def test_a_named_thread_continues_after_a_kernel_restart(notebook: Notebook) -> None:
    notebook.session.configure(model=scripted("Noted: the budget is 40k."))
    assert notebook.run("%%agent -t budget\nRemember: the budget is 40k.").error is None
    notebook.restart()
    model = scripted("You said 40k.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent -t budget\nWhat is the budget?")
    assert cell.error is None
    assert texts(model.requests[0]) == [
        "Remember: the budget is 40k.",
        "Noted: the budget is 40k.",
        "What is the budget?",
    ]
    assert (notebook.folder / ".deepagent" / "checkpoints.sqlite").is_file()
    threads = notebook.run("%agent threads").markdown[0]
    assert "| **budget** (current) | 4 |" in threads


def test_default_thread_is_the_notebook_and_new_starts_a_fresh_one(notebook: Notebook) -> None:
    model = scripted("one", "two", "three")
    notebook.session.configure(model=model)
    notebook.run("%%agent\nfirst")
    fresh = notebook.run("%%agent --new\nsecond")
    assert "thread analysis-2 (new)" in fresh.live_text
    notebook.run("%%agent\nthird")
    assert texts(model.requests[1]) == ["second"]
    assert texts(model.requests[2]) == ["second", "two", "third"]
    listed = notebook.run("%agent threads").markdown[0]
    assert "| analysis | 2 |" in listed and "| **analysis-2** (current) | 4 |" in listed
    reset = notebook.run("%agent reset -t analysis")
    assert reset.error is None and "'analysis' forgotten" in reset.stdout
    assert "| analysis |" not in notebook.run("%agent threads").markdown[0]
    again = notebook.run("%agent reset -t analysis")  # nothing left: not "forgotten" again
    assert again.error is None and "forgotten" not in again.stdout
    assert "'analysis' has no conversation to forget" in again.stdout


def test_memories_survive_threads_and_restarts(notebook: Notebook) -> None:
    notebook.session.configure(
        model=scripted(
            call("write_file", file_path="/memories/style.md", content="Use SI units.\n"), "Saved."
        )
    )
    notebook.run("%%agent -t one\nRemember to use SI units.")
    notebook.restart()
    model = scripted(call("read_file", file_path="/memories/style.md"), "SI units.")
    notebook.session.configure(model=model)
    notebook.run("%%agent -t two\nWhich units?")
    assert "Use SI units." in model.requests[1].messages[-1].text
    assert (notebook.folder / ".deepagent" / "store.sqlite").is_file()


def test_memory_files_from_config_are_in_the_prompt(notebook: Notebook) -> None:
    (notebook.folder / "AGENTS.md").write_text("The user studies permafrost.\n")
    model = scripted("ok")
    notebook.session.configure(model=model, memory="AGENTS.md")
    notebook.run("%%agent\nhello")
    assert "The user studies permafrost." in model.requests[0].system
    assert '<agent_memory path="/workspace/AGENTS.md">' in model.requests[0].system


def test_workspace_is_the_notebook_folder_and_nothing_outside_it(
    notebook: Notebook, tmp_path: Path
) -> None:
    (notebook.folder / "data.csv").write_text("a,b\n1,2\n")
    (notebook.folder / ".env").write_text("GOOGLE_API_KEY=never-shown\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    os.symlink(tmp_path / "secret.txt", notebook.folder / "escape.txt")
    os.symlink(tmp_path, notebook.folder / "up")
    fs = notebook.session.filesystem(OutputsBackend())
    assert fs.read("/workspace/data.csv").lines == ["a,b", "1,2"]
    for hostile in (
        "/workspace/../../etc/passwd",
        "/workspace/escape.txt",
        "/workspace/up/secret.txt",
        "/workspace/%2e%2e/secret.txt",
        "/workspace/.env",
        "/workspace/.deepagent/checkpoints.sqlite",
    ):
        with pytest.raises((InvalidPath, PermissionDenied)):
            fs.read(hostile)
    with pytest.raises(BackendError):
        fs.write("/workspace/.env", "GOOGLE_API_KEY=stolen")
    listed = [info.path for info in fs.ls("/workspace/")]
    assert "/workspace/data.csv" in listed and "/workspace/.env" not in listed
    assert not [m for m in fs.grep("never-shown", "/workspace/")]
    assert sorted(info.path for info in fs.ls("/")) == [
        "/conversation_history/",
        "/large_tool_results/",
        "/memories/",
        "/notebook/",
        "/outputs/",
        "/subagents/",
        "/workspace/",
    ]


def test_a_hostile_path_from_the_model_is_refused_and_the_run_goes_on(notebook: Notebook) -> None:
    model = scripted(call("read_file", file_path="/workspace/../../etc/passwd"), "Refused.")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent\nread the password file")
    assert cell.error is None
    refusal = model.requests[1].messages[-1]
    assert isinstance(refusal, ToolMessage) and "not a valid path" in refusal.text
    assert "root:" not in refusal.text


def test_read_only_workspace_refuses_writes(notebook: Notebook) -> None:
    notebook.session.configure(workspace_read_only=True)
    fs = notebook.session.filesystem(OutputsBackend(), notebook.session.config)
    with pytest.raises(PermissionDenied):
        fs.write("/workspace/report.md", "# Report")
    assert not (notebook.folder / "report.md").exists()


def test_artifacts_live_on_disk_under_the_state_folder(notebook: Notebook) -> None:
    fs = notebook.session.filesystem(OutputsBackend())
    fs.write("/large_tool_results/grep-1.txt", "many lines")
    artifact = notebook.folder / ".deepagent" / "artifacts" / "large_tool_results" / "grep-1.txt"
    assert artifact.read_text() == "many lines"


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page."""
    raise KeyboardInterrupt  # the stop button, pressed while the tool runs


def test_stop_mid_run_keeps_the_thread_usable(notebook: Notebook) -> None:
    model = scripted(call("fetch_page", url="https://example.org"), "Second run works.")
    session = notebook.session
    session.configure(model=model)
    session.tools.append(fetch_page)
    stopped = notebook.run("%%agent\nfetch the page")
    assert isinstance(stopped.error, KeyboardInterrupt)
    assert "stopped" in stopped.error._render_traceback_()[0]
    assert stopped.live_text.splitlines()[-1].startswith("interrupted")
    assert isinstance(notebook.shell.user_ns["_agent"].messages[-1], AIMessage)
    cell = notebook.run("%%agent\ntry something else")
    assert cell.error is None
    assert cell.markdown[-1] == "Second run works."
    sent = model.requests[1].messages
    assert isinstance(sent[-3], AIMessage) and sent[-3].tool_calls[0]["name"] == "fetch_page"
    assert isinstance(sent[-2], ToolMessage) and "interrupted by the user" in sent[-2].text
    assert isinstance(sent[-1], HumanMessage) and sent[-1].text == "try something else"


def test_approval_pauses_the_cell_then_approve_reject_and_edit_continue(
    notebook: Notebook,
) -> None:
    def write(name: str) -> dict:
        return call("write_file", file_path=f"/workspace/{name}", content=f"{name} text")

    model = scripted(
        write("a.md"), "Wrote a.", write("b.md"), "Did not write b.", write("c.md"), "Wrote c."
    )
    notebook.session.configure(model=model)
    notebook.run("%agent config interrupt_on=write_file")

    paused = notebook.run("%%agent\nwrite a")
    assert paused.error is None
    assert "waiting for approval" in paused.live_text
    assert "`write_file`" in paused.markdown[-1] and "%agent resume approve" in paused.markdown[-1]
    assert not (notebook.folder / "a.md").exists()
    approved = notebook.run("%agent resume approve")
    assert approved.error is None and approved.markdown[-1] == "Wrote a."
    assert (notebook.folder / "a.md").read_text() == "a.md text"

    notebook.run("%%agent\nwrite b")
    rejected = notebook.run("%agent resume reject b is not needed, we're done")
    assert rejected.error is None
    assert not (notebook.folder / "b.md").exists()
    assert "b is not needed, we're done" in model.requests[3].messages[-1].text

    notebook.run("%%agent\nwrite c")
    edited = notebook.run('%agent resume edit content="edited by a person"')
    assert edited.error is None
    assert (notebook.folder / "c.md").read_text() == "edited by a person"

    nothing = notebook.run("%agent resume approve")
    assert isinstance(nothing.error, UsageError) and "nothing is waiting" in str(nothing.error)


def test_resume_on_a_thread_never_run_says_nothing_waits_not_that_a_key_is_missing(
    notebook: Notebook,
) -> None:
    # the default model (Gemini) and no key: no model is made to find that nothing waits
    for command in ("%agent resume approve", "%agent resume continue"):
        nothing = notebook.run(command)

        assert isinstance(nothing.error, UsageError), nothing.error
        assert "it has no runs yet" in str(nothing.error) and "key" not in str(nothing.error)


def test_resume_names_the_thread_as_threads_all_lists_it(notebook: Notebook) -> None:
    model = scripted(call("write_file", file_path="/workspace/a.md", content="a"), "Wrote a.")
    notebook.session.configure(model=model)
    notebook.run("%agent config interrupt_on=write_file")
    notebook.run('%%agent -t review --system "Answer as SYS-MARK-42."\nwrite a')
    user = notebook.session.owner.user

    approved = notebook.run(f"%agent resume -t {user}/review approve")
    theirs = notebook.run("%agent resume -t someone-else/review approve")

    assert approved.error is None and approved.markdown[-1] == "Wrote a."
    assert "SYS-MARK-42" in str(model.requests[-1].messages[0].text)  # the cell's own options
    assert "is theirs" in str(theirs.error)


def test_a_new_request_while_an_approval_waits_drops_the_call(notebook: Notebook) -> None:
    model = scripted(call("write_file", file_path="/workspace/x.md", content="x"), "Moved on.")
    notebook.session.configure(model=model, interrupt_on=("write_file",))
    notebook.run("%%agent\nwrite x")
    cell = notebook.run("%%agent\nforget that, just answer")
    assert cell.error is None
    assert "dropped" in cell.live_text
    assert "did not answer the approval request" in model.requests[1].messages[-2].text
    assert not (notebook.folder / "x.md").exists()


def test_state_folder_is_configurable_and_ignored_by_git(notebook: Notebook) -> None:
    (notebook.folder / ".deepagent.toml").write_text('state_dir = "agent-state"\n')
    notebook.session.configure(model=scripted("ok"))
    notebook.run("%%agent\nhello")
    state = notebook.folder / "agent-state"
    assert (state / "checkpoints.sqlite").is_file()
    assert (state / ".gitignore").read_text().strip().endswith("*")
    assert not (notebook.folder / ".deepagent").exists()


def test_context_window_setting_reaches_the_harness(notebook: Notebook) -> None:
    from jupyter_deepagent import ScriptedChatModel

    notebook.session.configure(model=ScriptedChatModel(script=["one", "two"]))  # no profile
    unknown = notebook.run("%%agent\nfirst")
    assert "no context window" in unknown.live_text
    notebook.run("%agent config context_window=32000")
    known = notebook.run("%%agent\nsecond")
    assert known.error is None and "no context window" not in known.live_text


def test_the_default_thread_is_named_after_the_notebook(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from jupyter_deepagent.jupyter.session.session import Session

    def thread_of(name: str | None) -> str:
        namespace = {"__session__": str(tmp_path / name)} if name else {}
        return Session(SimpleNamespace(user_ns=namespace)).default_thread

    assert thread_of("glaciers.ipynb") == "glaciers"
    assert thread_of("my analysis (v2).ipynb") == "my-analysis-v2"
    assert thread_of("été.ipynb") == "t"
    assert thread_of("ü.ipynb").startswith("notebook-") and thread_of("ü.ipynb") != thread_of("é.ipynb")
    # no notebook: a thread of this kernel's own, shared with no other kernel's notebook
    assert thread_of(None).startswith("kernel-") and thread_of(None) != thread_of(None)


@tool
def whoami(runtime: ToolRuntime[dict]) -> str:
    """Say which user and database the run is for (`ToolRuntime[dict]`: context is a dict)."""
    return f"user={runtime.context['user']} db={runtime.context['db'].split(':')[0]}"


def test_context_reaches_tools_but_never_the_model(notebook: Notebook) -> None:
    model = scripted(call("whoami"), "Done.")
    notebook.session.configure(model=model)
    notebook.session.tools.append(whoami)
    cell = notebook.run("%%agent --context user=ada --context db=postgres://db-secret-771\nwho?")
    assert cell.error is None
    answered = model.requests[1].messages[-1]
    assert isinstance(answered, ToolMessage)
    assert answered.text == "user=ada db=postgres"
    sent = "".join(m.text for request in model.requests for m in request.messages)
    assert "db-secret-771" not in sent and "db-secret-771" not in model.requests[0].system


def test_memory_and_skills_options_reach_the_prompt(notebook: Notebook) -> None:
    (notebook.folder / "NOTES.md").write_text("The user studies sea ice.\n")
    skill = notebook.folder / "my-skills" / "plotting"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: plotting\ndescription: Draw publication-quality figures.\n---\nUse SVG.\n"
    )
    model = scripted("ok")
    notebook.session.configure(model=model)
    cell = notebook.run("%%agent --memory NOTES.md --skills my-skills\nhello")
    assert cell.error is None
    system = model.requests[0].system
    assert '<agent_memory path="/workspace/NOTES.md">' in system
    assert "The user studies sea ice." in system
    assert "plotting" in system and "Draw publication-quality figures." in system
    assert "/workspace/my-skills/plotting/SKILL.md" in system
    assert "Use SVG." not in system  # a skill's body is read on demand


def test_reset_forgets_the_threads_transcript_too_but_not_another_users(
    notebook: Notebook, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JUPYTERHUB_USER", "ana")
    notebook.session.configure(model=scripted("ok", "ok"))
    notebook.run("%%agent\nhello")
    shared = notebook.folder / ".deepagent" / "artifacts" / "conversation_history"
    shared.mkdir(parents=True, exist_ok=True)
    (shared / "analysis.md").write_text("# kept by an earlier version\n")
    notebook.session.close()  # as a kernel restart: the state folder is opened again
    notebook.run("%%agent\nhello again")
    mine, bobs = shared / "ana", shared / "bob"
    # the earlier version's transcript went to the first user who opened the folder
    assert (mine / "analysis.md").read_text() == "# kept by an earlier version\n"
    assert not (shared / "analysis.md").exists()
    bobs.mkdir()
    (bobs / "analysis.md").write_text("# bob's\n")
    (mine / "other.md").write_text("# Conversation history\n")
    cell = notebook.run("%agent reset")
    assert "'analysis' forgotten" in cell.stdout and "/large_tool_results/" in cell.stdout
    assert not (mine / "analysis.md").exists() and (mine / "other.md").exists()
    assert (bobs / "analysis.md").read_text() == "# bob's\n"
