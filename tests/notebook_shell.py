"""A real IPython shell with the extension loaded, standing in for a notebook's kernel; and a
plain `shell` fixture without it.

Imported by the magic and session tests: `from notebook_shell import ...`.
"""

from __future__ import annotations

import atexit
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output
from traitlets.config import Config

from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture

SCRIPTS = Path(__file__).parent / "fixtures" / "scripts"


@dataclass
class CellRun:
    """What running one cell did: its result (error_in_exec...) and everything it showed."""

    result: Any
    stdout: str
    stderr: str
    outputs: list[Any]

    @property
    def error(self) -> BaseException | None:
        return self.result.error_in_exec or self.result.error_before_exec

    @property
    def displays(self) -> list[Any]:
        """Each display in its final state (updates applied in place, as a notebook saves it)."""
        final: dict[Any, Any] = {}
        for index, output in enumerate(self.outputs):
            final[(output.transient or {}).get("display_id") or index] = output
        return list(final.values())

    def bundles(self, mime: str) -> list[Any]:
        """The data for `mime` of every display carrying it, in order."""
        return [o.data[mime] for o in self.displays if mime in o.data]

    @property
    def live_text(self) -> str:
        """The live lines of the run (the first display, plain text only), as they ended."""
        plain = [o.data["text/plain"] for o in self.displays if set(o.data) == {"text/plain"}]
        return plain[0] if plain else ""

    @property
    def rendered(self) -> list[Any]:
        """Displays of text the kernel rendered to safe HTML (answers, `/outputs/*.md`, tables),
        in their final state."""
        return [o for o in self.displays
                if str(o.data.get("text/html", "")).startswith('<div class="jda-text')]

    @property
    def markdown(self) -> list[str]:
        """The text, as written, of each display the kernel rendered (its `text/plain`)."""
        return [o.data["text/plain"] for o in self.rendered]


class Notebook:
    """A shell on a notebook file in a folder; `restart()` gives a fresh kernel on the same folder."""

    def __init__(self, folder: Path, name: str = "analysis.ipynb") -> None:
        self.folder = folder
        self.path = folder / name
        self.shell = self._start()

    def _start(self) -> InteractiveShell:
        InteractiveShell.clear_instance()
        shell = _with_memory_history(InteractiveShell.instance)
        shell.user_ns["__session__"] = str(self.path)
        shell.run_line_magic("load_ext", "jupyter_deepagent")
        return shell

    @property
    def session(self) -> Any:
        from jupyter_deepagent.jupyter.magic.magics import get_session

        return get_session(self.shell)

    def run(self, source: str) -> CellRun:
        """Run a cell as Jupyter would (stored in history, so it gets an execution count)."""
        with capture_output() as captured:
            result = self.shell.run_cell(source, store_history=True)
        return CellRun(result, captured.stdout, captured.stderr, captured.outputs)

    def stop(self) -> None:
        self.shell.run_line_magic("unload_ext", "jupyter_deepagent")
        _forget(self.shell)
        InteractiveShell.clear_instance()

    def restart(self) -> None:
        """Shut the kernel down and start a new one on the same notebook folder."""
        self.stop()
        self.shell = self._start()


def _with_memory_history(make: Any) -> InteractiveShell:
    config = Config()
    config.HistoryManager.hist_file = ":memory:"
    shell = make(config=config)
    shell.history_manager.outputs = defaultdict(list)  # IPython 9 shares one dict between shells
    return shell


def _forget(shell: InteractiveShell) -> None:
    """Drop the exit hook every shell registers: it keeps the shell (and all a test ran in it)
    alive until the end of the session, and then runs a full garbage collection per shell."""
    atexit.unregister(shell.atexit_operations)


@pytest.fixture
def shell() -> Iterator[InteractiveShell]:
    """A fresh IPython shell with in-memory history, without the extension."""
    fresh = _with_memory_history(InteractiveShell)
    yield fresh
    OutputCapture.install(fresh).uninstall()
    _forget(fresh)


@pytest.fixture
def notebook(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Notebook]:
    """A fresh shell on `analysis.ipynb` in an empty project folder (also the working directory)."""
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    made = Notebook(folder)
    yield made
    made.stop()


def scripted(*steps: Any, **fields: Any) -> Any:
    """A ScriptedChatModel with a context window, so no window warning shows in the cell."""
    from jupyter_deepagent import ScriptedChatModel

    return ScriptedChatModel(script=list(steps), profile={"max_input_tokens": 100_000}, **fields)


def call(name: str, **args: Any) -> dict[str, Any]:
    """A scripted reply that calls one tool."""
    return {"tool_calls": [{"name": name, "args": args}]}
