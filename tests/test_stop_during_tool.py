"""The stop button ends a run at once while a plain Python function tool is working, in a real
kernel: the interrupt reaches the tool's thread, not only the kernel's main thread."""

from __future__ import annotations

import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel
from test_notebook_execution import LOOPBACK_ONLY, _execute, _kernel_env

BUSY_TOOL = """\
%load_ext jupyter_deepagent
import time
from jupyter_deepagent.jupyter.magic.magics import get_session

def measure(sample: int) -> str:
    \"\"\"Measure one sample (0.6 s of computing).\"\"\"
    began, total = time.perf_counter(), 0
    while time.perf_counter() - began < 0.6:
        total += 1
    return f"sample {sample}: {total} steps"

get_session().tools.append(measure)  # a plain function, not a LangChain tool
"""


@LOOPBACK_ONLY
def test_a_stop_while_a_python_function_tool_computes_ends_the_run_at_once(
    tmp_path: Path,
) -> None:
    steps = "\n".join(
        f"  - tool_calls: [{{name: measure, args: {{sample: {n}}}}}]" for n in range(8)
    )
    (tmp_path / "measure.yaml").write_text(
        f"profile: {{max_input_tokens: 100000}}\nscript:\n{steps}\n  - Measured.\n"
    )
    manager, client = start_new_kernel(
        kernel_name="python3", cwd=str(tmp_path), env=_kernel_env(tmp_path)
    )
    try:
        assert not [o for o in _execute(client, BUSY_TOOL) if o["type"] == "error"]
        pressed: list[float] = []

        def press_stop_in_the_second_sample(outputs: list[dict]) -> bool:
            live = outputs[-1].get("data", {}).get("text/plain", "")
            if "… measure sample=1" in live:
                time.sleep(0.2)  # well inside the tool's 0.6 s of work
                pressed.append(time.monotonic())
                manager.interrupt_kernel()
                return True
            return False

        stopped = _execute(
            client, "%%agent -m scripted:measure.yaml\nmeasure", press_stop_in_the_second_sample
        )
        took = time.monotonic() - pressed[0]
        [error] = [o for o in stopped if o["type"] == "error"]
        assert error["ename"] == "KeyboardInterrupt"
        assert took < 3, f"the stop took {took:.1f} s"  # generous: a hang is the failure
        updates = [o["data"].get("text/plain", "") for o in stopped
                   if o["type"] == "update_display_data"]
        live = [text for text in updates if text.startswith("agent")][-1]  # not the inspector's
        assert "✓ measure sample=0" in live
        assert "✓ measure sample=1" not in live  # stopped mid-work, not waited for
        assert "measure sample=2" not in live
        assert live.splitlines()[-1].startswith("interrupted")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
