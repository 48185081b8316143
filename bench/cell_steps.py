"""A long `%%agent` cell against the Python API: CPU per step, and the research log's size.

The run of `bench/long_run.py`, shortened to 100, 200 and 400 tool steps: a scripted model (no
network) asks for one source per step (~20,000-character notes, every tenth a ~120,000-character
table, made by `long_run.source_text`), then answers. The same script runs two ways, each in its
own process:

- **cell**: an in-process IPython shell with the extension loaded, on a notebook in a scratch
  folder, runs `%%agent` with the source function offered as a notebook tool (`tools=`). This is
  the whole cell: the magic, the run's events and displays, the inspector, the `/notebook/`
  files, the conversation's checkpoints (SQLite), fingerprints and the research log's record.
- **api**: `create_research_agent(model, tools=[fetch_source]).invoke(...)`, as docs/python-api.md's
  Python API section shows (in-memory state, no checkpointer).

CPU per step is the process's CPU time over the run, minus the scripted model's own (its replies,
and in the cell the streaming of each reply word by word, which a real provider does on its
side) and the tool's, divided by the model calls; a one-step run first pays for the imports. The log's size is
what the cell's run appended to `<notebook>.agentlog.jsonl`.

    python bench/cell_steps.py                 # 100, 200, 400 steps
    python bench/cell_steps.py --steps 50 100 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from long_run import SUMMARY, source_text  # the same sources as the long run

STEPS = (100, 200, 400)
ASK = "Read every source, then report."
PROMPT = "You survey glacier research sources one by one."


def _model(steps: int, clock: dict[str, float]) -> Any:
    """A scripted model that times its own replies (left out of the harness's CPU)."""
    from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
    from jupyter_deepagent.harness.models.scripted_model import ScriptedChatModel

    class BenchModel(ScriptedChatModel):
        def _reply(self, messages: Any, kwargs: Any) -> Any:
            try:
                return super()._reply(messages, kwargs)
            finally:
                self._requests.clear()  # the record of requests is the model's, not the run's
                clock["calls"] += 1

        def _generate(self, *args: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return super()._generate(*args, **kwargs)
            finally:
                clock["model"] += time.process_time() - started

        def _stream(self, *args: Any, **kwargs: Any) -> Any:
            chunks = super()._stream(*args, **kwargs)
            while True:  # the model's own time: making each chunk, not what is done with it
                started = time.process_time()
                try:
                    chunk = next(chunks)
                except StopIteration:
                    return
                finally:
                    clock["model"] += time.process_time() - started
                yield chunk

    script: list[Any] = [
        {"tool_calls": [{"name": "fetch_source", "args": {"number": n}}]} for n in range(steps)
    ]
    script.append("All sources read; the report is in /report.md.")
    return BenchModel(
        script=script,
        rules=[{"when": SUMMARY_MARKER, "reply": SUMMARY, "repeat": True}],
        profile={"max_input_tokens": 1_000_000},
        name="bench",
    )


def _fetcher(sources: list[str], clock: dict[str, float]) -> Any:
    def fetch_source(number: int) -> str:
        """Fetch research source `number` (notes or a data table)."""
        started = time.process_time()
        text = sources[number]
        clock["tools"] += time.process_time() - started
        return text

    return fetch_source


def _api(steps: int) -> dict[str, Any]:
    from langchain_core.tools import tool

    from jupyter_deepagent import create_research_agent

    sources = [source_text(step) for step in range(steps)]
    for warm in (1, steps):
        clock = {"model": 0.0, "tools": 0.0, "calls": 0.0}
        fetch = tool(_fetcher(sources, clock))
        agent = create_research_agent(_model(warm, clock), tools=[fetch], system_prompt=PROMPT)
        started = time.process_time()
        agent.invoke(
            {"messages": [{"role": "user", "content": ASK}]}, {"recursion_limit": 10 * warm + 50}
        )
        cpu = time.process_time() - started
    return _figures(cpu, clock, log_bytes=0)


def _cell(steps: int, profile: str | None) -> dict[str, Any]:
    from collections import defaultdict

    from IPython.core.interactiveshell import InteractiveShell
    from IPython.utils.capture import capture_output
    from traitlets.config import Config

    from jupyter_deepagent.jupyter.magic.magics import get_session
    from jupyter_deepagent.trace.research_log.log import log_path_for

    folder = Path(tempfile.mkdtemp(prefix="cell-steps-"))
    os.chdir(folder)
    os.environ["IPYTHONDIR"] = str(folder / ".ipython")
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        os.environ.pop(name, None)
    notebook = folder / "bench.ipynb"
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.history_manager.outputs = defaultdict(list)
    shell.user_ns["__session__"] = str(notebook)
    shell.run_line_magic("load_ext", "jupyter_deepagent")
    sources = [source_text(step) for step in range(steps)]
    log = log_path_for(notebook)
    for warm in (1, steps):
        clock = {"model": 0.0, "tools": 0.0, "calls": 0.0}
        shell.user_ns["fetch_source"] = _fetcher(sources, clock)
        get_session(shell).configure(
            model=_model(warm, clock), tools=["fetch_source"], system_prompt=PROMPT
        )
        before = log.stat().st_size if log.exists() else 0
        source = f"%%agent -t run-{warm}\n{ASK}"
        profiler = None
        if profile and warm == steps:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        started = time.process_time()
        with capture_output():
            result = shell.run_cell(source, store_history=True)
        cpu = time.process_time() - started
        if profiler is not None:
            profiler.disable()
            profiler.dump_stats(profile)
        error = result.error_in_exec or result.error_before_exec
        if error is not None:
            raise SystemExit(f"the {warm}-step cell failed: {error!r}")
    return _figures(cpu, clock, log_bytes=log.stat().st_size - before)


def _figures(cpu: float, clock: dict[str, float], log_bytes: int) -> dict[str, Any]:
    calls = max(1, int(clock["calls"]))
    harness = cpu - clock["model"] - clock["tools"]
    return {
        "ms_per_step": 1000 * harness / calls,
        "calls": calls,
        "cpu_s": cpu,
        "log_mb": log_bytes / 1e6,
    }


def _child(way: str, steps: int, repeat: int) -> dict[str, Any]:
    runs = []
    for _ in range(repeat):
        command = [sys.executable, __file__, "--child", way, "--steps", str(steps)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"[{way}, {steps} steps] failed:\n{done.stderr[-3000:]}")
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    return min(runs, key=lambda run: run["ms_per_step"])


def main(argv: list[str] | None = None) -> int:
    """Run each configuration in its own process and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, nargs="+", default=list(STEPS))
    parser.add_argument("--repeat", type=int, default=1, help="runs each; the fastest is shown")
    parser.add_argument("--child", choices=("cell", "api"), help=argparse.SUPPRESS)
    parser.add_argument(
        "--profile", metavar="FILE", help="with --child cell: cProfile the measured cell into FILE"
    )
    args = parser.parse_args(argv)
    if args.child:
        steps = args.steps[0]
        result = _cell(steps, args.profile) if args.child == "cell" else _api(steps)
        print(json.dumps(result))
        return 0
    print(
        f"{'steps':>6} {'cell ms/step':>13} {'API ms/step':>12} {'ratio':>6} "
        f"{'log MB':>7} {'cell CPU s':>11}"
    )
    sizes = []
    for steps in args.steps:
        cell, api = _child("cell", steps, args.repeat), _child("api", steps, args.repeat)
        sizes.append(cell["log_mb"])
        print(
            f"{steps:>6} {cell['ms_per_step']:>13.1f} {api['ms_per_step']:>12.1f} "
            f"{cell['ms_per_step'] / api['ms_per_step']:>6.2f} {cell['log_mb']:>7.2f} "
            f"{cell['cpu_s']:>11.1f}",
            flush=True,
        )
    for index in range(1, len(sizes)):
        before, after = args.steps[index - 1], args.steps[index]
        print(f"log size, {after} steps / {before} steps: {sizes[index] / sizes[index - 1]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
