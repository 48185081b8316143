"""`%%agent` (run the agent on the cell) and `%agent` (config, threads, show, reset, resume, help).

Registered by `%load_ext jupyter_deepagent`. This module and what it imports at the top stay
light (IPython, argparse, tomllib): LangChain, LangGraph and pandas load when the first run starts.
Mistyped options raise IPython's `UsageError` (shown without a traceback, and stopping "Run All");
so do a missing API key and a stop button press, each with a one-line message.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class, no_var_expand

from jupyter_deepagent._exceptions import (
    RecordedCodeNotApproved,
    ReplayMismatch,
    ResearchAssistantError,
)
from jupyter_deepagent.jupyter.magic.inspect_command import RunHistory, parse_inspect, trace_bundle
from jupyter_deepagent.jupyter.magic.options import (
    CELL_USAGE,
    HELP,
    LINE_USAGE,
    ConfigCommand,
    ResumeCommand,
    RunOptions,
    interpolate,
    parse_line,
    parse_run_options,
)
from jupyter_deepagent.jupyter.session.session import RunOutcome, RunPlan, Session
from jupyter_deepagent.jupyter.session.turns import CellAddress, cell_address
from jupyter_deepagent.jupyter.views.render import (
    CellView,
    FrameDisplay,
    is_terminal,
    markdown,
    show,
    show_files,
    show_pending,
    written_order,
)
from jupyter_deepagent.project.settings.agent_config import shown_value
from jupyter_deepagent.project.storage.database_url import DATABASE_URL_VARIABLE

__all__ = ["AgentMagics", "get_session"]


def _brief(exc: BaseException, text: str | None = None) -> BaseException:
    """Make IPython show `exc` as one line ("Name: message") instead of a long traceback."""
    line = f"{type(exc).__name__}: {text if text is not None else exc}"
    exc._render_traceback_ = lambda: [line]  # type: ignore[attr-defined]
    return exc


def _parent(shell: Any) -> dict[str, Any]:
    """The execute request being run (empty outside a kernel, e.g. terminal IPython)."""
    get_parent = getattr(getattr(shell, "kernel", None), "get_parent", None)
    parent = get_parent() if callable(get_parent) else None
    return parent if isinstance(parent, dict) else {}


def cell_id(shell: Any) -> str | None:
    """The running cell's id (JupyterLab sends it), else the execute request's id (nbclient)."""
    parent = _parent(shell)
    if not parent:
        return None
    return parent.get("metadata", {}).get("cellId") or parent.get("header", {}).get("msg_id")


def _recorded_code_policy(shell: Any) -> str | None:
    """What the headless runner says about code from the research log ("approve" with
    `--approve-recorded`, else "refuse"); None from any other frontend (JupyterLab...)."""
    from jupyter_deepagent.jupyter.session.recorded_code import HEADLESS_METADATA_KEY

    policy = _parent(shell).get("metadata", {}).get(HEADLESS_METADATA_KEY)
    return policy if policy in ("approve", "refuse") else None


def _log_damage(plan: RunPlan) -> list[str]:
    """Notes on damaged lines of the research log (they are skipped, never glued to)."""
    return list(plan.recording.damage) if plan.recording is not None else []


@magics_class
class AgentMagics(Magics):
    """The `agent` line and cell magic; owns the kernel's one `Session`."""

    def __init__(self, shell: Any, capture: Any = None) -> None:
        super().__init__(shell)
        self.capture = capture
        self._session: Session | None = None
        self._prompts: dict[str, Any] = {}  # thread -> its ApprovalPrompt still on screen
        self.history = RunHistory()
        self._inspector: Any = None
        self.sidebar: Any = None  # the JupyterLab sidebar's SidebarChannel, set by %load_ext
        formatter = getattr(getattr(shell, "display_formatter", None), "mimebundle_formatter", None)
        if formatter is not None:  # `_agent` shows as the inspector (deferred: nothing imported)
            formatter.for_type_by_name(
                "jupyter_deepagent.trace.run_trace",
                "RunTrace",
                lambda trace: trace_bundle(trace, terminal=is_terminal(self.shell)),
            )

    @property
    def session(self) -> Session:
        """The kernel's session, created on first use."""
        if self._session is None:
            self._session = Session(self.shell, capture=self.capture)
        return self._session

    @no_var_expand
    @line_cell_magic
    def agent(self, line: str, cell: str | None = None) -> None:
        """Run the agent on the cell (`%%agent`), or a command (`%agent help` lists them)."""
        if cell is None:
            self._command(line)
        else:
            self._run_cell(line, cell)

    # -- %%agent -----------------------------------------------------------------------------------
    def _run_cell(self, line: str, cell: str) -> None:
        namespace = self.shell.user_ns
        try:
            options = self._options(line, namespace)
        except ValueError as exc:
            raise UsageError(f"{exc}\n{CELL_USAGE}") from None
        if options.help:
            print(HELP)
            return
        if not cell.strip():
            msg = f"%%agent needs a request on the lines below it.\n{CELL_USAGE}"
            raise UsageError(msg)
        try:
            prompt = interpolate(cell, namespace, self._masked_value).strip()
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        session = self.session
        session.recorded_code.headless = _recorded_code_policy(self.shell)
        address = cell_address(_parent(self.shell), line, cell)  # now: later it may be another's
        plan = self._plan(options, address)
        self._answered(plan.thread, "no longer waiting: a new %%agent request was sent")
        try:
            session.rewind(plan)
            notes = session.settle(plan)
        except ResearchAssistantError as exc:  # the database went away, or is damaged
            raise _brief(exc) from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        view = self._view(plan, notes + _log_damage(plan))
        on_event = self._watch(view, plan)
        outcome = self._drive(
            view, plan, lambda: session.run(plan, prompt, on_event, on_token=view.on_token)
        )
        self._show_outcome(view, outcome)

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

    def _masked_value(self, path: str, value: Any) -> str:
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
        try:
            return self.session.plan(
                options, cell_id=cell or cell_id(self.shell), cell=address, resume=resume
            )
        except ResearchAssistantError as exc:
            raise _brief(exc) from None
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def _view(self, plan: RunPlan, notes: list[str], action: str = "") -> CellView:
        view = CellView(rich=not is_terminal(self.shell), quiet=plan.settings.quiet)
        header = self._header(plan, action)
        keys = self.session.keys
        notes = [*keys.notes, *notes]
        keys.notes.clear()
        view.start(header, notes)
        return view

    def _watch(self, view: CellView, plan: RunPlan) -> Callable[[dict[str, Any]], None]:
        """The events go to the cell's views and to the JupyterLab sidebar."""
        on_event = self._watch_cell(view, plan)
        sidebar = self.sidebar
        if sidebar is None:
            return on_event
        sidebar.run_started(plan.thread, self.history.previous_prompt(plan.thread))

        def both(event: dict[str, Any]) -> None:
            on_event(event)
            sidebar.on_event(event)

        return both

    def _watch_cell(self, view: CellView, plan: RunPlan) -> Callable[[dict[str, Any]], None]:
        """Pin the run's live inspector under the answer; the events go to both views."""
        if not view.rich:
            self._inspector = None
            return view.on_event
        from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

        inspector = Inspector(previous_prompt=self.history.previous_prompt(plan.thread))
        self._inspector = inspector
        view.pin(inspector)

        def on_event(event: dict[str, Any]) -> None:
            view.on_event(event)
            inspector.on_event(event)

        return on_event

    @staticmethod
    def _header(plan: RunPlan, action: str = "") -> str:
        new = " (new)" if plan.new_thread else ""
        return f"agent{action} · thread {plan.thread}{new} · {plan.model_label}"

    def _drive(self, view: CellView, plan: RunPlan, run: Callable[[], RunOutcome]) -> RunOutcome:
        try:
            outcome = run()
        except KeyboardInterrupt:
            view.end("interrupted")
            self._publish(plan)
            view.close()
            text = (
                f"the run was stopped; thread {plan.thread!r} is kept and the next %%agent "
                "continues it"
            )
            raise _brief(KeyboardInterrupt(text)) from None
        except Exception as exc:
            self._retitle(view, plan)
            view.end(f"failed: {type(exc).__name__}")
            self._publish(plan)
            view.close()
            if isinstance(exc, ResearchAssistantError):
                raise _brief(exc) from None
            raise
        return outcome

    def _show_outcome(self, view: CellView, outcome: RunOutcome) -> None:
        from jupyter_deepagent.jupyter.notebook_fs.outputs_backend import output_displays

        pending = outcome.pending
        into = outcome.plan.settings.into
        finished = outcome.trace.of_type("subagent_finished")
        if finished:
            self._warn_if_overwriting(view, into)
        self._retitle(view, outcome.plan)
        view.end(
            "waiting for approval" if pending else "done", todos=outcome.trace.state.get("todos")
        )
        view.answer("" if pending else outcome.trace.final_text, outcome.provenance)
        show_files(
            output_displays(outcome.outputs),
            rich=view.rich,
            order=written_order(outcome.trace.events),
            place=view.below,
        )
        from_log = self.session.recorded_code.waiting(pending) if pending else []
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
        if finished:
            frame = outcome.trace.results_frame()
            self.shell.user_ns[into] = frame
            view.below(FrameDisplay(frame))
        self._publish(outcome.plan)
        view.close()
        refusal = self.session.recorded_code.headless_refusal(pending) if pending else None
        if refusal:  # headless without --approve-recorded: stop here, saying why
            raise _brief(RecordedCodeNotApproved(refusal))

    def _retitle(self, view: CellView, plan: RunPlan) -> None:
        """Say in the header whether the model's answers came from the research log."""
        if plan.recording is None:
            return
        outcome = plan.recording.ledger.outcome
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

    def _publish(self, plan: RunPlan) -> None:
        trace = self.session.last_trace
        self.shell.user_ns["_agent"] = trace
        self.history.add(plan.thread, trace)
        if self._inspector is not None:
            self._inspector.render()  # the last events, whatever the throttle held back
        if self.sidebar is not None:
            self.sidebar.run_finished()

    # -- %agent ------------------------------------------------------------------------------------
    def _command(self, line: str) -> None:
        command, _, rest = line.strip().partition(" ")
        if command == "inspect":
            self._inspect_run(rest)
            return
        try:
            command = parse_line(line)
        except ValueError as exc:
            raise UsageError(f"{exc}\n{LINE_USAGE}") from None
        if isinstance(command, ConfigCommand):
            self._config(command)
        elif isinstance(command, ResumeCommand):
            self._resume(command)
        elif command.name == "help":
            print(HELP)
        else:
            try:  # these only read the configuration and the state folder
                self._inspect(command.name, command.thread, every_user=command.all)
            except ResearchAssistantError as exc:  # a damaged database, a thread in use
                raise _brief(exc) from None
            except ValueError as exc:
                raise UsageError(str(exc)) from None

    def _inspect(self, name: str, thread: str | None, *, every_user: bool = False) -> None:
        if name == "threads":
            self._threads(every_user=every_user)
        elif name == "show":
            self._show_prompt(thread)
        else:
            forgotten = self.session.reset(thread)
            print(
                f"Thread {forgotten!r} forgotten (its checkpoints and transcript); the next "
                "%%agent on it starts afresh. Files in /large_tool_results/ and /subagents/ stay "
                "in the state folder's artifacts/."
            )

    def _inspect_run(self, rest: str) -> None:
        """`%agent inspect`: the inspector of an earlier run of this kernel, opened."""
        try:
            thread, run = parse_inspect(rest)
            name = thread or self.session.last_thread or self.session.thread
            trace = self.history.get(name, run)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        previous = self.history.previous_prompt(name, before=trace)
        if is_terminal(self.shell):
            from jupyter_deepagent.trace.inspector import build_snapshot, snapshot_text

            print(snapshot_text(build_snapshot(trace.events, previous)))
            return
        from jupyter_deepagent.jupyter.views.inspector_widget import Inspector

        show(Inspector.from_trace(trace, previous_prompt=previous, expanded=True))

    def _config(self, command: ConfigCommand) -> None:
        session = self.session
        try:
            if command.assignments:
                session.configure(**command.assignments)
            config, sources = session.config, session.config_sources()
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        if "database_url" in command.assignments and sources["database_url"] != "%agent config":
            print(
                f"database_url is set by {DATABASE_URL_VARIABLE} in the environment, which "
                "wins: unset it there (and restart the kernel) to use another database."
            )
        rows = ["| setting | value | from |", "|---|---|---|"]
        for name, source in sources.items():
            value = shown_value(name, getattr(config, name))
            if isinstance(value, tuple):
                value = ", ".join(value)
            elif isinstance(value, float):
                value = f"{value:g}"  # 60.0 seconds as 60
            elif not isinstance(value, (str, int, bool, type(None))):
                value = f"a {type(value).__name__} object"
            shown = f"`{value}`" if value != "" else "—"
            rows.append(f"| {name} | {shown} | {source} |")
        show(markdown("\n".join(rows)))

    def _threads(self, *, every_user: bool = False) -> None:
        session = self.session
        infos = session.threads(every_user=every_user)
        current, owner = session.thread, session.owner
        if not infos:
            text = f"No conversations yet. The next `%%agent` cell starts thread `{current}`."
            if every_user:
                text = f"No conversations yet in project `{owner.project}`."
            show(markdown(text))
            return
        if not every_user:
            rows = ["| thread | messages | last update |", "|---|---|---|"]
            for info in infos:
                name = f"**{info.name}** (current)" if info.name == current else info.name
                rows.append(f"| {name} | {info.messages} | {info.updated} |")
            show(markdown("\n".join(rows)))
            return
        rows = [
            f"Project `{owner.project}`: others' threads are read-only (listed as "
            "`user/thread`; only their owner may continue or reset them).",
            "",
            "| thread | owner | messages | last update |",
            "|---|---|---|---|",
        ]
        for info in infos:
            mine = info.owner == owner.user
            name = info.name if mine else f"{info.owner}/{info.name}"
            name = f"**{name}** (current)" if mine and info.name == current else name
            who = f"{info.owner} (you)" if mine else info.owner
            rows.append(f"| {name} | {who} | {info.messages} | {info.updated} |")
        show(markdown("\n".join(rows)))

    def _show_prompt(self, thread: str | None) -> None:
        from jupyter_deepagent.jupyter.views.render import prompt_markdown

        session = self.session
        name = session.own_thread(thread or session.thread)  # not another user's
        assembly, label = session.prompt_for(name)
        show(prompt_markdown(assembly, label, name, session.conversation_size(name)))

    def _ask(self, view: CellView, outcome: RunOutcome, code_id: str | None = None) -> None:
        """Show the calls waiting for approval: with buttons in Jupyter, as text in a terminal
        (`code_id`: the id that approves code from a research log)."""
        thread = outcome.plan.thread
        if not view.rich:
            show_pending(outcome.pending, thread, place=view.below, code_id=code_id)
            return
        from jupyter_deepagent.jupyter.session.approvals import interrupt_ids
        from jupyter_deepagent.jupyter.views.approval_buttons import ApprovalPrompt

        shown = interrupt_ids(outcome.trace.interrupts)
        cell = outcome.plan.config.get("metadata", {}).get("cell_id")

        def decide(decision: str, message: str, edits: Any) -> None:
            command = ResumeCommand(decision, message=message, edits=dict(edits), thread=thread)
            self._resume(command, via="button", cell=cell, shown=shown)

        prompt = ApprovalPrompt(outcome.pending, thread, decide, code_id)
        self._prompts[thread] = prompt
        prompt.show(place=view.below)

    def _answered(self, thread: str, text: str) -> None:
        prompt = self._prompts.pop(thread, None)
        if prompt is not None:
            prompt.answered(text)

    def _resume(
        self,
        command: ResumeCommand,
        *,
        via: str = "%agent resume",
        cell: str | None = None,
        shown: tuple[str, ...] | None = None,
    ) -> None:
        """Resume with the model and options of the run that paused (see `resume_options`)."""
        from jupyter_deepagent.jupyter.session.approvals import (
            decision_fields,
            recording_decision,
            still_waiting,
        )
        from jupyter_deepagent.jupyter.session.thread_state import pending_requests

        session = self.session
        if via != "button":  # a click comes from the page, whatever request is current
            session.recorded_code.headless = _recorded_code_policy(self.shell)
        plan = self._plan(session.resume_options(command.thread), cell=cell, resume=True)
        try:
            if shown is not None:
                still_waiting(plan.agent, plan.config, shown)
            state = plan.agent.get_state(plan.config)
            pending = pending_requests(state.interrupts)
            # a pause saved by an earlier kernel: its reply says whether the log served it
            session.recorded_code.note_thread(state.values.get("messages", []))
            payload = session.resume_payload(
                plan, command.decision, message=command.message, edits=command.edits
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        try:  # code a research log served runs only with an approval given here, for it
            session.recorded_code.check_resume(
                pending,
                command.decision,
                via=via,
                code_id=command.code_id,
                edits=command.edits,
            )
        except ValueError as exc:
            raise _brief(RecordedCodeNotApproved(str(exc))) from None
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
            try:
                plan.recording.check_decision(fields)
            except ReplayMismatch as exc:
                raise _brief(exc) from None
        self._answered(plan.thread, f"answered in another cell: %agent resume {command.decision}")
        view = self._view(plan, _log_damage(plan), action=f" · resume {command.decision}")
        on_event = recording_decision(self._watch(view, plan), fields)
        outcome = self._drive(
            view, plan, lambda: session.execute(plan, payload, on_event, view.on_token)
        )
        self._show_outcome(view, outcome)


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
    return magics.session
