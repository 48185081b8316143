"""Harness CPU per model call, against the floor: a bare `create_agent` on the same run.

The long scripted research of `bench/long_run.py` (200 tool steps, ~6 MB of tool output) is played,
in ONE process, through:

- `floor`: `langchain.agents.create_agent` with the same model class and tool, no middleware;
- `middleware`: the floor with one middleware that only passes each model and tool call on:
  what LangChain's own machinery costs any agent with a middleware (the span it opens around
  each hook, the request copies), before the middleware does anything;
- `ours`: `create_research_agent`;
- `deepagents`: `deepagents.create_deep_agent`, when installed (`pip install -e '.[bench]'`).

Harness CPU is the process's CPU time during `invoke` minus the model's and the tools' own (each
timed on the thread it runs on), per model call (summarization requests included in the model's
share). The scripted model's own work grows with what it is sent (it counts every request's tokens
and keys each conversation), and the bare agent sends every result whole: all of that runs inside
the model's `_generate`, which is timed as the model's share, so the floor is the bare agent's
harness CPU, not its tokens. Each harness runs `--repeat` times, interleaved (floor, middleware,
ours, deepagents, floor, ...): the fastest run of each is shown with its ratio to the fastest floor, and
the median of each round's ratio to that round's floor run. Each run's texts end differently, so
no run is measured with token counts another run left remembered.

    python bench/harness_cpu.py                    # 128k window, 5 runs each
    python bench/harness_cpu.py --window 1000000 --repeat 3
    python bench/harness_cpu.py --profile ours     # one run under cProfile, top functions
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import itertools
import pstats
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from long_run import STEPS, fetch_source_tool, source_text  # the bench folder, on sys.path

WINDOW = 128_000
PROMPT = "You survey glacier research sources one by one."
SUMMARY = (
    "## Session intent\nSurvey the sources.\n## Done and found\nRead sources so far.\n"
    "## Next steps\nRead the next source."
)
HARNESSES = ("floor", "middleware", "ours", "deepagents")
_RUN_NUMBERS = itertools.count(1)


@dataclass
class Run:
    """One run's figures: CPU seconds in all, the model's and the tools' share, model calls."""

    harness: str
    cpu: float
    model: float
    tools: float
    binding: float
    calls: int
    summaries: int
    tools_bound: int

    @property
    def ms_per_call(self) -> float:
        """Harness CPU per agent model call, in milliseconds."""
        return 1000 * (self.cpu - self.model - self.tools) / max(1, self.calls)

    @property
    def binding_ms(self) -> float:
        """Of that, the model class converting the bound tools' schemas (LangChain's
        `create_agent` binds the tools again at every call), per call."""
        return 1000 * self.binding / max(1, self.calls)


def _bench_model(window: int, steps: int, clock: dict[str, float], counts: dict[str, int]) -> Any:
    """A scripted model playing one fetch per step; its own CPU time goes to `clock["model"]`."""
    from langchain_core.messages import AIMessage
    from langchain_core.outputs import ChatGeneration, ChatResult

    from jupyter_deepagent.harness.compression.tokens import messages_tokens, tools_tokens
    from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel

    class BenchModel(ScriptedChatModel):
        """Plays the script; counts every request; answers summarization requests."""

        def _generate(  # type: ignore[override]
            self, messages, stop=None, run_manager=None, **kwargs
        ):
            started = time.thread_time()
            tools = kwargs.get("tools") or []
            messages_tokens(messages) + tools_tokens(tools)  # the work long_run.py's model does
            if not tools:  # only summarization requests come without tools
                counts["summaries"] += 1
                result = ChatResult(generations=[ChatGeneration(message=AIMessage(SUMMARY))])
            else:
                counts["calls"] += 1
                result = super()._generate(messages, stop, run_manager, **kwargs)
                self._requests.clear()
            clock["model"] += time.thread_time() - started
            return result

        def bind_tools(self, tools, **kwargs):  # type: ignore[no-untyped-def]
            started = time.thread_time()
            bound = super().bind_tools(tools, **kwargs)
            clock["binding"] += time.thread_time() - started
            counts["tools_bound"] = len(tools)
            return bound

    script: list[Any] = [
        {"tool_calls": [{"name": "fetch_source", "args": {"number": number}}]}
        for number in range(steps)
    ]
    script.append("All sources read; the report is in /report.md.")
    return BenchModel(script=script, profile={"max_input_tokens": window})


def _agent(harness: str, model: Any, tool: Any) -> Any:
    if harness in ("floor", "middleware"):
        from langchain.agents import create_agent

        middleware = [_passing_middleware()] if harness == "middleware" else []
        return create_agent(model, tools=[tool], system_prompt=PROMPT, middleware=middleware)
    if harness == "ours":
        from jupyter_deepagent import create_research_agent

        return create_research_agent(model, tools=[tool], system_prompt=PROMPT)
    from deepagents import create_deep_agent

    return create_deep_agent(model=model, tools=[tool], system_prompt=PROMPT)


