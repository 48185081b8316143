"""Replaying the quickstart notebook strictly from its research log: how long it takes.

A fresh copy of `notebooks/` (no conversations kept, as in a fresh clone) runs headless with
`jupyter-deepagent run --replay strict`, `--repeat` times (3). Printed per agent cell: the
cell's wall time as the runner sees it, and the harness time of the run as its answer's output
metadata holds it (`run_finished.seconds`: the agent loop, middleware and tools, with every model
answer served from the log; a strict replay writes nothing to the log); then the whole headless run (kernel start, every cell, shutdown). The fastest
repetition is shown.

    python bench/replay.py
    python bench/replay.py --repeat 5
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import nbformat

from jupyter_deepagent.cli.headless import run_notebook

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"


def _once() -> tuple[float, list[tuple[str, float, float, str]]]:
    with tempfile.TemporaryDirectory() as folder:
        copy = Path(folder) / "notebooks"
        shutil.copytree(NOTEBOOKS, copy, ignore=shutil.ignore_patterns(".deepagent"))
        notebook, executed = copy / "quickstart.ipynb", copy / "executed.ipynb"
        started = time.perf_counter()
        report = run_notebook(notebook, replay="strict", output=executed, progress=False)
        whole = time.perf_counter() - started
        if report.exit_code:
            sys.exit(f"the strict replay failed: {report.error}")
        runs = [
            output["metadata"]["jupyter_deepagent"]["run"]
            for cell in nbformat.read(executed, as_version=4).cells
            for output in cell.get("outputs", [])
            if "run" in output.get("metadata", {}).get("jupyter_deepagent", {})
        ]
        rows = [
            (cell.title[:48], cell.seconds, float(run.get("seconds") or 0), cell.outcome)
            for cell, run in zip(report.cells, runs, strict=True)
        ]
    return whole, rows


def main() -> None:
    """Run the benchmark and print its table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    results = [_once() for _ in range(args.repeat)]
    whole, rows = min(results, key=lambda result: result[0])
    print(f"{'agent cell':<50} {'outcome':<9} {'cell s':>7} {'harness s':>9}")
    for title, seconds, harness, outcome in rows:
        print(f"{title:<50} {outcome:<9} {seconds:>7.2f} {harness:>9.2f}")
    print(f"whole headless strict replay: {whole:.1f} s (best of {args.repeat}; all: "
          f"{', '.join(f'{w:.1f}' for w, _ in results)})")


if __name__ == "__main__":
    main()
