"""A notebook's agent cells as the command line sees them: the notebook file read, which cells run
`%%agent`, the keys their research-log records carry, and whether each has a complete recording."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jupyter_deepagent.cli.cell_labels import saved_labels
from jupyter_deepagent.events import MODEL_CALL
from jupyter_deepagent.jupyter.session.turns import source_key
from jupyter_deepagent.trace.research_log.log import LogProblem, ResearchLog, log_path_for

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = ["AgentCell", "agent_cells", "check_recordings", "read_notebook"]


def read_notebook(path: Path) -> NotebookNode:
    """The notebook file at `path`, as version 4.

    Raises:
        OSError: The file cannot be read.
        ValueError: It is not a notebook nbformat can read (not JSON, or JSON of another shape).
    """
    import nbformat
    from nbformat import ValidationError

    try:
        notebook = nbformat.read(path, as_version=4)
    except (
        ValidationError,
        AttributeError,
        TypeError,
        KeyError,
        AssertionError,
        RecursionError,
        UnicodeError,
    ) as exc:  # nbformat reads any JSON: another shape fails where it is first used
        msg = f"not a notebook nbformat can read ({type(exc).__name__}: {exc})"
        raise ValueError(msg) from None
    cells = notebook.get("cells")
    if not isinstance(cells, list) or not all(
        isinstance(cell, dict) and isinstance(cell.get("source"), str) for cell in cells
    ):  # nbformat only warns about a version 4 file it cannot validate
        msg = "not a notebook nbformat can read (its cells are not a list of cells with a source)"
        raise ValueError(msg)
    return notebook


@dataclass(frozen=True)
class AgentCell:
    """One `%%agent` cell of a notebook file."""

    index: int
    """Position among all the notebook's cells (0-based)."""
    cell_id: str | None
    source_key: str
    title: str


def agent_cells(notebook: NotebookNode) -> list[AgentCell]:
    """The `%%agent` cells of an nbformat notebook, in order."""
    cells = []
    for index, cell in enumerate(notebook.cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if not source.lstrip().startswith("%%agent"):
            continue
        first, _, body = source.lstrip().partition("\n")
        line = first[len("%%agent") :]
        title = next((text.strip() for text in body.splitlines() if text.strip()), "")
        cells.append(AgentCell(index, cell.get("id"), source_key(line, body), title))
    return cells


def check_recordings(path: Path, notebook: NotebookNode) -> list[LogProblem]:
    """Problems of a notebook's research log: its hash chain, any agent cell without a
    complete recording (a finished run whose every model call has its response), and any
    recorded resume lacking a response or its human decision.

    Raises:
        OSError: The log exists but cannot be read.
    """
    log = ResearchLog(log_path_for(path))
    problems = log.verify()
    if problems and not log.exists():
        return problems
    labels = saved_labels(notebook)
    for cell in agent_cells(notebook):
        record = log.latest_for(cell.cell_id, cell.source_key)
        name = f'{labels[cell.index]} ("{cell.title[:40]}")'
        if record is None:
            problems.append(
                LogProblem(
                    0,
                    f"{name} has no complete recording: run it once "
                    "with a model (replay auto) to record it",
                )
            )
            continue
        problems += _incomplete(name, record)
    for number, record in log.numbered_records():
        if record.get("kind") == "resume":
            problems += [
                LogProblem(number, p.message)
                for p in _incomplete(
                    f"the resume {record.get('resume')} of cell "
                    f"{record.get('cell_id') or record.get('source_key')}",
                    record,
                )
            ]
            if not (record.get("decision") or {}).get("decision"):
                problems.append(LogProblem(number, "a resumed run without its human decision"))
    return problems


def _incomplete(name: str, record: dict[str, Any]) -> list[LogProblem]:
    """A problem when a record lacks the response of a model call it made."""
    calls = record.get("calls", [])
    made = [e for e in record.get("events", []) if e.get("type") == MODEL_CALL]
    if any(not call.get("response") for call in calls) or len(calls) < len(made):
        return [
            LogProblem(
                0,
                f"{name}: its recording lacks model responses "
                f"({len(calls)} recorded for {len(made)} calls)",
            )
        ]
    return []
