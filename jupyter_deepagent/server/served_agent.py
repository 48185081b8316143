"""The research agent of a notebook folder, built for LangGraph Server (`langgraph dev`, a team's
server): the same settings as `%%agent` in that folder, without the notebook.

- `/workspace/`: a configured folder (default: the folder itself), guarded as in the notebook;
- `/memories/`: the server's store (`langgraph dev`: in memory; a team's server: PostgreSQL);
- `/notebook/`, `/outputs/`: absent, a server has no kernel;
- `/large_tool_results/`, `/conversation_history/`, `/subagents/` and anything else: the
  thread's state, in the server's checkpoints.

The server gives the graph its checkpointer and store when it runs it, so the graph is compiled
without its own; `/memories/` reaches the server's store through the running graph. Settings that
only mean something in a kernel (`python`, `tools`, `into`, `quiet`, `replay`, ...) are ignored;
the settings' `[[subagents]]` are offered as in the notebook; Python-only parts (tools,
subagents with a model of their own) are arguments of `build_served_agent`, written in the graph
module `jupyter-deepagent serve-config` generates.
Nothing here imports IPython: a server has no kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_deepagent._exceptions import BackendError, InputError, MissingAPIKey
from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.backends.store import StoreBackend
from jupyter_deepagent.project.settings.agent_config import (
    AgentConfig,
    file_layers,
    resolve_config,
)
from jupyter_deepagent.project.settings.paths import virtual_path
from jupyter_deepagent.project.settings.subagents import subagent_specs
from jupyter_deepagent.project.storage.database_url import libpq_credential_files
from jupyter_deepagent.project.storage.owners import memory_namespace, project_name

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.tools import BaseTool
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore
    from langgraph.types import Checkpointer

    from jupyter_deepagent.project.secrets.keys import ApiKeys

__all__ = [
    "GRAPH_MODULE",
    "SERVER_CONFIG_FILE",
    "ServerStoreBackend",
    "build_served_agent",
    "served_config",
]

SERVER_CONFIG_FILE = "langgraph.json"
"""The file LangGraph Server reads: which graph to serve, its dependencies, its env file."""
GRAPH_MODULE = "deepagent_graph.py"
"""The module that builds the served graph; the server runs it, so the agent may not change it."""
_SERVER_STATE_FOLDERS = (".langgraph_api",)
"""What `langgraph dev` keeps in the folder it runs in: every thread's checkpoints, as pickles it
loads at start. Hidden from the agent, which could otherwise read other threads or plant code."""


class ServerStoreBackend(StoreBackend):
    """`/memories/` in the store of the graph run it is used in: LangGraph Server's store.

    The server hands its store to the graph at each run (`langgraph.config.get_store()`), so
    nothing is opened when the module loads. Given a `store`, that store is used instead (for a
    served graph run locally, with `trace_run`).

    Args:
        store: A fixed store, or None for the running graph's.
        namespace: The store namespace of the files.
    """

    def __init__(self, store: BaseStore | None, namespace: tuple[str, ...]) -> None:
        super().__init__(store, namespace=namespace)

    @property
    def store(self) -> BaseStore:
        """The fixed store, else the store of the graph running now.

        Raises:
            BackendError: Used outside a graph run that has a store.
        """
        if self._store is not None:
            return self._store
        from langgraph.config import get_store

        try:
            store = get_store()
        except RuntimeError:
            store = None
        if store is None:
            msg = (
                "/memories/ has no store here: the served agent keeps long-term memory in the "
                "store LangGraph Server gives each run. Run it under the server, or pass store= "
                "to build_served_agent."
            )
            raise BackendError(msg)  # no inner path: the message names the mount itself
        return store


def served_config(folder: str | Path) -> AgentConfig:
    """The settings of a folder as a served agent reads them: `pyproject.toml`'s
    `[tool.jupyter-deepagent]` and `.deepagent.toml`, over the defaults.

    Raises:
        InputError: A configuration file is invalid; the message names it.
    """
    return resolve_config(file_layers(Path(folder)))[0]


def _workspace(folder: Path, config: AgentConfig, workspace: str | Path | None) -> Path:
    """The folder mounted at /workspace/.

    Raises:
        InputError: It is not a folder.
    """
    chosen = Path(workspace if workspace is not None else config.workspace)
    path = (chosen if chosen.is_absolute() else folder / chosen).resolve()
    if not path.is_dir():
        source = "workspace=" if workspace is not None else "the workspace setting"
        msg = (
            f"{source} {str(chosen)!r} is not a folder (looked for {path}). Create it, or "
            "choose another one."
        )
        raise InputError(msg, source=source)
    return path


def _filesystem(
    folder: Path,
    config: AgentConfig,
    workspace: Path,
    store: BaseStore | None,
    namespace: tuple[str, ...],
    redact: Callable[[str], str],
) -> CompositeBackend:
    """/workspace/ guarded as in the notebook (the generated server files protected too, and
    module files in `folder`, where its notebooks' kernels start),
    /memories/ in the server's store under the project's namespace (the notebooks' of the same
    project, when the server uses their database), everything else in the thread's state."""
    from jupyter_deepagent.project.workspace import GuardedFolder, kernel_folders_below

    protected = tuple(dict.fromkeys((*config.protected_paths, SERVER_CONFIG_FILE, GRAPH_MODULE)))
    guarded = GuardedFolder(
        DiskBackend(workspace, read_only=config.workspace_read_only),
        hidden=(
            (folder / config.state_dir).resolve(),
            (folder / config.env_file).resolve(),
            *libpq_credential_files(),
        ),
        redact=redact,
        hidden_paths=tuple(dict.fromkeys((*config.hidden_paths, *_SERVER_STATE_FOLDERS))),
        protected_paths=protected,
        protected_modules=config.protected_modules,
        # the folder's notebooks start their kernels in it, also below a wider workspace
        kernel_folders=kernel_folders_below(workspace, folder),
    )
    return CompositeBackend(
        StateBackend(), {"/workspace/": guarded, "/memories/": ServerStoreBackend(store, namespace)}
    )


def _served_prompt(read_only: bool) -> str:
    """The system prompt's section on the served agent's files."""
    workspace = "read-only" if read_only else "data files, scripts, reports you are asked to save"
    return f"""\
## Your files

You run as a service. Your files are mounted like this:
- `/workspace/`: the project's folder on disk ({workspace}).
- `/memories/`: long-term memory, shared by every conversation of this project.
- Any other path is scratch space for this conversation."""


def _served_model(config: AgentConfig, folder: Path, keys: ApiKeys) -> BaseChatModel:
    """The configured chat model, its keys read from the server's environment and the env file.

    Raises:
        MissingAPIKey: No key is set; the message says where to set one on a server.
        ModelConfigurationError: The model cannot be created.
        InputError: The env file cannot be read.
    """
    from jupyter_deepagent.project.models import ModelCache, call_policy

    try:
        return ModelCache(keys).get(
            config.model,
            folder,
            config.env_file,
            call_policy(config),
            keywords=config.model_settings,
        )
    except MissingAPIKey as exc:
        raise _missing_key_on_server(exc, config, folder, keys) from None


def _missing_key_on_server(
    exc: MissingAPIKey, config: AgentConfig, folder: Path, keys: ApiKeys
) -> MissingAPIKey:
    """What to set on a server when the model's key is missing, in the server's words."""
    names = " or ".join(exc.variables) if exc.variables else "its API key variable"
    example = exc.variables[0] if exc.variables else "PROVIDER_API_KEY"
    msg = (
        f"The served agent has no API key for the model {config.model!r}: set {names} in the "
        "environment the LangGraph server starts in (your deployment's secrets, or `export "
        f"{example}=...` before `langgraph dev`), or put a line `{example}=<your key>` in "
        f"{config.env_file} in {folder} (the env_file setting), then restart the server. To "
        "serve without a model service, set "
        '`model = "scripted:path/to/script.yaml"` (a scripted model that plays a script, '
        'offline) or `model = "ollama:<model>"` in .deepagent.toml, or pass model= to '
        f"build_served_agent in {GRAPH_MODULE}."
    )
    note = keys.unreadable_note(exc.variables, config.env_file)
    return MissingAPIKey(msg + note, variables=exc.variables)


def build_served_agent(
    folder: str | Path,
    *,
    workspace: str | Path | None = None,
    tools: Sequence[BaseTool | Callable[..., object]] = (),
    subagents: Sequence[object] = (),
    middleware: Sequence[AgentMiddleware] = (),
    checkpointer: Checkpointer = None,
    store: BaseStore | None = None,
    **settings: object,
) -> CompiledStateGraph:
    """The research agent of `folder`'s configuration, as a graph for LangGraph Server.

    Args:
        folder: The notebook folder whose `.deepagent.toml` (and `pyproject.toml`) configure the
            agent; a `scripted:` model, the env file and `workspace` are relative to it.
        workspace: The folder mounted at /workspace/ (default: the `workspace` setting, itself
            the folder by default), guarded as in the notebook.
        tools: Extra tools (LangChain tools or plain functions).
        subagents: `SubAgent`/dict specs for the `task` tool besides the settings'
            `[[subagents]]` (a `response_format` gives each task typed columns in
            `results_frame`).
        middleware: Your own `AgentMiddleware`.
        checkpointer: None under LangGraph Server, which gives the graph its own; pass one to
            run the graph yourself (`trace_run`), as approvals need it.
        store: None under LangGraph Server (its store holds /memories/); pass one to run the
            graph yourself.
        **settings: Settings overriding the files' (`model`, `system_prompt`, ...), checked
            like `%agent config` values.

    Returns:
        The compiled agent graph, without a checkpointer or store of its own unless given.

    Raises:
        ValueError: `folder` is not a folder.
        InputError: A configuration file or setting is invalid, or the workspace is not a
            folder; the message names the file or setting.
        MissingAPIKey: The model's provider needs a key that is not set (in the server's
            environment or the env file); the message says where to set it on a server.
        ModelConfigurationError: The model cannot be created.
    """
    from jupyter_deepagent.harness.agent import create_research_agent
    from jupyter_deepagent.harness.approval_policy import code_running_tools
    from jupyter_deepagent.project.secrets.keys import ApiKeys
    from jupyter_deepagent.project.secrets.redaction import Redactor
    from jupyter_deepagent.project.settings.agent_config import ConfigLayer, coerce_setting

    root = Path(folder).resolve()
    if not root.is_dir():
        msg = f"build_served_agent: {folder!s} is not a folder; give the notebook folder."
        raise ValueError(msg)
    given = ConfigLayer(
        "build_served_agent",
        {
            name: coerce_setting(name, value, "build_served_agent")
            for name, value in settings.items()
        },
    )
    config = resolve_config([*file_layers(root), given])[0]
    keys = ApiKeys()
    model = _served_model(config, root, keys)
    redact = Redactor(extra=keys.values)
    namespace = memory_namespace(project_name(config.project, root.name))
    backend = _filesystem(
        root, config, _workspace(root, config, workspace), store, namespace, redact
    )
    approvals = dict.fromkeys(config.interrupt_on, True) or None
    asks = approvals or code_running_tools(tools)  # a code-running tool always asks
    return create_research_agent(
        model,
        list(tools),
        system_prompt="\n\n".join(
            p for p in (config.system_prompt, _served_prompt(config.workspace_read_only)) if p
        ),
        memory=[virtual_path(p) for p in config.memory],
        skills=[virtual_path(p) for p in config.skills],
        subagents=[*subagent_specs(config.subagents), *subagents],
        backend=backend,
        # the server's checkpointer, given at run time (`True`: "the one the graph runs with")
        checkpointer=checkpointer if checkpointer is not None or not asks else True,
        store=store,
        middleware=list(middleware),
        interrupt_on=approvals,
        context_window=config.context_window,
        model_timeout=config.model_timeout,
        model_retries=config.model_retries,
        model_retry_wait=config.model_retry_wait,
        name="agent",
    )
