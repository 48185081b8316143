"""Time `/notebook/` calls on big notebooks, and secret masking on long words.

    python bench/notebook_fs.py [--mb 50] [--cells 2000]

Builds an IPython shell (no kernel) whose history holds the outputs, as a terminal or a
kernel started before the extension has them, and times the calls the agent makes through
`NotebookBackend`: `ls`, `read_file` (first page, a page in the middle), `grep` (literal and
regex; under the grep tool's match limit, as the agent calls it) on one cell with a big output; `grep` over a notebook of many cells, with lines that
have spaces and lines that have none; and masking alone on a 40,000-character word and a
30,000-base DNA sequence. Each figure is the best of three, the first call (which masks) shown
apart. For the big output it then measures memory: each call once more on a fresh view, under
`tracemalloc` (the most Python allocated at once during the call, the output itself not
counted as IPython holds it anyway), and the growth of the process's RSS over the whole case.
Prints tables; peak memory (RSS); then the checkpoint storage of runs writing 5, 10 and 20
files of 1 MB (`bench/checkpoint_growth.py`, each in a process of its own).
"""

from __future__ import annotations

import argparse
import random
import resource
import subprocess
import sys
import time
import tracemalloc
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from IPython.core.history import HistoryOutput  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from traitlets.config import Config  # noqa: E402

from jupyter_deepagent._exceptions import BackendError  # noqa: E402
from jupyter_deepagent.backends import limiting_matches  # noqa: E402
from jupyter_deepagent.harness.tools._format import GREP_MATCH_LIMIT  # noqa: E402
from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend  # noqa: E402
from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture  # noqa: E402
from jupyter_deepagent.project.secrets.redaction import Redactor  # noqa: E402

KEY = "AIza" + "SyBenchmarkKey0123456789abcdefghijk"  # split: no key-shaped literal


def _shell(outputs: list[str]) -> InteractiveShell:
    InteractiveShell.clear_instance()
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    history = shell.history_manager
    history.outputs = defaultdict(list)
    for count, text in enumerate(outputs, start=1):
        history.input_hist_raw.append(f"print(result_{count})")
        history.outputs[count].append(
            HistoryOutput(output_type="out_stream", bundle={"stream": [text, "\n"]})
        )
    shell.execution_count = len(outputs) + 1
    return shell


def _timed(action: Callable[[], Any], repeat: int = 3) -> tuple[float, float]:
    """(first call, best of the following calls) in seconds."""
    start = time.perf_counter()
    action()
    first = time.perf_counter() - start
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        best = min(best, time.perf_counter() - start)
    return first, best


def _row(name: str, figures: tuple[float, float]) -> None:
    first, best = figures
    print(f"| {name:<48} | {first * 1000:>10,.0f} | {best * 1000:>10,.1f} |")


def _rss_mb() -> float:
    """The process's resident memory now (Linux), else its peak so far."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * resource.getpagesize() / 2**20
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _calls(backend: NotebookBackend, middle: int) -> dict[str, Callable[[], Any]]:
    return {
        "ls /outputs/": lambda: backend.ls("/outputs/"),
        "read_file, the first 100 lines": lambda: backend.read("/outputs/01.txt", 0, 100),
        "read_file, 100 lines in the middle": lambda: backend.read("/outputs/01.txt", middle, 100),
        "grep 'glacier mass' (literal, no match)": lambda: backend.grep("glacier mass", "/"),
        "grep 'AIza' (literal, the key: no match)": lambda: backend.grep("AIza", "/outputs/"),
        "grep 'key in the m\\w+e' (regex, one match)": lambda: backend.grep(
            r"key in the m\w+e", "/", regex=True
        ),
        "grep 'st[a-z]+n' (regex, every line matches)": lambda: _limited(
            lambda: backend.grep("st[a-z]+n", "/", regex=True)
        ),
    }


def _limited(action: Callable[[], Any]) -> Any:
    """Run a grep under the grep tool's match limit (the first `GREP_MATCH_LIMIT` matches)."""
    with limiting_matches(GREP_MATCH_LIMIT):
        return action()


