"""The stop button ends a run at once while a subagent waits to retry a failed model call, in a
real kernel: the wait is slept in short slices, so the interrupt raised in the subagent's thread
lands at once rather than when a 30 s wait ends."""

from __future__ import annotations

import time
from pathlib import Path

from jupyter_client.manager import start_new_kernel
from test_notebook_execution import LOOPBACK_ONLY, _execute, _kernel_env

SCRIPT = """\
profile: {max_input_tokens: 100000}
script:
  - tool_calls: [{name: task, args: {description: look it up, subagent_type: general-purpose}}]
  - {raise: error, message: service down}
  - never sent
"""


@LOOPBACK_ONLY
def test_a_stop_during_a_subagents_retry_wait_ends_the_run_at_once(tmp_path: Path) -> None:
    (tmp_path / "retry.yaml").write_text(SCRIPT)
    manager, client = start_new_kernel(
        kernel_name="python3", cwd=str(tmp_path), env=_kernel_env(tmp_path)
    )
    try:
        setup = "%load_ext jupyter_deepagent\n%agent config model_retry_wait=30"
        assert not [o for o in _execute(client, setup) if o["type"] == "error"]
        pressed: list[float] = []

        def press_stop_while_it_waits(outputs: list[dict]) -> bool:
            live = outputs[-1].get("data", {}).get("text/plain", "")
            if "↻ retrying in 30 s" in live:
                pressed.append(time.monotonic())
                manager.interrupt_kernel()
                return True
            return False

        stopped = _execute(
            client, "%%agent -m scripted:retry.yaml\nlook it up", press_stop_while_it_waits
        )
        took = time.monotonic() - pressed[0]
        [error] = [o for o in stopped if o["type"] == "error"]
        assert error["ename"] == "KeyboardInterrupt"
        assert took < 5, f"the stop took {took:.1f} s"  # generous: a hang is the failure
        live = [o["data"]["text/plain"] for o in stopped if o["type"] == "update_display_data"
                and "retrying" in o["data"].get("text/plain", "")][-1]
        assert "[general-purpose #1] ↻ retrying in 30 s (attempt 2 of 3): ModelAPIError" in live
        assert live.splitlines()[-1].startswith("interrupted")
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
