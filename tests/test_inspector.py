"""The inspector snapshot and its views, for scripted runs: the prompt as the assembly has it,
skills marked at the step that loaded them, artifacts with previews, the gauge around an offload
and a summarization, the subagent table as `results_frame()` gives it, and the static fallback."""

from __future__ import annotations

import json
from pathlib import Path

from langchain.tools import tool
from pydantic import BaseModel

from jupyter_deepagent import (
    DiskBackend,
    RunTrace,
    ScriptedChatModel,
    SubAgent,
    create_research_agent,
    trace_run,
)
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.trace.inspector.snapshot import build_snapshot
from jupyter_deepagent.trace.inspector.tasks_tab import json_value
from jupyter_deepagent.trace.inspector.text import snapshot_text

SKILL = "---\nname: {name}\ndescription: {description}\n---\nBody of {name}.\n"


def call(name: str, **args: object) -> dict:
    return {"tool_calls": [{"name": name, "args": args}]}


def ask(text: str = "survey glaciers") -> dict:
    return {"messages": [{"role": "user", "content": text}]}


def table(key: str, rows: int = 1_500) -> str:
    return "\n".join(f"{key} row {i:05d} " + "xxx " * 15 for i in range(rows))  # ~20 tokens


@tool
def fetch(key: str) -> str:
    """Fetch a large table named `key`."""
    return table(key)


def skills_folder(root: Path) -> DiskBackend:
    for name, description in [("literature-review", "Review papers systematically."),
                              ("data-cleaning", "Clean tabular data.")]:
        folder = root / "skills" / name
        folder.mkdir(parents=True)
        (folder / "SKILL.md").write_text(SKILL.format(name=name, description=description))
    (root / "skills" / "broken").mkdir()
    (root / "skills" / "broken" / "SKILL.md").write_text("no frontmatter here")
    return DiskBackend(root)


def research_run(root: Path) -> RunTrace:
    """Fetch a large table (offloaded), load a skill at step 2, write a note, answer."""
    model = ScriptedChatModel(script=[
        call("fetch", key="glaciers"),
        call("read_file", file_path="/skills/literature-review/SKILL.md"),
        call("write_file", file_path="/workspace/notes.md",
             content="# Notes\n" + "\n".join(f"finding {i}: " + "z" * 50 for i in range(40))),
        "Glaciers shrink.",
    ], profile={"max_input_tokens": 1_000_000})
    agent = create_research_agent(model, tools=[fetch], skills=["/skills/"],
                                  backend=DiskBackend(root), system_prompt="Study glaciers.")
    skills_folder(root)
    return trace_run(agent, ask())


def test_prompt_sections_and_tokens_equal_the_prompt_assembly(tmp_path: Path) -> None:
    trace = research_run(tmp_path)
    prompt = build_snapshot(trace.events)["prompt"]
    assembly = trace.prompts[-1]
    assert [(s["name"], s["source"], s["tokens"], s["text"]) for s in prompt["sections"]] == [
        (s.name, s.source, s.tokens, s.text) for s in assembly.sections]
    assert prompt["tokens"] == assembly.tokens
    assert prompt["calls"] == 4
    assert abs(sum(s["share"] for s in prompt["sections"]) - 1) < 0.01
    assert all(s["change"] is None for s in prompt["sections"])  # the same prompt all run long


def test_what_changed_in_the_prompt_since_the_previous_call_or_run_is_marked(
    tmp_path: Path,
) -> None:
    (tmp_path / "AGENTS.md").write_text("The user prefers metric units.\n")
    model = ScriptedChatModel(script=[
        call("edit_file", file_path="/AGENTS.md", old_string="metric", new_string="SI"),
        "Noted.",
    ])
    agent = create_research_agent(model, memory=["/AGENTS.md"], backend=DiskBackend(tmp_path))
    trace = trace_run(agent, ask("remember: SI units"))
    prompt = build_snapshot(trace.events)["prompt"]
    # a run keeps its prompt: the edit reaches the next run's
    assert all(s["change"] is None for s in prompt["sections"]) and prompt["calls"] == 2

    previous = trace.prompts[0].as_dict()  # a later run sees the file as edited
    previous["sections"] = [s for s in previous["sections"] if s["name"] != "todos"]
    again = ScriptedChatModel(script=["ok"])
    rerun = trace_run(create_research_agent(again, memory=["/AGENTS.md"],
                                            backend=DiskBackend(tmp_path)), ask("hi"))
    prompt = build_snapshot(rerun.events, previous_prompt=previous)["prompt"]
    changes = {s["name"]: s["change"] for s in prompt["sections"]}
    assert changes == {**dict.fromkeys(changes), "memory": "changed", "todos": "new"}
    assert prompt["compared_with"] == "previous run"


