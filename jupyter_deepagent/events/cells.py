"""Run events of the cells the agent proposes (`%%agent --cells`): each proposal the
`propose_cell` tool accepted, for the cell's view to show below the agent cell."""

from typing import Final, Literal

from jupyter_deepagent.events.common import EventStamp

__all__ = ["CELL_PROPOSED", "CellProposedEvent"]

CELL_PROPOSED: Final = "cell_proposed"


class CellProposedEvent(EventStamp):
    """The agent proposed a notebook cell (`propose_cell`); it is shown to the user, never run."""

    type: Literal["cell_proposed"]
    kind: Literal["code", "markdown"]
    """A code cell or a Markdown cell."""
    source: str
    """The cell's text as the model wrote it (secrets masked)."""
    cell: str | None
    """The key of the `%%agent` cell that proposed it (`cell:<id>`, or `source:<hash>` where
    the frontend sends no id); None outside a cell's run."""
    index: int
    """Its place among the proposals of the cell's turn: 0, 1, 2, ... in the order the model
    called the tool (the same in a replay)."""
    tool_call_id: str | None
    """The `propose_cell` call that made it."""
