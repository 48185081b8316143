"""`WarmUp`: while the user reads the notebook, import in the background what the first run needs.

`%load_ext jupyter_deepagent` itself imports no LangChain, LangGraph or pandas, so it returns at
once. It starts a daemon thread (this module) that imports LangChain, LangGraph and the modules
a first `%%agent` run loads (about a second of imports), then the configured model provider's
package (unless a run already started), so that a first run a couple of seconds later finds
them loaded. It begins after a short pause (`PAUSE`), so the `%load_ext` cell ends before the
imports take the interpreter, and never while a cell runs: a cell that starts before they begin
holds them back until it ends (IPython's `pre_run_cell`/`post_run_cell`), and one that starts
once they have begun waits for them, rather than import the same modules beside them (two threads
importing one circular package can deadlock). The first `%agent` or `%%agent` waits for them
likewise; one that comes before they begin ("Run All") calls the warm-up off and imports what it
needs itself, as without it.

Nothing here reaches the user: an import that fails in the background is left for the run to do
again in the foreground, where its error is shown as it always was (`failures` keeps what
failed). `JUPYTER_DEEPAGENT_WARM_UP=0` turns the thread off.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from importlib import import_module
from pathlib import Path

__all__ = [
    "FIRST_RUN_MODULES",
    "PAUSE",
    "WARM_UP_VARIABLE",
    "WIDGET_MODULES",
    "WarmUp",
    "provider_modules",
    "start_warm_up",
]

WARM_UP_VARIABLE = "JUPYTER_DEEPAGENT_WARM_UP"
"""Set to 0 (or false, no, off) to import nothing in the background at `%load_ext`."""

FIRST_RUN_MODULES: tuple[str, ...] = (
    # the agent: LangChain's agent loop on LangGraph, the harness's tools and middleware (the
    # harness imports them when it builds an agent)
    "langchain.agents",
    "jupyter_deepagent.harness.agent",
    "jupyter_deepagent.harness.agent_stack",
    "jupyter_deepagent.harness.chained_middleware",
    "jupyter_deepagent.harness.budget.middleware",
    "jupyter_deepagent.harness.compression.middleware",
    "jupyter_deepagent.harness.compression.state",
    "jupyter_deepagent.harness.prompt.middleware",
    "jupyter_deepagent.harness.run_events.middleware",
    "jupyter_deepagent.harness.tools.filesystem_middleware",
    "jupyter_deepagent.harness.tools.todo_middleware",
    "jupyter_deepagent.harness.subagents.task_tool",
    "jupyter_deepagent.harness.models.call_policy",
    "jupyter_deepagent.harness.models.resolution",
    "jupyter_deepagent.harness.models.retry",
    "jupyter_deepagent.harness.models.label",
    # the scripted model (yaml): the shipped notebooks and every offline run use one
    "jupyter_deepagent.harness.models.scripted_model",
    # what LangChain imports when a graph is first invoked
    "langchain_core.tracers.context",
    "langchain_core.tracers.run_collector",
    "langchain_core.tracers.stdout",
    "langchain_core.messages.block_translators.langchain_v0",
    # the state folder: the conversations' SQLite saver, the thread's owner and lock
    "langgraph.checkpoint.sqlite",
    "jupyter_deepagent.project.storage.sqlite",
    "jupyter_deepagent.project.storage.owned_checkpointer",
    "jupyter_deepagent.project.storage.artifacts",
    "jupyter_deepagent.project.secrets.redaction",
    "jupyter_deepagent.project.secrets.masked_text",
    "jupyter_deepagent.project.secrets.env_file",
    # the run in the kernel: the notebook as files, the stop button, the streamed answer
    "jupyter_deepagent.jupyter.notebook_fs.mounts",
    "jupyter_deepagent.jupyter.notebook_fs.notebook_backend",
    "jupyter_deepagent.jupyter.notebook_fs.outputs_backend",
    "jupyter_deepagent.jupyter.session.stop_button",
    "jupyter_deepagent.jupyter.session.answer_stream",
    "jupyter_deepagent.jupyter.session.recorded_code_pause",
    "jupyter_deepagent.jupyter.tools.notebook_tools",
    "jupyter_deepagent.jupyter.tools.python_tool",
    # the run's record and what a cell shows of it
    "jupyter_deepagent.trace.run_trace",
    "jupyter_deepagent.trace.research_log.record",
    "jupyter_deepagent.trace.research_log.replay",
    "jupyter_deepagent.trace.safe_html",
    "markdown_it",
    "mdit_py_plugins.dollarmath",
    "nh3",
)
"""What a first `%%agent` run imports (the rest follows from these)."""

WIDGET_MODULES: tuple[str, ...] = ("jupyter_deepagent.jupyter.views.inspector_widget",)
"""ipywidgets and the live inspector, which a run pins in its cell where displays update (not in
terminal IPython)."""

PAUSE = 0.5
"""Seconds the thread waits before it imports: the `%load_ext` cell is over by then, and a run
that comes sooner (the next cell, in "Run All") imports what it needs itself, as without it."""

_OFF = ("0", "false", "no", "off")


def provider_modules(model: object) -> list[str]:
    """The modules that make the chat model of a `model` setting: the scripted model's for
    `"scripted:..."`, LangChain's and the provider package's for `"provider:model"` (a bare
    name is Google's, as in `resolve_model`; LangChain's alone for a provider it does not
    know); none for a model instance."""
    if not isinstance(model, str):
        return []
    provider, colon, _ = model.strip().partition(":")
    provider = provider.strip().replace("-", "_").lower() if colon else "google_genai"
    if provider == "scripted":
        return ["jupyter_deepagent.harness.models.scripted_model"]
    from langchain.chat_models import base

    known: dict[str, tuple[str, ...]] = getattr(base, "_BUILTIN_PROVIDERS", {})
    entry = known.get(provider)
    return ["langchain.chat_models", entry[0]] if entry else ["langchain.chat_models"]


def _configured_model() -> object:
    """The `model` setting of the working folder's configuration files and the environment (the
    notebook's folder, as a kernel usually runs in it)."""
    from jupyter_deepagent.project.settings.agent_config import (
        environment_layers,
        file_layers,
        resolve_config,
    )

    return resolve_config([*file_layers(Path.cwd()), *environment_layers()])[0].model


