"""Running a planned `%%agent` run and recording it in the notebook's research log: the half of
`Session` that comes after `Session.plan`.

`SessionRuns` is a base of `Session`: it holds the thread's lock while a run goes on, keeps the
run's trace (also of a run that failed or was stopped), appends the run to the research log, and
remembers which cell's turn the next resume of a thread continues. Running itself is
`execution`'s job.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jupyter_deepagent._exceptions import ThreadBusy
from jupyter_deepagent.jupyter.magic.options import RunOptions
from jupyter_deepagent.jupyter.session import execution
from jupyter_deepagent.jupyter.session.execution import RunOutcome, RunPlan
from jupyter_deepagent.jupyter.session.turns import CELL_METADATA_KEY, CellAddress, rewind_to_turn
from jupyter_deepagent.project.models import ModelCache, call_policy
from jupyter_deepagent.project.settings.agent_config import AgentConfig
from jupyter_deepagent.project.storage import OwnedStorage

__all__ = ["SessionRuns"]


class SessionRuns:
    """Runs of planned `%%agent` cells, recorded in the research log (a base of `Session`).

    Attributes:
        last_trace: The `RunTrace` of the last run (partial if it was stopped or failed).
        last_thread: The thread of the last run.
        recorded_code: What code the research log served and what the user approved here
            (see `recorded_code`).
    """

    # provided by `Session`
    storage: OwnedStorage
    notebook_path: Path | None
    notebook_dir: Path
    thread: str
    _models: ModelCache
    redactor: Callable[[], Callable[[str], str]]

    def __init__(self) -> None:
        from jupyter_deepagent.jupyter.session.recorded_code import RecordedCode

        self.recorded_code = RecordedCode()
        """Code-running calls served from research logs, and the code approved in this kernel."""
        self.last_trace: Any = None
        self.last_thread: str | None = None
        self._paused_cells: dict[str, tuple[CellAddress, int]] = {}
        """thread -> the cell of its last `%%agent` turn, and how many resumes it has had"""
        self._unserved: dict[str, list[dict[str, Any]]] = {}
        """thread -> recorded model calls its last run left unserved (offered to its resume)"""

    def _resume_recording(self, settings: AgentConfig, options: RunOptions) -> Any:
        """The research-log recording of a resume: the next resume of the thread's last cell
        turn; None when no `%%agent` cell of this kernel ran on the thread."""
        paused = self._paused_cells.get(options.thread or self.thread)
        if paused is None:
            return None
        cell, resumes = paused
        carried = self._unserved.get(options.thread or self.thread, [])
        return self._recording(settings, options, cell, resume=resumes + 1, carried=carried)

    def _recording(
        self,
        settings: AgentConfig,
        options: RunOptions,
        cell: CellAddress | None,
        resume: int = 0,
        carried: list[dict[str, Any]] | None = None,
    ) -> Any:
        """The research-log recording of a cell's run (or of its `resume`-th resume); None
        outside a known notebook."""
        path = self.notebook_path
        if cell is None or path is None:
            return None
        from jupyter_deepagent.jupyter.session.recording import replay_mode, start_recording

        try:
            return start_recording(
                notebook=path,
                address=cell,
                mode=replay_mode(options.replay, settings.replay),
                spec=settings.model,
                make_model=lambda: self._models.get(
                    settings.model, self.notebook_dir, settings.env_file, call_policy(settings)
                ),
                redact=self.redactor(),
                resume=resume,
                on_served=self.recorded_code.note_served,
                carried=carried or (),
            )
        except OSError as exc:
            msg = f"cannot read the research log beside {path.name}: {exc}"
            raise ValueError(msg) from None

    # -- running (see `execution`) ----------------------------------------------------------------
    def rewind(self, plan: RunPlan) -> str | None:
        """Fork the plan's thread from before the cell's earlier turn, if it has one on the
        current branch (see `rewind_to_turn`); returns that turn's id, or None.

        Does nothing while another process runs the thread (the run then says so).

        Raises:
            ValueError: The state folder is misconfigured or cannot be opened (see `storage`).
            StateDamaged: A database of the state folder is damaged.
        """
        key = plan.config.get("metadata", {}).get(CELL_METADATA_KEY)
        if not key:
            return None
        try:
            with self.storage.writing(plan.thread):
                return rewind_to_turn(plan.agent, self.storage.checkpointer, plan.config, key)
        except ThreadBusy:
            return None

    def settle(self, plan: RunPlan) -> list[str]:
        """Answer tool calls the thread left without results (see `settle_thread`).

        Does nothing while another process runs the thread (the run then says so).

        Raises:
            StateDamaged: A database of the state folder is damaged.
        """
        try:
            with self.storage.writing(plan.thread):
                return execution.settle(plan)
        except ThreadBusy:
            return []

    def run(
        self,
        plan: RunPlan,
        prompt: str,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        *,
        on_token: Callable[[str | None], None] | None = None,
    ) -> RunOutcome:
        """Send `prompt` to the plan's thread (settled first) and run it; see `execute`.

        Raises:
            ThreadBusy: Another process (a second kernel) is running the thread; nothing ran.
            StateDamaged: A database of the state folder is damaged.
        """
        return self._traced(
            plan,
            lambda: execution.run(
                plan, prompt, on_event, on_token=on_token, redact=self.redactor()
            ),
        )

    def resume_payload(
        self,
        plan: RunPlan,
        decision: str,
        *,
        message: str = "",
        edits: Mapping[str, Any] | None = None,
    ) -> Any:
        """The `Command` answering every tool call waiting for approval on the plan's thread.

        Raises:
            ValueError: Nothing is waiting on the thread, or the decision is not allowed.
        """
        return execution.resume_payload(plan, decision, message=message, edits=edits)

    def execute(
        self,
        plan: RunPlan,
        payload: Any,
        on_event: Callable[[dict[str, Any]], None] | None = None,
        on_token: Callable[[str | None], None] | None = None,
    ) -> RunOutcome:
        """Run the plan's agent on `payload` (new messages, or a resume `Command`).

        On a stop (KeyboardInterrupt) or a failure, `last_trace` keeps the events so far, the
        thread is settled, and the exception propagates (a failed model call as
        `ModelCallFailed`).

        Raises:
            ThreadBusy: Another process (a second kernel) is running the thread; nothing ran.
            StateDamaged: A database of the state folder is damaged.
        """
        return self._traced(
            plan,
            lambda: execution.execute(plan, payload, on_event, on_token, redact=self.redactor()),
        )

    def _traced(self, plan: RunPlan, run: Callable[[], RunOutcome]) -> RunOutcome:
        """Run holding the thread's lock; keep the trace, also of a run that failed, and append
        the run to the notebook's research log.

        Raises:
            ThreadBusy: Another process is running the thread; nothing was run.
            StateDamaged: A database of the state folder turned out damaged.
            ReplayMismatch: Under strict replay, a request differed from the research log.
        """
        with self.storage.writing(plan.thread):
            self.last_thread = plan.thread
            try:
                outcome = run()
            except BaseException as exc:
                self.last_trace = getattr(exc, "trace", None)
                self._record(plan, self.last_trace, exc)
                raise
            self.last_trace = outcome.trace
            outcome.provenance = self._record(plan, outcome.trace, None)
            mismatch = plan.recording.ledger.mismatch if plan.recording is not None else None
            if mismatch is not None:  # raised inside a subagent, which reported it as its failure
                raise mismatch
            return outcome

    def _record(self, plan: RunPlan, trace: Any, error: BaseException | None) -> dict[str, Any]:
        """Append the run to the notebook's research log (when it is a cell's turn)."""
        if plan.recording is None:
            return {}
        if plan.recording.resume:  # the next resume of this cell's turn is the one after
            self._paused_cells[plan.thread] = (plan.recording.address, plan.recording.resume)
        self._unserved[plan.thread] = plan.recording.ledger.unserved()
        try:
            return plan.recording.finish(trace, plan.thread, error)
        except OSError as exc:
            if error is None:
                msg = f"the run finished but the research log could not be written: {exc}"
                raise ValueError(msg) from None
            return {}
