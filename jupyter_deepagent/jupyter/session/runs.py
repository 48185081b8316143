"""A cell's run from its plan to its outcome, and `CellRuns`, the one owner of every run.

`Session.plan` makes a `RunPlan` (the thread, the settings, the agent, its /outputs/ backend and
stop button, the cell's recording in the research log). `CellRuns.run` runs it: under the
thread's lock it rewinds and settles the thread, tells the `RunWatch` (the cell's view) that the
run starts, runs the agent, keeps the trace (also of a run that failed or was stopped) and
appends the run to the research log; it returns a `RunOutcome` for the cell to show. `CellRuns`
also holds what the runs leave in this kernel: the `RunHistory` per thread (`%agent inspect`,
the sidebar), the approval prompts still on screen and the live inspector.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from jupyter_deepagent._exceptions import ResearchLogNotWritten
from jupyter_deepagent.jupyter.session.budget_answers import budget_pauses
from jupyter_deepagent.jupyter.session.execution import after_failure, execute, new_request
from jupyter_deepagent.jupyter.session.recording import CellRecordings
from jupyter_deepagent.jupyter.session.run_options import RunOptions
from jupyter_deepagent.jupyter.session.thread_state import pending_requests, settle_thread
from jupyter_deepagent.jupyter.session.turns import (
    CELL_METADATA_KEY,
    SOURCE_METADATA_KEY,
    rewind_to_turn,
)
from jupyter_deepagent.project.settings.agent_config import AgentConfig
from jupyter_deepagent.project.settings.paths import virtual_path
from jupyter_deepagent.project.settings.spending import budget_option

if TYPE_CHECKING:
    from langchain_core.runnables import RunnableConfig
    from langgraph.pregel import Pregel
    from langgraph.types import Command

    from jupyter_deepagent.events import BudgetPause, RunEvent
    from jupyter_deepagent.harness.budget.ledger import BudgetLedger
    from jupyter_deepagent.harness.pricing.table import PriceTable
    from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import OutputsBackend
    from jupyter_deepagent.jupyter.session.recording import RunRecording
    from jupyter_deepagent.jupyter.session.stop_button import StopButton
    from jupyter_deepagent.jupyter.session.thread_state import PendingCall
    from jupyter_deepagent.jupyter.views.approval_buttons import ApprovalPrompt
    from jupyter_deepagent.jupyter.views.budget_prompt import BudgetPrompt
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector
    from jupyter_deepagent.project.storage import OwnedStorage
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["CellRuns", "RunHistory", "RunOutcome", "RunPlan", "RunWatch", "run_settings"]

_KEPT = 50  # runs kept per thread


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, decided before it starts."""

    thread: str
    new_thread: bool
    settings: AgentConfig
    model_label: str
    """The run's model as every view names it ("provider:model", `harness.models.label`): the
    cell's header, the events (so the inspector and the sidebar), the research log, the CLI."""
    agent: Pregel
    """The compiled LangGraph agent of `create_research_agent`."""
    outputs: OutputsBackend
    context: Mapping[str, str]
    config: RunnableConfig
    stop_button: StopButton
    storage: OwnedStorage
    """The checkpointer and store the agent was built with; its lock guards the run."""
    redact: Callable[[str], str]
    """Masks secrets in the run's events and in the message of a failed model call."""
    recording: RunRecording | None = None
    """The cell's `RunRecording` (research log), or None when the run is not a cell's turn."""
    ledger: BudgetLedger | None = None
    """What the run spends against its budget (a resume's: the paused run's), or None."""
    prices: PriceTable | None = None
    """The prices its model calls are costed at (None: the shipped table)."""


