"""AGENTS.md memory: every file read is reported by a `memory_loaded` event (path and tokens), a
missing one by a warning, and the text reaches the prompt as written."""

from __future__ import annotations

from jupyter_deepagent import ScriptedChatModel, StateBackend, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.tokens import approx_tokens
from jupyter_deepagent.harness.prompt.memory import load_memory

PERSONAL = "The user prefers metric units.\nCite sources as [n].\n"
TEAM = "Team rule: every figure gets a caption.\n" * 20


def file(text: str) -> dict:
    return {"content": text, "modified_at": "2024-01-01T00:00:00+00:00"}


def run(memory: list[str], files: dict) -> tuple[ScriptedChatModel, object]:
    model = ScriptedChatModel(script=["ok"])
    agent = create_research_agent(model, memory=memory, backend=StateBackend())
    trace = trace_run(agent, {"messages": [{"role": "user", "content": "hi"}], "files": files})
    return model, trace


def test_each_memory_file_read_is_reported_with_its_path_and_tokens() -> None:
    files = {"/AGENTS.md": file(PERSONAL), "/team/AGENTS.md": file(TEAM)}
    _, trace = run(["/AGENTS.md", "/team/AGENTS.md"], files)
    loaded = [(e["path"], e["tokens"]) for e in trace.of_type("memory_loaded")]
    assert loaded == [
        ("/AGENTS.md", approx_tokens(PERSONAL.rstrip("\n"))),
        ("/team/AGENTS.md", approx_tokens(TEAM.rstrip("\n"))),
    ]
    assert loaded[1][1] > loaded[0][1] > 0


def test_a_missing_memory_file_is_a_warning_not_a_loaded_file() -> None:
    model, trace = run(["/AGENTS.md", "/missing.md"], {"/AGENTS.md": file(PERSONAL)})
    assert [e["path"] for e in trace.of_type("memory_loaded")] == ["/AGENTS.md"]
    [warning] = [e for e in trace.of_type("warning") if e["source"] == "/missing.md"]
    assert "does not exist" in warning["message"]
    assert "prefers metric units" in model.requests[0].system


def test_a_byte_order_mark_is_not_sent_to_the_model() -> None:
    backend = StateBackend({"/AGENTS.md": file("\ufeff" + PERSONAL)})
    [loaded] = load_memory(backend, ["/AGENTS.md"])
    assert loaded.text == PERSONAL.rstrip("\n")
    model, trace = run(["/AGENTS.md"], {"/AGENTS.md": file("\ufeff" + PERSONAL)})
    assert "\ufeff" not in model.requests[0].system
    assert trace.of_type("memory_loaded")[0]["tokens"] == approx_tokens(PERSONAL.rstrip("\n"))
