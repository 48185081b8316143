"""`%%agent` (run the agent on the cell) and `%agent` (config, threads, show, inspect, reset, resume,
notebook, help).

Registered by `%load_ext jupyter_deepagent`. This module and what it imports at the top stay
light (IPython, the session's plain-Python rooms, the settings): LangChain, LangGraph and the
harness are imported by the background thread `%load_ext` starts (`warm_up.py`), which the first
use of the magic waits for, and pandas when a run needs it (a test checks it).
Mistyped options raise IPython's `UsageError` (shown without a traceback, and stopping "Run All");
so do a missing API key and a stop button press, each with a one-line message.

Every use of the magic goes the same way (`_answer`): read the line and plan what to do, where a
`ValueError` (the user's option, setting, file or name: `InputError` is one) becomes a usage error
and the project's own errors are shown in one line; then, for a run, `_run` hands the plan to the
session's `CellRuns` with the cell's `RunView` watching, and shows how it ended.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from jupyter_deepagent._exceptions import ResearchAssistantError, ResearchLogNotWritten
from jupyter_deepagent.jupyter.magic import line_commands
from jupyter_deepagent.jupyter.magic.inspect_command import inspect_run, trace_bundle
from jupyter_deepagent.jupyter.magic.options import (
    CELL_USAGE,
    HELP,
    LINE_USAGE,
    ConfigCommand,
    NotebookCommand,
    ResumeCommand,
    RunOptions,
    interpolate,
    parse_line,
    parse_run_options,
    with_usage,
)
from jupyter_deepagent.jupyter.magic.run_view import RunView, brief
from jupyter_deepagent.jupyter.session.runs import RunOutcome
from jupyter_deepagent.jupyter.session.session import Session
from jupyter_deepagent.jupyter.session.turns import CellAddress, cell_address
from jupyter_deepagent.jupyter.views.render import is_terminal

if TYPE_CHECKING:
    from langgraph.types import Command

    from jupyter_deepagent.jupyter.magic.warm_up import WarmUp
    from jupyter_deepagent.jupyter.session.runs import RunPlan
    from jupyter_deepagent.jupyter.sidebar.channel import SidebarChannel

__all__ = ["AgentMagics", "get_session"]

_BUDGET_ANSWERS = ("continue", "raise", "stop")
"""The `%agent resume` decisions that answer a budget pause."""

_Run = Callable[[], None]
"""A run, planned and checked, that `_answer` starts once nothing in the line was wrong."""


def _parent(shell: object) -> dict[str, Any]:
    """The execute request being run (empty outside a kernel, e.g. terminal IPython)."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    return parent if isinstance(parent, dict) else {}


def cell_id(shell: object) -> str | None:
    """The running cell's id (JupyterLab sends it), else the execute request's id (nbclient)."""
    parent = _parent(shell)
    if not parent:
        return None
    return parent.get("metadata", {}).get("cellId") or parent.get("header", {}).get("msg_id")


def _recorded_code_policy(shell: object) -> str | None:
    """What the headless runner says about code from the research log ("approve" with
    `--approve-recorded`, else "refuse"); None from any other frontend (JupyterLab...), and for
    a request claiming the runner's policy without its token (a cell's own metadata)."""
    from jupyter_deepagent.jupyter.session.recorded_code import headless_policy

    metadata = _parent(shell).get("metadata", {})
    return headless_policy(metadata) if isinstance(metadata, dict) else None


def _log_damage(plan: RunPlan) -> list[str]:
    """Notes on damaged lines of the research log (they are skipped, never glued to)."""
    return list(plan.recording.damage) if plan.recording is not None else []


