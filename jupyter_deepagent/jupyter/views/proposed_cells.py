"""The cells an `%%agent --cells` run proposed, shown in its cell's output, never run.

`show_proposals` puts one display in the output: the proposals as JSON data of their own
mimetype (`PROPOSALS_MIME`), which the JupyterLab extension (JupyterLab 4, Notebook 7) reads when
the cell finishes, inserting the cells below it; and, for frontends without the extension
(nbconvert's HTML, VS Code, a terminal), a listing of them as code, as HTML the kernel rendered
and cleaned (`trace.safe_html`) and as plain text. Where no extension listens, the code
proposals also go into IPython's next-input payload (`set_next_input`), so the classic notebook
opens a cell holding them, and terminal IPython's next prompt starts with them.

The extension says it is there by opening a comm on `CELLS_TARGET` (registered by `%load_ext`,
see `register_cells_target`) before it runs a cell; while one is open, no payload is sent, so
JupyterLab never gets both. Nothing here runs or trusts a proposal: the JSON carries text, the
listing shows it as code, and Markdown proposals are listed as their source, not rendered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from jupyter_deepagent.events import CELL_PROPOSED, RunEvent
from jupyter_deepagent.trace.safe_html import markdown_html

__all__ = [
    "CELLS_TARGET",
    "PROPOSALS_MIME",
    "Proposal",
    "ProposedCells",
    "extension_listening",
    "next_input",
    "register_cells_target",
    "run_proposals",
    "show_proposals",
    "unregister_cells_target",
]

PROPOSALS_MIME: Final = "application/vnd.jupyter-deepagent.proposed-cells+json"
"""The mimetype of the proposals' JSON in the cell's output (read by the extension)."""
CELLS_TARGET: Final = "jupyter_deepagent.cells"
"""The comm target the extension opens a comm on: while one is open, it inserts the cells."""
_FORMAT: Final = 1


@dataclass(frozen=True)
class Proposal:
    """One proposed cell: `kind` "code" or "markdown", its `source`, its `index` in the turn."""

    kind: str
    source: str
    index: int


def run_proposals(events: Iterable[RunEvent]) -> list[Proposal]:
    """The main agent's proposals among a run's `events`, by index (a repeated index: the last)."""
    found: dict[int, Proposal] = {}
    for event in events:
        if event["type"] == CELL_PROPOSED and event["agent"] == "main":
            found[event["index"]] = Proposal(event["kind"], event["source"], event["index"])
    return [found[index] for index in sorted(found)]


def _fence(text: str, opener: str = "`") -> str:
    longest = max((len(run) for run in re.findall(f"{re.escape(opener)}+", text)), default=0)
    return opener * max(3, longest + 1)


def _listing(proposals: list[Proposal]) -> str:
    """The proposals as Markdown: each one's source in a fenced block (never rendered)."""
    if not proposals:
        return "**The agent proposed no cells.**"
    count = f"{len(proposals)} cell" + ("s" if len(proposals) != 1 else "")
    parts = [
        f"**The agent proposed {count}** (not run). With the JupyterLab extension they are "
        "inserted below this cell; here, copy them into cells of your own."
    ]
    for number, proposal in enumerate(proposals, 1):
        fence = _fence(proposal.source)
        language = "python" if proposal.kind == "code" else "markdown"
        heading = f"**Cell {number}** · {proposal.kind}"
        parts.append(f"{heading}\n\n{fence}{language}\n{proposal.source}\n{fence}")
    return "\n\n".join(parts)


def _plain(proposals: list[Proposal]) -> str:
    if not proposals:
        return "The agent proposed no cells."
    lines = [f"The agent proposed {len(proposals)} cell(s), not run:"]
    for number, proposal in enumerate(proposals, 1):
        lines += ["", f"[{number}] {proposal.kind} cell", proposal.source.rstrip("\n")]
    return "\n".join(lines)


class ProposedCells:
    """The display of a run's proposals (see the module docstring).

    Args:
        proposals: The run's proposals, by index.
        proposed_by: The key of the `%%agent` cell that proposed them (None if unknown).
        first: Proposals of the cell's turn from this index on are this display's: a re-run
            starts at 0 (replacing every earlier proposal), a resumed run where its own begin.
    """

    def __init__(self, proposals: list[Proposal], proposed_by: str | None, first: int) -> None:
        self.proposals = proposals
        self.proposed_by = proposed_by
        self.first = first

    def data(self) -> dict[str, object]:
        """The JSON the extension reads."""
        return {
            "version": _FORMAT,
            "proposed_by": self.proposed_by,
            "first": self.first,
            "cells": [
                {"kind": p.kind, "source": p.source, "index": p.index} for p in self.proposals
            ],
        }

    def _repr_mimebundle_(
        self, include: object = None, exclude: object = None
    ) -> tuple[dict[str, object], dict[str, object]]:
        return {
            PROPOSALS_MIME: self.data(),
            "text/html": markdown_html(_listing(self.proposals)),
            "text/plain": _plain(self.proposals),
        }, {}


def next_input(proposals: Iterable[Proposal]) -> str | None:
    """The code proposals joined into one cell's text (None without code proposals)."""
    code = [p.source.strip("\n") for p in proposals if p.kind == "code"]
    return "\n\n".join(code) if code else None


def extension_listening(shell: object) -> bool:
    """Whether the JupyterLab extension has a comm open on `CELLS_TARGET` in this kernel."""
    manager = getattr(getattr(shell, "kernel", None), "comm_manager", None)
    comms: Mapping[str, object] = getattr(manager, "comms", None) or {}
    return any(getattr(comm, "target_name", None) == CELLS_TARGET for comm in list(comms.values()))


def _keep_open(comm: object, msg: object) -> None:
    """The extension opened its comm: keeping it open is the whole answer."""


def register_cells_target(kernel: Any) -> None:
    """Accept the extension's comms on `CELLS_TARGET` (`%load_ext`)."""
    kernel.comm_manager.register_target(CELLS_TARGET, _keep_open)


def unregister_cells_target(kernel: Any) -> None:
    """Drop the target (`%unload_ext`); comms already open close with the kernel."""
    kernel.comm_manager.unregister_target(CELLS_TARGET, _keep_open)


def show_proposals(
    shell: Any,
    events: Iterable[RunEvent],
    *,
    offered: bool,
    resumed: bool,
    place: Callable[[object], None],
) -> None:
    """Show a run's proposals with `place` (the cell view's `below`), and without the extension
    put the code proposals in the next-input payload.

    Args:
        shell: The IPython shell (its kernel's comms; `set_next_input`).
        events: The run's events.
        offered: The run offered `propose_cell`: a run that proposed nothing still says so (and
            the extension removes the cell's earlier proposals).
        resumed: The run resumed a paused one: its proposals follow those shown before.
    """
    events = list(events)
    proposals = run_proposals(events)
    if not proposals and (resumed or not offered):
        return
    proposed_by = next((e["cell"] for e in events if e["type"] == CELL_PROPOSED), None)
    first = proposals[0].index if resumed else 0
    place(ProposedCells(proposals, proposed_by, first))
    text = next_input(proposals)
    if text is not None and not extension_listening(shell):
        setter = getattr(shell, "set_next_input", None)
        if callable(setter):
            setter(text, replace=False)
