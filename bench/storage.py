"""Checkpoint storage on the long scripted run: SQLite files against a PostgreSQL server.

The run of `bench/long_run.py` (a scripted model asks for one source per step: ~20,000-character
notes, every tenth step a ~120,000-character table), with the agent's checkpointer and store
from `SqliteStorage` and from `PostgresStorage`. The run saves a checkpoint after every step
(LangGraph's "sync" durability) so each step's `put` is timed; a notebook cell saves once, at its
end, so this is the worst case. Printed per storage: the median and 95th percentile of `put`,
and the bytes the checkpoints take after N steps (the SQLite file with its -wal; for PostgreSQL,
`pg_total_relation_size` of the checkpoint tables, indexes and TOAST included).

    python bench/storage.py                        # 200 steps, a temporary PostgreSQL server
    python bench/storage.py --steps 100 --database-url postgresql://me@db/bench

Without --database-url, a server is started in a temporary folder from Debian's binaries
(`apt-get install postgresql`), as the tests do; without them, SQLite is measured alone.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
STEPS = 200
SAMPLES = (50, 100, 200)


def run(storage: Any, steps: int, size: Any) -> dict[str, Any]:
    """The long run on `storage`; `size()` gives the checkpoints' bytes now."""
    from langchain_core.tools import tool

    from jupyter_deepagent import ScriptedChatModel, create_research_agent
    from long_run import source_text

    sources = [source_text(step) for step in range(steps)]

    fetched = [0]

    @tool
    def fetch_source(number: int) -> str:
        """Fetch research source `number` (notes or a data table)."""
        fetched[0] += 1
        return sources[number]

    script: list[Any] = [
        {"tool_calls": [{"name": "fetch_source", "args": {"number": n}}]} for n in range(steps)
    ]
    script.append("All sources read.")
    model = ScriptedChatModel(script=script, profile={"max_input_tokens": 128_000})
    saver = storage.checkpointer
    timings: list[float] = []
    growth: dict[int, int] = {}
    put = saver.put

    def timed_put(*args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        saved = put(*args, **kwargs)
        timings.append(time.perf_counter() - started)
        step = fetched[0]  # the sources read so far
        if step in SAMPLES and step not in growth:
            growth[step] = size()
        return saved

    saver.put = timed_put
    agent = create_research_agent(model, tools=[fetch_source], checkpointer=saver,
                                  store=storage.store, system_prompt="Survey the sources.")
    started = time.perf_counter()
    agent.invoke({"messages": [{"role": "user", "content": "Read every source."}]},
                 {"configurable": {"thread_id": "bench"}, "recursion_limit": 10 * steps + 50},
                 durability="sync")
    seconds = time.perf_counter() - started
    growth[steps] = growth.get(steps) or size()
    ordered = sorted(timings)
    return {
        "puts": len(timings),
        "median_ms": 1000 * statistics.median(ordered),
        "p95_ms": 1000 * ordered[int(0.95 * (len(ordered) - 1))],
        "growth": growth,
        "seconds": seconds,
    }


def sqlite(steps: int) -> dict[str, Any]:
    """The run on the SQLite files of a temporary state folder."""
    from jupyter_deepagent.project.storage.sqlite import SqliteStorage

    with tempfile.TemporaryDirectory() as folder:
        state = Path(folder) / ".deepagent"
        storage = SqliteStorage(state)

        def size() -> int:
            return sum(p.stat().st_size for p in state.glob("checkpoints.sqlite*"))

        try:
            return run(storage, steps, size)
        finally:
            storage.close()


def postgres(steps: int, url: str | None) -> dict[str, Any] | None:
    """The run on a PostgreSQL database: `url`, or a temporary server's (None without one)."""
    from jupyter_deepagent.project.storage.postgres import PostgresStorage

    server = None
    if url is None:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from postgres_server import PostgresServer, missing_reason

        if missing_reason() is not None:
            print(missing_reason(), file=sys.stderr)
            return None
        server = PostgresServer.start()
        url = server.create_database("bench")
    storage = PostgresStorage(url, "--database-url")
    try:
        return run(storage, steps, storage.relation_bytes)
    finally:
        storage.close()
        if server is not None:
            server.stop()


def report(results: dict[str, dict[str, Any]]) -> str:
    """The table of figures."""
    steps = sorted({step for result in results.values() for step in result["growth"]})
    head = "| storage | puts | put median | put p95 | " + " | ".join(
        f"MB after {step} steps" for step in steps) + " | run time |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for name, result in results.items():
        sizes = " | ".join(f"{result['growth'].get(step, 0) / 1e6:.1f}" for step in steps)
        lines.append(f"| {name} | {result['puts']} | {result['median_ms']:.1f} ms | "
                     f"{result['p95_ms']:.1f} ms | {sizes} | {result['seconds']:.0f} s |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run on both storages and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--database-url", help="a PostgreSQL database to use (else a temporary "
                        "server); its checkpoint tables should be empty")
    args = parser.parse_args(argv)
    results = {"SQLite": sqlite(args.steps)}
    measured = postgres(args.steps, args.database_url)
    if measured is not None:
        results["PostgreSQL"] = measured
    print(f"{args.steps} steps, {sum(len(s) for s in _sources(args.steps)) / 1e6:.1f} MB of "
          "tool output, a checkpoint after every step\n")
    print(report(results))
    return 0


def _sources(steps: int) -> list[str]:
    from long_run import source_text

    return [source_text(step) for step in range(steps)]


if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))
    sys.path.insert(0, str(HERE))
    raise SystemExit(main())
