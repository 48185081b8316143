"""A second kernel for the one-writer-per-thread tests: an IPython shell with the extension, in its
own process, running `%%agent` cells on a thread of a project folder.

    python kernel_process.py FOLDER THREAD hold        # one turn whose tool waits for FOLDER/go
    python kernel_process.py FOLDER THREAD turns N K   # N turns tagged pK, each retried while
                                                       # the thread is busy

It prints one JSON line per cell: {"turn": ..., "error": name or null}.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from IPython.core.interactiveshell import InteractiveShell
from langchain.tools import tool
from traitlets.config import Config

from jupyter_deepagent import ScriptedChatModel, ThreadBusy
from jupyter_deepagent.jupyter.magics import get_session


def main() -> None:
    folder, thread, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = InteractiveShell.instance(config=config)
    shell.user_ns["__session__"] = str(folder / "analysis.ipynb")
    shell.run_line_magic("load_ext", "jupyter_deepagent")
    session = get_session(shell)

    @tool
    def wait_for_go() -> str:
        """Wait until the test says go."""
        (folder / "started").write_text("started")
        for _ in range(1200):
            if (folder / "go").exists():
                return "went"
            time.sleep(0.05)
        return "gave up waiting"

    @tool
    def note(text: str) -> str:
        """Take a note."""
        return f"noted {text}"

    session.tools.extend([wait_for_go, note])
    if mode == "hold":
        steps: list = [{"tool_calls": [{"name": "wait_for_go", "args": {}}]}, "First turn done."]
        turns = ["first"]
    else:
        count, tag = int(sys.argv[4]), f"p{sys.argv[5]}"
        turns = [f"{tag} turn {n}" for n in range(count)]
        steps = []
        for turn in turns:
            steps += [{"tool_calls": [{"name": "note", "args": {"text": turn}}]}, f"{turn} done"]
    session.configure(model=ScriptedChatModel(script=steps, profile={"max_input_tokens": 10**6}))
    for turn in turns:
        while True:
            result = shell.run_cell(f"%%agent -t {thread}\n{turn}", store_history=True)
            error = result.error_in_exec or result.error_before_exec
            if not isinstance(error, ThreadBusy):
                break
            time.sleep(0.02)
        print(json.dumps({"turn": turn, "error": type(error).__name__ if error else None}))
        sys.stdout.flush()
    shell.run_line_magic("unload_ext", "jupyter_deepagent")


if __name__ == "__main__":
    main()