def test_skills_listed_with_the_loaded_one_marked_at_its_step_and_the_broken_one_skipped(
    tmp_path: Path,
) -> None:
    skills = build_snapshot(research_run(tmp_path).events)["skills"]
    by_name = {s["name"]: s for s in skills["available"]}
    assert set(by_name) == {"literature-review", "data-cleaning"}
    assert by_name["literature-review"]["loaded_step"] == 2
    assert by_name["literature-review"]["path"] == "/skills/literature-review/SKILL.md"
    assert by_name["literature-review"]["description"] == "Review papers systematically."
    assert by_name["data-cleaning"]["loaded_step"] is None
    [skipped] = skills["skipped"]
    assert skipped["path"] == "/skills/broken/SKILL.md"
    assert "no YAML frontmatter" in skipped["message"]


def test_offloaded_artifacts_and_written_files_are_listed_with_previews(tmp_path: Path) -> None:
    trace = research_run(tmp_path)
    [offloaded] = trace.of_type("offloaded")
    files = build_snapshot(trace.events)["files"]
    mounts = {group["mount"]: group["files"] for group in files["mounts"]}
    [artifact] = mounts["/large_tool_results/"]
    assert artifact["path"] == offloaded["path"] and artifact["kind"] == "offloaded"
    assert artifact["tokens"] == offloaded["tokens"] and artifact["tool"] == "fetch"
    assert artifact["preview"].startswith("glaciers row 00000 ")
    assert artifact["preview"].count("\n") <= 13  # the first lines, not 1,500
    [note] = mounts["/workspace/"]
    assert note["kind"] == "written" and note["path"] == "/workspace/notes.md"
    assert "finding 10: zz" in note["preview"]  # the whole argument, not the event's 200-char head
    assert list(mounts).index("/workspace/") < list(mounts).index("/large_tool_results/")


def test_gauge_and_marks_before_and_after_an_offload(tmp_path: Path) -> None:
    trace = research_run(tmp_path)
    at = next(i for i, e in enumerate(trace.events) if e["type"] == "offloaded")
    before = build_snapshot(trace.events[:at])["context"]
    after = build_snapshot(trace.events)["context"]
    contexts = trace.of_type("context")
    first = contexts[0]
    assert (before["tokens"], before["window"], before["trigger"]) == (
        first["tokens"], 1_000_000, first["trigger"])
    assert before["marks"] == [] and before["step"] == 1
    [mark] = after["marks"]
    assert mark["kind"] == "offloaded" and mark["step"] == trace.events[at]["step"] == 1
    assert after["tokens"] == contexts[-1]["tokens"] and after["step"] == 4
    assert [s["tokens"] for s in after["steps"]] == [e["tokens"] for e in contexts]
    # the table went to a file: the request after it grew by a pointer, not by 30k tokens
    assert after["steps"][1]["tokens"] - after["steps"][0]["tokens"] < 1_000
    assert after["share"] == after["tokens"] / 1_000_000


def test_the_context_tab_and_its_gauge_say_the_same_share() -> None:
    # 5,295 of 32,000 is 16.547%: 16.5% in both, not 16.6% where a rounded share was rounded again
    from jupyter_deepagent.events import CONTEXT, build_event
    from jupyter_deepagent.trace.inspector.context_tab import ContextTracker
    from jupyter_deepagent.trace.inspector.svg import gauge_svg

    tracker = ContextTracker()
    tracker.add(build_event(
        CONTEXT, agent="main", task_id=None, step=1, tokens=5_295, window=32_000,
        trigger=27_200, window_source="profile", messages=3, summaries=0, pointers=0, attempt=1,
    ))
    view = tracker.view()

    assert f"{view['share']:.1%}" == "16.5%"
    assert "5,295 of 32,000 tokens (16.5%)" in gauge_svg(view)


