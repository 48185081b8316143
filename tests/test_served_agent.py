"""Serving a notebook folder's agent, without a server: `jupyter-deepagent serve-config` and the
files it writes, the served agent's filesystem (`build_served_agent`), and what
`trace_remote_run` refuses before any request (the end-to-end runs are in
test_serve_langgraph_dev.py)."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from langgraph.pregel.remote import RemoteGraph
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.schema import StreamPart

from jupyter_deepagent import MissingAPIKey, build_served_agent, trace_remote_run, trace_run
from jupyter_deepagent.cli import main as cli_main

FAKE_KEY = "AIza" + "SyServedAgentTestKey000000000000000"


def _call(name: str, **args: object) -> dict:
    return {"name": name, "args": args}


def _ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def _folder(tmp_path: Path, *steps: object, settings: str = "") -> Path:
    folder = tmp_path / "project"
    folder.mkdir(parents=True)
    (folder / "script.json").write_text(json.dumps(list(steps) or ["Hello."]), encoding="utf-8")
    (folder / ".deepagent.toml").write_text(
        f'model = "scripted:script.json"\nsystem_prompt = "You study moss."\n{settings}',
        encoding="utf-8",
    )
    return folder


def test_serve_config_writes_the_server_file_and_a_graph_module_that_builds_the_agent(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, "Moss grows on the north side.")
    (folder / ".env").write_text(f"GOOGLE_API_KEY={FAKE_KEY}\n", encoding="utf-8")

    assert cli_main(["serve-config", str(folder)]) == 0

    server = json.loads((folder / "langgraph.json").read_text(encoding="utf-8"))
    assert server == {"dependencies": ["."], "graphs": {"agent": "./deepagent_graph.py:graph"},
                      "env": ".env"}
    module = (folder / "deepagent_graph.py").read_text(encoding="utf-8")
    assert len(module.splitlines()) < 25 and "build_served_agent(" in module
    assert "langgraph dev" in capsys.readouterr().out
    graph = runpy.run_path(str(folder / "deepagent_graph.py"))["graph"]
    assert graph.checkpointer is None and graph.store is None  # the server gives its own
    trace = trace_run(graph, _ask("Where does moss grow?"))
    assert trace.final_text == "Moss grows on the north side."
    assert trace.prompts[0].sections[0].text.startswith("You study moss.")


def test_writing_again_keeps_a_file_changed_by_hand_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path)
    assert cli_main(["serve-config", str(folder)]) == 0
    assert cli_main(["serve-config", str(folder)]) == 0  # the same files: nothing to do
    assert "up to date" in capsys.readouterr().out
    module = folder / "deepagent_graph.py"
    edited = module.read_text(encoding="utf-8") + "# my tools\n"
    module.write_text(edited, encoding="utf-8")

    assert cli_main(["serve-config", str(folder), "--workspace", "."]) == 1
    error = capsys.readouterr().err
    assert "deepagent_graph.py" in error and "--force" in error
    assert module.read_text(encoding="utf-8") == edited
    assert cli_main(["serve-config", str(folder), "--force"]) == 0
    assert "# my tools" not in module.read_text(encoding="utf-8")


def test_files_written_elsewhere_point_back_to_the_folder(tmp_path: Path) -> None:
    folder = _folder(tmp_path, "From the folder's script.")
    output = tmp_path / "deploy" / "agent"

    assert cli_main(["serve-config", str(folder), "--output", str(output)]) == 0

    assert not (folder / "langgraph.json").exists()
    assert "env" not in json.loads((output / "langgraph.json").read_text(encoding="utf-8"))
    graph = runpy.run_path(str(output / "deepagent_graph.py"))["graph"]
    assert trace_run(graph, _ask("Hi")).final_text == "From the folder's script."


def test_an_invalid_configuration_is_reported_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _folder(tmp_path, settings="modle = 'typo'\n")
    assert cli_main(["serve-config", str(folder)]) == 1
    error = capsys.readouterr().err
    assert ".deepagent.toml" in error and "modle" in error
    assert not (folder / "langgraph.json").exists()
    assert cli_main(["serve-config", str(tmp_path / "missing")]) == 1
    assert cli_main(["serve-config", str(_folder(tmp_path / "b")), "--workspace", "nope"]) == 1


def test_the_served_agent_cannot_change_what_the_server_runs_nor_read_its_threads(
    tmp_path: Path,
) -> None:
    folder = _folder(
        tmp_path,
        {"tool_calls": [
            _call("write_file", file_path="/workspace/deepagent_graph.py", content="import os"),
            _call("write_file", file_path="/workspace/langgraph.json", content="{}"),
            _call("read_file", file_path="/workspace/.langgraph_api/.langgraph_ops.pckl"),
            _call("read_file", file_path="/workspace/.env"),
            _call("write_file", file_path="/workspace/notes.md", content="Moss."),
        ]},
        "Done.",
    )
    assert cli_main(["serve-config", str(folder)]) == 0
    (folder / ".langgraph_api").mkdir()
    (folder / ".langgraph_api" / ".langgraph_ops.pckl").write_bytes(b"threads")
    (folder / ".env").write_text(f"GOOGLE_API_KEY={FAKE_KEY}\n", encoding="utf-8")
    module = (folder / "deepagent_graph.py").read_text(encoding="utf-8")

    trace = trace_run(build_served_agent(folder, store=InMemoryStore()), _ask("Try."))

    paths = {e["tool_call_id"]: e["args"]["file_path"] for e in trace.of_type("tool_call")}
    errors = {paths[e["tool_call_id"]]: e["error"] for e in trace.of_type("tool_result")}
    assert "protected path" in errors["/workspace/deepagent_graph.py"]
    assert "protected path" in errors["/workspace/langgraph.json"]
    assert "off limits" in errors["/workspace/.langgraph_api/.langgraph_ops.pckl"]
    assert "off limits" in errors["/workspace/.env"]
    assert errors["/workspace/notes.md"] is None
    assert (folder / "deepagent_graph.py").read_text(encoding="utf-8") == module
    assert (folder / "notes.md").read_text(encoding="utf-8") == "Moss."


def test_the_notebooks_folder_is_guarded_when_the_served_workspace_is_above_it(
    tmp_path: Path,
) -> None:
    # the served agent of a folder whose workspace is its parent: the folder's notebooks start
    # their kernels in it, so an ipykernel_launcher.py there runs at their next kernel start
    folder = _folder(
        tmp_path,
        {"tool_calls": [
            _call("write_file", file_path="/workspace/project/ipykernel_launcher.py",
                  content="import os"),
            _call("write_file", file_path="/workspace/project/json.py", content="import os"),
            _call("write_file", file_path="/workspace/other/json.py", content="# no kernel"),
        ]},
        "Done.",
        settings='workspace = ".."\n',
    )
    trace = trace_run(build_served_agent(folder, store=InMemoryStore()), _ask("Try."))
    paths = {e["tool_call_id"]: e["args"]["file_path"] for e in trace.of_type("tool_call")}
    errors = {paths[e["tool_call_id"]]: e["error"] for e in trace.of_type("tool_result")}
    assert "instead of the module 'ipykernel_launcher'" in errors[
        "/workspace/project/ipykernel_launcher.py"]
    assert "instead of the module 'json'" in errors["/workspace/project/json.py"]
    assert errors["/workspace/other/json.py"] is None  # no kernel starts there
    assert not (folder / "ipykernel_launcher.py").exists() and not (folder / "json.py").exists()


def test_the_workspace_is_the_configured_folder_and_memories_need_the_servers_store(
    tmp_path: Path,
) -> None:
    folder = _folder(
        tmp_path,
        {"tool_calls": [_call("ls", path="/workspace/"),
                        _call("read_file", file_path="/memories/AGENTS.md")]},
        "Done.",
    )
    (folder / "data").mkdir()
    (folder / "data" / "moss.csv").write_text("site,cover\n", encoding="utf-8")

    trace = trace_run(build_served_agent(folder, workspace="data"), _ask("Look."))

    results = {event["tool"]: event for event in trace.of_type("tool_result")}
    listing, memory = results["ls"], results["read_file"]
    assert "moss.csv" in listing["content"] and "script.json" not in listing["content"]
    assert "store LangGraph Server gives" in memory["error"]
    with pytest.raises(ValueError, match="not a folder"):
        build_served_agent(folder, workspace="missing")


def test_the_served_agent_pauses_for_the_configured_approvals(tmp_path: Path) -> None:
    from langgraph.checkpoint.memory import InMemorySaver

    folder = _folder(
        tmp_path,
        {"tool_calls": [_call("write_file", file_path="/workspace/a.md", content="A")]},
        settings='interrupt_on = ["write_file"]\n',
    )
    # under the server the graph takes the server's checkpointer; here, one of our own
    served = build_served_agent(folder)
    assert served.checkpointer is True
    agent = build_served_agent(folder, checkpointer=InMemorySaver())
    trace = trace_run(agent, _ask("Write."), config={"configurable": {"thread_id": "t"}})
    assert trace.status == "interrupted"
    assert not (folder / "a.md").exists()


def test_a_served_agent_without_a_key_says_what_to_set_on_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".deepagent.toml").write_text('model = "google_genai:gemini-2.5-flash"\n')

    with pytest.raises(MissingAPIKey) as info:
        build_served_agent(folder)

    message = str(info.value)
    assert "set GOOGLE_API_KEY or GEMINI_API_KEY in the environment the LangGraph server" in message
    assert f"`GOOGLE_API_KEY=<your key>` in .env in {folder.resolve()}" in message
    assert "restart the server" in message and 'model = "scripted:' in message
    assert "%agent" not in message and "%env" not in message and "notebook" not in message
    assert info.value.variables == ("GOOGLE_API_KEY", "GEMINI_API_KEY")


def test_a_served_agent_names_an_env_line_it_could_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / ".deepagent.toml").write_text('model = "google_genai:gemini-2.5-flash"\n')
    (folder / ".env").write_text('GOOGLE_API_KEY = "AIza-unclosed-quote\n')

    with pytest.raises(MissingAPIKey) as info:
        build_served_agent(folder)

    message = str(info.value)
    assert ".env has a line for GOOGLE_API_KEY, but it could not be read" in message
    assert "AIza-unclosed-quote" not in message and "%agent" not in message


def test_the_server_module_imports_no_notebook_stack() -> None:
    code = (
        "import sys, jupyter_deepagent.server.served_agent, jupyter_deepagent.trace.remote_run\n"
        "print(sorted(m for m in ('IPython', 'ipywidgets', 'ipykernel', 'nbformat') "
        "if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


class _FakeRuns:
    def __init__(self, parts: list[StreamPart]) -> None:
        self.parts = parts

    def stream(self, **_: object) -> list[StreamPart]:
        return self.parts


def test_a_remote_item_outside_the_schema_fails_the_run_with_a_clear_error() -> None:
    parts = [StreamPart("custom", {"type": "bogus", "step": 1})]
    graph = RemoteGraph("agent", sync_client=SimpleNamespace(runs=_FakeRuns(parts)))

    with pytest.raises(ValueError, match="not a run event of this schema") as caught:
        trace_remote_run(graph, "agent", _ask("Hi"))
    assert caught.value.trace.status == "error"  # type: ignore[attr-defined]
    assert [e["type"] for e in caught.value.trace.events] == ["run_started", "run_finished"]


def test_remote_threads_are_uuids_and_a_wrong_client_is_named() -> None:
    with pytest.raises(ValueError, match="UUID"):
        trace_remote_run("http://127.0.0.1:9", "agent", _ask("Hi"), thread_id="moss")
    with pytest.raises(TypeError, match="get_sync_client"):
        trace_remote_run(object(), "agent", _ask("Hi"))


def test_the_served_agent_reads_the_memories_the_projects_notebooks_wrote(tmp_path: Path) -> None:
    from jupyter_deepagent.project.storage import OwnedStorage, open_storage
    from jupyter_deepagent.project.storage.owners import ThreadOwner

    folder = _folder(
        tmp_path,
        {"tool_calls": [_call("read_file", file_path="/memories/AGENTS.md")]},
        "Done.",
        settings='project = "moss.survey"\n',
    )
    # what a notebook of the project remembered, kept in the notebooks' database
    notebooks = OwnedStorage(open_storage(folder / ".deepagent", ".deepagent"),
                             ThreadOwner("moss.survey", "ana"))
    try:
        notebooks.store.put(notebooks.memory_namespace, "/AGENTS.md",
                            {"content": ["Cite the 2019 survey."], "created_at": "",
                             "modified_at": ""})
        trace = trace_run(build_served_agent(folder, store=notebooks.store), _ask("Recall."))
    finally:
        notebooks.close()
    [memory] = trace.of_type("tool_result")
    assert memory["error"] is None and "Cite the 2019 survey." in memory["content"]
