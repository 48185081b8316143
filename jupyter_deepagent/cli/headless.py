"""`jupyter-deepagent run`: execute a notebook headless with nbclient, cell by cell, and report
each agent cell and each `%agent resume` cell (replayed, scripted, live, mixed or mismatch; model
calls, tokens in and out, the run's duration).

The kernel is told which notebook it runs (`JPY_SESSION_NAME`), so it finds the research log
and the thread; each execute request carries the cell's id in its metadata (`cellId`, as
JupyterLab sends it), so a recording made in JupyterLab replays here and the reverse; and the
replay mode goes in `JUPYTER_DEEPAGENT_REPLAY`.

Code that a research log serves (a recorded `python` call) runs only with `approve_recorded`
(`--approve-recorded`): the execute requests say so in their metadata, and each code block the
kernel then runs is handed to `on_recorded_code` as it starts (the command line prints it).
Without it, a cell that would run such code stops with the code shown.

Cells are named as JupyterLab shows them: `In [n]` by the execution count of this run, and by
position only where a cell did not run; a failure is one line (`RunReport.failure`) that names
the cell and its first line, with the error's type and message, without the colour codes of the
kernel's traceback. The kernel's own output (jupyter_client's and ipykernel's log lines, such as
the warning that the kernel talks over TCP) goes to `on_kernel_output` line by line instead of
into the terminal, where it would land inside the progress bar; each such line, and each block
of recorded code, is written above the bar. The executed notebook is written without its widgets'
state (as JupyterLab saves by default), so nbconvert, GitHub and VS Code show each display's
static HTML (the inspector's static copy) instead of a widget they cannot render.

`fresh_state` runs the notebook as a fresh clone would: its conversations, memories and
artifacts go to that new folder (`JUPYTER_DEEPAGENT_STATE_DIR`), never to a database named in
the environment (`verify`'s dry run).
"""

from __future__ import annotations

import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from jupyter_client.client import KernelClient
    from nbformat import NotebookNode

__all__ = ["CellReport", "RunReport", "run_notebook"]


@dataclass
class CellReport:
    """How one agent cell went."""

    index: int
    """Position among all the notebook's cells (0-based)."""
    title: str
    label: str = ""
    """The cell as Lab shows it: `In [n]` of this run, or `cell 7 of 12, not run`."""
    outcome: str = "not run"
    """replayed, scripted, live, mixed, mismatch, error, or not run."""
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    """The run's duration, as its cell's header says it (the cell's time when no run said)."""
    error: str = ""


@dataclass
class RunReport:
    """How the whole notebook went."""

    cells: list[CellReport] = field(default_factory=list)
    seconds: float = 0.0
    error: str = ""
    """The first cell error ("" when every cell ran)."""
    stopped_at: str = ""
    """The cell that failed, as Lab shows it (any code cell; "" when every cell ran)."""
    stopped_title: str = ""
    """The failed cell's request (an agent cell) or its first line (any other code cell)."""
    mismatch: bool = False
    over_budget: bool = False
    """A run paused or stopped at its budget (its cell's run summary says `budget`)."""
    write_error: str = ""
    """Why `--output` could not be written after the run ("" when it was, or none was asked)."""

    @property
    def failure(self) -> str:
        """The cell error on one line, naming the cell as Lab shows it and its first line:
        `stopped at In [3] ("print(total)"): NameError: name 'total' is not defined` ("" when
        every cell ran)."""
        if not self.error:
            return ""
        where = self.stopped_at or "a cell"
        if self.stopped_title:
            where += f' ("{_shortened(self.stopped_title)}")'
        return f"stopped at {where}: {self.error}"

    @property
    def exit_code(self) -> int:
        """0 when every cell ran, 1 on a replay mismatch, 2 on any other cell error or when
        `--output` could not be written, 3 when a run stopped (or paused) at its budget."""
        if self.mismatch:
            return 1
        if self.error or self.write_error:
            return 2
        return 3 if self.over_budget else 0