def test_gauge_and_marks_before_and_after_a_summarization() -> None:
    @tool
    def notes(key: str) -> str:
        """Return research notes named `key`."""
        return "\n".join(f"{key} line {i:03d} " + "y" * 55 for i in range(70))

    script = [*(call("notes", key=f"n{i}") for i in range(6)), "done"]
    model = ScriptedChatModel(script=script, profile={"max_input_tokens": 8_000}, rules=[
        {"when": SUMMARY_MARKER, "reply": "## Session intent\nStudy.", "repeat": True}])
    agent = create_research_agent(model, tools=[notes], age_token_limit=None)
    trace = trace_run(agent, ask(), config={"recursion_limit": 100})
    [summary] = trace.of_type("summarized")[:1]
    at = trace.events.index(summary)
    before = build_snapshot(trace.events[:at])["context"]
    after = build_snapshot(trace.events[: at + 2])["context"]  # with the request that followed
    assert before["tokens"] <= before["trigger"] == 6_800 and before["window"] == 8_000
    assert before["step"] == summary["step"] - 1 and not before["marks"]
    [mark] = after["marks"]
    assert mark["kind"] == "summarized" and mark["step"] == summary["step"]
    assert f"{summary['tokens_before']:,} → {summary['tokens_after']:,}" in mark["label"]
    assert after["step"] == summary["step"] and after["tokens"] < summary["tokens_before"]
    assert after["tokens"] == trace.of_type("context")[summary["step"] - 1]["tokens"]
    assert after["summaries"] == 1
    parts = after["breakdown"]["parts"]
    assert sum(parts.values()) == after["tokens"] and all(v >= 0 for v in parts.values())
    files = build_snapshot(trace.events)["files"]["mounts"]
    [history] = [g["files"] for g in files if g["mount"] == "/conversation_history/"]
    assert history[0]["path"] == summary["transcript_path"] and history[0]["kind"] == "transcript"


class Finding(BaseModel):
    topic: str
    score: float
    sources: list[str]


def test_the_subagent_table_equals_results_frame_and_each_task_has_its_transcript() -> None:
    rules = [
        {"when": f"Topic: {topic}.", "when_system": "You research one topic.",
         "reply": call("Finding", topic=topic, score=index + 0.5, sources=[f"{topic}2021"])}
        for index, topic in enumerate(("ice", "sea"))]
    model = ScriptedChatModel(script=[
        {"tool_calls": [{"name": "task", "args": {"description": f"Topic: {t}. Rate it.",
                                                   "subagent_type": "researcher"}}
                        for t in ("ice", "sea")]},
        "Both done."], rules=rules)
    researcher = SubAgent(name="researcher", description="Researches one topic.",
                          system_prompt="You research one topic.", response_format=Finding)
    trace = trace_run(create_research_agent(model, subagents=[researcher]), ask())
    table = build_snapshot(trace.events)["subagents"]
    frame = trace.results_frame()
    assert table["columns"] == list(frame.columns)
    expected = [{k: json_value(v) for k, v in row.items()} for row in frame.to_dict("records")]
    assert [{k: v for k, v in row.items() if k != "tokens"} for row in table["rows"]] == expected
    assert [row["topic"] for row in table["rows"]] == ["ice", "sea"]
    assert table["compact"] == ["description", "subagent", "status", "topic", "score", "sources",
                                "tokens", "seconds"]
    assert table["rows"][0]["tokens"] == int(frame["tokens_in"][0] + frame["tokens_out"][0])
    transcript = table["transcripts"][table["rows"][1]["task_id"]]
    assert transcript[-1]["kind"] == "report" and '"topic": "sea"' in transcript[-1]["text"]
    json.dumps(build_snapshot(trace.events))  # the whole snapshot is JSON


def test_a_run_trace_shows_as_static_html_and_a_short_text(tmp_path: Path) -> None:
    trace = research_run(tmp_path)
    data = trace._repr_mimebundle_()
    html = data["text/html"]
    for section in trace.prompts[-1].sections:
        assert f'data-section="{section.name}"' in html
    assert 'class="jdi-gauge"' in html and "summarization at 850k" in html
    assert "literature-review" in html and "loaded at step 2" in html
    assert "/large_tool_results/fetch-" in html and "glaciers row 00000" in html
    assert "<script" not in html
    assert data["text/plain"] == snapshot_text(build_snapshot(trace.events))
    assert "Skills: 2 available; loaded: literature-review (step 2); 1 skipped" in data["text/plain"]
    short = repr(trace)
    assert short.startswith("<RunTrace ok · 4 model calls") and len(short) < 200