@dataclass
class RunOutcome:
    """How a run ended: its trace, its /outputs/ files, and its summary in the research log."""

    plan: RunPlan
    trace: RunTrace
    outputs: dict[str, str] = field(default_factory=dict)
    provenance: dict[str, object] = field(default_factory=dict)
    """The run's summary in the research log (run id, model, calls, tokens, replayed or live)."""

    @property
    def pending(self) -> list[PendingCall]:
        """Tool calls waiting for approval: `{name, args, description, allowed}` each."""
        return pending_requests(self.trace.interrupts)

    @property
    def budget_pauses(self) -> list[BudgetPause]:
        """The budget pauses the run waits on (the next model call would pass its budget)."""
        return budget_pauses(self.trace.interrupts)


class RunWatch(Protocol):
    """What follows a run as it goes: the cell's view (and through it the sidebar)."""

    def start(self, notes: list[str]) -> None:
        """The run starts, under its thread's lock; `notes` say how the thread was settled."""

    def on_event(self, event: RunEvent) -> None:
        """One run event, masked."""

    def on_token(self, piece: str | None) -> None:
        """A piece of the main agent's answer as the model streams it (None: a new call)."""


class RunHistory:
    """The traces of this kernel's runs, by thread, oldest first (at most 50 per thread)."""

    def __init__(self) -> None:
        self._runs: OrderedDict[str, list[RunTrace]] = OrderedDict()

    def add(self, thread: str, trace: RunTrace | None) -> None:
        """Remember a run's trace (a stopped run's partial trace too); the same one once."""
        if trace is None:
            return
        runs = self._runs.setdefault(thread, [])
        if not runs or runs[-1] is not trace:
            runs.append(trace)
            del runs[:-_KEPT]

    def counts(self) -> dict[str, int]:
        """Thread -> how many of its runs are kept, threads in first-run order."""
        return {thread: len(runs) for thread, runs in self._runs.items()}

    def previous_prompt(self, thread: str, before: RunTrace | None = None) -> dict[str, Any] | None:
        """The last prompt (`PromptAssembly.as_dict()`) of the run on `thread` before `before`
        (before any new run when `before` is None), for marking what changed since."""
        runs = self._runs.get(thread, [])
        if before is not None and any(run is before for run in runs):
            runs = runs[: next(i for i, run in enumerate(runs) if run is before)]
        for trace in reversed(runs):
            prompts = trace.prompts
            if prompts:
                return prompts[-1].as_dict()
        return None

    def get(self, thread: str, run: int) -> RunTrace:
        """Run `run` of `thread` (1-based; negative counts from the last).

        Raises:
            ValueError: No such run in this kernel; the message says which runs there are.
        """
        runs = self._runs.get(thread, [])
        if not runs:
            known = ", ".join(self._runs) or "none yet"
            msg = (
                f"no run of thread {thread!r} in this kernel (threads with runs: {known}); "
                "runs from before a kernel restart are not kept"
            )
            raise ValueError(msg)
        index = run - 1 if run > 0 else len(runs) + run
        if run == 0 or not 0 <= index < len(runs):
            msg = f"thread {thread!r} has runs 1 to {len(runs)} in this kernel; --run {run} is none"
            raise ValueError(msg)
        return runs[index]