def _execute_with_cell_id(
    kc: KernelClient, current: Callable[[], str | None], recorded_code: str, token: str
) -> Callable[..., str]:
    """`kc.execute`, but the request's metadata carries the running cell's id and what to do
    with code from the research log ("approve" or "refuse"), with the `token` the kernel was
    started with (so the kernel knows the request comes from this runner)."""
    from jupyter_deepagent.jupyter.session.recorded_code import headless_metadata

    def execute(
        code: str,
        silent: bool = False,
        store_history: bool = True,
        user_expressions: dict[str, str] | None = None,
        allow_stdin: bool | None = None,
        stop_on_error: bool = True,
    ) -> str:
        content = {
            "code": code,
            "silent": silent,
            "store_history": store_history,
            "user_expressions": user_expressions or {},
            "allow_stdin": kc.allow_stdin if allow_stdin is None else allow_stdin,
            "stop_on_error": stop_on_error,
        }
        cell_id = current()
        metadata = headless_metadata(recorded_code, token)
        if cell_id:
            metadata["cellId"] = cell_id
        message = kc.session.msg("execute_request", content, metadata=metadata)
        kc.shell_channel.send(message)
        return str(message["header"]["msg_id"])

    return execute


def _shortened(text: str, limit: int = 40) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_line(source: object) -> str:
    """A code cell's first line that is not blank."""
    return next((line.strip() for line in str(source).splitlines() if line.strip()), "")


def _summary(cell: NotebookNode) -> dict[str, object] | None:
    for output in cell.get("outputs", []):
        run = output.get("metadata", {}).get("jupyter_deepagent", {}).get("run")
        if isinstance(run, dict):
            return run
    return None


def _error(cell: NotebookNode, reply: object) -> tuple[str, str] | None:
    """The cell's error (type, message on one line, without colour codes): its error output,
    else the execute reply's (a `UsageError` such as an unknown magic shows no error output)."""
    from jupyter_deepagent.cli.terminal import one_line

    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return one_line(str(output.get("ename", ""))), one_line(str(output.get("evalue", "")))
    content = reply.get("content", {}) if isinstance(reply, dict) else {}
    if content.get("status") == "error":
        return one_line(str(content.get("ename", ""))), one_line(str(content.get("evalue", "")))
    return None


def _count(value: object) -> int:
    """A count from a cell's run summary (0 when missing)."""
    return int(cast("int", value) or 0)


def _resume_cells(notebook: NotebookNode) -> list[tuple[int, str]]:
    """The `%agent resume ...` cells (position, their line): they replay a paused cell's run."""
    found = []
    for index, cell in enumerate(notebook.cells):
        source = str(cell.get("source", "")).strip() if cell.get("cell_type") == "code" else ""
        if source.startswith("%agent resume") and "\n" not in source:
            found.append((index, source))
    return found