def test_text_from_the_run_is_escaped_in_every_view(tmp_path: Path) -> None:
    model = ScriptedChatModel(script=[
        call("write_file", file_path="/outputs/x.md", content="<img src=x onerror=alert(1)>"),
        "done"])
    trace = trace_run(create_research_agent(model, system_prompt="<script>alert(2)</script>"),
                      ask())
    html = trace._repr_mimebundle_()["text/html"]
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(2)" in html and "&lt;img src=x" in html


def test_file_written_events_name_the_files_and_unknown_event_types_are_ignored() -> None:
    def event(kind: str, **fields: object) -> dict:
        return {"type": kind, "time": 0.0, "agent": "main", "task_id": None, "step": 1, **fields}

    events = [
        event("run_started", input="go", thread_id="t", model="scripted:x"),
        event("tool_call", tool="write_file", tool_call_id="c1",
              args={"file_path": "/outputs/a.md", "content": "# A"}),
        event("tool_result", tool="write_file", tool_call_id="c1", content="ok", error=None),
        event("file_written", path="/outputs/b.md", tool="write_file", chars=3, preview="# B"),
        event("approval_requested", tool="write_file", args={}),
        event("answer", text="done"),
        event("run_finished", status="ok", error=None, tokens_in=5, tokens_out=1,
              model_calls=1, tool_calls=1, seconds=0.1),
    ]
    snap = build_snapshot(events)
    [outputs] = [g["files"] for g in snap["files"]["mounts"] if g["mount"] == "/outputs/"]
    assert [(f["path"], f["preview"]) for f in outputs] == [("/outputs/b.md", "# B")]
    assert snap["run"]["status"] == "ok" and snap["run"]["model"] == "scripted:x"
    from jupyter_deepagent.jupyter.views.output_files import written_order

    assert written_order(events) == ["/outputs/b.md"]


def test_outputs_are_shown_in_the_order_of_the_reply_not_the_order_the_writes_finished() -> None:
    from jupyter_deepagent.jupyter.views.output_files import written_order

    def event(kind: str, **fields: object) -> dict:
        return {"type": kind, "agent": "main", "task_id": None, **fields}

    def write(path: str) -> dict:
        return {"name": "write_file", "args": {"file_path": path, "content": "x"}, "id": path}

    reply = {"type": "ai", "data": {"content": "", "tool_calls": [
        write("/outputs/z.md"), write("/workspace/notes.md"), write("/outputs/a.csv")]}}
    events = [
        event("model_call", reply=reply),
        # the two calls of one reply ran concurrently: a.csv happened to finish first
        event("file_written", path="/outputs/a.csv", tool="write_file", chars=1, preview="x"),
        event("file_written", path="/outputs/z.md", tool="write_file", chars=1, preview="x"),
        event("file_written", path="/workspace/notes.md", tool="write_file", chars=1,
              preview="x"),
    ]
    assert written_order(events) == ["/outputs/z.md", "/outputs/a.csv"]
    # a write the reply asked for but that failed is not shown
    assert written_order(events[:2]) == ["/outputs/a.csv"]


def test_a_deletion_is_listed_in_the_files_tab_never_silent(tmp_path: Path) -> None:
    (tmp_path / "workspace").mkdir()
    (tmp_path / "workspace" / "old.csv").write_text("a,b\n1,2\n")
    model = ScriptedChatModel(script=[
        call("delete", file_path="/workspace/old.csv"),
        call("write_file", file_path="/workspace/draft.md", content="# Draft\n"),
        call("delete", file_path="/workspace/draft.md"),
        call("write_file", file_path="/workspace/report.md", content="# Report\n"),
        call("write_file", file_path="/workspace/scratch/a.md", content="a\n"),
        call("delete", file_path="/workspace/scratch"),  # its files went with it
        "Tidied up.",
    ], profile={"max_input_tokens": 1_000_000})
    agent = create_research_agent(model, backend=DiskBackend(tmp_path))
    trace = trace_run(agent, ask())

    snap = build_snapshot(trace.events)
    [workspace] = [g["files"] for g in snap["files"]["mounts"] if g["mount"] == "/workspace/"]
    assert [(f["path"], f["kind"]) for f in workspace] == [
        ("/workspace/draft.md", "deleted"),
        ("/workspace/old.csv", "deleted"),
        ("/workspace/report.md", "written"),
        ("/workspace/scratch", "deleted"),
    ]
    assert not (tmp_path / "workspace" / "old.csv").exists()
    assert "/workspace/old.csv (deleted)" in snapshot_text(snap)
