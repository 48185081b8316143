"""The agent's filesystem in a notebook: one `CompositeBackend` and the prompt text describing it.

| path | backend |
|---|---|
| `/notebook/` | `NotebookBackend`: each cell's latest source and outputs, variables (read-only) |
| `/outputs/` | `OutputsBackend`: this cell's files, displayed when the run ends (read masked) |
| `/workspace/` | `GuardedFolder`: the notebook's folder; `.env*`, `.git`, state hidden; some read-only |
| `/memories/` | `StoreBackend` on the session's SQLite store (survives restarts) |
| `/large_tool_results/`, `/conversation_history/`, `/subagents/` | disk, under `.deepagent/artifacts/` |
| anything else | `StateBackend`: the thread's scratch files, checkpointed |
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from jupyter_deepagent.backends.composite import CompositeBackend
from jupyter_deepagent.backends.disk import DiskBackend
from jupyter_deepagent.backends.protocol import BackendProtocol
from jupyter_deepagent.backends.state import StateBackend
from jupyter_deepagent.backends.store import StoreBackend
from jupyter_deepagent.project.secrets.masked_folder import MaskedFolder
from jupyter_deepagent.project.secrets.masked_text import AgentTexts
from jupyter_deepagent.project.settings.agent_config import (
    DEFAULT_HIDDEN_PATHS,
    DEFAULT_PROTECTED_MODULES,
    DEFAULT_PROTECTED_PATHS,
)
from jupyter_deepagent.project.storage.artifacts import ARTIFACT_MOUNTS, artifact_folder
from jupyter_deepagent.project.workspace import GuardedFolder, kernel_folders_below

if TYPE_CHECKING:
    from langgraph.store.base import BaseStore

    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend

__all__ = ["notebook_filesystem", "notebook_prompt"]


def notebook_filesystem(
    *,
    notebook: BackendProtocol,
    outputs: OutputsBackend,
    workspace: Path,
    workspace_read_only: bool,
    state_dir: Path,
    store: BaseStore,
    memory_namespace: tuple[str, ...] = ("memories",),
    user: str = "user",
    env_file: Path | None = None,
    redact: Callable[[str], str] | None = None,
    agent_texts: AgentTexts | None = None,
    hidden_paths: tuple[str, ...] = DEFAULT_HIDDEN_PATHS,
    protected_paths: tuple[str, ...] = DEFAULT_PROTECTED_PATHS,
    protected_modules: tuple[str, ...] = DEFAULT_PROTECTED_MODULES,
    notebook_folder: Path | None = None,
) -> CompositeBackend:
    """Mount the notebook's backends into the one tree the agent sees (see the module table).

    In `/workspace/`, the state folder and `env_file` are hidden wherever they are, so are
    `hidden_paths`, `protected_paths` and the files that would shadow `protected_modules` (at the
    top and in `notebook_folder`, where the kernel starts) are read-only, and text read there or
    in `/outputs/` passes through `redact` (except what the agent wrote itself: `agent_texts`
    keeps that record for `/workspace/` across runs).
    `/memories/` is `store`'s `memory_namespace` (the project's, shared by its users), and
    `/conversation_history/` the `user`'s own (see `artifact_folder`).
    """
    from jupyter_deepagent.project.storage.database_url import libpq_credential_files

    hidden = (state_dir, *([env_file] if env_file is not None else []), *libpq_credential_files())
    routes: dict[str, BackendProtocol] = {
        "/notebook/": notebook,
        "/outputs/": MaskedFolder(outputs, redact) if redact is not None else outputs,
        "/workspace/": GuardedFolder(
            DiskBackend(workspace, read_only=workspace_read_only),
            hidden=hidden,
            redact=redact,
            hidden_paths=hidden_paths,
            protected_paths=protected_paths,
            protected_modules=protected_modules,
            kernel_folders=kernel_folders_below(workspace, notebook_folder),
            agent_texts=agent_texts,
        ),
        "/memories/": StoreBackend(store, namespace=memory_namespace),
    }
    for name in ARTIFACT_MOUNTS:
        routes[f"/{name}/"] = DiskBackend(artifact_folder(state_dir, name, user))
    return CompositeBackend(StateBackend(), routes)


def notebook_prompt(*, workspace_read_only: bool) -> str:
    """The notebook section of the system prompt: what each mount holds and how to use it."""
    workspace = (
        "the notebook's folder on disk, read-only"
        if workspace_read_only
        else "the notebook's folder on disk (data files, scripts, reports you are asked to save)"
    )
    return f"""\
## Working in a Jupyter notebook

You run inside the user's Jupyter kernel. Your files are mounted like this:
- `/notebook/` (read-only): the notebook as the user sees it, each cell once with its latest \
run (a re-run replaces it). `/notebook/index.md` lists the cells run in this kernel in notebook \
order; `/notebook/cells/<NN>.py` is the source of the cell at position NN and \
`/notebook/outputs/<NN>.txt` its output as text. You see the cells above the cell you run in, \
not your own cell's output nor the cells below it. \
`/notebook/history/executions.md` says which cell an execution count `In [n]` was, and \
`/notebook/saved/` holds the notebook file as last saved, above your cell (search it by \
its path: a search of `/notebook/` leaves it out). \
`/notebook/vars/index.md` lists the kernel's variables, and `/notebook/vars/<name>.csv` (tables), \
`.json` or `.txt` holds each one. Read these instead of asking the user to paste data; page \
through large files with `offset` and `limit`.
- `/outputs/`: what you write here is shown under the user's cell when you finish: `.md` as \
Markdown, `.csv` as a table, `.svg` (or `.png` as base64 text) as an image, `.html`, `.json`. Put \
deliverables the user should see here.
- `/workspace/`: {workspace}.
- `/memories/`: long-term memory, kept across conversations and kernel restarts.
- Any other path is scratch space for this conversation."""
