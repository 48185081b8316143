"""One writer per thread: a second kernel (another process) on a thread that is running gets a
clear error naming the other process, and no turn is lost."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from notebook_shell import Notebook, notebook, scripted  # noqa: F401

from jupyter_deepagent import ThreadBusy
from jupyter_deepagent.jupyter.storage import Storage

KERNEL = Path(__file__).parent / "kernel_process.py"
PATIENCE = 120  # seconds; only a hang reaches it


def start_kernel(folder: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(KERNEL), str(folder), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def finish(process: subprocess.Popen[str]) -> list[dict]:
    out, err = process.communicate(timeout=PATIENCE)
    assert process.returncode == 0, err
    return [json.loads(line) for line in out.splitlines() if line.startswith('{"turn"')]


def wait_for(path: Path, process: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + PATIENCE
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(process.communicate()[1])
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.05)


def test_a_second_kernel_on_a_running_thread_is_told_which_process_runs_it(
    notebook: Notebook,
) -> None:
    other = start_kernel(notebook.folder, "shared", "hold")
    try:
        wait_for(notebook.folder / "started", other)
        model = scripted("Second turn done.")
        notebook.session.configure(model=model)
        busy = notebook.run("%%agent -t shared\nsecond")
        assert isinstance(busy.error, ThreadBusy)
        assert busy.error.pid == other.pid
        text = busy.error._render_traceback_()[0]
        assert text.startswith("ThreadBusy: thread 'shared' is being run by another kernel")
        assert f"process {other.pid}" in text and "no turn is lost" in text
        assert "%%agent -t NAME" in text and "--new" in text
        assert model.requests == []
        reset = notebook.run("%agent reset -t shared")
        assert isinstance(reset.error, ThreadBusy)
    finally:
        (notebook.folder / "go").write_text("go")
        ran = finish(other)
    assert ran == [{"turn": "first", "error": None}]
    again = notebook.run("%%agent -t shared\nsecond")
    assert again.error is None and again.markdown[-1] == "Second turn done."
    sent = [m.type + ":" + m.text for m in model.requests[0].messages if m.type != "system"]
    assert sent == [
        "human:first",
        "ai:",
        "tool:went",
        "ai:First turn done.",
        "human:second",
    ]


def test_two_kernels_taking_turns_on_one_thread_lose_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    Storage(folder / ".deepagent").close()  # both kernels find the state folder made
    turns = 8
    kernels = [start_kernel(folder, "shared", "turns", str(turns), str(n)) for n in (1, 2)]
    results = [finish(kernel) for kernel in kernels]
    assert all(r["error"] is None for ran in results for r in ran)

    storage = Storage(folder / ".deepagent")
    try:
        saved = storage.checkpointer.get_tuple({"configurable": {"thread_id": "shared"}})
    finally:
        storage.close()
    messages = saved.checkpoint["channel_values"]["messages"]
    humans = sorted(m.text for m in messages if m.type == "human")
    assert humans == sorted(f"p{k} turn {n}" for k in (1, 2) for n in range(turns))
    calls = [c["id"] for m in messages if m.type == "ai" for c in m.tool_calls]
    results_of = [m.tool_call_id for m in messages if m.type == "tool"]
    assert len(calls) == 2 * turns and sorted(calls) == sorted(results_of)
    answers = [m.text for m in messages if m.type == "ai" and m.text]
    assert sorted(answers) == sorted(f"p{k} turn {n} done" for k in (1, 2) for n in range(turns))
