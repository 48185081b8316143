"""The first `%%agent` cell of a kernel: `%load_ext` imports what the first run needs in the
background, and the first run imports nothing it does not need (numpy through the SQLite store,
ipywidgets where no widget is shown).

Each check runs in a fresh Python process (what is imported is the process's own), with the
extension in an IPython shell, a one-reply scripted model and the state folder in the test's
folder.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_kernel
from test_notebook_execution import _execute  # reads a cell's outputs until the kernel is idle

from jupyter_deepagent.jupyter.magic.warm_up import WARM_UP_VARIABLE, WarmUp

ANSWER = "The first cell answered."
SCRIPT = f"profile: {{max_input_tokens: 100000}}\nscript:\n  - {ANSWER}\n"
SHELL = """\
import json, sys, threading
from traitlets.config import Config
config = Config()
config.HistoryManager.hist_file = ':memory:'
config.TerminalInteractiveShell.simple_prompt = True
from IPython.core.interactiveshell import InteractiveShell
from IPython.terminal.interactiveshell import TerminalInteractiveShell
Shell = TerminalInteractiveShell if {terminal} else InteractiveShell
shell = Shell.instance(config=config)
shell.user_ns['__session__'] = 'first.ipynb'
{prelude}
shell.run_line_magic('load_ext', 'jupyter_deepagent')
warm_up = shell.magics_manager.registry['AgentMagics'].warm_up

def loaded(*names):
    return sorted(name for name in names if name in sys.modules)

def run(cell):
    result = shell.run_cell(cell)
    return repr(result.error_in_exec or result.error_before_exec)
