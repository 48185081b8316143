"""The first `%%agent` cell of a fresh kernel: how long `%load_ext` and the first answer take.

Each run starts a fresh ipykernel (jupyter_client, as the tests do) in a scratch folder holding a
notebook and a one-reply script, with the state folder (`JUPYTER_DEEPAGENT_STATE_DIR`) and
IPython's files in that scratch folder too. In it the bench times, from the request sent to the
kernel being idle again, a `%load_ext jupyter_deepagent` cell (after one empty cell, so the
kernel's own first-cell costs are not counted), then waits `--wait` seconds, as a user reading
the notebook would, and times an `%%agent -m scripted:...` cell until its answer is shown in full
(the rendered answer, not the live progress line), and until the cell is done (the inspector
shown). Each wait runs `--runs` times (5) in fresh kernels; the bench prints the median, min
and max.

Python reads its modules from a bytecode cache, as from an installed package: the kernels share
one cache folder (`PYTHONPYCACHEPREFIX`) in a scratch folder, filled by a first, uncounted run.

    python bench/first_cell.py                      # waits of 3 s and 0 s, five runs each
    python bench/first_cell.py --runs 3 --wait 3 1 0
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jupyter_client.manager import start_new_kernel

ANSWER = "The first cell answered."
SCRIPT = f"profile: {{max_input_tokens: 100000}}\nscript:\n  - {ANSWER}\n"
AGENT_CELL = "%%agent -m scripted:hello.yaml\nSay something."


@dataclass(frozen=True)
class Timing:
    """One fresh kernel's figures, in seconds."""

    load_ext: float
    answer: float
    cell: float


def _notebook(path: Path) -> None:
    """A notebook with the bench's cells, so the kernel finds the notebook it runs."""
    cells = ["pass", "%load_ext jupyter_deepagent", AGENT_CELL]
    path.write_text(
        json.dumps(
            {
                "cells": [
                    {
                        "cell_type": "code",
                        "execution_count": None,
                        "id": f"cell-{n}",
                        "metadata": {},
                        "outputs": [],
                        "source": source,
                    }
                    for n, source in enumerate(cells)
                ],
                "metadata": {},
                "nbformat": 4,
                "nbformat_minor": 5,
            }
        )
    )


def _run_cell(client: Any, code: str, answer: str | None = None) -> tuple[float, float]:
    """Run `code`; seconds until `answer` was shown in full (else until done), and until done.

    Raises:
        RuntimeError: The cell raised, or the kernel said nothing for 120 s.
    """
    start = time.perf_counter()
    msg_id = client.execute(code)
    shown: float | None = None
    while True:
        try:
            message = client.get_iopub_msg(timeout=120)
        except queue.Empty:
            msg = f"no output for 120 s from {code!r}"
            raise RuntimeError(msg) from None
        if message["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = message["msg_type"], message["content"]
        if kind == "error":
            msg = f"{code!r} raised {content['ename']}: {content['evalue']}"
            raise RuntimeError(msg)
        data = content.get("data", {}) if isinstance(content, dict) else {}
        if shown is None and answer is not None and data.get("text/plain") == answer:
            shown = time.perf_counter() - start
        if kind == "status" and content["execution_state"] == "idle":
            done = time.perf_counter() - start
            if answer is not None and shown is None:
                msg = f"{code!r} finished without showing {answer!r}"
                raise RuntimeError(msg)
            return (shown if shown is not None else done), done


def first_cell(wait: float, pycache: Path) -> Timing:
    """Time `%load_ext` and the first `%%agent` cell, `wait` seconds later, in a fresh kernel
    whose bytecode cache is `pycache`."""
    with tempfile.TemporaryDirectory(prefix="first-cell-") as scratch:
        root = Path(scratch)
        folder = root / "notebooks"
        folder.mkdir()
        (folder / "hello.yaml").write_text(SCRIPT)
        notebook = folder / "first.ipynb"
        _notebook(notebook)
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "PYTHONPYCACHEPREFIX": str(pycache),
            "IPYTHONDIR": str(root / "ipython"),
            "JUPYTER_DEEPAGENT_STATE_DIR": str(root / "state"),
            "JPY_SESSION_NAME": str(notebook),
            "PYDEVD_DISABLE_FILE_VALIDATION": "1",
        }
        manager, client = start_new_kernel(kernel_name="python3", cwd=str(folder), env=env)
        try:
            _run_cell(client, "pass")
            load_ext, _ = _run_cell(client, "%load_ext jupyter_deepagent")
            time.sleep(wait)
            answer, cell = _run_cell(client, AGENT_CELL, ANSWER)
        finally:
            client.stop_channels()
            manager.shutdown_kernel(now=True)
    return Timing(load_ext, answer, cell)


def _figures(values: list[float]) -> str:
    return f"{statistics.median(values):6.3f} s  (min {min(values):.3f}, max {max(values):.3f})"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh kernels per wait (5)")
    parser.add_argument(
        "--wait",
        type=float,
        nargs="+",
        default=[3.0, 0.0],
        help="seconds between %%load_ext and the first %%agent cell (3 0)",
    )
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, {args.runs} fresh kernels per wait")
    with tempfile.TemporaryDirectory(prefix="first-cell-pycache-") as pycache:
        first_cell(0.0, Path(pycache))  # fills the bytecode cache
        for wait in args.wait:
            timings = [first_cell(wait, Path(pycache)) for _ in range(args.runs)]
            print(f"\nfirst %%agent {wait:g} s after %load_ext")
            print(f"  %load_ext             {_figures([t.load_ext for t in timings])}")
            print(f"  first answer shown    {_figures([t.answer for t in timings])}")
            print(f"  first cell done       {_figures([t.cell for t in timings])}")


if __name__ == "__main__":
    main()
