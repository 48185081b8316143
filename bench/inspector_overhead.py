"""What the live inspector costs a run: a 200-step scripted run with and without it attached.

A scripted model (no network) asks for one ~4,000-character note per step, 200 steps, then
answers. Each round runs it through `trace_run` four times, in rotating order: alone; with a
collapsed `Inspector` taking every event (`on_event`, re-rendering at most ten times a second, as
under an `%%agent` cell, then rendering everything at the end); with an open one; and alone again,
to show the noise between two identical runs. The fastest run of each kind is compared by the
process's CPU time (the renders run in the run's own thread, so they count; other work on a shared
machine disturbs CPU time less than wall-clock time). The CPU time spent inside the inspector's
callbacks is also measured directly: that figure is the cost itself, free of run-to-run noise.

    python bench/inspector_overhead.py              # 200 steps, 5 rounds
    python bench/inspector_overhead.py --steps 50 --rounds 3
"""

from __future__ import annotations

import argparse
import time
from typing import Any

NOTE = "\n".join(f"line {i:03d}: " + "measurement " * 6 for i in range(50))


def run_once(steps: int, inspector: str) -> tuple[float, int, int, float]:
    """CPU seconds for one run, events seen, live renders made (0 without the inspector), and
    CPU seconds spent inside the inspector."""
    from langchain.tools import tool

    from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

    @tool
    def note(index: int) -> str:
        """Return research note number `index`."""
        return f"# Note {index}\n{NOTE}"

    script: list[Any] = [{"tool_calls": [{"name": "note", "args": {"index": i}}]}
                         for i in range(steps)]
    model = ScriptedChatModel(script=[*script, "done"], profile={"max_input_tokens": 1_000_000})
    agent = create_research_agent(model, tools=[note])
    renders = [0]
    on_event = None
    widget = None
    inside = [0.0]  # CPU time spent in the inspector itself
    if inspector != "none":
        widget = Inspector(expanded=inspector == "open")
        widget._summary.observe(lambda _: renders.__setitem__(0, renders[0] + 1), "value")

        def on_event(event: dict[str, Any]) -> None:
            entered = time.process_time()
            widget.on_event(event)
            inside[0] += time.process_time() - entered

    started = time.process_time()
    trace = trace_run(agent, {"messages": [{"role": "user", "content": "read every note"}]},
                      config={"recursion_limit": 4 * steps + 10}, on_event=on_event)
    if widget is not None:
        entered = time.process_time()
        widget.render()
        inside[0] += time.process_time() - entered
    seconds = time.process_time() - started
    return seconds, len(trace.events), renders[0], inside[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    run_once(5, "open")  # imports and first-call costs out of the way
    kinds = ("none", "collapsed", "open", "none again")
    best: dict[str, tuple[float, int, int, float]] = {}
    for round_ in range(args.rounds):
        for kind in kinds[round_ % 4:] + kinds[: round_ % 4]:
            result = run_once(args.steps, kind.removesuffix(" again"))
            if kind not in best or result[0] < best[kind][0]:
                best[kind] = result
    plain, events, _, _ = best["none"]
    print(f"{args.steps} steps, {events} events, best of {args.rounds} runs each (CPU time)")
    print(f"  without the inspector: {plain:.2f} s")
    again = best["none again"][0]
    print(f"  without the inspector, again: {again:.2f} s ({(again - plain) / plain:+.1%}: the "
          "noise between two identical runs)")
    overhead = 0.0
    for kind in ("collapsed", "open"):
        seconds, _, renders, inside = best[kind]
        share = inside / plain
        overhead = max(overhead, share)
        print(f"  with the live inspector, {kind}: {seconds:.2f} s ({(seconds - plain) / plain:+.1%}"
              f" end to end); {inside * 1000:.0f} ms inside the inspector ({share:.1%} of the run)"
              f" for {renders} renders, {inside / renders * 1000:.2f} ms each")
    print(f"  worst inspector share: {overhead:.1%} (the bar: under 10%; the end-to-end figures "
          "also carry the machine's noise)")
    return 0 if overhead < 0.10 else 1


if __name__ == "__main__":
    raise SystemExit(main())