"""
AGENT = "%%agent -m scripted:hello.yaml\nSay something."


def _python(
    tmp_path: Path, code: str, *, terminal: bool = False, prelude: str = "", **env: str
) -> dict[str, Any]:
    """Run `code` after `SHELL` (`prelude` before its `%load_ext`) in a fresh process in
    `tmp_path`; the JSON it prints last, with what it printed before ("stdout") and "stderr"."""
    (tmp_path / "hello.yaml").write_text(SCRIPT)
    environment = {
        **os.environ,
        "JUPYTER_DEEPAGENT_STATE_DIR": str(tmp_path / "state"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
        **env,
    }
    done = subprocess.run(
        [sys.executable, "-c", SHELL.format(terminal=terminal, prelude=prelude) + code],
        cwd=tmp_path,
        env=environment,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    *shown, last = done.stdout.strip().splitlines()
    result: dict[str, Any] = json.loads(last)
    result["stdout"], result["stderr"] = "\n".join(shown), done.stderr
    return result


HEAVY = ("langchain", "langchain_core", "langgraph", "pandas", "ipywidgets")
FIRST_RUN = (
    "langchain",
    "langchain_core",
    "langgraph",
    "ipywidgets",
    "markdown_it",
    "jupyter_deepagent.harness.agent_stack",
    "jupyter_deepagent.trace.run_trace",
)


def test_load_ext_imports_the_first_runs_modules_in_a_background_thread(tmp_path: Path) -> None:
    done = _python(
        tmp_path,
        "threads = [t.name for t in threading.enumerate() if t.daemon]\n"
        "warm_up.join()\n"
        "print(json.dumps({'threads': threads, 'failures': warm_up.failures,\n"
        f"  'loaded': loaded(*{FIRST_RUN!r}), 'pandas': loaded('pandas')}}))",
    )
    assert "jupyter_deepagent warm-up" in done["threads"]
    assert done["failures"] == []
    assert done["loaded"] == sorted(FIRST_RUN)
    assert done["pandas"] == []  # left to the runs that need it


def test_the_warm_up_also_imports_the_configured_models_package(tmp_path: Path) -> None:
    (tmp_path / ".deepagent.toml").write_text('model = "google_genai:gemini-2.5-pro"\n')
    done = _python(
        tmp_path,
        "warm_up.join()\n"
        "print(json.dumps({'loaded': loaded('langchain_google_genai'),\n"
        "                  'failures': warm_up.failures}))",
    )
    assert done["loaded"] == ["langchain_google_genai"] and done["failures"] == []


def test_a_provider_that_is_not_installed_is_left_to_the_run_to_report(tmp_path: Path) -> None:
    (tmp_path / ".deepagent.toml").write_text('model = "ollama:llama3"\n')
    done = _python(
        tmp_path,
        "warm_up.join()\nprint(json.dumps({'failures': warm_up.failures}))",
    )
    assert [failure.split(":")[0] for failure in done["failures"]] == ["langchain_ollama"]
    assert done["stdout"] == "" and "langchain_ollama" not in done["stderr"]


def test_turned_off_load_ext_imports_nothing_heavy_and_starts_no_thread(tmp_path: Path) -> None:
    done = _python(
        tmp_path,
        "threads = [t.name for t in threading.enumerate() if t.daemon]\n"
        f"print(json.dumps({{'warm_up': repr(warm_up), 'loaded': loaded(*{HEAVY!r}),\n"
        "  'threads': threads}))",
        **{WARM_UP_VARIABLE: "0"},
    )
    assert done["warm_up"] == "None"
    assert done["loaded"] == []
    assert "jupyter_deepagent warm-up" not in done["threads"]
    error = _python(
        tmp_path, f"print(json.dumps({{'error': run({AGENT!r})}}))", **{WARM_UP_VARIABLE: "off"}
    )
    assert error["error"] == "None" and ANSWER in error["stdout"]  # the run imports what it needs


def test_after_the_warm_up_the_first_run_imports_no_langchain_langgraph_or_harness_module(
    tmp_path: Path,
) -> None:
    done = _python(
        tmp_path,
        "warm_up.join()\n"
        "before = set(sys.modules)\n"
        f"error = run({AGENT!r})\n"
        "prefixes = ('langchain', 'langgraph', 'langsmith', 'pydantic', 'jupyter_deepagent',\n"
        "            'ipywidgets', 'markdown_it', 'yaml')\n"
        "new = sorted(m for m in set(sys.modules) - before if m.startswith(prefixes))\n"
        "print(json.dumps({'error': error, 'new': new}))",
    )
    assert done["error"] == "None" and ANSWER in done["stdout"]
    assert done["new"] == [], "add these to FIRST_RUN_MODULES (jupyter/magic/warm_up.py)"


def test_a_first_run_without_memories_or_widgets_loads_no_numpy_sqlite_vec_or_ipywidgets(
    tmp_path: Path,
) -> None:
    remember = "%%agent -m scripted:remember.yaml\nRemember the units."
    (tmp_path / "remember.yaml").write_text(
        "profile: {max_input_tokens: 100000}\nscript:\n"
        "  - tool_calls: [{name: write_file, args: {file_path: /memories/units.md, "
        "content: SI units}}]\n  - Noted.\n"
    )
    done = _python(
        tmp_path,
        "warm_up.join()\n"
        f"first = run({AGENT!r})\n"
        "after_first = loaded('numpy', 'sqlite_vec', 'ipywidgets')\n"
        "import pathlib\n"
        "store = pathlib.Path('state', 'store.sqlite')\n"
        "store_after_first = store.exists()\n"
        f"second = run({remember!r})\n"
        "print(json.dumps({'first': first, 'second': second, 'after_first': after_first,\n"
        "  'store_after_first': store_after_first, 'store': store.exists(),\n"
        "  'after_memory': loaded('sqlite_vec')}))",
        terminal=True,  # terminal IPython prints the run: no widget is shown
    )
    assert done["first"] == "None" and done["second"] == "None"
    assert done["after_first"] == []
    assert not done["store_after_first"]  # no memory yet: no database of memories either
    assert done["store"] and done["after_memory"] == ["sqlite_vec"]  # made at the first memory


def test_a_run_that_comes_before_the_imports_began_calls_them_off() -> None:
    warm_up = WarmUp(["jupyter_deepagent_no_such_module"], pause=60).start()
    assert warm_up.wait(timeout=5)  # at once: the run imports what it needs itself
    assert warm_up.join(timeout=5) and warm_up.failures == []  # nothing was imported
    begun = WarmUp(["jupyter_deepagent_no_such_module"]).start()
    assert begun.join(timeout=5) and begun.wait(timeout=5)
    assert [f.split(":")[0] for f in begun.failures] == ["jupyter_deepagent_no_such_module"]


def test_the_imports_never_run_beside_a_cell() -> None:
    # two threads importing one circular package can deadlock: a cell holds the imports back
    # until it ends, and one that starts once they have begun waits for them
    import threading

    seen: list[bool] = []

    class Probe(WarmUp):
        def _import(self, modules):  # type: ignore[no-untyped-def]
            seen.append(cell_running.is_set())

    cell_running = threading.Event()
    warm_up = Probe(["a"])
    warm_up.cell_starts(None)  # a cell starts before the thread does
    cell_running.set()
    warm_up.start()
    assert not warm_up.join(timeout=0.3) and seen == []  # held back while the cell runs
    cell_running.clear()
    warm_up.cell_ends(None)
    assert warm_up.join(timeout=5) and seen == [False, False]  # first, then the provider's

    slow = threading.Event()

    class Slow(WarmUp):
        def _import(self, modules):  # type: ignore[no-untyped-def]
            slow.wait(5)

    begun = Slow(["a"]).start()
    waiter = threading.Thread(target=begun.cell_starts, args=(None,))
    waiter.start()
    waiter.join(0.3)
    assert waiter.is_alive()  # the cell waits for the imports under way
    slow.set()
    waiter.join(5)
    assert not waiter.is_alive() and begun.join(timeout=5)


REFUSE_IN_THE_BACKGROUND = """\
import importlib.abc
class Refuse(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == 'jupyter_deepagent.harness.agent_stack' and (
                threading.current_thread() is not threading.main_thread()):
            raise ImportError('refused in the background')
sys.meta_path.insert(0, Refuse())
"""


def test_a_warm_up_that_fails_leaves_the_first_cell_working(tmp_path: Path) -> None:
    done = _python(
        tmp_path,
        "warm_up.join()\n"
        "failed = list(warm_up.failures)\n"
        "missing = loaded('jupyter_deepagent.harness.agent_stack')\n"
        f"error = run({AGENT!r})\n"
        "print(json.dumps({'failed': failed, 'missing': missing, 'error': error}))",
        prelude=REFUSE_IN_THE_BACKGROUND,
    )
    assert done["failed"] == [
        "jupyter_deepagent.harness.agent_stack: ImportError: refused in the background"
    ]
    assert done["missing"] == []  # the first run imports it in the foreground
    assert done["error"] == "None" and ANSWER in done["stdout"]
    assert "refused" not in done["stdout"] + done["stderr"]  # the user is told nothing


@pytest.mark.allow_hosts(["127.0.0.1"])
def test_in_a_kernel_load_ext_shows_nothing_and_the_first_cell_finds_langchain_loaded(
    tmp_path: Path,
) -> None:
    (tmp_path / "hello.yaml").write_text(SCRIPT)
    env = {
        **os.environ,
        "IPYTHONDIR": str(tmp_path / "ipython"),
        "JUPYTER_DEEPAGENT_STATE_DIR": str(tmp_path / "state"),
    }
    manager, client = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=env)
    try:
        assert _execute(client, "%load_ext jupyter_deepagent") == []
        # a cell never runs beside the imports (it holds them back, or waits for them), so the
        # test looks from cell to cell until they are done
        probe = (
            "import sys\n"
            "_warm_up = get_ipython().magics_manager.registry['AgentMagics'].warm_up\n"
            "print(_warm_up.join(0), _warm_up.failures,\n"
            "      sorted(m for m in ('langchain', 'langgraph', 'ipywidgets') if m in sys.modules))"
        )
        for _ in range(120):
            waited = _execute(client, probe)
            if waited and str(waited[0].get("text")).startswith("True"):
                break
            time.sleep(0.5)
        assert [o.get("text") for o in waited] == [
            "True [] ['ipywidgets', 'langchain', 'langgraph']\n"
        ]
        answered = _execute(client, AGENT)
        assert not [o for o in answered if o["type"] in ("error", "stream")]
        shown = [o["data"].get("text/plain") for o in answered if "data" in o]
        assert ANSWER in shown
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