def _passing_middleware() -> Any:
    """A middleware whose model and tool hooks only pass the call on."""
    from langchain.agents.middleware import AgentMiddleware

    class PassingMiddleware(AgentMiddleware):  # type: ignore[type-arg]
        def wrap_model_call(self, request, handler):  # type: ignore[no-untyped-def]
            return handler(request)

        def wrap_tool_call(self, request, handler):  # type: ignore[no-untyped-def]
            return handler(request)

    return PassingMiddleware()


def run_once(
    harness: str, window: int, steps: int, profiler: cProfile.Profile | None = None
) -> Run:
    """Build `harness`'s agent and play the run once; the figures of that run."""

    # each run's sources end differently, so no run finds another's texts counted already
    run = next(_RUN_NUMBERS)
    sources = [f"{source_text(step)}\n(fetched for run {run})" for step in range(steps)]
    clock = {"model": 0.0, "tools": 0.0, "binding": 0.0}
    counts = {"calls": 0, "summaries": 0, "tools_bound": 0}

    fetch_source = fetch_source_tool(sources, clock)
    agent = _agent(harness, _bench_model(window, steps, clock, counts), fetch_source)
    gc.collect()
    started = time.process_time()
    if profiler is not None:
        profiler.enable()
    agent.invoke(
        {"messages": [{"role": "user", "content": "Read every source, then report."}]},
        {"recursion_limit": 10 * steps + 50},
    )
    if profiler is not None:
        profiler.disable()
    cpu = time.process_time() - started
    return Run(
        harness,
        cpu,
        clock["model"],
        clock["tools"],
        clock["binding"],
        counts["calls"],
        counts["summaries"],
        counts["tools_bound"],
    )


def _installed(harness: str) -> bool:
    if harness != "deepagents":
        return True
    try:
        import deepagents  # noqa: F401
    except ImportError:
        return False
    return True


def report(runs: list[Run], window: int, steps: int) -> str:
    """The table: best harness ms per call of each harness and its ratio to the floor."""
    best: dict[str, Run] = {}
    for run in runs:
        if run.harness not in best or run.ms_per_call < best[run.harness].ms_per_call:
            best[run.harness] = run
    floor = best["floor"].ms_per_call
    per_harness = len(runs) // max(1, len(best))
    lines = [
        f"Harness CPU per model call: {steps} tool steps, window {window:,} tokens, best of "
        f"{per_harness} interleaved runs in one process.",
        "",
        f"  {'harness':<12}{'tools':>6}{'model calls':>12}{'summaries':>10}{'ms per call':>12}"
        f"{'x floor':>9}{'median x':>10}{'binding tools':>15}   all runs (ms)",
    ]
    floors = [r.ms_per_call for r in runs if r.harness == "floor"]
    for harness, run in best.items():
        mine = [r.ms_per_call for r in runs if r.harness == harness]
        rounds = statistics.median(m / f for m, f in zip(mine, floors, strict=True))
        every = ", ".join(f"{ms:.2f}" for ms in mine)
        lines.append(
            f"  {harness:<12}{run.tools_bound:>6}{run.calls:>12,}{run.summaries:>10,}"
            f"{run.ms_per_call:>12.2f}{run.ms_per_call / floor:>8.2f}x{rounds:>9.2f}x"
            f"{run.binding_ms:>15.2f}   {every}"
        )
    lines.append("")
    lines.append(
        "  ms per call: process CPU minus the model's and the tools' own (each timed on its own thread); x floor: the fastest "
        "run over the fastest floor; median x: the median, over the rounds, of each run over the "
        "floor run of its round (this machine's speed drifts during a run); binding tools: the "
        "part of it spent converting the bound tool schemas, which grows with the number of tools; "
        "middleware: the floor with one middleware that only passes each call on (LangChain's "
        "cost of any middleware)."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the table (or, with `--profile`, one profiled run)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--window", type=int, default=WINDOW)
    parser.add_argument("--repeat", type=int, default=5, help="runs per harness; the fastest shown")
    parser.add_argument("--only", nargs="+", choices=HARNESSES, help="run only these harnesses")
    parser.add_argument("--profile", choices=HARNESSES, help="profile one run of this harness")
    parser.add_argument("--top", type=int, default=40, help="functions shown with --profile")
    args = parser.parse_args(argv)
    if args.profile:
        run_once(args.profile, args.window, args.steps)  # warm: imports, first-call caches
        profiler = cProfile.Profile()
        run = run_once(args.profile, args.window, args.steps, profiler)
        print(f"{args.profile}: {run.ms_per_call:.2f} ms per call (under the profiler)")
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.top)
        pstats.Stats(profiler).sort_stats("tottime").print_stats(args.top)
        return 0
    harnesses = [h for h in (args.only or HARNESSES) if _installed(h)]
    if "floor" not in harnesses:
        harnesses.insert(0, "floor")
    for harness in harnesses:  # warm: imports and first-call caches stay out of the figures
        run_once(harness, args.window, min(args.steps, 5))
    runs = [
        run_once(harness, args.window, args.steps)
        for _ in range(args.repeat)
        for harness in harnesses
    ]
    print(report(runs, args.window, args.steps))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
