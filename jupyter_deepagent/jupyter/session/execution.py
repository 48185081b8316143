"""The agent of a planned `%%agent` run: built, run, and what a failure leaves behind.

`agent_arguments` and `build_agent` make the run's agent with the kernel's hooks (the stop button,
the pause for code a research log served). `execute` runs the plan's agent on a request (new
messages, or a resume `Command`) under the stop button, into a `RunTrace` the caller holds, so the
caller keeps the partial run whatever is raised. `after_failure` leaves the thread valid after a stop or a failure (unanswered tool calls
get a result) and gives the error to report: a failure of the model call itself (a provider's
network or HTTP error) becomes `ModelCallFailed`, a short message without the provider's frames,
whose locals hold request headers and so the API key, and with every secret masked.
`CellRuns.run` owns the run around them: the thread's lock, the research log, the last trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

from jupyter_deepagent._exceptions import (
    ModelCallFailed,
    ProviderRefused,
    ResearchAssistantError,
)
from jupyter_deepagent.jupyter.session.thread_state import keep_stopped_request, settle_thread

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import BaseChatModel
    from langchain_core.runnables import RunnableConfig

    from jupyter_deepagent.backends.composite import CompositeBackend
    from jupyter_deepagent.events import RunEvent
    from jupyter_deepagent.jupyter.session.recorded_code import RecordedCode
    from jupyter_deepagent.jupyter.session.runs import RunPlan
    from jupyter_deepagent.jupyter.session.stop_button import StopButton
    from jupyter_deepagent.project.settings.agent_config import AgentConfig
    from jupyter_deepagent.project.storage import OwnedStorage
    from jupyter_deepagent.trace.run_trace import RunTrace

__all__ = ["after_failure", "agent_arguments", "build_agent", "execute", "new_request"]

_MODEL_MODULES = ("langchain_core.language_models", "langchain_google_genai", "google.genai")
_MESSAGE_LIMIT = 500


def agent_arguments(
    shell: InteractiveShell,
    settings: AgentConfig,
    backend: CompositeBackend,
    tools: Sequence[object],
    recorded_code: RecordedCode,
    redact: Callable[[str], str],
) -> dict[str, Any]:
    """The keyword arguments of `create_research_agent` (besides the model) for `settings`: the
    session's `tools` and the notebook's, over `backend` (see `Session.filesystem`)."""
    from jupyter_deepagent.jupyter.notebook_fs.mounts import notebook_prompt
    from jupyter_deepagent.jupyter.session.recorded_code import gated_tools
    from jupyter_deepagent.jupyter.tools.notebook_tools import tools_for_run
    from jupyter_deepagent.project.settings.subagents import subagent_specs

    notebook = notebook_prompt(workspace_read_only=settings.workspace_read_only)
    notebook_tools, approvals = tools_for_run(shell, settings, backend, redact=redact)
    return {
        # code-running tools refuse code a research log served that was not approved here
        "tools": gated_tools([*tools, *notebook_tools], recorded_code),
        "context_window": settings.context_window,
        "system_prompt": "\n\n".join(p for p in (settings.system_prompt, notebook) if p),
        "memory": list(settings.memory),
        "skills": list(settings.skills),
        "subagents": subagent_specs(settings.subagents),
        "backend": backend,
        # what the settings list always asks; `python: False` (python_approval) stays an opt-out
        "interrupt_on": {**approvals, **dict.fromkeys(settings.interrupt_on, True)} or None,
        "model_timeout": settings.model_timeout,
        "model_retries": settings.model_retries,
        "model_retry_wait": settings.model_retry_wait,
    }


def build_agent(
    model: BaseChatModel,
    arguments: dict[str, Any],
    storage: OwnedStorage,
    stop_button: StopButton,
    recorded_code: RecordedCode,
) -> Any:
    """The run's agent (`create_research_agent` with `arguments`, see `agent_arguments`),
    stopped by `stop_button`, pausing on code-running calls a research log served."""
    from jupyter_deepagent.harness.agent import create_research_agent
    from jupyter_deepagent.jupyter.session.recorded_code_pause import RecordedCodeApproval
    from jupyter_deepagent.jupyter.session.stop_button import StopButtonMiddleware

    middleware: list[AgentMiddleware] = [StopButtonMiddleware(stop_button)]
    code_running = recorded_code.code_running(arguments["tools"])
    if code_running:  # a pause for code a research log served, whatever interrupt_on says
        middleware.append(RecordedCodeApproval(recorded_code, code_running))
    return create_research_agent(
        model,
        **arguments,
        middleware=middleware,
        store=storage.store,
        checkpointer=storage.checkpointer,
        name="agent",
    )


def new_request(plan: RunPlan, prompt: str) -> dict[str, Any]:
    """The payload sending `prompt` to the plan's thread (its message id is the cell's turn id, so
    a rewind finds where the turn began)."""
    import uuid

    from langchain_core.messages import HumanMessage

    turn = plan.config.get("metadata", {}).get("agent_turn")
    return {"messages": [HumanMessage(content=prompt, id=turn or uuid.uuid4().hex)]}


def execute(
    plan: RunPlan,
    payload: object,
    trace: RunTrace,
    on_event: Callable[[RunEvent], None] | None = None,
    on_token: Callable[[str | None], None] | None = None,
) -> None:
    """Run the plan's agent on `payload` (new messages, or a resume `Command`) into `trace`.

    `on_event` receives the run events, masked by the plan's `redact`; `on_token` the main
    agent's text as the model streams it (see `AnswerStream`).

    Raises:
        KeyboardInterrupt: The stop button; `trace` holds the run so far.
        BaseException: Whatever the run raised; `trace` holds the run so far.
    """
    from jupyter_deepagent.trace.run_trace import trace_run

    config = _saved_at_exit(plan.config)
    if on_token is not None:
        from jupyter_deepagent.jupyter.session.answer_stream import AnswerStream

        config = {**config, "callbacks": [AnswerStream(on_token)]}
    with plan.stop_button.armed():
        trace_run(
            plan.agent,
            payload,
            context=plan.context or None,
            config=config,
            on_event=on_event,
            redact=plan.redact,
            trace=trace,
            budget=plan.ledger,
            prices=plan.prices,
        )


def after_failure(
    plan: RunPlan, payload: object, exc: BaseException, trace: RunTrace
) -> BaseException:
    """Leave the thread valid after `exc` stopped the run, and say what to report.

    A stop before the request was saved keeps the request; unanswered tool calls get a result;
    `trace` gets the thread's state if the run left it none.

    Returns:
        `ModelCallFailed` (its message masked by the plan's `redact`) when the model call
        itself failed, else `exc`.
    """
    if isinstance(exc, KeyboardInterrupt):  # a stop before the request was saved keeps it
        keep_stopped_request(plan.agent, plan.config, payload)
    if not trace.state:  # complete a stopped run's trace with its state (its events are masked)
        trace.state = _state_values(plan)
    settle_thread(plan.agent, plan.config, interrupted=True)
    if isinstance(exc, ProviderRefused):  # its words are ours, the provider's quoted in them
        return _masked_refusal(exc, plan.redact)
    if isinstance(exc, Exception) and _from_model_call(exc):
        return _model_call_failed(plan.model_label, exc, plan.redact)
    return exc


def _masked_refusal(exc: ProviderRefused, redact: Callable[[str], str]) -> ProviderRefused:
    """`exc` with every secret the session knows masked in its message (a key given in the
    model's keywords, which the provider's own words may repeat)."""
    message = redact(str(exc))
    if message == str(exc):
        return exc
    return ProviderRefused(
        message,
        model=exc.model,
        error_type=exc.error_type,
        reason=exc.reason,
        setting=exc.setting,
        retry_helps=exc.retry_helps,
        status=exc.status,
    )


def _saved_at_exit(config: RunnableConfig) -> dict[str, Any]:
    """`config` with LangGraph's "exit" durability: the run's checkpoint is written once, when
    it ends (answered, waiting for approval, stopped or failed), not after every step.

    Every checkpoint of LangGraph's SQLite saver holds the whole conversation, so saving at each
    step made the storage of a run grow with steps x conversation (one run writing 20 files of
    1 MB: 750 MB). The end of each run is what a later run continues from, what an approval
    resumes and what a rewind to a turn needs.
    """
    # `stream(durability=...)` is public, but `trace_run` makes that call; LangGraph reads the
    # same setting from this configurable key (and hands it to subgraphs through it).
    try:
        from langgraph._internal._constants import CONFIG_KEY_DURABILITY
    except ImportError:  # pragma: no cover - a LangGraph that moved it; the key is the same
        CONFIG_KEY_DURABILITY = "__pregel_durability"

    configurable = {**config.get("configurable", {}), CONFIG_KEY_DURABILITY: "exit"}
    return {**config, "configurable": configurable}


def _from_model_call(exc: BaseException) -> bool:
    """Tell whether `exc` was raised inside a chat model's call (its traceback passes there)."""
    if isinstance(exc, ResearchAssistantError):
        return False
    tb: TracebackType | None = exc.__traceback__
    while tb is not None:
        module = tb.tb_frame.f_globals.get("__name__", "")
        if isinstance(module, str) and module.startswith(_MODEL_MODULES):
            return True
        tb = tb.tb_next
    return False


def _model_call_failed(
    label: str, exc: BaseException, redact: Callable[[str], str]
) -> ModelCallFailed:
    text = " ".join(redact(str(exc)).split())
    if len(text) > _MESSAGE_LIMIT:
        text = text[: _MESSAGE_LIMIT - 1] + "…"
    kind = type(exc).__name__
    message = (
        f"the model call to {label} failed: {kind}: {text}"
        if text
        else (f"the model call to {label} failed: {kind}")
    )
    message += ". The thread is kept: run the cell again to retry."
    return ModelCallFailed(message, model=label, error_type=kind)


def _state_values(plan: RunPlan) -> dict[str, Any]:
    try:
        return dict(plan.agent.get_state(plan.config).values)
    except Exception:  # a partial trace is best effort
        return {}
