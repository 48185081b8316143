"""A second kernel for the one-writer-per-thread tests: an IPython shell with the extension, in its
own process, running `%%agent` cells on a thread of a project folder.

    python kernel_process.py FOLDER THREAD hold        # one turn whose tool waits for FOLDER/go
    python kernel_process.py FOLDER THREAD turns N K   # N turns tagged pK, each retried while
                                                       # the thread is busy
    python kernel_process.py FOLDER THREAD remember FILE TEXT  # one turn writing /memories/FILE
    python kernel_process.py FOLDER THREAD recall FILE         # one turn reading /memories/FILE
    python kernel_process.py FOLDER - threads                  # the user's and project's threads

It prints one JSON line per cell: {"turn": ..., "error": name or null, "result": the last tool
result}, and for `threads` one line {"own": [names], "all": [[owner, name], ...]}. The user is
JUPYTERHUB_USER and the database JUPYTER_DEEPAGENT_DATABASE_URL, from the environment.
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
from jupyter_deepagent.jupyter.magic.magics import get_session


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
    if mode == "threads":
        own = [info.name for info in session.threads()]
        every = [[info.owner, info.name] for info in session.threads(every_user=True)]
        print(json.dumps({"own": own, "all": every}))
        shell.run_line_magic("unload_ext", "jupyter_deepagent")
        return
    if mode == "remember":
        path, text = f"/memories/{sys.argv[4]}", sys.argv[5]
        steps = [{"tool_calls": [{"name": "write_file", "args": {"file_path": path,
                                                                  "content": text}}]}, "saved"]
        turns = [f"remember {path}"]
    elif mode == "recall":
        path = f"/memories/{sys.argv[4]}"
        steps = [{"tool_calls": [{"name": "read_file", "args": {"file_path": path}}]}, "read"]
        turns = [f"recall {path}"]
    elif mode == "hold":
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
        trace = session.last_trace
        tools = [m for m in (trace.messages if trace is not None else []) if m.type == "tool"]
        result = str(tools[-1].text) if tools else None
        print(json.dumps({"turn": turn, "error": type(error).__name__ if error else None,
                          "result": result}))
        sys.stdout.flush()
    shell.run_line_magic("unload_ext", "jupyter_deepagent")


if __name__ == "__main__":
    main()