class WarmUp:
    """Imports modules in a daemon thread: `first` (what the first run waits for), then the
    modules `later` names (asked in the thread: the configured provider's), unless a run
    already waits: it imports the model it uses itself, maybe not the configured one.

    Args:
        first: Module names, imported in order.
        later: Names more modules, imported after `first`; asked in the thread.
        pause: Seconds to wait before importing; a `wait` during them calls the imports off.

    Attributes:
        failures: `"module: error"` for each import that failed in the thread.
    """

    def __init__(
        self,
        first: Sequence[str],
        later: Callable[[], Sequence[str]] = lambda: (),
        *,
        pause: float = 0.0,
    ) -> None:
        self._first = tuple(first)
        self._later = later
        self._pause = pause
        self._asked = threading.Event()
        self._lock = threading.Lock()
        self._importing = False
        self._first_done = threading.Event()
        self._done = threading.Event()
        self._idle = threading.Event()  # cleared while a cell runs
        self._idle.set()
        self.failures: list[str] = []
        self._thread = threading.Thread(target=self._run, name="jupyter_deepagent warm-up")
        self._thread.daemon = True

    def start(self) -> WarmUp:
        """Start the thread (and return this warm-up)."""
        self._thread.start()
        return self

    def _run(self) -> None:
        try:
            self._asked.wait(self._pause)
            while True:  # never beside a cell: it may import the same modules
                self._idle.wait()
                with self._lock:
                    if self._asked.is_set():  # a run came first: it imports what it needs
                        return
                    if self._idle.is_set():
                        self._importing = True
                        break
            self._import(self._first)
            self._first_done.set()
            if not self._asked.is_set():
                self._import(self._named_later())
        finally:
            self._first_done.set()
            self._done.set()

    def cell_starts(self, *_: object) -> None:
        """IPython's `pre_run_cell`: hold the imports back until the cell ends, or, once they
        have begun, let the cell wait for them (two threads importing the same modules can
        deadlock on a circular import)."""
        with self._lock:
            if not self._importing:
                self._idle.clear()
                return
        self._done.wait(60.0)

    def cell_ends(self, *_: object) -> None:
        """IPython's `post_run_cell`: the imports may go on."""
        self._idle.set()

    def _named_later(self) -> Sequence[str]:
        try:
            return list(self._later())
        except Exception as exc:  # a configuration file the run names, if one runs
            self.failures.append(f"the model setting: {type(exc).__name__}: {exc}")
            return []

    def _import(self, modules: Sequence[str]) -> None:
        for name in modules:
            try:
                import_module(name)
            except Exception as exc:  # the run imports it again, and shows what fails
                self.failures.append(f"{name}: {type(exc).__name__}: {exc}")

    def wait(self, timeout: float | None = 60.0) -> bool:
        """Wait until the imports are done (or failed), the provider's too once begun, or call
        them off if they have not begun (the caller imports what it needs); False if the
        thread still works on them after `timeout` seconds."""
        with self._lock:
            self._asked.set()
            if not self._importing:
                return True
        return self._done.wait(timeout)

    def join(self, timeout: float | None = None) -> bool:
        """Wait until every import is done, the provider's too; False after `timeout` seconds."""
        return self._done.wait(timeout)


def start_warm_up(*, widgets: bool) -> WarmUp | None:
    """Start importing what the first run needs, unless `JUPYTER_DEEPAGENT_WARM_UP` is off.

    Args:
        widgets: Whether runs show widgets here (a kernel, not terminal IPython): then
            ipywidgets is imported too.
    """
    if os.environ.get(WARM_UP_VARIABLE, "").strip().lower() in _OFF:
        return None
    first = FIRST_RUN_MODULES + (WIDGET_MODULES if widgets else ())
    return WarmUp(first, lambda: provider_modules(_configured_model()), pause=PAUSE).start()
