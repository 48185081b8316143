"""The served agent end to end: `jupyter-deepagent serve-config` writes the files, `langgraph dev`
(LangGraph's in-memory server) serves them on 127.0.0.1, and `trace_remote_run` collects the runs.

One server for the module, started with the analytics, the version check and tracing off, so it
makes no connection of its own; the client may reach 127.0.0.1 only. The folder's scripted model
plays one script across the runs, in the order of the tests below.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from lab_under_test import free_port, wait_until_answering
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command

from jupyter_deepagent import RunTrace, results_frame, trace_run
from jupyter_deepagent.cli import main as cli_main
from jupyter_deepagent.server.served_agent import build_served_agent
from jupyter_deepagent.trace.remote_run import trace_remote_run

pytest.importorskip("langgraph_api", reason="needs langgraph-cli[inmem] (the test extra)")

pytestmark = pytest.mark.allow_hosts(["127.0.0.1"])

ICE, SEA, AIR = (str(uuid.uuid4()) for _ in range(3))  # server threads are named by UUID
LEAD = "You coordinate a research team."


def _call(name: str, **args: object) -> dict:
    return {"name": name, "args": args}


SCRIPT = {
    "script": [
        # run 1 (thread ICE): a memory, a task for the judge, the answer
        {"tool_calls": [_call("write_file", file_path="/memories/notes.md",
                              content="Glaciers retreat.")]},
        {"tool_calls": [_call("task", description="Judge the ice evidence.",
                              subagent_type="judge")]},
        "Done: the evidence is sound.",
        # run 2 (thread "sea"): the memory, read in another thread
        {"tool_calls": [_call("read_file", file_path="/memories/notes.md")]},
        "We know that glaciers retreat.",
        # run 3 (thread "air"): an edit that waits for approval, then the answer
        {"tool_calls": [_call("edit_file", file_path="/memories/notes.md",
                              old_string="retreat.", new_string="retreat fast.")]},
        "Edited.",
    ],
    "rules": [
        {"when": "Judge the ice evidence.", "when_system": "Judge the evidence.",
         "reply": {"tool_calls": [_call("Verdict", verdict="sound", confident=True, sources=3)]}},
    ],
}


def _ask(text: str) -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def _project(folder: Path) -> None:
    """A notebook folder: its settings, its script, and the generated files with a subagent."""
    folder.mkdir()
    (folder / "script.json").write_text(json.dumps(SCRIPT), encoding="utf-8")
    (folder / ".deepagent.toml").write_text(
        f'model = "scripted:script.json"\nsystem_prompt = "{LEAD}"\n'
        'interrupt_on = ["edit_file"]\nproject = "glacier.lab"\n'
        # the judge, declared in the settings as in the notebooks, with a typed result
        '[[subagents]]\nname = "judge"\ndescription = "Judges evidence."\n'
        'system_prompt = "Judge the evidence."\n'
        '[subagents.response_format]\ntitle = "Verdict"\ntype = "object"\n'
        'required = ["verdict", "confident", "sources"]\n'
        'properties = { verdict = { type = "string" }, confident = { type = "boolean" }, '
        'sources = { type = "integer" } }\n',
        encoding="utf-8",
    )
    assert cli_main(["serve-config", str(folder)]) == 0
    text = (folder / "deepagent_graph.py").read_text(encoding="utf-8")
    assert "graph = build_served_agent(\n    HERE,\n)" in text


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """`langgraph dev` serving the project; yields its URL and the project folder."""
    scratch = tmp_path_factory.mktemp("served")
    folder = scratch / "project"
    _project(folder)
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environ.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="1",
                   LANGSMITH_TRACING="false", LANGCHAIN_TRACING_V2="false")
    port = free_port()
    log_path = scratch / "server.log"
    with log_path.open("w") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "langgraph_cli", "dev", "--no-browser", "--no-reload",
             "--host", "127.0.0.1", "--port", str(port)],
            cwd=folder, env=environ, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answering(f"{url}/ok", process, log_path, "langgraph dev", 90)
        yield url, folder
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


@pytest.fixture(scope="module")
def ice_run(server: tuple[str, Path]) -> RunTrace:
    """The script's first run, on the server (thread ICE)."""
    url, _ = server
    return trace_remote_run(url, "agent", _ask("Survey the ice."), thread_id=ICE)


def test_a_remote_run_streams_the_same_events_as_a_local_one(server, ice_run) -> None:
    _, folder = server
    remote = ice_run

    local_agent = build_served_agent(folder, checkpointer=InMemorySaver(), store=InMemoryStore())
    local = trace_run(local_agent, _ask("Survey the ice."),
                      config={"configurable": {"thread_id": ICE}})

    assert remote.status == "ok" and remote.final_text == "Done: the evidence is sound."
    assert [e["type"] for e in remote.events] == [e["type"] for e in local.events]
    assert [(e["agent"], e["step"]) for e in remote.events] == [
        (e["agent"], e["step"]) for e in local.events
    ]
    assert [e["seq"] for e in remote.events] == list(range(len(remote.events)))
    assert {e["run_id"] for e in remote.events} == {remote.run_id}
    assert remote.events[0]["input"] == "Survey the ice." and remote.events[0]["thread_id"] == ICE
    tools = [e["tool"] for e in remote.of_type("tool_call")]
    assert tools == ["write_file", "task"]
    assert remote.prompts[0].sections[0].text.startswith(LEAD)


def test_the_results_frame_of_a_remote_run_has_the_subagents_typed_row(ice_run) -> None:
    first = ice_run
    frame = results_frame(first.events)
    assert len(frame) == 1 and frame["subagent"].tolist() == ["judge"]
    assert frame["status"].tolist() == ["ok"]
    assert frame["verdict"].tolist() == ["sound"]
    assert frame["confident"].dtype == bool and frame["confident"].tolist() == [True]
    assert frame["sources"].dtype == "int64" and frame["sources"].tolist() == [3]
    assert first.results_frame().equals(frame)


def test_a_memory_written_in_one_thread_is_read_in_another(server) -> None:
    url, _ = server
    trace = trace_remote_run(url, "agent", _ask("What do we know?"), thread_id=SEA)
    read = trace.of_type("tool_result")[0]
    assert read["tool"] == "read_file" and "Glaciers retreat." in read["content"]
    assert trace.final_text == "We know that glaciers retreat."


def test_memories_live_in_the_servers_store_and_approvals_pause_on_its_checkpointer(
    server,
) -> None:
    from langgraph_sdk import get_sync_client

    url, _ = server
    with get_sync_client(url=url) as client:
        _approve_on(client)


def _approve_on(client: object) -> None:
    paused = trace_remote_run(client, "agent", _ask("Sharpen the note."), thread_id=AIR)
    assert paused.status == "interrupted" and paused.final_text == ""
    request = paused.of_type("approval_requested")[0]
    assert request["tool"] == "edit_file" and request["args"]["new_string"] == "retreat fast."

    approve = Command(resume={"decisions": [{"type": "approve"}]})
    resumed = trace_remote_run(client, "agent", approve, thread_id=AIR)
    assert resumed.status == "ok" and resumed.final_text == "Edited."
    decided = resumed.of_type("approval_decided")
    assert decided and decided[0]["tools"] == ["edit_file"]
    # the project's namespace, as the project's notebooks keep /memories/ ("." cannot be in one)
    item = client.store.get_item(["memories", "glacier_lab"], key="/notes.md")
    assert item["value"]["content"] == "Glaciers retreat fast."