@magics_class
class AgentMagics(Magics):
    """The `agent` line and cell magic, over the kernel's one `Session`.

    Args:
        shell: The IPython shell.
        session: The kernel's session, shared with the sidebar and the widgets.

    Attributes:
        sidebar: The JupyterLab sidebar's channel, set by `%load_ext` in a kernel.
        warm_up: The imports `%load_ext` started in the background, which the first use of
            the magic waits for (None when turned off).
    """

    def __init__(self, shell: Any, session: Session) -> None:
        super().__init__(shell)
        self.session = session
        self.sidebar: SidebarChannel | None = None
        self.warm_up: WarmUp | None = None
        formatter = getattr(getattr(shell, "display_formatter", None), "mimebundle_formatter", None)
        if formatter is not None:  # `_agent` shows as the inspector (deferred: nothing imported)
            formatter.for_type_by_name(
                "jupyter_deepagent.trace.run_trace",
                "RunTrace",
                lambda trace: trace_bundle(trace, terminal=is_terminal(self.shell)),
            )

    @no_var_expand
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run the agent on the cell (`%%agent`), or a command (`%agent help` lists them)."""
        if cell is None:
            self._answer(lambda: self._command(line))
        else:
            self._answer(lambda: self._cell(line, cell))

    def _answer(self, prepare: Callable[[], _Run | None]) -> None:
        """Do what the user asked: `prepare` reads it, plans it and does what needs no run; the
        run it returns, if any, then runs; first, the imports started in the background at
        `%load_ext` are waited for, so the two never import the same modules side by side.

        The one place where the user's errors are shown: a `ValueError` (an option, a setting,
        a configuration or env file, the state folder, the research log, a thread's name; an
        `InputError` is one) as a usage error, the project's own errors (a missing key, a
        damaged database, a thread in use...) in one line. A run's failure is the run's: shown
        in its cell, and raised as it is (see `_run`).
        """
        if self.warm_up is not None:
            self.warm_up.wait()
        try:
            run = prepare()
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        except ResearchAssistantError as exc:
            raise brief(exc) from None
        if run is not None:
            run()

    # -- %%agent -----------------------------------------------------------------------------------
    def _cell(self, line: str, cell: str) -> _Run | None:
        namespace: dict[str, Any] = getattr(self.shell, "user_ns", {})
        with with_usage(CELL_USAGE, "%%agent"):
            options = self._options(line, namespace)
        if options.help:
            print(HELP)
            return None
        if not cell.strip():
            msg = f"%%agent needs a request on the lines below it.\n{CELL_USAGE}"
            raise UsageError(msg)
        prompt = interpolate(cell, namespace, self._masked_value).strip()
        session = self.session
        session.recorded_code.headless = _recorded_code_policy(self.shell)
        address = cell_address(_parent(self.shell), line, cell)  # now: later it may be another's
        plan = self._plan(options, address)

        def run() -> None:
            session.runs.answered(plan.thread, "no longer waiting: a new %%agent request was sent")
            self._run(plan, prompt, self._view(plan, notes=_log_damage(plan)))

        return run

    def _options(self, line: str, namespace: dict[str, Any]) -> RunOptions:
        """The options of the `%%agent` line, `{name}`s masked as in the request (`--system
        "{api_key}"` sends `***`), except in `--context` values: those go to tools only, never
        to the model, so `--context key={api_key}` gives the tools the real key.

        Raises:
            ValueError: An option is unknown or malformed, or a `{name}` names no variable.
        """
        options = parse_run_options(interpolate(line, namespace, self._masked_value))
        if options.context and "{" in line:
            # each --context value filled in after the line is split, so a real value (a key
            # holding a quote) can neither break the split nor appear in its error
            written = parse_run_options(line).context
            options = replace(
                options,
                context={key: interpolate(value, namespace) for key, value in written.items()},
            )
        return options

    def _masked_value(self, path: str, value: object) -> str:
        """What `{path}` puts into the request: secrets masked, so they reach neither the model
        nor the checkpoint."""
        from jupyter_deepagent.project.secrets.redaction import masked_interpolation

        return masked_interpolation(path, value, self.session.redactor())

    def _plan(
        self,
        options: RunOptions,
        address: CellAddress | None = None,
        cell: str | None = None,
        *,
        resume: bool = False,
    ) -> RunPlan:
        return self.session.plan(
            options, cell_id=cell or cell_id(self.shell), cell=address, resume=resume
        )

    def _view(self, plan: RunPlan, **kwargs: Any) -> RunView:
        return RunView(self.shell, self.session, self.sidebar, plan, self._decided, **kwargs)

    def _run(self, plan: RunPlan, request: str | Command, view: RunView) -> None:
        """Run the plan, shown in its cell by `view`; a stop or a failure ends the view, and is
        raised (the project's errors and a stop in one line)."""
        try:
            outcome = self.session.runs.run(plan, request, view)
        except KeyboardInterrupt:
            view.stopped()
            text = (
                f"the run was stopped; thread {plan.thread!r} is kept and the next %%agent "
                "continues it"
            )
            raise brief(KeyboardInterrupt(text)) from None
        except ResearchLogNotWritten as exc:  # the run went well: its results, then the error
            if isinstance(exc.outcome, RunOutcome):
                view.show(exc.outcome)
            else:
                view.failed(exc)
            raise brief(exc) from None
        except Exception as exc:
            view.failed(exc)
            if isinstance(exc, ResearchAssistantError):
                raise brief(exc) from None
            raise
        view.show(outcome)

    # -- %agent ------------------------------------------------------------------------------------
    def _command(self, line: str) -> _Run | None:
        name, _, rest = line.strip().partition(" ")
        if name == "inspect":
            inspect_run(self.session, self.shell, rest)
            return None
        with with_usage(LINE_USAGE, "%agent"):
            command = parse_line(line)
        if isinstance(command, ConfigCommand):
            line_commands.show_config(self.session, command)
        elif isinstance(command, ResumeCommand):
            return self._resume(command)
        elif isinstance(command, NotebookCommand):
            line_commands.show_notebook(self.session, command.path)
        elif command.name == "help":
            print(HELP)
        elif command.name == "threads":
            line_commands.show_threads(self.session, every_user=command.all)
        elif command.name == "show":
            line_commands.show_prompt(self.session, command.thread)
        else:
            forgotten, existed = line_commands.reset(self.session, command.thread)
            if not existed:
                print(
                    f"Thread {forgotten!r} has no conversation to forget: it never ran here "
                    "(%agent threads lists this notebook's)."
                )
                return None
            print(
                f"Thread {forgotten!r} forgotten (its checkpoints and transcript); the next "
                "%%agent on it starts afresh. Files in /large_tool_results/ and /subagents/ stay "
                "in the state folder's artifacts/."
            )
        return None

    def _decided(self, command: ResumeCommand, cell: str | None, shown: tuple[str, ...]) -> None:
        """An approval button was clicked: resume the thread with its decision."""
        self._answer(lambda: self._resume(command, via="button", cell=cell, shown=shown))

    def _resume(
        self,
        command: ResumeCommand,
        *,
        via: str = "%agent resume",
        cell: str | None = None,
        shown: tuple[str, ...] | None = None,
    ) -> _Run:
        """Resume with the model and options of the run that paused (see `resume_options`).

        Raises:
            ValueError: Nothing waits for approval on the thread, or not what the buttons showed,
                or the decision is not allowed.
            RecordedCodeNotApproved: Code from a research log waits, not approved here.
            ReplayMismatch: Under strict replay, the decision differs from the research log's.
        """
        from jupyter_deepagent.jupyter.session.approvals import decision_fields, still_waiting
        from jupyter_deepagent.jupyter.session.budget_answers import budget_pauses
        from jupyter_deepagent.jupyter.session.thread_state import pending_requests, resume_command

        if command.decision in _BUDGET_ANSWERS:
            return self._resume_budget(command, via=via, cell=cell, shown=shown)
        session = self.session
        if via != "button":  # a click comes from the page, whatever request is current
            session.recorded_code.headless = _recorded_code_policy(self.shell)
        plan = self._plan(
            self._ran_options(command.thread, "for approval", shown), cell=cell, resume=True
        )
        if shown is not None:
            still_waiting(plan.agent, plan.config, shown)
        state = plan.agent.get_state(plan.config)
        pending = pending_requests(state.interrupts)
        # a pause saved by an earlier kernel: its reply says whether the log served it
        session.recorded_code.note_thread(state.values.get("messages", []))
        if not pending:
            msg = f"nothing is waiting for approval on thread {plan.thread!r}"
            if budget_pauses(state.interrupts):
                msg += " (it waits at its budget: %agent resume continue, raise LIMIT or stop)"
            raise ValueError(msg)
        payload = resume_command(
            state.interrupts, command.decision, message=command.message, edits=command.edits
        )
        # code a research log served runs only with an approval given here, for it
        session.recorded_code.check_resume(
            pending, command.decision, via=via, code_id=command.code_id, edits=command.edits
        )
        fields = decision_fields(
            plan.agent,
            plan.config,
            pending,
            command.decision,
            message=command.message,
            edits=command.edits,
            via=via,
        )
        if plan.recording is not None:
            plan.recording.check_decision(fields)

        def run() -> None:
            answered = f"answered in another cell: %agent resume {command.decision}"
            prompt = session.runs.answered(plan.thread, answered)
            action = f" · resume {command.decision}"
            continued = prompt.inspector if prompt is not None and via == "button" else None
            view = self._view(
                plan, notes=_log_damage(plan), action=action, decision=fields, inspector=continued
            )
            self._run(plan, payload, view)

        return run

    def _ran_options(
        self, thread: str | None, waiting: str, shown: tuple[str, ...] | None
    ) -> RunOptions:
        """The options to resume `thread` with (`resume_options`).

        Raises:
            ValueError: A command (not a button: `shown` is None; `still_waiting` answers those)
                resumes a thread that never ran, so nothing waits on it (`waiting`: "for
                approval", "at its budget"); said before a model is made, which may need a key.
        """
        options = self.session.resume_options(thread)
        if shown is not None or options.thread is None:
            return options
        saved = self.session.storage.checkpointer.get_tuple(
            {"configurable": {"thread_id": options.thread}}
        )
        if saved is None:
            msg = f"nothing is waiting {waiting} on thread {options.thread!r}: it has no runs yet"
            raise ValueError(msg)
        return options

    def _resume_budget(
        self,
        command: ResumeCommand,
        *,
        via: str,
        cell: str | None,
        shown: tuple[str, ...] | None,
    ) -> _Run:
        """Answer a run paused at its budget (continue, raise, stop), with the options of the run
        that paused; the resumed run goes on with its ledger.

        Raises:
            ValueError: Nothing waits at its budget on the thread, or not what the buttons
                showed, or the new budget is not one (or is in another unit).
            ReplayMismatch: Under strict replay, the answer differs from the research log's.
        """
        from jupyter_deepagent.jupyter.session.approvals import still_waiting
        from jupyter_deepagent.jupyter.session.budget_answers import (
            budget_command,
            budget_decision,
            budget_pauses,
        )

        session = self.session
        if via != "button":
            session.recorded_code.headless = _recorded_code_policy(self.shell)
        plan = self._plan(
            self._ran_options(command.thread, "at its budget", shown), cell=cell, resume=True
        )
        if shown is not None:
            still_waiting(plan.agent, plan.config, shown)
        state = plan.agent.get_state(plan.config)
        pauses = budget_pauses(state.interrupts)
        if not pauses:
            msg = f"nothing is waiting at its budget on thread {plan.thread!r}"
            if state.interrupts:
                msg += " (it waits for approval: %agent resume approve, reject or edit)"
            raise ValueError(msg)
        decision = budget_decision(command.decision, command.budget, via=via, pause=pauses[0])
        new = decision["budget"]
        if plan.recording is not None:
            plan.recording.answer_budget(decision)
        payload = budget_command(state.interrupts, decision)

        def run() -> None:
            said = command.decision + (f" {new}" if new else "")
            prompt = session.runs.answered(plan.thread, f"answered elsewhere: {said}")
            continued = prompt.inspector if prompt is not None and via == "button" else None
            view = self._view(
                plan, notes=_log_damage(plan), action=f" · resume {said}", inspector=continued
            )
            self._run(plan, payload, view)

        return run


def get_session(shell: Any = None) -> Session:
    """The session of `shell` (default: the running IPython), once the extension is loaded.

    Raises:
        RuntimeError: There is no IPython shell, or the extension is not loaded in it.
    """
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    magics = shell.magics_manager.registry.get("AgentMagics") if shell is not None else None
    if magics is None:
        msg = "jupyter_deepagent is not loaded: run `%load_ext jupyter_deepagent` first"
        raise RuntimeError(msg)
    session: Session = magics.session
    return session
