"""`Session`: the one object per kernel behind `%%agent`, its configuration, storage and runs.

It knows where the notebook is, reads the configuration layers, opens the checkpointer and store
(SQLite in `.deepagent/` beside the notebook, or PostgreSQL with `database_url`; lazily, at the
first run) as its user's view in the project (see `OwnedStorage`), keeps the current thread,
reads `.env` before each run, and plans each cell's run: the agent over the notebook's
filesystem. Its `runs` (`CellRuns`) run the plans and keep what they leave. The magic, the
widgets, the sidebar and the CLI's kernels share one session (`get_session`). This module
imports no LangChain or LangGraph: a run imports them, unless the background thread `%load_ext`
starts (`magic/warm_up.py`) has already.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.jupyter.session.execution import agent_arguments, build_agent
from jupyter_deepagent.jupyter.session.notebook_file import KernelNotebook
from jupyter_deepagent.jupyter.session.recording import replay_mode
from jupyter_deepagent.jupyter.session.run_options import RunOptions
from jupyter_deepagent.jupyter.session.runs import CellRuns, RunOutcome, RunPlan, run_settings
from jupyter_deepagent.jupyter.session.turns import (
    CELL_METADATA_KEY,
    SOURCE_METADATA_KEY,
    TURN_METADATA_KEY,
    CellAddress,
    new_turn_id,
)
from jupyter_deepagent.jupyter.views.notebook_words import model_errors_in_notebook_words
from jupyter_deepagent.project.models import ModelCache, call_policy
from jupyter_deepagent.project.names import check_thread_name
from jupyter_deepagent.project.secrets.keys import ApiKeys
from jupyter_deepagent.project.settings.agent_config import (
    AgentConfig,
    ConfigLayer,
    coerce_setting,
    environment_layers,
    file_layers,
    model_secrets,
    resolve_config,
)
from jupyter_deepagent.project.settings.spending import price_table
from jupyter_deepagent.project.storage import OwnedStorage, ThreadInfo, open_storage
from jupyter_deepagent.project.storage.owners import ThreadOwner, current_user, project_name
from jupyter_deepagent.project.storage.state_folder import state_folder_of

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from jupyter_deepagent.backends.composite import CompositeBackend
    from jupyter_deepagent.harness.budget.ledger import BudgetLedger
    from jupyter_deepagent.jupyter.notebook_fs.output_capture import OutputCapture
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
    from jupyter_deepagent.project.secrets.masked_text import AgentTexts
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["RunOutcome", "RunPlan", "Session"]


class Session:
    """The agent's state in one kernel: configuration, storage, threads and its runs.

    Attributes:
        tools: Extra tools (LangChain tools or plain functions) every run's agent gets.
        recorded_code: What code the research log served and what the user approved here
            (see `recorded_code`).
        runs: The runs of this kernel's cells and what they leave (its history, the approval
            prompts on screen, the live inspector).
        notebook: Which notebook this kernel runs (`%agent notebook PATH` names it).
        notes: Said in the next run's header, then cleared (that the notebook is unknown).

    Args:
        shell: The IPython shell (its user namespace gives the notebook path and variables).
        capture: The kernel's `OutputCapture`, so /notebook/ sees every cell's outputs.
        notebook_path: The notebook file, when known better than `__session__` says.
    """

    def __init__(
        self,
        shell: Any,
        *,
        capture: OutputCapture | None = None,
        notebook_path: str | None = None,
    ) -> None:
        from jupyter_deepagent.jupyter.session.recorded_code import RecordedCode

        self.shell = shell
        self.capture = capture
        self._overrides: dict[str, Any] = {}
        self._model_secrets: list[str] = []
        self._storage: OwnedStorage | None = None
        self._storage_identity: tuple[str, ThreadOwner] | None = None
        self._thread: str | None = None
        self.keys = ApiKeys()
        self._models = ModelCache(self.keys)
        self._agent_texts: AgentTexts | None = None  # what the agent wrote in /workspace/
        self.tools: list[Any] = []
        self._run_options: dict[str, RunOptions] = {}
        self.recorded_code = RecordedCode()
        self.runs = CellRuns()
        self.notes: list[str] = []
        self.notebook = KernelNotebook(shell, notebook_path, self._agent_wrote)

    def _agent_wrote(self, path: Path, text: str) -> bool:
        """Whether `text`, the file at `path`'s whole text, is exactly what the agent wrote there
        in /workspace/ (a notebook it wrote is never taken for the kernel's)."""
        from jupyter_deepagent.project.secrets.masked_text import file_identity

        return self._agent_texts is not None and self._agent_texts.is_own(file_identity(path), text)

    @property
    def last_trace(self) -> RunTrace | None:
        """The `RunTrace` of the last run (partial if it was stopped or failed); see `runs`."""
        return self.runs.last_trace

    # -- where the notebook is -------------------------------------------------------------------
    @property
    def notebook_path(self) -> Path | None:
        """The notebook file (see `KernelNotebook.locate`), or None when it cannot be told."""
        return self.notebook.locate().path

    @property
    def notebook_dir(self) -> Path:
        """The notebook's folder (the working directory when the notebook is unknown)."""
        path = self.notebook_path
        return path.parent if path is not None else Path.cwd()

    # -- configuration ---------------------------------------------------------------------------
    def _layers(self) -> list[ConfigLayer]:
        return [
            *file_layers(self.notebook_dir),
            ConfigLayer("%agent config", self._overrides),
            *environment_layers(),
        ]

    @property
    def config(self) -> AgentConfig:
        """The notebook's defaults now (files re-read, `%agent config` applied).

        Raises:
            ValueError: A configuration file is invalid; the message names it.
        """
        config = resolve_config(self._layers())[0]
        self._model_secrets = model_secrets(config.model_settings)
        return config

    def config_sources(self) -> dict[str, str]:
        """Setting -> where its value comes from ("default", a file, "%agent config")."""
        return resolve_config(self._layers())[1]

    def configure(self, **settings: object) -> AgentConfig:
        """Set defaults for this kernel, as `%agent config` does; `model` may be a chat model, and
        `model.KEY` sets one keyword of the model (`model.temperature="0.2"`; "none" removes it).

        Raises:
            ValueError: An unknown setting or a value of the wrong type.
        """
        for name, value in settings.items():
            if name.startswith("model."):  # one keyword of the model: added to the others
                keyword = name.removeprefix("model.")
                keywords = dict(self._overrides.get("model_settings") or {})
                added = coerce_setting("model_settings", {keyword: value}, "%agent config")
                keywords.update(cast("dict[str, object]", added))
                self._overrides["model_settings"] = keywords
            else:
                self._overrides[name] = coerce_setting(name, value, "%agent config")
        return self.config

    @property
    def state_dir(self) -> Path:
        """The folder holding conversations, memories and artifacts.

        Raises:
            InputError: It is the notebook's folder, the workspace, or a folder above either:
                the databases and their `.gitignore` would land among the user's files.
        """
        config = self.config
        return state_folder_of(self.notebook_dir, config.state_dir, config.workspace)

    @property
    def owner(self) -> ThreadOwner:
        """This kernel's user (`JUPYTERHUB_USER`, else the OS user) in the notebook's project.

        Raises:
            ValueError: A configuration file is invalid.
        """
        return ThreadOwner(
            project_name(self.config.project, self.notebook_dir.name), current_user()
        )

    @property
    def storage(self) -> OwnedStorage:
        """The checkpointer and store, opened on first use (and reopened when the state folder,
        `database_url`, the project or the user changed).

        Raises:
            ValueError: The state folder cannot be created, is a folder of other files, or its
                databases cannot be opened.
            StateDamaged: A database is damaged or truncated.
            DatabaseUnreachable: The PostgreSQL server of `database_url` cannot be reached.
        """
        config, sources = resolve_config(self._layers())
        folder = self.state_dir
        identity = (config.database_url or str(folder), self.owner)
        if self._storage is not None and self._storage_identity != identity:
            self.close()
        if self._storage is None:
            raw = open_storage(
                folder, config.state_dir, config.database_url, sources["database_url"]
            )
            try:
                self._storage = OwnedStorage(raw, identity[1])
                from jupyter_deepagent.project.storage.artifacts import adopt_earlier_transcripts

                adopt_earlier_transcripts(folder, identity[1].user)
            except BaseException:
                raw.close()
                raise
            self._storage_identity = identity
        return self._storage

    def close(self) -> None:
        """Close the databases (the extension's unload does this)."""
        if self._storage is not None:
            self._storage.close()
            self._storage = None
            self._storage_identity = None

    # -- threads ---------------------------------------------------------------------------------
    @property
    def default_thread(self) -> str:
        """One thread per notebook: the notebook's name (other characters as "-"; a name of none
        of these characters as "notebook-" and a digest of it). A kernel that cannot tell its
        notebook has a thread of its own, "kernel-" and 8 hex digits: it shares no notebook's."""
        path = self.notebook_path
        if path is None:
            return self.notebook.own_thread
        name = re.sub(r"[^A-Za-z0-9_.\-]+", "-", path.stem).strip("-.")[:100]
        try:
            return check_thread_name(name)
        except ValueError:
            return "notebook-" + hashlib.sha256(path.name.encode()).hexdigest()[:8]

    @property
    def thread(self) -> str:
        """The current thread: the last one chosen with -t or --new, else the default."""
        return self._thread or self.default_thread

    def threads(self, *, every_user: bool = False) -> list[ThreadInfo]:
        """This user's conversations in the project (`every_user`: everybody's, yours first).

        Raises:
            ValueError: The state folder is misconfigured or cannot be opened (see `storage`).
        """
        storage = self.storage
        if every_user:
            return storage.project_threads()
        infos = [storage.thread_info(name) for name in storage.thread_names()]
        return [info for info in infos if info is not None]

    def own_thread(self, name: str) -> str:
        """`name` as one of this user's threads (see `ThreadOwner.own`).

        Raises:
            ValueError: The thread is another user's; they alone may run or reset it.
        """
        return self.owner.own(name)

    def _fresh_thread(self) -> str:
        taken = set(self.storage.thread_names())
        base, number = self.default_thread, 2
        while f"{base}-{number}" in taken:
            number += 1
        return f"{base}-{number}"

    # -- secrets ---------------------------------------------------------------------------------
    def secret_values(self) -> list[str]:
        """Values to keep from the model besides the environment's keys: what the env file set,
        the `--context` values of this session's runs, the database URL's password and the
        model's secret keywords (`model.api_key`).

        Asked for every text masked, so it reads no file: a database URL may hold a password
        only in `JUPYTER_DEEPAGENT_DATABASE_URL` (elsewhere it is refused), so that is the one
        place to look."""
        from jupyter_deepagent.project.storage.database_url import (
            database_secrets,
            environment_database_url,
        )

        url = environment_database_url()
        keywords = model_secrets(self._overrides.get("model_settings") or {})
        keywords += self._model_secrets  # those of the files, as last read
        return [*self.keys.values(), *(database_secrets(url) if url else ()), *keywords]

    def redactor(self) -> Callable[[str], str]:
        """Masks secret values (see `Redactor`) in a text."""
        from jupyter_deepagent.project.secrets.redaction import Redactor

        return Redactor(extra=self.secret_values)

    # -- planning a run ----------------------------------------------------------------------------
    def filesystem(
        self, outputs: OutputsBackend, settings: AgentConfig | None = None
    ) -> CompositeBackend:
        """The CompositeBackend the agent sees, with `outputs` mounted at /outputs/."""
        from jupyter_deepagent.jupyter.notebook_fs.mounts import notebook_filesystem
        from jupyter_deepagent.jupyter.notebook_fs.notebook_backend import NotebookBackend
        from jupyter_deepagent.project.secrets.masked_text import AgentTexts

        settings = settings or self.config
        notebook_path = self.notebook_path
        if self._agent_texts is None:
            self._agent_texts = AgentTexts()
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
            memory_namespace=self.storage.memory_namespace,
            user=self.storage.owner.user,
            env_file=self.notebook_dir / settings.env_file,
            redact=notebook.redact,
            agent_texts=self._agent_texts,
            hidden_paths=settings.hidden_paths,
            protected_paths=settings.protected_paths,
            protected_modules=settings.protected_modules,
            notebook_folder=self.notebook_dir,
        )

    def model(self, settings: AgentConfig) -> BaseChatModel:
        """The chat model of `settings` (see `ModelCache.get`), its errors in the notebook's words
        (`%%agent -m ...`, `%agent config ...`) for every model this kernel makes.

        Raises:
            MissingAPIKey: The model's provider needs a key that is not set.
            ModelConfigurationError: The model cannot be created.
            InputError: The env file cannot be read.
        """
        env_file = settings.env_file
        with model_errors_in_notebook_words(env_file):
            policy = call_policy(settings)
            return self._models.get(
                settings.model,
                self.notebook_dir,
                env_file,
                policy,
                keywords=settings.model_settings,
            )

    def _notebook_model(self, spec: str | BaseChatModel) -> str | BaseChatModel:
        """`spec`, or the chat model held in the notebook variable it names (`-m my_model`)."""
        if isinstance(spec, str) and spec.isidentifier():
            from langchain_core.language_models.chat_models import BaseChatModel

            names = self.shell.user_ns if self.shell is not None else {}
            held = names.get(spec)
            if isinstance(held, BaseChatModel):
                return held
            if spec in names and not spec.startswith("_"):  # a variable, but not a model
                msg = (
                    f"The model {spec!r} names a notebook variable that holds "
                    f"{type(held).__name__}, not a chat model. Give -m (or the model setting) a "
                    "variable holding a LangChain chat model, or a model such as "
                    "google_genai:gemini-2.5-flash or openai:gpt-4o."
                )
                raise InputError(msg, source="model")
        return spec

    def plan(
        self,
        options: RunOptions,
        *,
        cell_id: str | None = None,
        cell: CellAddress | None = None,
        resume: bool = False,
    ) -> RunPlan:
        """Decide the thread, model, filesystem and agent of a run, without running it.

        `cell` (an `%%agent` cell's address) makes the run a turn of that cell: its checkpoints
        carry the cell's key, so a later re-run of the cell can rewind to it (see `run`).
        `resume` makes it the resume of a paused run: it is recorded in the research log as a
        "resume" of the cell whose turn it continues (the last `%%agent` cell of the thread).

        Raises:
            MissingAPIKey: The model's provider needs a key that is not set.
            ModelConfigurationError: The model cannot be created.
            InputError: A configuration file, the env file, the state folder or the research
                log is invalid (a `ValueError`, as some checks still raise).
            StateDamaged: A database of the state folder is damaged.
            ThreadBusy: Another process (a second kernel) is running the thread.
        """
        from jupyter_deepagent.harness.models.label import model_label
        from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
        from jupyter_deepagent.jupyter.session.stop_button import StopButton

        settings = run_settings(self.config, options)
        settings = replace(settings, model=self._notebook_model(settings.model))
        mode = replay_mode(options.replay, settings.replay)
        thread = None if options.new else options.thread or self.thread
        notebook, note = self.notebook.for_run(
            turn=cell is not None or resume, strict=mode == "strict", thread=thread
        )
        self.notes += [note] if note else []
        recording = self.runs.recordings.start(
            notebook,
            options.thread or self.thread,
            cell,
            resume=resume,
            mode=mode,
            spec=settings.model,
            make_model=lambda: self.model(settings),
            redact=self.redactor(),
            on_served=self.recorded_code.note_served,
        )
        model = recording.model if recording is not None else self.model(settings)
        new_thread = options.new
        if options.new:
            self._thread = self._fresh_thread()
        elif options.thread:
            self._thread = self.own_thread(options.thread)
        thread = self.thread
        self._run_options[thread] = replace(options, thread=thread, new=False)
        if cell is not None:
            self.runs.recordings.turn(thread, cell)
        self.keys.add_context(options.context)
        outputs = OutputsBackend()
        storage = self.storage
        storage.thread_lock(thread).check()
        stop_button = StopButton()
        backend = self.filesystem(outputs, settings)
        redact = self.redactor()
        arguments = agent_arguments(
            self.shell, settings, backend, self.tools, self.recorded_code, redact
        )
        agent = build_agent(model, arguments, storage, stop_button, self.recorded_code)
        metadata = {"thread": thread}
        if cell_id:
            metadata["cell_id"] = cell_id
        if cell is not None:
            metadata[CELL_METADATA_KEY] = cell.key
            metadata[SOURCE_METADATA_KEY] = cell.source_key
            metadata[TURN_METADATA_KEY] = new_turn_id()
        return RunPlan(
            thread=thread,
            new_thread=new_thread,
            settings=settings,
            model_label=model_label(model),  # as the events and the research log name it
            agent=agent,
            outputs=outputs,
            context=dict(options.context),
            config={"configurable": {"thread_id": thread}, "metadata": metadata},
            stop_button=stop_button,
            storage=storage,
            redact=redact,
            recording=recording,
            ledger=self._ledger(settings, thread, resume=resume),
            prices=price_table(settings.prices),
        )

    def _ledger(self, settings: AgentConfig, thread: str, *, resume: bool) -> BudgetLedger | None:
        """The budget ledger of a run on `thread`: a resume goes on with the paused run's (what
        was spent before the pause still counts); else a new one for the run's budget, which
        pauses the run, unless the headless runner runs the cell: no one could answer, so the
        run stops at its budget."""
        from jupyter_deepagent.harness.budget.ledger import BudgetLedger

        if resume and self.runs.last_thread == thread and self.runs.last_trace is not None:
            paused = self.runs.last_trace.ledger
            if paused is not None:
                return paused
        if settings.budget is None:
            return None
        return BudgetLedger(settings.budget, pause=self.recorded_code.headless is None)

    def resume_options(self, thread: str | None = None) -> RunOptions:
        """The options of the last run planned on `thread` in this kernel (its model, tools,
        runtime context...), so resuming it continues with the same; else the defaults.

        Raises:
            InputError: `thread` is another user's (`own_thread`).
        """
        name = self.own_thread(thread) if thread else self.thread
        return self._run_options.get(name) or RunOptions(thread=name)
