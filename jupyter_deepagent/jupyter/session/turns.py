"""Cell-addressed turns: a notebook's conversation is the sequence of its agent cells as last run.

Each `%%agent` run is one turn of its thread, tagged with the cell it came from (the frontend's
`cellId`, or a key from the cell's text where no id is sent: nbclient, papermill, terminal
IPython). Re-running a cell that already has a turn on the thread's current branch forks the
thread from the checkpoint where that turn began (a LangGraph fork), so the turns after it drop
off the branch while staying in the checkpoint history. Run All twice, or a restart and Run All,
thus rebuilds the first pass's conversation. A turn is also tagged with its text's key, so a
client that sends cell ids (JupyterLab, `jupyter-deepagent run`) finds the turns one that sends
none (papermill, nbconvert) left on the thread, and the other way round.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple

    from jupyter_deepagent.jupyter.session.thread_state import ThreadAgent

__all__ = [
    "CELL_METADATA_KEY",
    "SOURCE_METADATA_KEY",
    "TURN_METADATA_KEY",
    "CellAddress",
    "cell_address",
    "new_turn_id",
    "rewind_to_turn",
    "source_key",
]

CELL_METADATA_KEY = "agent_cell"
"""Checkpoint metadata key holding the cell a turn came from."""
SOURCE_METADATA_KEY = "agent_source"
"""Checkpoint metadata key holding the source key of the cell a turn came from (for a cell with
an id, `CELL_METADATA_KEY` holds the id)."""
TURN_METADATA_KEY = "agent_turn"
"""Checkpoint metadata key holding the turn's id (also the id of its user message)."""


def source_key(line: str, cell: str) -> str:
    """A key for an `%%agent` cell from its text (magic line options and body), spaces trimmed.

    The same for the cell as IPython runs it and as nbformat stores it (the command line's
    `agent_cells` computes it from the notebook file).
    """
    text = line.strip() + "\n" + cell.strip()
    return "source:" + hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


@dataclass(frozen=True)
class CellAddress:
    """Which cell a run came from: its frontend id (if sent) and its text's key."""

    cell_id: str | None
    source_key: str
    title: str = ""
    """The first line of the cell's request, to name the cell in messages."""

    @property
    def key(self) -> str:
        """The id turns are tagged with: `cell:<id>` when the frontend sent one, else the
        source key."""
        return f"cell:{self.cell_id}" if self.cell_id else self.source_key


def cell_address(parent: Any, line: str, cell: str) -> CellAddress:
    """The address of the running cell, from the execute request `parent` (read it when the
    magic starts: from another thread the kernel's parent is whatever request is current)."""
    metadata = parent.get("metadata") if isinstance(parent, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    title = next((text.strip() for text in cell.splitlines() if text.strip()), "")
    return CellAddress(
        cell_id if isinstance(cell_id, str) and cell_id else None, source_key(line, cell), title
    )


def new_turn_id() -> str:
    """A fresh turn id (it names the turn's user message; never sent to the model)."""
    return f"turn-{uuid.uuid4().hex}"


def _head_message_ids(agent: ThreadAgent, config: RunnableConfig) -> set[str]:
    try:
        state = agent.get_state(config)
    except Exception:
        return set()
    messages = state.values.get("messages", []) if state is not None else []
    return {m.id for m in messages if getattr(m, "id", None)}


def rewind_to_turn(
    agent: ThreadAgent,
    checkpointer: BaseCheckpointSaver,
    config: RunnableConfig,
    key: str,
    source: str | None = None,
) -> str | None:
    """Fork the thread of `config` from where the turn of the cell `key` (`CellAddress.key`,
    with `source` its source key) began, if it has one.

    The turn is found among the thread's checkpoints tagged with `key` whose user message is
    still on the current branch; the earliest such is taken. When there is none, a turn another
    kind of client left for the cell's text is taken: for a cell with an id, one tagged with its
    source key (no id was sent then); for a cell without one, one tagged with its source key as
    the text of a cell with an id. Where the turn began is its input checkpoint, or (runs save only
    their end: LangGraph's "exit" durability) the checkpoint its first saved state grew from, the
    previous turn's end; a thread's first turn began empty. Returns the turn's old id, or None
    when the cell has no turn on the branch (nothing changes).
    """
    configurable = dict(config.get("configurable", {}))
    configurable.pop("checkpoint_id", None)
    thread_config: RunnableConfig = {"configurable": configurable}
    searches = [{CELL_METADATA_KEY: key}]
    if source and source != key:  # a cell with an id: a turn of its text sent without one
        searches.append({CELL_METADATA_KEY: source})
    elif source:  # a cell without an id: a turn of its text sent with one
        searches.append({SOURCE_METADATA_KEY: source})
    on_branch: set[str] | None = None
    turns: list[CheckpointTuple] = []
    for tags in searches:
        try:
            candidates = list(checkpointer.list(thread_config, filter=tags))
        except Exception:
            return None
        if not candidates:
            continue
        if on_branch is None:
            on_branch = _head_message_ids(agent, thread_config)
        turns = [c for c in candidates if c.metadata.get(TURN_METADATA_KEY) in on_branch]
        if turns:
            break
    if not turns:
        return None
    earliest = min(turns, key=lambda c: c.config["configurable"]["checkpoint_id"])
    began = (
        earliest.config if earliest.metadata.get("source") == "input" else earliest.parent_config
    )
    if began is None:
        _fork_empty(checkpointer, thread_config)
    else:
        agent.update_state(began, None, as_node="__copy__")
    return str(earliest.metadata.get(TURN_METADATA_KEY))


def _fork_empty(checkpointer: BaseCheckpointSaver, thread_config: RunnableConfig) -> None:
    """Make an empty checkpoint the thread's head, a child of the current head (which stays in
    the history): the thread then continues as if new."""
    from langgraph.checkpoint.base import empty_checkpoint

    head = checkpointer.get_tuple(thread_config)
    if head is None:
        return
    configurable = {**head.config["configurable"]}
    configurable.setdefault("checkpoint_ns", "")
    parent: RunnableConfig = {"configurable": configurable}
    checkpointer.put(parent, empty_checkpoint(), {"source": "fork", "step": -1, "parents": {}}, {})
