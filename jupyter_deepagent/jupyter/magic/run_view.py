"""`RunView`: one run as its cell shows it, from the header to the answer and the approvals.

It is the `RunWatch` the session's `CellRuns.run` tells as the run goes: `start` opens the cell's
view (its header and notes), pins the live inspector under it (a run resumed by the approval
buttons goes on in the paused run's inspector: one per turn) and tells the JupyterLab sidebar;
the run's events and tokens go to all three. When the run ends, `show` shows its outcome (the
answer, the /outputs/ files, the results table, the calls waiting for approval), and `stopped`
or `failed` end the view of a run that did not finish.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from jupyter_deepagent._exceptions import RecordedCodeNotApproved
from jupyter_deepagent.events import SUBAGENT_FINISHED
from jupyter_deepagent.jupyter.magic.options import ResumeCommand
from jupyter_deepagent.jupyter.views.budget_prompt import budget_stop, budget_text
from jupyter_deepagent.jupyter.views.notebook_words import boxed
from jupyter_deepagent.jupyter.views.proposed_cells import show_proposals
from jupyter_deepagent.jupyter.views.render import (
    CellView,
    FrameDisplay,
    is_terminal,
    show_files,
    show_pending,
    written_order,
)

if TYPE_CHECKING:
    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.jupyter.session.approvals import DecisionFields
    from jupyter_deepagent.jupyter.session.runs import RunOutcome, RunPlan
    from jupyter_deepagent.jupyter.session.session import Session
    from jupyter_deepagent.jupyter.sidebar.channel import SidebarChannel
    from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

__all__ = ["Decide", "RunView", "brief"]

Decide = Callable[[ResumeCommand, "str | None", "tuple[str, ...]"], None]
"""Resume a thread with a decision given by a button: (command, the cell's id, the ids of the
interrupts the buttons showed)."""


def brief(exc: BaseException, text: str | None = None) -> BaseException:
    """Make IPython show `exc` as one line ("Name: message") instead of a long traceback,
    broken between words to fit the error box (`boxed`)."""
    name = type(exc).__name__
    line = f"{name}: {boxed(name, str(exc) if text is None else text)}"
    exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]  # IPython's hook
    return exc


class RunView:
    """The cell's view of one planned run (see the module docstring).

    Args:
        shell: The IPython shell (its namespace gets `_agent` and the results table).
        session: The kernel's session (its keys' notes, its runs' history and live inspector).
        sidebar: The JupyterLab sidebar's channel, when the kernel has one.
        plan: The run.
        decide: What the approval buttons call.
        notes: Notes shown after those on how the thread was settled.
        action: Said in the header after "agent" (" · resume approve").
        decision: The `approval_decided` fields of a resume, emitted right after `run_started`.
        inspector: The inspector of the run this one resumes, when its approval buttons started
            it: the run continues in it (already shown in the cell) instead of a new one.
    """

    def __init__(
        self,
        shell: Any,
        session: Session,
        sidebar: SidebarChannel | None,
        plan: RunPlan,
        decide: Decide,
        *,
        notes: Sequence[str] = (),
        action: str = "",
        decision: DecisionFields | None = None,
        inspector: object = None,
    ) -> None:
        self.shell = shell
        self.session = session
        self.sidebar = sidebar
        self.plan = plan
        self._decide = decide
        self._notes = list(notes)
        self._action = action
        self._decision = decision
        self._continued = inspector
        self._inspector: Inspector | None = None
        self.view: CellView | None = None
        self._on_event: Callable[[RunEvent], None] = lambda event: None

    # -- the run as it goes (RunWatch) -------------------------------------------------------------
    def start(self, notes: list[str]) -> None:
        """Open the cell's view with the notes, pin the live inspector, tell the sidebar."""
        plan = self.plan
        view = CellView(rich=not is_terminal(self.shell), quiet=plan.settings.quiet)
        keys = self.session.keys
        shown = [*keys.notes, *self.session.notes, *notes, *self._notes]
        keys.notes.clear()
        self.session.notes.clear()
        new = " (new)" if plan.new_thread else ""
        view.start(f"agent{self._action} · thread {plan.thread}{new} · {plan.model_label}", shown)
        self.view = view
        on_event = self._watch_cell(view)
        sidebar = self.sidebar
        if sidebar is not None:
            sidebar.run_started(plan.thread, self.session.runs.history.previous_prompt(plan.thread))
            cell_events = on_event

            def on_event(event: RunEvent) -> None:
                cell_events(event)
                sidebar.on_event(event)

        if self._decision is not None:
            from jupyter_deepagent.jupyter.session.approvals import recording_decision

            on_event = recording_decision(on_event, self._decision)
        self._on_event = on_event

    def _watch_cell(self, view: CellView) -> Callable[[RunEvent], None]:
        """Pin the run's live inspector under the answer (or, for a run resumed by the paused
        run's buttons, go on in that run's inspector); the events go to both views."""
        runs = self.session.runs
        if not view.rich:
            runs.inspector = None
            return view.on_event
        from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

        if isinstance(self._continued, Inspector):
            inspector = self._continued
        else:
            inspector = Inspector(previous_prompt=runs.history.previous_prompt(self.plan.thread))
            view.pin(inspector)
        runs.inspector = self._inspector = inspector

        def on_event(event: RunEvent) -> None:
            view.on_event(event)
            inspector.on_event(event)

        return on_event

    def on_event(self, event: RunEvent) -> None:
        """One run event: to the cell's view, its live inspector and the sidebar."""
        self._on_event(event)

    def on_token(self, piece: str | None) -> None:
        """A piece of the streamed answer, shown as it comes."""
        if self.view is not None:
            self.view.on_token(piece)

    # -- the end -----------------------------------------------------------------------------------
    def stopped(self) -> None:
        """The stop button ended the run."""
        if self.view is not None:
            self.view.end("interrupted")
            self._publish()
            self.view.close()

    def failed(self, exc: BaseException) -> None:
        """The run failed with `exc`."""
        if self.view is not None:
            self._retitle(self.view)
            self.view.end(f"failed: {type(exc).__name__}")
            self._publish()
            self.view.close()

    def show(self, outcome: RunOutcome) -> None:
        """Show how the run ended: the answer, the /outputs/ files, the results table, the calls
        waiting for approval.

        Raises:
            RecordedCodeNotApproved: Headless without `--approve-recorded`, code from the
                research log waits for approval (shown briefly).
        """
        from jupyter_deepagent.jupyter.views.output_files import output_displays

        view = self.view
        if view is None:  # pragma: no cover - `CellRuns.run` starts the view before it runs
            return
        recorded_code = self.session.recorded_code
        pending = outcome.pending
        pauses = outcome.budget_pauses
        into = outcome.plan.settings.into
        finished = outcome.trace.of_type(SUBAGENT_FINISHED)
        if finished:
            self._warn_if_overwriting(view, into)
        self._retitle(view)
        status = "waiting for approval" if pending else "paused at budget" if pauses else "done"
        view.end(status, todos=outcome.trace.state.get("todos"))
        waiting = bool(pending or pauses)
        view.answer("" if waiting else outcome.trace.final_text, outcome.provenance)
        stopped = budget_stop(outcome.trace.events)
        if stopped:  # headless, or stopped by its answer: the cell says why
            view.note(stopped)
        show_files(
            output_displays(outcome.outputs),
            rich=view.rich,
            order=written_order(outcome.trace.events),
            place=view.below,
        )
        cells, resumed = outcome.plan.settings.cells, self._decision is not None
        show_proposals(
            self.shell, outcome.trace.events, offered=cells, resumed=resumed, place=view.below
        )
        from_log = recorded_code.waiting(pending) if pending else []
        code_id = None
        if from_log:
            from jupyter_deepagent.jupyter.session.recorded_code import recorded_code_id

            code_id = recorded_code_id(from_log)
            view.note(
                "the code waiting for approval comes from the research log, not from a "
                "model answering in this kernel: read it; Approve, or "
                f"`%agent resume approve {code_id}`, runs it"
            )
        if pending:
            self._ask(view, outcome, code_id)
        if pauses:
            self._ask_budget(view, outcome)
        if finished:
            frame = outcome.trace.results_frame()
            self.shell.user_ns[into] = frame
            view.below(FrameDisplay(frame, caption=into))
        self._publish()
        view.close()
        refusal = recorded_code.headless_refusal(pending) if pending else None
        if refusal:  # headless without --approve-recorded: stop here, saying why
            raise brief(RecordedCodeNotApproved(refusal))

    def _retitle(self, view: CellView) -> None:
        """Say in the header what answered the model's calls: the research log (replayed), a
        scripted model, a live one, or both the log and the model (mixed)."""
        if self.plan.recording is None:
            return
        outcome = self.plan.recording.answered
        if outcome != "none" and not view.header.endswith(f" · {outcome}"):
            view.retitle(f"{view.header} · {outcome}")

    def _warn_if_overwriting(self, view: CellView, into: str) -> None:
        """Say so when the results replace a variable of the user's that was not a result table."""
        namespace = self.shell.user_ns
        if into not in namespace or type(namespace[into]).__name__ == "DataFrame":
            return
        text = (
            f"{into} held a {type(namespace[into]).__name__}; it now holds this run's subagent "
            f"results (use --into NAME to keep it)"
        )
        if view.quiet:
            print(f"! {text}")
        else:
            view.note(text)

    def _publish(self) -> None:
        """The run's trace as `_agent`; the live views get their last events."""
        runs = self.session.runs
        self.shell.user_ns["_agent"] = runs.last_trace
        if runs.inspector is not None:
            runs.inspector.render()  # the last events, whatever the throttle held back
        if self.sidebar is not None:
            self.sidebar.run_finished()

    def _ask_budget(self, view: CellView, outcome: RunOutcome) -> None:
        """Show the budget pause: with Continue / Raise budget / Stop buttons in Jupyter, as text
        naming the `%agent resume` commands in a terminal."""
        thread = outcome.plan.thread
        pauses = [dict(pause) for pause in outcome.budget_pauses]
        if not view.rich:
            view.below(budget_text(pauses, thread))
            return
        from jupyter_deepagent.jupyter.session.approvals import interrupt_ids
        from jupyter_deepagent.jupyter.views.budget_prompt import BudgetPrompt

        shown = interrupt_ids(outcome.trace.interrupts)
        cell = outcome.plan.config.get("metadata", {}).get("cell_id")
        decide = self._decide

        def on_answer(action: str, budget: str | None) -> None:
            decide(ResumeCommand(action, budget=budget, thread=thread), cell, shown)

        prompt = BudgetPrompt(pauses, thread, on_answer)
        prompt.inspector = self._inspector
        self.session.runs.prompts[thread] = prompt
        prompt.show(place=view.below)

    def _ask(self, view: CellView, outcome: RunOutcome, code_id: str | None = None) -> None:
        """Show the calls waiting for approval: with buttons in Jupyter, as text in a terminal
        (`code_id`: the id that approves code from a research log)."""
        thread = outcome.plan.thread
        if not view.rich:
            pending = [dict(call) for call in outcome.pending]  # the views take plain dicts
            show_pending(pending, thread, place=view.below, code_id=code_id)
            return
        from jupyter_deepagent.jupyter.session.approvals import interrupt_ids
        from jupyter_deepagent.jupyter.views.approval_buttons import ApprovalPrompt

        shown = interrupt_ids(outcome.trace.interrupts)
        cell = outcome.plan.config.get("metadata", {}).get("cell_id")
        decide = self._decide

        def on_decision(decision: str, message: str, edits: Mapping[str, object]) -> None:
            command = ResumeCommand(decision, message=message, edits=dict(edits), thread=thread)
            decide(command, cell, shown)

        prompt = ApprovalPrompt(outcome.pending, thread, on_decision, code_id)
        prompt.inspector = self._inspector
        self.session.runs.prompts[thread] = prompt
        prompt.show(place=view.below)
