"""`jupyter-deepagent` (also `jupyter deepagent`): run, read and check notebooks' research logs.

    jupyter-deepagent run NOTEBOOK [--replay strict|auto|off] [--output OUT.ipynb]
                                   [--approve-recorded]
    jupyter-deepagent log NOTEBOOK [--format text|markdown|json]
    jupyter-deepagent verify NOTEBOOK [--chain-only] [--approve-recorded]
    jupyter-deepagent serve-config [FOLDER] [--workspace PATH] [--output DIR] [--force]

`run` exits 1 when a strict replay finds a request that differs from the log, 2 when a cell
fails otherwise, 3 when a run stopped at its budget (headless, a run stops there instead of
pausing; its cell says why); `verify` exits 1 when the notebook has no log, the log's hash chain is broken,
an agent cell has no complete recording or its dry run (the notebook run with strict replay in
a fresh state folder, see `dry_run`) finds a request the log would refuse, and 2 when the dry run
stops at a cell error; `serve-config` exits 1 when it writes nothing (an invalid configuration,
or a file it would replace was changed). Cells are named as JupyterLab shows them (`In [4]`).

Each command's `--help` lists its exit codes and what it writes. Results go to stdout; progress,
the kernel's own messages and errors to stderr, each error on one line. Colour (and the progress
bar) only on a terminal: in a pipe or a file, the kernel's colour codes are stripped, and
`NO_COLOR` turns colour off on a terminal too.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from jupyter_deepagent.cli.terminal import Terminal

__all__ = ["main"]

_RUN_EPILOG = """\
exit codes:
  0  every cell ran
  1  strict replay found a model request that differs from the research log
  2  a cell failed otherwise (named on stderr as Lab shows it), the notebook cannot be read,
     or --output cannot be written (its folder is checked before anything runs)
  3  a run stopped at its budget (it would pause in Jupyter; here no one can answer, so it
     stops, and its cell's output says why); 1 and 2 come first
  130  interrupted (Ctrl-C): --output is not written; the agent cells that finished keep
       their research-log records

what it writes:
  The notebook file is left as it is: --output OUT.ipynb writes the executed notebook there
  (it may be the notebook itself: it is written whole, then renamed into place, so a failed
  write leaves the file as it was). An agent cell the research log cannot serve asks its model
  (--replay auto or off) and appends the run to the research log, NOTEBOOK.agentlog.jsonl
  beside the notebook; a replayed cell appends nothing. The conversations go to the state
  folder (.deepagent/ beside the notebook, or the database of database_url).
  stdout: a table of the agent cells; stderr: progress, the kernel's messages, the error.
"""
_LOG_EPILOG = """\
exit codes:
  0  the timeline was printed, with each run's cost and the notebook's total (damaged lines,
     if any, are named on stderr)
  1  the notebook has no research log (NOTEBOOK.agentlog.jsonl beside it)

what it writes: nothing; the timeline goes to stdout.
"""
_VERIFY_EPILOG = """\
exit codes:
  0  the research log is intact, every agent cell has a complete recording and the dry run
     replayed them all (or --chain-only)
  1  no research log (for a notebook with agent cells), a broken hash chain, an agent cell
     without a complete recording, or a recording strict replay rejects
  2  the notebook cannot be read, or the dry run stopped at a cell error or could not be made

what it writes: nothing. The dry run runs a temporary copy of the notebook's folder, in a
fresh state folder, and throws it away. A research log is recorded by
`jupyter-deepagent run NOTEBOOK` (or Run All in JupyterLab).
"""


class _HelpFormatter(argparse.HelpFormatter):
    """Wraps a description as usual, but keeps an epilog (exit codes, what is written) as
    written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("exit codes:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter-deepagent",
        description="Run notebooks with agent cells headless, replaying their research logs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser(
        "run",
        help="execute a notebook headless (nbclient)",
        description="Execute a notebook headless in a fresh kernel (nbclient), replaying its "
        "agent cells from the research log beside it, and print a table of its agent cells.",
        epilog=_RUN_EPILOG,
        formatter_class=_HelpFormatter,
    )
    run.add_argument("notebook", type=Path)
    run.add_argument(
        "--replay",
        choices=("strict", "auto", "off"),
        default="auto",
        help="strict: a changed request is an error; auto: ask the live model "
        "for what changed; off: always live (default auto)",
    )
    run.add_argument("--output", type=Path, help="write the executed notebook here")
    run.add_argument(
        "--approve-recorded",
        action="store_true",
        help="run code the research log holds (recorded python calls), printing "
        "each block as it runs; without it, such code is refused",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    log = commands.add_parser(
        "log",
        help="the research log as a timeline",
        description="Print a notebook's research log as a timeline of its runs.",
        epilog=_LOG_EPILOG,
        formatter_class=_HelpFormatter,
    )
    log.add_argument("notebook", type=Path)
    log.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    verify = commands.add_parser(
        "verify",
        help="check the hash chain (integrity, not authorship) and every agent cell, then "
        "dry-run a copy of the notebook with strict replay: this EXECUTES the notebook's code",
        description="Check the research log's hash chain (integrity, not authorship) and that "
        "every agent cell has a complete recording; then run a temporary copy of the notebook's "
        "folder headless with strict replay, in a fresh state folder, discarding it all, so a "
        "log that a replay would reject fails here, naming the cell. The dry run executes the "
        "notebook's code and the tool calls of its recordings in the copy; the notebook, its "
        "folder and its log are left as they are.",
        epilog=_VERIFY_EPILOG,
        formatter_class=_HelpFormatter,
    )
    verify.add_argument("notebook", type=Path)
    verify.add_argument(
        "--chain-only",
        action="store_true",
        help="check the log alone; do not run the notebook",
    )
    verify.add_argument(
        "--approve-recorded",
        action="store_true",
        help="in the dry run, run code the research log holds (recorded python calls), "
        "printing each block; without it, such code is refused and verify stops there",
    )
    verify.add_argument("--no-progress", action="store_true", help="no progress bar")
    serve = commands.add_parser(
        "serve-config", help="write langgraph.json and a graph module: serve the folder's agent"
    )
    serve.add_argument(
        "folder",
        type=Path,
        nargs="?",
        default=Path(),
        help="the notebook folder whose .deepagent.toml configures the agent (default: here)",
    )
    serve.add_argument(
        "--workspace",
        help="the folder mounted at /workspace/, relative to "
        "FOLDER (default: the workspace setting)",
    )
    serve.add_argument("--output", type=Path, help="where to write the files (default: FOLDER)")
    serve.add_argument("--force", action="store_true", help="replace files that were changed")
    return parser


def _read_notebook(path: Path) -> NotebookNode:
    """The notebook at `path`; one line on stderr and exit code 2 when it cannot be read (no
    file, not JSON, not a notebook nbformat can convert)."""
    from jupyter_deepagent.cli.recordings import read_notebook
    from jupyter_deepagent.cli.terminal import Terminal, visible

    try:
        return read_notebook(path)
    except (OSError, ValueError) as exc:
        problem = visible(f"cannot read the notebook {path}: {exc}")
        print(Terminal(sys.stderr).error(problem), file=sys.stderr)
        raise SystemExit(2) from None


def _run(args: argparse.Namespace) -> int:
    from nbformat import ValidationError

    from jupyter_deepagent.cli.headless import run_notebook
    from jupyter_deepagent.cli.terminal import Terminal, visible
    from jupyter_deepagent.trace.figures import duration, token_count

    errors = Terminal(sys.stderr)
    if not args.notebook.is_file():
        print(errors.error(f"no notebook at {args.notebook}"), file=sys.stderr)
        return 2
    try:
        report = run_notebook(
            args.notebook,
            replay=args.replay,
            output=args.output,
            progress=_progress(args, errors),
            approve_recorded=args.approve_recorded,
            on_recorded_code=lambda code: errors.write(visible(code)),  # no escape hides a line
            on_kernel_output=lambda line: errors.write(line + "\n"),
        )
    except (OSError, ValueError, ValidationError) as exc:  # unreadable notebook, unwritable output
        print(errors.error(f"cannot run {args.notebook}: {exc}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: the kernel is shut down
        written = f"; {args.output} was not written" if args.output else ""
        print(
            errors.error(
                f"interrupted: {args.notebook} is unchanged, and the agent cells that finished "
                f"kept their research-log records{written}"
            ),
            file=sys.stderr,
        )
        return 130
    width = max([len("cell"), *(len(row.label) for row in report.cells)])
    print(
        f"{'cell':<{width}}  {'request':<44} {'outcome':<9} {'calls':>5} {'tokens in':>9} "
        f"{'tokens out':>10} {'duration':>8}"
    )
    for row in report.cells:
        title = " ".join(visible(row.title).split())
        title = title if len(title) <= 44 else title[:43] + "…"
        print(
            f"{row.label:<{width}}  {title:<44} {row.outcome:<9} {row.calls:>5} "
            f"{token_count(row.tokens_in):>9} {token_count(row.tokens_out):>10} "
            f"{duration(row.seconds):>8}"
        )
    replayed = sum(1 for row in report.cells if row.outcome == "replayed")
    print(f"{len(report.cells)} agent cells ({replayed} replayed) · {report.seconds:.1f} s in all")
    if report.error:
        print(errors.error(report.failure), file=sys.stderr)
    if report.write_error:
        print(errors.error(f"ran {args.notebook}, but {report.write_error}"), file=sys.stderr)
    return report.exit_code


def _progress(args: argparse.Namespace, errors: Terminal) -> bool:
    """A progress bar unless `--no-progress`, and only on a terminal (a pipe gets none)."""
    return not args.no_progress and errors.is_terminal


def _log(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.terminal import visible, visible_json
    from jupyter_deepagent.cli.timeline import format_timeline
    from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

    log = ResearchLog(log_path_for(args.notebook))
    if not log.exists():
        print(f"no research log beside {args.notebook} ({log.path.name})", file=sys.stderr)
        return 1
    for problem in log.damage():
        print(visible(f"{log.path.name}, {problem}"), file=sys.stderr)
    shown = format_timeline(log.records(), args.format, _shown_cells(args.notebook))
    print(visible_json(shown) if args.format == "json" else visible(shown), end="")
    return 0


def _shown_cells(path: Path) -> dict[str, str] | None:
    """The notebook's agent cells as Lab shows them (by cell id and by source key), or None
    when the notebook cannot be read."""
    from jupyter_deepagent.cli.cell_labels import saved_labels
    from jupyter_deepagent.cli.recordings import agent_cells, read_notebook

    try:
        notebook = read_notebook(path)
    except (OSError, ValueError):
        return None
    labels = saved_labels(notebook)
    shown: dict[str, str] = {}
    for cell in reversed(agent_cells(notebook)):  # the first cell of a source key names it
        shown[cell.source_key] = labels[cell.index]
        if cell.cell_id:
            shown[cell.cell_id] = labels[cell.index]
    return shown


def _verify(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.dry_run import dry_run
    from jupyter_deepagent.cli.recordings import agent_cells, check_recordings
    from jupyter_deepagent.cli.terminal import Terminal, visible
    from jupyter_deepagent.trace.research_log.log import VERIFY_SCOPE, log_path_for

    notebook = _read_notebook(args.notebook)
    if not log_path_for(args.notebook).is_file():
        return _no_log(args.notebook, len(agent_cells(notebook)))
    problems = check_recordings(args.notebook, notebook)
    for problem in problems:
        print(visible(str(problem)))
    if problems:
        print(f"{args.notebook}: {len(problems)} problem(s) in its research log")
    else:
        count = len(agent_cells(notebook))
        print(
            f"{args.notebook}: the research log is intact and "
            + (
                "the notebook has no agent cells"
                if not count
                else "its agent cell has a complete recording"
                if count == 1
                else f"each of its {count} agent cells has a complete recording"
            )
        )
    print(VERIFY_SCOPE)
    code = _recorded_code_calls(args.notebook)
    if code:
        print(
            f"The log holds {code} recorded code-running call{'' if code == 1 else 's'} (python): "
            "a replay runs each only once you approve its code (headless: run --approve-recorded "
            "prints it)."
        )
    if problems:
        return 1
    if args.chain_only:
        return 0
    errors = Terminal(sys.stderr)
    checked = dry_run(
        args.notebook,
        approve_recorded=args.approve_recorded,
        progress=_progress(args, errors),
        on_recorded_code=lambda code: errors.write(visible(code)),
        on_kernel_output=lambda line: errors.write(line + "\n"),
    )
    for line in checked.lines:
        print(visible(line))
    return checked.exit_code


def _no_log(notebook: Path, agent_cells: int) -> int:
    """What `verify` says of a notebook without a research log."""
    from jupyter_deepagent.trace.research_log.log import log_path_for

    name = log_path_for(notebook).name
    if not agent_cells:
        print(f"{notebook}: no agent cells and no research log ({name}): nothing to verify")
        return 0
    print(
        f"{notebook} has no research log: {name} is not beside it, so there is nothing to "
        f"verify. Record one with `jupyter-deepagent run {notebook}` (its default --replay auto "
        f"asks the model of each of its {agent_cells} agent cell(s) and writes {name}), or Run "
        "All in JupyterLab, then commit it with the notebook."
    )
    return 1


def _recorded_code_calls(notebook: Path) -> int:
    """How many code-running tool calls the responses of a notebook's research log hold."""
    from jupyter_deepagent.jupyter.session.recorded_code import CODE_RUNNING_TOOLS
    from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

    return sum(
        1
        for record in ResearchLog(log_path_for(notebook)).records()
        for call in record.get("calls", [])
        for tool_call in ((call.get("response") or {}).get("data") or {}).get("tool_calls") or []
        if isinstance(tool_call, dict) and tool_call.get("name") in CODE_RUNNING_TOOLS
    )


def _serve_config(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.serve_config import GRAPH_NAME, write_serve_config

    try:
        files = write_serve_config(
            args.folder, workspace=args.workspace, output=args.output, force=args.force
        )
    except (ValueError, OSError) as exc:
        print(f"serve-config: {exc}", file=sys.stderr)
        return 1
    for path in files.written:
        print(f"wrote {path}")
    for path in files.unchanged:
        print(f"{path} is up to date")
    folder = (files.written or files.unchanged)[0].parent
    # --no-reload: the agent may write a .py file into the folder, which would restart the server
    print(
        f"serve it: cd {folder} && langgraph dev --no-reload   (graph {GRAPH_NAME!r}"
        + (f", keys from {files.env_file})" if files.env_file else ")")
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit code."""
    args = _parser().parse_args(argv)
    command = {"run": _run, "log": _log, "verify": _verify, "serve-config": _serve_config}[
        args.command
    ]
    return command(args)
