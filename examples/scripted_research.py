"""A scripted research run, end to end and offline: the agent plans, reads a skill, fetches a large
dataset (offloaded to a file), hands a review to a subagent, takes notes, searches them and writes a
report. Prints every run event, the prompt it assembled, the subagent results as a DataFrame and the
files it left behind.

Run with `.venv/bin/python examples/scripted_research.py`. No API key and no network: the model is a ScriptedChatModel.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from langchain.tools import tool

from jupyter_deepagent import (
    CompositeBackend,
    DiskBackend,
    ScriptedChatModel,
    StateBackend,
    SubAgent,
    create_research_agent,
    trace_run,
)

SKILL = """---
name: source-notes
description: Take structured notes on a source (claim, evidence, caveats) before summarising.
---
For each source write `/notes/<source>.md` with three headings: Claim, Evidence, Caveats.
"""

SCRIPT = [
    {"tool_calls": [{"name": "write_todos", "args": {"todos": [
        {"content": "Read the note-taking skill", "status": "in_progress"},
        {"content": "Take notes on two sources", "status": "pending"},
        {"content": "Write the report", "status": "pending"},
    ]}}]},
    {"tool_calls": [{"name": "read_file", "args": {"file_path": "/workspace/skills/source-notes/SKILL.md"}}]},
    {"tool_calls": [{"name": "fetch_mass_balance", "args": {"region": "Alps"}}]},
    {"tool_calls": [{"name": "grep", "args": {"pattern": "2019,", "path": "/large_tool_results/", "output_mode": "content"}}]},
    {"tool_calls": [{"name": "task", "args": {"subagent_type": "reviewer", "description":
        "Check the claim 'glacier mass loss doubled since 2000' against the GRACE literature."}}]},
    {"tool_calls": [
        {"name": "write_file", "args": {"file_path": "/notes/smith2021.md", "content":
            "# Claim\nGlacier mass loss doubled since 2000.\n# Evidence\nGRACE gravimetry.\n# Caveats\nShort record.\n"}},
        {"name": "write_file", "args": {"file_path": "/notes/lee2023.md", "content":
            "# Claim\nLoss rates vary by region.\n# Evidence\nDEM differencing.\n# Caveats\nSparse in Asia.\n"}},
    ]},
    {"tool_calls": [{"name": "grep", "args": {"pattern": "Caveats", "path": "/notes/", "output_mode": "content"}}]},
    {"tool_calls": [{"name": "write_file", "args": {"file_path": "/workspace/report.md", "content":
        "# Glacier mass loss\n\nTwo sources agree loss accelerated since 2000 (smith2021, lee2023);\n"
        "regional coverage remains thin.\n"}}]},
    "The report is in /workspace/report.md: mass loss accelerated since 2000, with thin regional coverage.",
]

# The reviewer subagent shares the model; its replies are picked by its own system prompt.
REVIEWER_RULES = [
    {"when_system": "You review climate claims", "reply":
        "Supported: GRACE shows loss rates rising from about 150 to 300 Gt/yr (2002-2020).",
     "repeat": True},
]


@tool
def fetch_mass_balance(region: str) -> str:
    """Fetch the yearly glacier mass balance table of a region (CSV, one row per glacier-year)."""
    rows = ["glacier,year,mass_balance_mwe"]
    rows += [f"{region}-{g:03d},{year},{-0.2 - (year - 1950) * 0.01 - g * 0.0001:.3f}"
             for g in range(40) for year in range(1950, 2024)]
    return "\n".join(rows)


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        workspace = Path(folder)
        (workspace / "skills" / "source-notes").mkdir(parents=True)
        (workspace / "skills" / "source-notes" / "SKILL.md").write_text(SKILL)
        (workspace / "AGENTS.md").write_text("Cite sources by first author and year.\n")
        backend = CompositeBackend(StateBackend(), {"/workspace/": DiskBackend(workspace)})
        model = ScriptedChatModel(
            script=SCRIPT, rules=REVIEWER_RULES, profile={"max_input_tokens": 32_000}
        )
        agent = create_research_agent(
            model,
            tools=[fetch_mass_balance],
            subagents=[SubAgent(name="reviewer", description="Checks one claim against the literature.",
                                system_prompt="You review climate claims against published evidence.")],
            system_prompt="You are a research assistant for climate science.",
            memory=["/workspace/AGENTS.md"],
            skills=["/workspace/skills/"],
            backend=backend,
        )
        trace = trace_run(
            agent, {"messages": [{"role": "user", "content": "Summarise glacier mass loss."}]}
        )

        print("== System prompt (first model call) ==")
        for section in trace.prompts[0].sections:
            print(f"  {section.name:<18} {section.tokens:>5} tokens  ({section.source})")
        print("\n== Run events ==")
        for event in trace.events:
            if event["task_id"] is None or event["type"].startswith("subagent"):
                print("  " + describe(event))
        print("\n== Subagent results (RunTrace.results_frame()) ==")
        print(trace.results_frame()[["task_id", "subagent", "status", "result", "tokens_in", "seconds"]]
              .to_string(max_colwidth=60))
        print("\n== Files in the thread's state ==")
        for path, data in sorted(trace.state.get("files", {}).items()):
            print(f"  {path} ({len(data['content'])} chars)")
        print("\n== Files written to the workspace on disk ==")
        for path in sorted(workspace.rglob("*")):
            if path.is_file():
                print(f"  /workspace/{path.relative_to(workspace)}")
        print("\n== Final answer ==\n" + trace.final_text)


def describe(event: dict) -> str:
    kind, step = event["type"], event["step"]
    if kind == "prompt":
        if event["assembly"] is None:
            return f"[{step}] prompt: unchanged ({event['hash']}), {event['tokens']} tokens"
        return f"[{step}] prompt: {len(event['assembly']['sections'])} sections, {event['tokens']} tokens"
    if kind == "model_call":
        calls = ", ".join(event["tool_calls"]) or "final answer"
        return f"[{step}] model: {event['tokens_in']} tokens in, {event['tokens_out']} out -> {calls}"
    if kind == "tool_call":
        return f"[{step}] tool {event['tool']}({', '.join(f'{k}={v!r}' for k, v in event['args'].items())})"[:160]
    if kind == "tool_result":
        status = f"error: {event['error']}" if event["error"] else f"{event['chars']} chars"
        return f"[{step}] -> {event['tool']}: {status} in {event['seconds'] * 1000:.1f} ms"
    if kind == "todos":
        return f"[{step}] todos: " + "; ".join(f"{t['content']} ({t['status']})" for t in event["todos"])
    if kind == "skill_loaded":
        return f"[{step}] skill loaded: {event['skill']}"
    if kind == "context":
        share = event["tokens"] / event["window"]
        return f"[{step}] context: {event['tokens']:,} of {event['window']:,} tokens ({share:.0%})"
    if kind == "offloaded":
        return f"[{step}] offloaded {event['tool']} result ({event['tokens']:,} tokens) to {event['path']}"
    if kind == "aged":
        return f"[{step}] aged out {event['tool']} result to a pointer: {event['path']}"
    if kind == "summarized":
        return f"[{step}] summarized {event['messages_folded']} messages into {event['transcript_path']}"
    if kind == "subagent_started":
        return f"[{step}] subagent {event['agent']} started: {event['task_id']}"
    if kind == "subagent_finished":
        return f"[{step}] subagent {event['agent']} {event['status']} in {event['seconds']:.2f} s"
    if kind == "run_started":
        return f"[{step}] run started on {event['model']}: {event['input'][:60]!r}"
    if kind == "run_finished":
        return (f"[{step}] run {event['status']}: {event['model_calls']} model calls, "
                f"{event['tokens_in']:,} tokens in, {event['seconds']:.2f} s")
    if kind == "memory_loaded":
        return f"[{step}] memory loaded: {event['path']} ({event['tokens']} tokens)"
    return f"[{step}] {kind}: {event.get('message', '')}"


if __name__ == "__main__":
    main()
