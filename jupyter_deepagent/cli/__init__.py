"""`jupyter-deepagent` (also `jupyter deepagent`): run, read and check notebooks' research logs.

    jupyter-deepagent run NOTEBOOK [--replay strict|auto|off] [--output OUT.ipynb]
                                   [--approve-recorded]
    jupyter-deepagent log NOTEBOOK [--format text|markdown|json]
    jupyter-deepagent verify NOTEBOOK
    jupyter-deepagent serve-config [FOLDER] [--workspace PATH] [--output DIR] [--force]

`run` exits 1 when a strict replay finds a request that differs from the log, 2 when a cell
fails otherwise; `verify` exits 1 when the log's hash chain is broken or an agent cell has no
complete recording; `serve-config` exits 1 when it writes nothing (an invalid configuration,
or a file it would replace was changed).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jupyter-deepagent",
        description="Run notebooks with agent cells headless, replaying their research logs.",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="execute a notebook headless (nbclient)")
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
    log = commands.add_parser("log", help="the research log as a timeline")
    log.add_argument("notebook", type=Path)
    log.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    verify = commands.add_parser(
        "verify", help="check the hash chain (integrity, not authorship) and every agent cell"
    )
    verify.add_argument("notebook", type=Path)
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
    import nbformat

    try:
        return nbformat.read(path, as_version=4)
    except (OSError, ValueError) as exc:
        msg = f"cannot read the notebook {path}: {exc}"
        raise SystemExit(msg) from None


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


def _run(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.headless import run_notebook

    if not args.notebook.is_file():
        print(f"no notebook at {args.notebook}", file=sys.stderr)
        return 2
    report = run_notebook(
        args.notebook,
        replay=args.replay,
        output=args.output,
        progress=not args.no_progress,
        approve_recorded=args.approve_recorded,
        on_recorded_code=lambda text: print(text, end="", file=sys.stderr, flush=True),
    )
    print(f"{'cell':>4}  {'request':<44} {'outcome':<9} {'calls':>5} {'tokens':>7} {'seconds':>7}")
    for row in report.cells:
        title = row.title if len(row.title) <= 44 else row.title[:43] + "…"
        print(
            f"{row.index + 1:>4}  {title:<44} {row.outcome:<9} {row.calls:>5} "
            f"{_tokens(row.tokens):>7} {row.seconds:>7.2f}"
        )
    replayed = sum(1 for row in report.cells if row.outcome == "replayed")
    print(f"{len(report.cells)} agent cells ({replayed} replayed) · {report.seconds:.1f} s in all")
    if report.error:
        print(f"stopped: {report.error}", file=sys.stderr)
        for row in report.cells:
            if row.error:
                print(row.error, file=sys.stderr)
    return report.exit_code


def _log(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.timeline import format_timeline
    from jupyter_deepagent.trace.research_log.log import ResearchLog, log_path_for

    log = ResearchLog(log_path_for(args.notebook))
    if not log.exists():
        print(f"no research log beside {args.notebook} ({log.path.name})", file=sys.stderr)
        return 1
    for problem in log.damage():
        print(f"{log.path.name}, {problem}", file=sys.stderr)
    print(format_timeline(log.records(), args.format), end="")
    return 0


def _verify(args: argparse.Namespace) -> int:
    from jupyter_deepagent.cli.recordings import agent_cells, check_recordings
    from jupyter_deepagent.trace.research_log.log import VERIFY_SCOPE

    notebook = _read_notebook(args.notebook)
    problems = check_recordings(args.notebook, notebook)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{args.notebook}: {len(problems)} problem(s) in its research log")
    else:
        print(
            f"{args.notebook}: the research log is intact and all "
            f"{len(agent_cells(notebook))} agent cells have a complete recording"
        )
    print(VERIFY_SCOPE)
    code = _recorded_code_calls(args.notebook)
    if code:
        print(
            f"The log holds {code} recorded code-running call(s) (python): a replay runs each "
            "only once you approve its code (headless: run --approve-recorded prints it)."
        )
    return 1 if problems else 0


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
