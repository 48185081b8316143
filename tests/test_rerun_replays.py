"""Re-running a notebook is replaying it: Run All twice in one kernel, then Restart and Run All.

Each shipped notebook runs in a real kernel as JupyterLab runs it (each execute request carries its
cell's id), three passes: two in one kernel, then one after a restart, under `auto`, the default
(a request that differs would go to the notebook's scripted model and be recorded). Every pass must
serve every agent cell from the research log (no model call), show the same agent outputs, leave
the same `/notebook/` listing, and leave the log byte for byte as it was.
"""

from __future__ import annotations

import ast
import asyncio
import json
import os
import re
import shutil
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbformat import NotebookNode

from jupyter_deepagent.jupyter.session.recorded_code import RUNNER_TOKEN_ENV, headless_metadata
from jupyter_deepagent.trace.research_log.log import log_path_for

pytestmark = [pytest.mark.slow, pytest.mark.allow_hosts(["127.0.0.1"])]

NOTEBOOKS = Path(__file__).parents[1] / "notebooks"
SHIPPED = ("quickstart.ipynb", "01_first_research_run.ipynb", "02_notebook_tools.ipynb")
_WIDGET = "application/vnd.jupyter.widget-view+json"
_TIMES = re.compile(
    r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d)?"  # started_at
    r"|\b\d+\.\d{4,}\b"  # seconds
    r"|\b\d+(?:\.\d+)?\s?(?:ms|s)\b"  # "233 ms"
)
_LISTING = (
    "__import__('json').dumps(sorted(f.path for folder in ('/cells', '/outputs') for f in "
    "__import__('jupyter_deepagent.jupyter.notebook_fs.notebook_backend', fromlist=['x'])"
    ".NotebookBackend(get_ipython(), notebook_path=__import__('jupyter_deepagent')"
    ".get_session().notebook_path).ls(folder)))"
)


def _agent_outputs(cell: NotebookNode) -> list[object]:
    """What the user sees of an agent cell's run, its timings left out."""
    seen: list[object] = []
    for output in cell.get("outputs", []):
        data = {k: _TIMES.sub("T", str(v)) for k, v in output.get("data", {}).items()}
        if _WIDGET in data:  # the live inspector: its model id is new each run
            data = {"text/plain": data.get("text/plain", "")}
        text = data.get("text/plain", "")
        if text.startswith("agent · "):  # progress: parallel subagents' lines come in any order
            data["text/plain"] = "\n".join(sorted(text.splitlines()))
        run = output.get("metadata", {}).get("jupyter_deepagent", {}).get("run") or {}
        seen.append((output.get("output_type"), data, run.get("replay"), run.get("log_hash")))
        if output.get("output_type") == "error":
            seen.append(output.get("evalue"))
    return seen


_TOKEN = "token-of-this-test-kernel"


class _Passes(NotebookClient):
    """A client whose execute requests carry the running cell's id, as JupyterLab sends it, and
    that approves code the research log serves (a user clicking Approve)."""

    current: str | None = None

    def _send(self, code: str, **options: object) -> str:
        content = {
            "code": code,
            "silent": options.get("silent", False),
            "store_history": options.get("store_history", True),
            "user_expressions": options.get("user_expressions") or {},
            "allow_stdin": False,
            "stop_on_error": True,
        }
        metadata: dict[str, object] = {**headless_metadata("approve", _TOKEN)}
        if self.current:
            metadata["cellId"] = self.current
        message = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    async def run_pass(self, notebook: NotebookNode) -> tuple[dict[str, list[object]], list[str]]:
        vars(self.kc)["execute"] = self._send
        agents: dict[str, list[object]] = {}
        for index, cell in enumerate(notebook.cells):
            if cell.cell_type != "code":
                continue
            self.current = cell.get("id")
            await self.async_execute_cell(cell, index)
            if "%%agent" in cell.source or cell.source.startswith("%agent resume"):
                agents[str(cell.get("id"))] = _agent_outputs(cell)
        self.current = None
        reply = await self.kc.execute_interactive(
            "", silent=True, user_expressions={"listing": _LISTING}, timeout=60
        )
        found = reply["content"]["user_expressions"]["listing"]
        assert found["status"] == "ok", found
        return agents, json.loads(ast.literal_eval(found["data"]["text/plain"]))


async def _three_passes(path: Path) -> list[tuple[dict[str, list[object]], list[str]]]:
    notebook = nbformat.read(path, as_version=4)
    env = {
        **os.environ,
        "JPY_SESSION_NAME": str(path),
        "JUPYTER_DEEPAGENT_REPLAY": "auto",
        RUNNER_TOKEN_ENV: _TOKEN,  # the kernel honours the approval its requests carry
    }
    env.pop("GOOGLE_API_KEY", None)
    client = _Passes(
        notebook,
        timeout=300,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
    )
    passes = []
    async with client.async_setup_kernel(env=env):
        passes.append(await client.run_pass(notebook))
        passes.append(await client.run_pass(notebook))
    async with client.async_setup_kernel(env=env):
        passes.append(await client.run_pass(notebook))
    return passes


@pytest.mark.parametrize("name", SHIPPED)
def test_run_all_twice_then_restart_replays_every_agent_cell(tmp_path: Path, name: str) -> None:
    folder = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS, folder, ignore=shutil.ignore_patterns(".deepagent"))
    log = log_path_for(folder / name)
    before = log.read_bytes()
    passes = asyncio.run(_three_passes(folder / name))
    first, listing = passes[0]
    assert first, f"{name} has no agent cell"
    for number, (agents, seen) in enumerate(passes, 1):
        outcomes = {
            cell: [o[2] for o in outs if isinstance(o, tuple) and o[2]]
            for cell, outs in agents.items()
        }
        assert all(o == ["replayed"] for o in outcomes.values()), (number, outcomes)
        assert agents == first, f"pass {number} shows other agent outputs than pass 1"
        assert seen == listing, f"pass {number}: /notebook/ lists {seen}, pass 1 {listing}"
    assert log.read_bytes() == before, "replaying changed the research log"
