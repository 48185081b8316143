"""Time the notebook's /workspace/ backend (a GuardedFolder over a DiskBackend) on a generated
folder: reads, writes, ls, glob and grep, each path opened one component at a time.

    python bench/workspace_io.py [--files 2000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from jupyter_deepagent.backends import DiskBackend
from jupyter_deepagent.project.workspace import GuardedFolder


def timed(label: str, count: int, run) -> None:
    start = time.perf_counter()
    for i in range(count):
        run(i)
    took = time.perf_counter() - start
    print(f"{label:<34} {count:>6} calls  {took * 1000 / count:8.3f} ms each")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as base:
        root = Path(base)
        for i in range(args.files):
            folder = root / f"d{i % 40}" / f"e{i % 7}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"f{i}.txt").write_text(f"line one\nvalue {i}\nline three\n" * 5)
        (root / ".git").mkdir()
        (root / ".git" / "config").write_text("[core]\n")
        guarded = GuardedFolder(DiskBackend(root))
        paths = [f"/d{i % 40}/e{i % 7}/f{i}.txt" for i in range(args.files)]
        print(f"{args.files} files in 280 folders")
        timed("read (3 levels deep)", 2000, lambda i: guarded.read(paths[i % len(paths)]))
        timed("write (overwrite, fsync)", 300, lambda i: guarded.write(paths[i], "new\n"))
        timed("edit", 300, lambda i: guarded.edit(paths[i + 300], "line one", "line 1", replace_all=True))
        timed("ls of a folder", 200, lambda i: guarded.ls(f"/d{i % 40}/e0"))
        timed("glob ** over everything", 5, lambda i: guarded.glob("**/*.txt"))
        timed("grep over everything", 5, lambda i: guarded.grep("value 1"))


if __name__ == "__main__":
    main()
