"""How long glob, brace expansion and regex grep take on patterns a model could send.

Each case runs in its own child process under a time limit (a pattern that freezes the
interpreter cannot be stopped from inside it), through the public backend API, and prints the
wall time, the peak memory of the child and how the call ended (its result, or the error the
tool would show the model).

    python bench/matching.py                 # every case, 60 s limit each
    python bench/matching.py --limit 20 --only glob

Cases:
- `glob *a x k + b`: `*a*a…*ab` (k times `*a`) against one file whose name is 250 `a`s;
- `brace {a,b} x 18`: `{a,b}{a,b}…` (2^18 alternatives) as a glob; and the largest expansion
  allowed (`{a,b}` x 9: 512 alternatives) over 10,000 files;
- `regex compile bomb`: grep(regex=True) for `((a{1000}){1000}){1000}`;
- `glob over 10k files`, `regex grep over 10k files`: ordinary work, to show what the guards
  cost.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

_CHILD = r"""
import json, resource, sys, time
from jupyter_deepagent._exceptions import BackendError
from jupyter_deepagent.backends.state import StateBackend, bind_state_files

case = json.loads(sys.argv[1])
stamp = "2026-01-01T00:00:00+00:00"
files = {path: {"content": text, "modified_at": stamp} for path, text in case["files"]}
for count, template in case.get("many", []):
    for i in range(count):
        text = f"line {i} alpha beta\n" * 3
        files[template.format(i=i)] = {"content": text, "modified_at": stamp}
backend = StateBackend()
start = time.perf_counter()
try:
    with bind_state_files(files):
        if case["call"] == "glob":
            outcome = f"{len(backend.glob(case['pattern']))} file(s)"
        else:
            outcome = f"{len(backend.grep(case['pattern'], regex=True))} line(s)"
except BackendError as exc:
    outcome = f"error: {exc}"
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "peak_mb": peak, "outcome": outcome}))
"""

_NAME = "/" + "a" * 250


def _cases() -> dict[str, dict[str, object]]:
    cases: dict[str, dict[str, object]] = {}
    for k in (4, 5, 6):
        cases[f"glob *a x {k} + b, 250-char name"] = {
            "call": "glob", "pattern": "*a" * k + "b", "files": [[_NAME, "x"]],
        }
    cases["brace {a,b} x 18"] = {"call": "glob", "pattern": "{a,b}" * 18, "files": [[_NAME, "x"]]}
    cases["brace {a,b} x 9 + *, 10k files"] = {
        "call": "glob", "pattern": "**/" + "{a,b}" * 9 + "*", "files": [],
        "many": [[10_000, "/d{i}/ab{i}.md"]],
    }
    cases["regex compile bomb ((a{1000}){1000}){1000}"] = {
        "call": "grep", "pattern": "((a{1000}){1000}){1000}", "files": [["/f.txt", "aaaa\n"]],
    }
    cases["glob **/*.{md,txt} over 10k files"] = {
        "call": "glob", "pattern": "**/*.{md,txt}", "files": [],
        "many": [[10_000, "/d{i}/notes/n{i}.md"]],
    }
    cases["regex grep over 10k files (30k lines)"] = {
        "call": "grep", "pattern": r"alpha\s+b\w+", "files": [],
        "many": [[10_000, "/d/f{i}.txt"]],
    }
    return cases


def run_case(case: dict[str, object], limit: float) -> dict[str, object]:
    """Run one case in a child interpreter; a child past `limit` seconds is killed."""
    began = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, json.dumps(case)],
            capture_output=True,
            text=True,
            timeout=limit,
            cwd=Path(__file__).resolve().parents[1],
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"seconds": None, "peak_mb": None, "outcome": f"still running after {limit:g} s"}
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or ["no output"]
        wall = time.perf_counter() - began
        outcome = f"crashed after {wall:.1f} s: {tail[0]}"
        return {"seconds": None, "peak_mb": None, "outcome": outcome}
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    """Print one row per case: seconds, peak memory of the child, outcome."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--limit", type=float, default=60.0, help="seconds per case (60)")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    print(f"{'case':<46} {'seconds':>9} {'peak MB':>8}  outcome")
    for name, case in _cases().items():
        if args.only not in name:
            continue
        result = run_case(case, args.limit)
        seconds = "-" if result["seconds"] is None else f"{result['seconds']:.3f}"
        peak = "-" if result["peak_mb"] is None else f"{result['peak_mb']:.0f}"
        outcome = str(result["outcome"])
        print(f"{name:<46} {seconds:>9} {peak:>8}  {outcome[:110]}", flush=True)


if __name__ == "__main__":
    main()