class CellRuns:
    """The runs of this kernel's cells, each owned by `run` from start to end, and what they leave.

    Attributes:
        history: The traces of this kernel's runs, per thread.
        last_trace: The `RunTrace` of the last run (partial if it was stopped or failed).
        last_thread: The thread of the last run.
        recordings: Which record of the research log each run is.
        prompts: Thread -> its approval (or budget pause) prompt still on screen.
        inspector: The live inspector of the last run shown with widgets, if any.
    """

    def __init__(self) -> None:
        self.history = RunHistory()
        self.last_trace: RunTrace | None = None
        self.last_thread: str | None = None
        self.recordings = CellRecordings()
        self.prompts: dict[str, ApprovalPrompt | BudgetPrompt] = {}
        self.inspector: Inspector | None = None

    def run(self, plan: RunPlan, request: str | Command, watch: RunWatch) -> RunOutcome:
        """Run a plan: a cell's request (`str`), or the answer to its approvals (a `Command`).

        Under the thread's lock, a cell's request first rewinds the thread to before the cell's
        earlier turn, if it has one on the current branch (see `rewind_to_turn`), and answers
        tool calls the thread left without results (see `settle_thread`). Then `watch` starts,
        the agent runs, and the run is kept (`last_trace`, `history`) and appended to the
        notebook's research log, also when it failed or was stopped.

        Raises:
            ThreadBusy: Another process (a second kernel) is running the thread; nothing ran.
            StateDamaged: A database of the state folder is damaged.
            ReplayMismatch: Under strict replay, a request differed from the research log.
            KeyboardInterrupt: The stop button; the thread is settled and kept.
            ModelCallFailed: The model call failed (its message masked); the thread is kept.
            ResearchLogNotWritten: The run finished but the research log could not be written
                (the exception carries the run's outcome, to show).
        """
        from jupyter_deepagent.trace.run_trace import RunTrace

        with plan.storage.writing(plan.thread):
            notes: list[str] = []
            payload: object = request
            if isinstance(request, str):
                metadata = plan.config.get("metadata", {})
                key = metadata.get(CELL_METADATA_KEY)
                if key:
                    source = metadata.get(SOURCE_METADATA_KEY)
                    rewind_to_turn(plan.agent, plan.storage.checkpointer, plan.config, key, source)
                notes = settle_thread(plan.agent, plan.config)
                payload = new_request(plan, request)
            watch.start(notes)
            self.last_thread = plan.thread
            trace = RunTrace()
            error: BaseException | None = None
            try:
                execute(plan, payload, trace, watch.on_event, watch.on_token)
            except BaseException as exc:
                try:  # kept and recorded even when leaving the thread valid fails too
                    error = after_failure(plan, payload, exc, trace)
                finally:
                    self._keep(plan, trace)
                    self.recordings.finish(plan, trace, error or exc)
                if error is exc:
                    raise
            if error is not None:
                raise error  # outside the handler, so the provider's exception is not its context
            self._keep(plan, trace)
            outcome = RunOutcome(plan, trace, outputs=plan.outputs.files)
            try:
                outcome.provenance = self.recordings.finish(plan, trace, None)
            except ResearchLogNotWritten as exc:
                exc.outcome = outcome  # the run's results are still shown
                raise
            mismatch = plan.recording.ledger.mismatch if plan.recording is not None else None
            if mismatch is not None:  # raised inside a subagent, which reported it as its failure
                raise mismatch
            return outcome

    def _keep(self, plan: RunPlan, trace: RunTrace) -> None:
        self.last_trace = trace
        self.history.add(plan.thread, trace)

    def answered(self, thread: str, text: str) -> ApprovalPrompt | BudgetPrompt | None:
        """The approval prompt still on screen for `thread`, if any, says `text` (unless one of
        its buttons answered it) and goes; returned, so a resume its button started continues
        the paused run's inspector (`ApprovalPrompt.inspector`)."""
        prompt = self.prompts.pop(thread, None)
        if prompt is not None:
            prompt.answered(text)
        return prompt


def run_settings(config: AgentConfig, options: RunOptions) -> AgentConfig:
    """The settings of one run: the notebook's `config` with the cell's `options` applied."""
    system = "\n\n".join(p for p in (config.system_prompt, options.system or "") if p.strip())
    return replace(
        config,
        model=options.model if options.model is not None else config.model,
        system_prompt=system,
        skills=tuple(virtual_path(p) for p in (*config.skills, *options.skills)),
        memory=tuple(virtual_path(p) for p in (*config.memory, *options.memory)),
        into=options.into or config.into,
        quiet=options.quiet or config.quiet,
        tools=tuple(dict.fromkeys((*config.tools, *options.tools))),
        python=options.python or config.python,
        cells=options.cells or config.cells,
        budget=budget_option(options.budget) if options.budget is not None else config.budget,
    )
