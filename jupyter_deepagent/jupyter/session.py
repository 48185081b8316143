"""`Session`: the one object per kernel behind `%%agent`, its configuration and its storage.

It knows where the notebook is, reads the configuration layers, opens the SQLite checkpointer and
store in `.deepagent/` beside the notebook (lazily, at the first run), keeps the current thread,
reads `.env` before each run, and plans each cell's run: the agent over the notebook's
filesystem. Running a plan is `execution`'s job. LangChain and LangGraph are imported only when a
run starts.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from jupyter_deepagent.backends import normalize_virtual_path
from jupyter_deepagent.jupyter import execution
from jupyter_deepagent.jupyter.config import (
    AgentConfig,
    ConfigLayer,
    coerce_setting,
    file_layers,
    resolve_config,
)
from jupyter_deepagent.jupyter.execution import RunOutcome, RunPlan
from jupyter_deepagent.jupyter.options import RunOptions, check_thread_name
from jupyter_deepagent.jupyter.session_keys import SessionKeys
from jupyter_deepagent.jupyter.session_models import SessionModels, model_label
from jupyter_deepagent.jupyter.storage import Storage, ThreadInfo

__all__ = ["RunOutcome", "RunPlan", "Session"]


def _virtual(path: str) -> str:
    """A skills/memory path of the configuration: relative paths are in /workspace/."""
    return normalize_virtual_path(path if path.startswith("/") else "/workspace/" + path)


class Session:
    """The agent's state in one kernel: configuration, storage, threads and the last run.

    Attributes:
        tools: Extra tools (LangChain tools or plain functions) every run's agent gets.
        last_trace: The `RunTrace` of the last run (partial if it was stopped or failed).

    Args:
        shell: The IPython shell (its user namespace gives the notebook path and variables).
        capture: The kernel's `OutputCapture`, so /notebook/ sees every cell's outputs.
        notebook_path: The notebook file, when known better than `__session__` says.
    """

    def __init__(self, shell: Any, *, capture: Any = None, notebook_path: str | None = None):
        self.shell = shell
        self.capture = capture
        self._notebook_path = notebook_path
        self._overrides: dict[str, Any] = {}
        self._storage: Storage | None = None
        self._thread: str | None = None
        self.keys = SessionKeys()
        self._models = SessionModels(self.keys)
        self.last_trace: Any = None
        self.last_thread: str | None = None
        self.tools: list[Any] = []

    # -- where the notebook is -------------------------------------------------------------------
    @property
    def notebook_path(self) -> Path | None:
        """The notebook file: given explicitly, or from `__session__` (set by Jupyter)."""
        candidates = [self._notebook_path]
        namespace = getattr(self.shell, "user_ns", {})
        candidates += [namespace.get("__session__"), namespace.get("__vsc_ipynb_file__")]
        for candidate in candidates:
            if isinstance(candidate, str) and candidate.endswith(".ipynb"):
                return Path(candidate)
        return None

    @property
    def notebook_dir(self) -> Path:
        """The notebook's folder (the working directory when the notebook is unknown)."""
        path = self.notebook_path
        return path.parent if path is not None else Path.cwd()

    # -- configuration ---------------------------------------------------------------------------
    def _layers(self) -> list[ConfigLayer]:
        return [*file_layers(self.notebook_dir), ConfigLayer("%agent config", self._overrides)]

    @property
    def config(self) -> AgentConfig:
        """The notebook's defaults now (files re-read, `%agent config` applied).

        Raises:
            ValueError: A configuration file is invalid; the message names it.
        """
        return resolve_config(self._layers())[0]

    def config_sources(self) -> dict[str, str]:
        """Setting -> where its value comes from ("default", a file, "%agent config")."""
        return resolve_config(self._layers())[1]

    def configure(self, **settings: Any) -> AgentConfig:
        """Set defaults for this kernel, as `%agent config` does; `model` may be a chat model.

        Raises:
            ValueError: An unknown setting or a value of the wrong type.
        """
        for name, value in settings.items():
            self._overrides[name] = coerce_setting(name, value, "%agent config")
        return self.config

    @property
    def state_dir(self) -> Path:
        """The folder holding conversations, memories and artifacts.

        Raises:
            ValueError: It is the notebook's folder, the workspace, or a folder above either:
                the databases and their `.gitignore` would land among the user's files.
        """
        config = self.config
        folder = (self.notebook_dir / config.state_dir).resolve()
        for name, setting in (("the notebook's folder", "."), ("the workspace", config.workspace)):
            mine = (self.notebook_dir / setting).resolve()
            if folder == mine or folder in mine.parents:
                msg = (
                    f"state_dir {config.state_dir!r} is {name} or a folder above it, so the "
                    "agent's databases would mix with your files. Set state_dir to a folder of "
                    "its own, such as .deepagent (in .deepagent.toml or with %agent config)."
                )
                raise ValueError(msg)
        return folder

    @property
    def storage(self) -> Storage:
        """The checkpointer and store, opened on first use (and reopened if the folder moved).

        Raises:
            ValueError: The state folder cannot be created or its databases opened.
        """
        folder = self.state_dir
        if self._storage is not None and self._storage.folder != folder:
            self._storage.close()
            self._storage = None
        if self._storage is None:
            try:
                self._storage = Storage(folder)
            except (OSError, sqlite3.Error) as exc:
                why = getattr(exc, "strerror", None) or str(exc)
                msg = (
                    f"state_dir {self.config.state_dir!r}: cannot keep conversations in {folder}: "
                    f"{why}. Set state_dir to a folder you can write (in .deepagent.toml or "
                    "with %agent config state_dir=...)."
                )
                raise ValueError(msg) from None
        return self._storage

    def close(self) -> None:
        """Close the databases (the extension's unload does this)."""
        if self._storage is not None:
            self._storage.close()
            self._storage = None

    # -- threads ---------------------------------------------------------------------------------
    @property
    def default_thread(self) -> str:
        """One thread per notebook: the notebook's name (other characters as "-"), or "default"."""
        path = self.notebook_path
        name = re.sub(r"[^A-Za-z0-9_.\-]+", "-", path.stem).strip("-.")[:100] if path else ""
        try:
            return check_thread_name(name)
        except ValueError:
            return "default"

    @property
    def thread(self) -> str:
        """The current thread: the last one chosen with -t or --new, else the default."""
        return self._thread or self.default_thread

    def threads(self) -> list[ThreadInfo]:
        """The conversations kept in this notebook's state folder.

        Raises:
            ValueError: The state folder is misconfigured or cannot be opened (see `storage`).
        """
        storage = self.storage
        infos = [storage.thread_info(name) for name in storage.thread_names()]
        return [info for info in infos if info is not None]

    def reset(self, thread: str | None = None) -> str:
        """Forget a thread's conversation (the current one by default); returns its name.

        Its checkpoints go, and so does its transcript `/conversation_history/<thread>.md`. Files
        the agent wrote elsewhere stay: `/large_tool_results/`, `/subagents/` (shared by every
        thread), `/memories/`, `/workspace/`.

        Raises:
            ValueError: The state folder is misconfigured or cannot be opened (see `storage`).
        """
        name = thread or self.thread
        self.storage.delete_thread(name)
        transcript = self.state_dir / "artifacts" / "conversation_history" / f"{name}.md"
        transcript.unlink(missing_ok=True)
        return name

    def _fresh_thread(self) -> str:
        taken = set(self.storage.thread_names())
        base, number = self.default_thread, 2
        while f"{base}-{number}" in taken:
            number += 1
        return f"{base}-{number}"

    # -- secrets ---------------------------------------------------------------------------------
    def secret_values(self) -> list[str]:
        """Values to keep from the model besides the environment's keys: what the env file set,
        and the `--context` values of this session's runs."""
        return list(self.keys.values())

    def redactor(self) -> Callable[[str], str]:
        """Masks secret values (see `Redactor`) in a text."""
        from jupyter_deepagent.jupyter.redaction import Redactor

        return Redactor(extra=self.secret_values)

    # -- planning a run ----------------------------------------------------------------------------
    def _settings(self, options: RunOptions) -> AgentConfig:
        config = self.config
        system = "\n\n".join(p for p in (config.system_prompt, options.system or "") if p.strip())
        return replace(
            config,
            model=options.model if options.model is not None else config.model,
            system_prompt=system,
            skills=tuple(_virtual(p) for p in (*config.skills, *options.skills)),
            memory=tuple(_virtual(p) for p in (*config.memory, *options.memory)),
            into=options.into or config.into,
            quiet=options.quiet or config.quiet,
        )

    def filesystem(self, outputs: Any, settings: AgentConfig | None = None) -> Any:
        """The CompositeBackend the agent sees, with `outputs` mounted at /outputs/."""
        from jupyter_deepagent.jupyter.mounts import notebook_filesystem
        from jupyter_deepagent.jupyter.notebook_backend import NotebookBackend

        settings = settings or self.config
        notebook_path = self.notebook_path
        notebook = NotebookBackend(
            self.shell,
            capture=self.capture,
            notebook_path=str(notebook_path) if notebook_path is not None else None,
            secrets=self.secret_values,
        )
        return notebook_filesystem(
            notebook=notebook,
            outputs=outputs,
            workspace=(self.notebook_dir / settings.workspace).resolve(),
            workspace_read_only=settings.workspace_read_only,
            state_dir=self.state_dir,
            store=self.storage.store,
            env_file=self.notebook_dir / settings.env_file,
            redact=notebook.redact,
        )

    def agent_arguments(self, settings: AgentConfig, backend: Any) -> dict[str, Any]:
        """The keyword arguments of `create_research_agent` (besides the model) for `settings`."""
        from jupyter_deepagent.jupyter.mounts import notebook_prompt

        notebook = notebook_prompt(workspace_read_only=settings.workspace_read_only)
        return {
            "tools": list(self.tools),
            "context_window": settings.context_window,
            "system_prompt": "\n\n".join(p for p in (settings.system_prompt, notebook) if p),
            "memory": list(settings.memory),
            "skills": list(settings.skills),
            "backend": backend,
            "interrupt_on": dict.fromkeys(settings.interrupt_on, True) or None,
        }

    def plan(self, options: RunOptions, *, cell_id: str | None = None) -> RunPlan:
        """Decide the thread, model, filesystem and agent of a run, without running it.

        Raises:
            MissingAPIKey: The model's provider needs a key that is not set.
            ModelConfigurationError: The model cannot be created.
            ValueError: A configuration file, the env file or the state folder is invalid.
        """
        from jupyter_deepagent.harness.agent import create_research_agent
        from jupyter_deepagent.jupyter.outputs_backend import OutputsBackend
        from jupyter_deepagent.jupyter.stop_button import StopButton, StopButtonMiddleware

        settings = self._settings(options)
        model = self._models.get(settings.model, self.notebook_dir, settings.env_file)
        new_thread = options.new
        if options.new:
            self._thread = self._fresh_thread()
        elif options.thread:
            self._thread = options.thread
        thread = self.thread
        self.keys.add_context(options.context)
        outputs = OutputsBackend()
        storage = self.storage
        stop_button = StopButton()
        agent = create_research_agent(
            model,
            **self.agent_arguments(settings, self.filesystem(outputs, settings)),
            middleware=[StopButtonMiddleware(stop_button)],
            store=storage.store,
            checkpointer=storage.checkpointer,
            name="agent",
        )
        metadata = {"thread": thread}
        if cell_id:
            metadata["cell_id"] = cell_id
        return RunPlan(
            thread=thread,
            new_thread=new_thread,
            settings=settings,
            model_label=model_label(settings.model),
            agent=agent,
            outputs=outputs,
            context=dict(options.context),
            config={"configurable": {"thread_id": thread}, "metadata": metadata},
            stop_button=stop_button,
        )

    # -- running (see `execution`) ----------------------------------------------------------------
    def settle(self, plan: RunPlan) -> list[str]:
        """Answer tool calls the thread left without results (see `settle_thread`)."""
        return execution.settle(plan)

    def run(
        self,
        plan: RunPlan,
        prompt: str,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        *,
        on_token: Callable[[str | None], None] | None = None,
    ) -> RunOutcome:
        """Send `prompt` to the plan's thread (settled first) and run it; see `execute`."""
        return self._traced(plan, lambda: execution.run(
            plan, prompt, on_event, on_token=on_token, redact=self.redactor()
        ))

    def resume_payload(
        self,
        plan: RunPlan,
        decision: str,
        *,
        message: str = "",
        edits: Mapping[str, Any] | None = None,
    ) -> Any:
        """The `Command` answering every tool call waiting for approval on the plan's thread.

        Raises:
            ValueError: Nothing is waiting on the thread, or the decision is not allowed.
        """
        return execution.resume_payload(plan, decision, message=message, edits=edits)

    def execute(
        self,
        plan: RunPlan,
        payload: Any,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_token: Callable[[str | None], None] | None = None,
    ) -> RunOutcome:
        """Run the plan's agent on `payload` (new messages, or a resume `Command`).

        On a stop (KeyboardInterrupt) or a failure, `last_trace` keeps the events so far, the
        thread is settled, and the exception propagates (a failed model call as
        `ModelCallFailed`).
        """
        return self._traced(plan, lambda: execution.execute(
            plan, payload, on_event, on_token, redact=self.redactor()
        ))

    def _traced(self, plan: RunPlan, run: Callable[[], RunOutcome]) -> RunOutcome:
        self.last_thread = plan.thread
        try:
            outcome = run()
        except BaseException as exc:
            self.last_trace = getattr(exc, "trace", None)
            raise
        self.last_trace = outcome.trace
        return outcome

    # -- inspecting ------------------------------------------------------------------------------
    def prompt_for(self, thread: str | None = None) -> tuple[Any, str]:
        """The system prompt of a thread, and what it is: the last one sent, or the next one.

        After a run on `thread` in this kernel, the prompt its last model call received;
        otherwise the prompt the next run will send with the current configuration.

        Raises:
            ValueError: A configuration file or the state folder is invalid.
        """
        from jupyter_deepagent.harness.agent import assemble_prompt
        from jupyter_deepagent.jupyter.outputs_backend import OutputsBackend

        name = thread or self.thread
        if self.last_thread == name and self.last_trace is not None and self.last_trace.prompts:
            return self.last_trace.prompts[-1], "as sent in the last model call"
        settings = self._settings(RunOptions())
        backend = self.filesystem(OutputsBackend(), settings)
        assembly = assemble_prompt(**self.agent_arguments(settings, backend))
        return assembly, "as the next run sends it"

    def conversation_size(self, thread: str | None = None) -> tuple[int, int]:
        """Messages kept in a thread and their approximate tokens.

        Raises:
            ValueError: The state folder is misconfigured or cannot be opened (see `storage`).
        """
        from jupyter_deepagent.harness.compression.tokens import messages_tokens

        saved = self.storage.checkpointer.get_tuple(
            {"configurable": {"thread_id": thread or self.thread}}
        )
        if saved is None:
            return 0, 0
        messages = saved.checkpoint.get("channel_values", {}).get("messages", [])
        return len(messages), messages_tokens(messages)

