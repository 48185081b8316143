"""A long scripted research run: tokens the harness sends, time it takes, memory it holds.

200 tool steps produce about 6 MB of tool output: mostly ~20,000-character notes, and every tenth
step a ~120,000-character CSV table. A scripted model (no network) asks for one source per step
and answers summarization requests with a fixed summary. Every request the model receives is
counted with the same token counter, for this project's agent and, when the `deepagents` package
is installed (`pip install -e '.[bench]'`), for `deepagents.create_deep_agent` on the same run.

    python bench/long_run.py                     # both windows, both harnesses
    python bench/long_run.py --windows 128000 --steps 50

Each configuration runs in its own process, so peak memory is that run's own.
Harness time is the process's CPU time minus the model's and the tools' own, per model call (CPU
time, so other work on a shared machine disturbs it less); each configuration runs `--repeat`
times (3) and the fastest is shown.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

STEPS = 200
WINDOWS = (1_000_000, 128_000)
NOTE_CHARS = 20_000
TABLE_CHARS = 120_000
SUMMARY = (
    "## Session intent\nSurvey the sources.\n## Done and found\nRead sources so far.\n"
    "## Artifacts\nSee /large_tool_results/.\n## Next steps\nRead the next source."
)
WORDS = (
    "glacier melt albedo runoff basin sediment isotope permafrost moraine calving flux "
    "ablation firn crevasse discharge model forcing anomaly trend station record"
).split()


def source_text(step: int) -> str:
    """The tool output of one step: a ~20k-character note, or every tenth step a ~120k table."""
    rng = random.Random(step)
    if step % 10 == 9:
        rows = ["station,year,month,mass_balance_mm,runoff_m3s,temperature_c,notes"]
        size = len(rows[0])
        while size < TABLE_CHARS:
            rows.append(
                f"S{rng.randint(1, 400):03d},{rng.randint(1950, 2024)},{rng.randint(1, 12)},"
                f"{rng.uniform(-3000, 800):.1f},{rng.uniform(0, 900):.2f},"
                f"{rng.uniform(-30, 15):.2f},{' '.join(rng.choices(WORDS, k=4))}"
            )
            size += len(rows[-1]) + 1
        return "\n".join(rows)[:TABLE_CHARS]
    lines = [f"# Source {step}: field notes", ""]
    size = sum(len(line) + 1 for line in lines)
    while size < NOTE_CHARS:
        lines.append(" ".join(rng.choices(WORDS, k=14)) + ".")
        size += len(lines[-1]) + 1
    return "\n".join(lines)[:NOTE_CHARS]


# -- one configuration, in a child process ------------------------------------------------------
def run_one(harness: str, window: int, steps: int) -> dict[str, Any]:
    """Run the scripted research once and return its measurements."""
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool

    from jupyter_deepagent.harness.compression.tokens import messages_tokens, tools_tokens
    from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel

    baseline_rss = _peak_rss_mb()
    sources = [source_text(step) for step in range(steps)]
    clock = {"model": 0.0, "tools": 0.0}
    agent_calls: list[int] = []
    summary_calls: list[int] = []

    class BenchModel(ScriptedChatModel):
        """Plays the script; counts and times every request; answers summarization requests."""

        def _generate(  # type: ignore[override]
            self, messages, stop=None, run_manager=None, **kwargs
        ):
            started = time.process_time()
            tools = kwargs.get("tools") or []
            tokens = messages_tokens(messages) + tools_tokens(tools)
            if not tools:  # only summarization requests come without tools
                summary_calls.append(tokens)
                result = ChatResult(generations=[ChatGeneration(message=_ai(SUMMARY))])
            else:
                agent_calls.append(tokens)
                result = super()._generate(messages, stop, run_manager, **kwargs)
                self._requests.clear()  # keep the record from inflating the memory figure
            clock["model"] += time.process_time() - started
            return result

    @tool
    def fetch_source(number: int) -> str:
        """Fetch research source `number` (notes or a data table)."""
        started = time.process_time()
        text = sources[number]
        clock["tools"] += time.process_time() - started
        return text

    script: list[Any] = [
        {"tool_calls": [{"name": "fetch_source", "args": {"number": number}}]}
        for number in range(steps)
    ]
    script.append("All sources read; the report is in /report.md.")
    model = BenchModel(script=script, profile={"max_input_tokens": window})
    prompt = "You survey glacier research sources one by one."
    if harness == "ours":
        from jupyter_deepagent import create_research_agent

        agent = create_research_agent(model, tools=[fetch_source], system_prompt=prompt)
    else:
        from deepagents import create_deep_agent

        agent = create_deep_agent(model=model, tools=[fetch_source], system_prompt=prompt)
    started = time.process_time()
    agent.invoke(
        {"messages": [{"role": "user", "content": "Read every source, then report."}]},
        {"recursion_limit": 10 * steps + 50},
    )
    cpu = time.process_time() - started
    harness_seconds = cpu - clock["model"] - clock["tools"]
    return {
        "harness": harness,
        "window": window,
        "steps": steps,
        "tool_output_mb": sum(len(s) for s in sources) / 1e6,
        "model_calls": len(agent_calls),
        "peak_tokens": max(agent_calls),
        "total_input_tokens": sum(agent_calls),
        "summaries": summary_calls,
        "harness_ms_per_step": 1000 * harness_seconds / max(1, len(agent_calls)),
        "cpu_seconds": cpu,
        "peak_rss_mb": _peak_rss_mb(),
        "baseline_rss_mb": baseline_rss,
    }


def _ai(text: str) -> Any:
    from langchain_core.messages import AIMessage

    return AIMessage(content=text)


def _peak_rss_mb() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


# -- the parent: run each configuration in a child, print the table -----------------------------
def _child(harness: str, window: int, steps: int, repeat: int) -> dict[str, Any] | None:
    """Run one configuration `repeat` times, each in a fresh process; keep the fastest run's
    harness time (the other figures are the same every time)."""
    runs = []
    for _ in range(repeat):
        command = [sys.executable, __file__, "--child", harness, "--windows", str(window),
                   "--steps", str(steps)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"[{harness} at {window:,}] failed:\n{done.stderr[-3000:]}", file=sys.stderr)
            return None
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    best = min(runs, key=lambda run: run["harness_ms_per_step"])
    best["peak_rss_mb"] = max(run["peak_rss_mb"] for run in runs)
    return best


def _deepagents_version() -> str | None:
    try:
        from importlib.metadata import version

        import deepagents  # noqa: F401
    except ImportError:
        return None
    return version("deepagents")


def _row(label: str, ours: Any, theirs: Any, fmt: str, ratio: bool = True) -> str:
    left = format(ours, fmt) if isinstance(ours, (int, float)) else str(ours)
    if theirs is None:
        return f"  {label:<34}{left:>20}"
    right = format(theirs, fmt) if isinstance(theirs, (int, float)) else str(theirs)
    times = ""
    if ratio and isinstance(ours, (int, float)) and isinstance(theirs, (int, float)) and ours:
        times = f"{theirs / ours:>10.1f}x"
    return f"  {label:<34}{left:>20}{right:>20}{times:>12}"


def _all_tokens(run: dict[str, Any]) -> int:
    return run["total_input_tokens"] + sum(run["summaries"])


def _sizes(calls: list[int]) -> str:
    if not calls:
        return "-"
    if len(calls) <= 3:
        return ", ".join(f"{c:,}" for c in calls)
    return f"{min(calls):,} to {max(calls):,}"


def report(results: list[tuple[dict[str, Any], dict[str, Any] | None]], theirs_name: str) -> str:
    """The side-by-side table, one block per window."""
    out = []
    first = results[0][0]
    out.append(
        f"Long research run: {first['steps']} tool steps, {first['tool_output_mb']:.1f} MB of tool "
        f"output (notes of ~{NOTE_CHARS // 1000}k characters, every tenth a "
        f"~{TABLE_CHARS // 1000}k-character table). Tokens counted alike for both (chars/4)."
    )
    for ours, theirs in results:
        out.append("")
        head = f"window {ours['window']:,} tokens"
        if theirs is None:
            out.append(f"  {head:<34}{'jupyter_deepagent':>20}")
        else:
            out.append(f"  {head:<34}{'jupyter_deepagent':>20}{theirs_name:>20}{'them/us':>12}")
        t = theirs or {}
        get = (lambda key: t.get(key)) if theirs else (lambda key: None)
        out.append(_row("model calls", ours["model_calls"], get("model_calls"), ",", False))
        out.append(_row("peak tokens in one call", ours["peak_tokens"], get("peak_tokens"), ","))
        out.append(_row("  as a share of the window", f"{ours['peak_tokens'] / ours['window']:.0%}",
                        f"{t['peak_tokens'] / t['window']:.0%}" if theirs else None, "", False))
        out.append(_row("total input tokens, agent requests", ours["total_input_tokens"],
                        get("total_input_tokens"), ","))
        out.append(_row("  with summarization requests", _all_tokens(ours),
                        _all_tokens(t) if theirs else None, ","))
        out.append(_row("summarization requests", len(ours["summaries"]),
                        len(t["summaries"]) if theirs else None, ",", False))
        out.append(_row("  their sizes (tokens)", _sizes(ours["summaries"]),
                        _sizes(t["summaries"]) if theirs else None, "", False))
        out.append(_row("harness ms per model call (best)", ours["harness_ms_per_step"],
                        get("harness_ms_per_step"), ".2f"))
        out.append(_row("peak memory, MB (RSS)", ours["peak_rss_mb"], get("peak_rss_mb"), ".0f"))
        out.append(_row("  before the run, MB", ours["baseline_rss_mb"],
                        get("baseline_rss_mb"), ".0f", False))
        fits = "yes" if ours["peak_tokens"] <= ours["window"] else "NO"
        out.append(f"  peak within the window (ours): {fits}")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--windows", type=int, nargs="+", default=list(WINDOWS))
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per configuration; the fastest harness time is shown")
    parser.add_argument("--only-ours", action="store_true", help="skip deepagents")
    parser.add_argument("--child", choices=("ours", "deepagents"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(run_one(args.child, args.windows[0], args.steps)))
        return 0
    version = None if args.only_ours else _deepagents_version()
    if version is None and not args.only_ours:
        print("deepagents is not installed (pip install -e '.[bench]'): measuring ours only.\n")
    results = []
    for window in args.windows:
        ours = _child("ours", window, args.steps, args.repeat)
        if ours is None:
            return 1
        theirs = _child("deepagents", window, args.steps, args.repeat) if version else None
        results.append((ours, theirs))
    print(report(results, f"deepagents {version}" if version else ""))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    raise SystemExit(main())
