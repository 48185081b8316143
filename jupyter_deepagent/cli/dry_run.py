"""`jupyter-deepagent verify`'s dry run: the notebook run headless with strict replay, as a fresh
clone would run it, to find a log that strict replay would reject.

It is `run --replay strict` on a temporary copy of the notebook's folder (without its state
folder and version-control internals), with a new, temporary state folder (no conversations,
memories or artifacts of earlier runs; never a database named in the environment), all thrown
away afterwards. It runs the notebook's code and the tool calls its recordings make, in the copy:
a log from someone else cannot make it write to the folder checked. Code the log serves (recorded
python calls) runs only with `approve_recorded`, as under `run`; that code, like the notebook's
own, can reach anything the user can, so approve only code you have read.

A cell's own `--replay auto` or `--replay off` wins over the runner's strict mode, so it would
ask the live model: the dry run is not made then, and the message names those cells.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["DryRun", "dry_run"]

_NOT_COPIED = (".git", ".hg", ".svn", ".ipynb_checkpoints", "__pycache__")
"""Left out of the dry run's copy of the notebook's folder, with the state folder."""
_REPLAY_OPTION = re.compile(r"(?:^|\s)--replay(?:=|\s+)(\S+)")


@dataclass
class DryRun:
    """What the dry run found: its exit code and the lines that say why."""

    exit_code: int
    """0: every agent cell replayed strictly; 1: strict replay rejects a recording; 2: a cell
    failed otherwise (or the dry run cannot be made)."""
    lines: list[str] = field(default_factory=list)


def dry_run(
    notebook: Path,
    *,
    approve_recorded: bool = False,
    progress: bool = True,
    on_recorded_code: Callable[[str], None] | None = None,
    on_kernel_output: Callable[[str], None] | None = None,
) -> DryRun:
    """Run `notebook` headless with strict replay in a fresh state folder and say how it went,
    naming each cell as Lab shows it (`on_recorded_code` and `on_kernel_output`: as for
    `run_notebook`)."""
    from jupyter_deepagent.cli.headless import run_notebook
    from jupyter_deepagent.project.settings.agent_config import file_layers, resolve_config

    try:
        configured = resolve_config(file_layers(notebook.resolve().parent))[0]
    except ValueError as exc:
        return DryRun(2, [f"dry run not made: {exc}"])
    live = _cells_that_replay_live(notebook)
    if live:
        return DryRun(
            2,
            [
                f"dry run not made: {', '.join(live)} set --replay to a mode that may call the "
                "live model, which wins over the dry run's strict replay; use --chain-only, or "
                "drop the option (the mode also comes from JUPYTER_DEEPAGENT_REPLAY or "
                "%agent config replay=...)"
            ],
        )
    state_dir = Path(configured.state_dir).name
    if configured.database_url:
        return DryRun(
            2,
            [
                "dry run not made: the notebook's settings keep conversations in a database "
                "(database_url), which a dry run would change; use --chain-only, or unset "
                "database_url for the check"
            ],
        )
    with tempfile.TemporaryDirectory(prefix="jupyter-deepagent-verify-") as scratch:
        folder = notebook.resolve().parent
        copy = Path(scratch) / folder.name
        shutil.copytree(
            folder, copy, symlinks=True, ignore=shutil.ignore_patterns(*_NOT_COPIED, state_dir)
        )
        report = run_notebook(
            copy / notebook.name,
            replay="strict",
            output=None,
            progress=progress,
            approve_recorded=approve_recorded,
            on_recorded_code=on_recorded_code,
            fresh_state=Path(scratch) / "state",
            on_kernel_output=on_kernel_output,
        )
    if report.exit_code == 0:
        replayed = sum(1 for row in report.cells if row.outcome == "replayed")
        checked = (
            f"{replayed} of {len(report.cells)} cells that run the agent replayed from the log"
            if report.cells
            else "the notebook has no agent cells"
        )
        return DryRun(
            0,
            [
                "dry run: a copy of the notebook ran headless with strict replay in a fresh state folder: "
                f"{checked}, no model was called"
            ],
        )
    lines = []
    for row in report.cells:
        if row.outcome == "mismatch":
            lines.append(
                f'{row.label} ("{row.title[:40]}"): strict replay rejects its recording: '
                f"{row.error}"
            )
        elif row.error:
            lines.append(f'{row.label} ("{row.title[:40]}") failed: {row.error}')
    where = report.stopped_at or "a cell"
    if not lines:
        lines.append(report.failure)
    if report.mismatch:
        verdict = "strict replay would reject the research log"
    else:
        verdict = (
            "the notebook stopped before every agent cell was checked ("
            + (
                "verify --approve-recorded runs code from the log, printing it; "
                if "RecordedCodeNotApproved" in report.error
                else ""
            )
            + "--chain-only checks the log without running the notebook)"
        )
    lines.append(f"dry run (strict replay, fresh state folder) stopped at {where}: {verdict}")
    return DryRun(report.exit_code, lines)


def _cells_that_replay_live(path: Path) -> list[str]:
    """The agent cells whose own `--replay` option is not strict, as Lab shows them."""
    from jupyter_deepagent.cli.cell_labels import saved_labels
    from jupyter_deepagent.cli.recordings import agent_cells, read_notebook

    notebook = read_notebook(path)
    labels = saved_labels(notebook)
    found = []
    for cell in agent_cells(notebook):
        first = str(notebook.cells[cell.index].source).lstrip().partition("\n")[0]
        modes = _REPLAY_OPTION.findall(first)
        if modes and modes[-1] != "strict":
            found.append(f'{labels[cell.index]} ("{cell.title[:40]}")')
    return found