def run_notebook(
    path: Path,
    *,
    replay: str,
    output: Path | None = None,
    progress: bool = True,
    timeout: int = 600,
    approve_recorded: bool = False,
    on_recorded_code: Callable[[str], None] | None = None,
    fresh_state: Path | None = None,
    on_kernel_output: Callable[[str], None] | None = None,
) -> RunReport:
    """Execute the notebook at `path` in a fresh kernel and report its agent cells.

    Stops at the first cell error (the rest is not run). The executed notebook is written to
    `output` when given, also after an error. `approve_recorded` lets code served from the
    research log run; `on_recorded_code` gets each such block (with its header) as it starts.
    `fresh_state` (a new or empty folder) holds the run's conversations instead of the
    notebook's state folder or a database from the environment. `on_kernel_output` gets each
    line the kernel process writes to its stdout or stderr (None: they go to this process's).
    Both callbacks are called with the progress bar cleared, so what they write is on its own
    line.

    Raises:
        KeyboardInterrupt: Ctrl-C; the kernel was shut down and `output` not written.
        OSError: The notebook cannot be read, or `output`'s folder is missing or read-only
            (found before anything runs; a write that fails after the run is `write_error`).
        ValueError: The file is not a notebook (`read_notebook`).
    """
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
    from tqdm import tqdm

    from jupyter_deepagent.cli.cell_labels import cell_label
    from jupyter_deepagent.cli.kernel_output import KernelOutput
    from jupyter_deepagent.cli.recordings import agent_cells, read_notebook
    from jupyter_deepagent.cli.terminal import one_line
    from jupyter_deepagent.jupyter.session.notebook_file import NOTEBOOK_ENV
    from jupyter_deepagent.jupyter.session.recorded_code import PRINTED_HEADER, RUNNER_TOKEN_ENV
    from jupyter_deepagent.jupyter.session.recording import REPLAY_ENV
    from jupyter_deepagent.project.settings.agent_config import STATE_DIR_VARIABLE
    from jupyter_deepagent.project.storage.database_url import DATABASE_URL_VARIABLE

    path = path.resolve()
    notebook = read_notebook(path)
    if output is not None:
        _check_writable(output)  # before a cell runs (and a live model is paid)
    agents = {cell.index: cell for cell in agent_cells(notebook)}
    total = len(notebook.cells)
    rows = [CellReport(c.index, c.title) for c in agents.values()]
    rows += [CellReport(index, title) for index, title in _resume_cells(notebook)]
    for row in rows:
        row.label = cell_label(row.index, total, None)
    report = RunReport(cells=sorted(rows, key=lambda row: row.index))
    by_index = {r.index: r for r in report.cells}
    code_cells = sum(1 for cell in notebook.cells if cell.get("cell_type") == "code")
    bar = tqdm(
        total=code_cells,
        desc=path.name,
        unit="cell",
        disable=not progress,
        leave=False,
        file=sys.stderr,
    )
    state: dict[str, Any] = {"cell_id": None, "started": 0.0, "label": "", "title": ""}

    def above_bar(write: Callable[[str], None]) -> Callable[[str], None]:
        """`write`, called with the progress bar cleared and drawn again after it."""

        def written(text: str) -> None:
            with tqdm.external_write_mode(file=sys.stderr):
                write(text)

        return written

    def on_start(cell: NotebookNode, cell_index: int, **_: object) -> None:
        state["cell_id"], state["started"] = cell.get("id"), time.perf_counter()
        state["label"] = f"cell {cell_index + 1} of {total}"
        row = by_index.get(cell_index)
        state["title"] = row.title if row is not None else _first_line(cell.get("source", ""))

    def on_executed(
        cell: NotebookNode, cell_index: int, execute_reply: object = None, **_: object
    ) -> None:
        bar.update(1)
        label = cell_label(cell_index, total, cell.get("execution_count"))
        summary, error = _summary(cell), _error(cell, execute_reply)
        if error is not None and not report.stopped_at:
            report.stopped_at = label
            report.stopped_title = state["title"]
        row = by_index.get(cell_index)
        if row is None:
            return
        row.label = label
        row.seconds = time.perf_counter() - state["started"]
        if summary:
            row.outcome = str(summary.get("replay"))
            row.calls = _count(summary.get("calls"))
            row.tokens_in = _count(summary.get("tokens_in"))
            row.tokens_out = _count(summary.get("tokens_out"))
            spent = summary.get("seconds")
            if isinstance(spent, (int, float)):
                row.seconds = float(spent)
            report.over_budget = report.over_budget or bool(summary.get("budget"))
        if error is not None:
            row.outcome = "mismatch" if error[0] == "ReplayMismatch" else "error"
            row.error = f"{error[0]}: {error[1]}"

    policy = "approve" if approve_recorded else "refuse"
    show_recorded_code = above_bar(on_recorded_code) if on_recorded_code is not None else None
    kernel_output = KernelOutput(above_bar(on_kernel_output)) if on_kernel_output else None
    streams = {"stdout": kernel_output.fd, "stderr": kernel_output.fd} if kernel_output else {}

    class Client(NotebookClient):
        async def async_start_new_kernel_client(self) -> KernelClient:
            kc = await super().async_start_new_kernel_client()
            # the client's own execute, replaced for this client alone: every request says which
            # cell runs and what to do with code from the research log
            vars(kc)["execute"] = _execute_with_cell_id(kc, lambda: state["cell_id"], policy, token)
            return kc

        async def _async_cleanup_kernel(self) -> None:
            # Ctrl-C: nbclient's own SIGINT handler shuts the kernel down (and keeps the
            # cleanup's future); the cell then ends with DeadKernelError and nbclient cleans up
            # again, on a kernel manager that is gone
            if getattr(self, "_async_cleanup_kernel_future", None) is not None:
                state["interrupted"] = True
            if self.km is None:
                return
            await super()._async_cleanup_kernel()

        def output(
            self,
            outs: list[NotebookNode],
            msg: dict[str, Any],
            display_id: str | None,
            cell_index: int,
        ) -> NotebookNode | None:
            content = msg.get("content", {})
            text = content.get("text", "") if msg.get("msg_type") == "stream" else ""
            if show_recorded_code is not None and PRINTED_HEADER in text:
                show_recorded_code(text)
            return super().output(outs, msg, display_id, cell_index)

    token = secrets.token_urlsafe(24)  # this kernel's: a notebook cannot carry it
    env = {
        **os.environ,
        "JPY_SESSION_NAME": str(path),
        REPLAY_ENV: replay,
        RUNNER_TOKEN_ENV: token,
        "PYDEVD_DISABLE_FILE_VALIDATION": "1",
    }
    env.pop(NOTEBOOK_ENV, None)  # the kernel is told its notebook: another name cannot outrank it
    if fresh_state is not None:
        env.pop(DATABASE_URL_VARIABLE, None)
        env[STATE_DIR_VARIABLE] = str(fresh_state)
    client = Client(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        # JupyterLab's default: no widget state in the file, so nbconvert and GitHub show each
        # display's static text/html (nbconvert prefers a widget view whose state is saved)
        store_widget_state=False,
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_start=on_start,
        on_cell_executed=on_executed,
    )
    started = time.perf_counter()
    try:
        client.execute(env=env, **streams)
    except CellExecutionError as exc:
        named = one_line(f"{exc.ename}: {exc.evalue}" if exc.ename else str(exc))
        report.error = named or "a cell failed"
        if getattr(exc, "ename", "") == "ReplayMismatch":
            report.mismatch = True
        bar.update(0)
    except (CellTimeoutError, DeadKernelError) as exc:  # no error output: the cell running then
        report.error = one_line(f"{type(exc).__name__}: {exc}")
        report.stopped_at = report.stopped_at or state["label"]
        report.stopped_title = report.stopped_title or state["title"]
    finally:
        bar.close()
        report.seconds = time.perf_counter() - started
        if kernel_output is not None:
            kernel_output.close()
    # nbclient's SIGINT handler keeps the cleanup it started: a Ctrl-C as the last cell ends
    # may not have run it yet
    if state.get("interrupted") or getattr(client, "_async_cleanup_kernel_future", None):
        raise KeyboardInterrupt  # nothing written: the caller says so
    report.mismatch = report.mismatch or any(r.outcome == "mismatch" for r in report.cells)
    if report.error and not report.mismatch and "ReplayMismatch" in report.error:
        report.mismatch = True
    if output is not None:
        report.write_error = _write_atomically(notebook, output)
    return report


