"""What a flood of sidebar requests costs the kernel: 10,000 snapshot requests on one comm.

Comm messages are handled on the thread that runs cells, so every request the page sends before
a cell is answered before the cell starts. A 20-step scripted run fills the history; then one
comm sends `--requests` snapshot requests for it, once with the request limit as shipped
(`REQUEST_BURST` in `REQUEST_WINDOW`) and once with no limit (as before it), and the CPU time the
kernel spent answering them is printed: the delay a cell queued behind the flood would see.

    python bench/sidebar_flood.py
    python bench/sidebar_flood.py --requests 2000
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.jupyter.sidebar import channel as sidebar_channel
from jupyter_deepagent.jupyter.sidebar.protocol import PROTOCOL_VERSION


class _History:
    """The one run the flood asks for, as the session's run history would give it."""

    def __init__(self, trace: Any) -> None:
        self.trace = trace

    def counts(self) -> dict[str, int]:
        return {"bench": 1}

    def get(self, thread: str, index: int) -> Any:
        return self.trace

    def previous_prompt(self, thread: str, before: Any) -> None:
        return None


class _Runs:
    def __init__(self, trace: Any) -> None:
        self.history = _History(trace)


class _Session:
    def __init__(self, trace: Any) -> None:
        self.runs = _Runs(trace)


class _Comm:
    def __init__(self) -> None:
        self.receive: Any = None

    def on_msg(self, callback: Any) -> None:
        self.receive = callback

    def on_close(self, callback: Any) -> None:
        pass

    def send(self, data: dict[str, Any]) -> None:
        pass


def a_run(steps: int = 20) -> Any:
    """A finished scripted run of `steps` tool calls."""
    from langchain.tools import tool

    @tool
    def note(index: int) -> str:
        """Return research note number `index`."""
        return f"# Note {index}\n" + "measurement " * 300

    script: list[Any] = [{"tool_calls": [{"name": "note", "args": {"index": i}}]}
                         for i in range(steps)]
    agent = create_research_agent(ScriptedChatModel(script=[*script, "done"]), tools=[note])
    return trace_run(agent, {"messages": [{"role": "user", "content": "go"}]})


def flood(trace: Any, requests: int) -> float:
    """CPU seconds the kernel spends taking `requests` snapshot requests on one comm."""
    channel = sidebar_channel.SidebarChannel(_Session(trace))
    comm = _Comm()
    channel.open(comm, {})
    started = time.process_time()
    for index in range(requests):
        data = {"protocol": PROTOCOL_VERSION, "type": "request", "id": f"r{index}",
                "want": "snapshot", "thread": "bench"}
        comm.receive({"content": {"data": data}})
    return time.process_time() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--requests", type=int, default=10_000)
    args = parser.parse_args()
    trace = a_run()
    limited = flood(trace, args.requests)
    shipped = sidebar_channel.REQUEST_BURST
    sidebar_channel.REQUEST_BURST = args.requests + 1  # no limit, as before it
    unlimited = flood(trace, args.requests)
    sidebar_channel.REQUEST_BURST = shipped
    print(f"{args.requests:,} snapshot requests on one comm, CPU seconds the kernel spends on them:")
    print(f"  limited ({shipped} per {sidebar_channel.REQUEST_WINDOW:g} s, the rest dropped): "
          f"{limited:.2f} s")
    print(f"  unlimited (every request answered):                  {unlimited:.2f} s")
    print(f"  ratio: {unlimited / max(limited, 1e-9):.0f}x")


if __name__ == "__main__":
    main()
