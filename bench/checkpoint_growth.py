"""How checkpoint storage grows with what a run writes: one `%%agent` run writing N files of 1 MB.

A scripted model (no network) calls `write_file` N times, each with 1 MB of text for a file in
`/workspace/`, then answers. The run goes through the notebook magic in an IPython shell, as in a
kernel, and the size of the state folder's `checkpoints.sqlite` (with its `-wal` file, if any) is
printed for each N at the end of the run and once the databases are closed (SQLite then folds
the `-wal` file into the database), with the seconds the run took.

    python bench/checkpoint_growth.py                 # N = 5, 10, 20
    python bench/checkpoint_growth.py --sizes 5 10 --mb 1

Each N runs in its own process, in a fresh temporary project folder.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZES = (5, 10, 20)


def one_run(files: int, megabytes: float) -> dict[str, float]:
    """Run the agent once in a fresh project folder; return sizes in MB and the seconds taken."""
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config

    from jupyter_deepagent import ScriptedChatModel
    from jupyter_deepagent.jupyter.magic.magics import get_session

    chars = int(megabytes * 1_000_000)
    rng = random.Random(files)
    alphabet = string.ascii_letters + string.digits + " \n"
    steps: list = []
    for index in range(files):
        content = "".join(rng.choices(alphabet, k=chars))
        call = {"name": "write_file", "args": {"file_path": f"/workspace/part_{index}.txt",
                                               "content": content}}
        steps.append({"tool_calls": [call]})
    steps.append("All parts written.")
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder) / "project"
        project.mkdir()
        config = Config()
        config.HistoryManager.hist_file = ":memory:"
        shell = InteractiveShell.instance(config=config)
        shell.user_ns["__session__"] = str(project / "analysis.ipynb")
        shell.run_line_magic("load_ext", "jupyter_deepagent")
        session = get_session(shell)
        session.configure(
            model=ScriptedChatModel(script=steps, profile={"max_input_tokens": 10_000_000}),
            workspace=".",
        )
        started = time.perf_counter()
        result = shell.run_cell("%%agent\nWrite the parts.", store_history=True)
        seconds = time.perf_counter() - started
        if not result.success:
            raise SystemExit(f"the run failed: {result.error_in_exec or result.error_before_exec}")
        state = project / ".deepagent"
        open_size = _size(state)
        shell.run_line_magic("unload_ext", "jupyter_deepagent")
        written = sum(path.stat().st_size for path in project.glob("part_*.txt"))
        return {"files": files, "written_mb": written / 1e6, "open_mb": open_size / 1e6,
                "closed_mb": _size(state) / 1e6, "seconds": seconds}


def _size(state: Path) -> int:
    """Bytes of checkpoints.sqlite and its -wal/-shm files."""
    return sum(path.stat().st_size for path in state.glob("checkpoints.sqlite*") if path.is_file())


def main() -> None:
    """Run each size in its own process and print a table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--mb", type=float, default=1.0, help="size of each file in MB")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(one_run(args.one, args.mb)))
        return
    print("checkpoints.sqlite (with its -wal file) at the end of the run, and once closed")
    print(f"{'files':>5}  {'written MB':>10}  {'open MB':>8}  {'closed MB':>9}  {'seconds':>7}")
    for files in args.sizes:
        done = subprocess.run(
            [sys.executable, __file__, "--one", str(files), "--mb", str(args.mb)],
            capture_output=True, text=True, check=False,
        )
        if done.returncode != 0:
            print(done.stdout, done.stderr, sep="\n")
            raise SystemExit(done.returncode)
        row = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{row['files']:>5}  {row['written_mb']:>10.1f}  {row['open_mb']:>8.1f}  "
              f"{row['closed_mb']:>9.1f}  {row['seconds']:>7.1f}")


if __name__ == "__main__":
    main()