def _check_writable(output: Path) -> None:
    """Refuse an `output` whose folder is missing or read-only, before anything runs.

    Raises:
        OSError: Naming the folder and what is wrong with it.
    """
    folder = output.resolve().parent
    if not folder.is_dir():
        msg = f"the folder of --output {output} does not exist ({folder}); create it first"
        raise FileNotFoundError(msg)
    if not os.access(folder, os.W_OK) or (output.exists() and not os.access(output, os.W_OK)):
        msg = f"--output {output} cannot be written (no permission); choose another place"
        raise PermissionError(msg)


def _write_atomically(notebook: Any, output: Path) -> str:
    """Write `notebook` to `output` through a temporary file in its folder, renamed into place
    once whole, so a failed write (a full disk) leaves the file there as it was, even when it is
    the notebook that ran; the problem on one line ("" when written)."""
    import nbformat

    output = output.resolve()
    temporary = output.with_name(f".{output.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8") as stream:
            nbformat.write(notebook, stream)
            stream.flush()
            os.fsync(stream.fileno())
        if output.exists():  # a notebook only its owner reads stays so
            shutil.copymode(output, temporary)
        os.replace(temporary, output)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        return f"could not write {output}: {exc.strerror or exc}; it is unchanged"
    except BaseException:  # Ctrl-C mid-write: no temporary file left behind
        temporary.unlink(missing_ok=True)
        raise
    return ""