def big_output(megabytes: int) -> None:
    random.seed(7)
    words = ["station", "glacier", "mass", "loss", "1.25", "-0.4", "year", "value", "ok"]
    line = " ".join(random.choice(words) for _ in range(12))
    lines = [f"{i} {line}" for i in range(megabytes * 1_000_000 // (len(line) + 8))]
    lines[len(lines) // 2] = f"key in the middle: {KEY}"
    count, middle = len(lines), len(lines) // 2
    shell = _shell(["\n".join(lines)])
    del lines  # the shell's history holds the output, as IPython does
    rss_before = _rss_mb()
    backend = NotebookBackend(shell, notebook_path=None)
    print(f"\nOne cell with a {megabytes} MB output ({count:,} lines)\n")
    print(f"| {'call':<48} | {'first, ms':>10} | {'next, ms':>10} |")
    print(f"|{'-' * 50}|{'-' * 12}|{'-' * 12}|")
    for name, action in _calls(backend, middle).items():
        try:
            _row(name, _timed(action))
        except BackendError as exc:  # a regex over its time budget
            print(f"| {name:<48} | {'error':>10} | {'':>10} |  {str(exc)[:60]}")
    assert not backend.grep("AIza", "/")
    backend.capture.texts.close()
    print("\nMemory of the same calls, each first on a fresh view, then again\n")
    print(f"| {'call':<48} | {'first, MB':>10} | {'next, MB':>10} |")
    print(f"|{'-' * 50}|{'-' * 12}|{'-' * 12}|")
    fresh = NotebookBackend(shell, capture=OutputCapture(shell), notebook_path=None)
    for name, action in _calls(fresh, middle).items():
        peaks = []
        for _ in range(2):
            tracemalloc.start()
            try:
                action()
            except BackendError:
                pass
            peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
            tracemalloc.stop()
        print(f"| {name:<48} | {peaks[0]:>10,.1f} | {peaks[1]:>10,.1f} |")
    folder = fresh.capture.texts.folder
    fresh.capture.uninstall()
    print(
        f"\nRSS growth over the {megabytes} MB case (all the calls above, the grep results "
        f"included): {_rss_mb() - rss_before:,.0f} MB; spill folder removed on close: "
        f"{folder is not None and not Path(folder).exists()}"
    )


def many_cells(cells: int) -> None:
    random.seed(11)
    spaced = [
        "\n".join(f"row {j}: mass {random.random():.4f} at station {i}" for j in range(20))
        for i in range(cells)
    ]
    solid = ["".join(random.choice("ACGT") for _ in range(2_000)) for _ in range(cells)]
    print(f"\nA notebook of {cells:,} cells (20 lines of output each, or one 2,000-base line)\n")
    print(f"| {'call':<48} | {'first, ms':>10} | {'next, ms':>10} |")
    print(f"|{'-' * 50}|{'-' * 12}|{'-' * 12}|")
    for name, outputs in (("lines with spaces", spaced), ("lines without spaces", solid)):
        backend = NotebookBackend(_shell(outputs), notebook_path=None)
        _row(f"grep 'station 7' over /, {name}", _timed(lambda b=backend: b.grep("station 7", "/")))
        _row(f"grep 'GATTACA' over /, {name}", _timed(lambda b=backend: b.grep("GATTACA", "/")))
        _row(f"ls /outputs/, {name}", _timed(lambda b=backend: b.ls("/outputs/")))


def masking() -> None:
    redact = Redactor(extra=lambda: [KEY], environ={})
    texts = {
        "a 40,000-character word": "x" * 40_000,
        "a 40,000-character word of 'key'": "key" * 13_334,
        "a 30,000-base DNA sequence": "".join(random.choice("ACGT") for _ in range(30_000)),
        "1 MB of 'password=' repeated": "password=" * 111_112,
    }
    print("\nMasking alone\n")
    print(f"| {'text':<48} | {'first, ms':>10} | {'next, ms':>10} |")
    print(f"|{'-' * 50}|{'-' * 12}|{'-' * 12}|")
    for name, text in texts.items():
        _row(name, _timed(lambda t=text: redact(t)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mb", type=int, default=50, help="size of the big output (MB)")
    parser.add_argument("--cells", type=int, default=2_000, help="cells of the big notebook")
    parser.add_argument("--no-checkpoints", action="store_true",
                        help="leave out the checkpoint sizes (bench/checkpoint_growth.py)")
    args = parser.parse_args()
    masking()
    many_cells(args.cells)
    big_output(args.mb)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak memory (RSS): {peak:,.0f} MB")
    if not args.no_checkpoints:  # in processes of their own: their memory is not counted above
        print("\nCheckpoint storage\n", flush=True)
        growth = Path(__file__).with_name("checkpoint_growth.py")
        subprocess.run([sys.executable, str(growth)], check=True)


if __name__ == "__main__":
    main()
