"""Running a planned `%%agent` run: settle the thread, send the request or the approval, trace it.

A `RunPlan` (made by `Session.plan`) holds the agent, thread and config of one run. `execute` runs
it under the stop button and returns a `RunOutcome`. On a stop or a failure the thread is settled
(unanswered tool calls get a result) and the exception leaves with the partial `RunTrace` as its
`trace` attribute. A failure of the model call itself (a provider's network or HTTP error) leaves
as `ModelCallFailed`: a short message without the provider's frames, whose locals hold request
headers and so the API key, and with every secret masked.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from jupyter_deepagent._exceptions import ModelCallFailed, ResearchAssistantError
from jupyter_deepagent.jupyter.session.thread_state import (
    keep_stopped_request,
    pending_requests,
    resume_command,
    settle_thread,
)

__all__ = [
    "RunOutcome",
    "RunPlan",
    "execute",
    "resume_payload",
    "run",
    "settle",
]

_MODEL_MODULES = ("langchain_core.language_models", "langchain_google_genai", "google.genai")
_MESSAGE_LIMIT = 500


@dataclass(frozen=True)
class RunPlan:
    """Everything one run needs, decided before it starts."""

    thread: str
    new_thread: bool
    settings: Any
    model_label: str
    agent: Any
    outputs: Any
    context: Mapping[str, str]
    config: dict[str, Any]
    stop_button: Any
    recording: Any = None
    """The cell's `RunRecording` (research log), or None when the run is not a cell's turn."""


@dataclass
class RunOutcome:
    """How a run ended: its trace, its /outputs/ files, and notes on how its thread was settled."""

    plan: RunPlan
    trace: Any
    outputs: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    provenance: dict[str, Any] = field(default_factory=dict)
    """The run's summary in the research log (run id, model, calls, tokens, replayed or live)."""

    @property
    def pending(self) -> list[dict[str, Any]]:
        """Tool calls waiting for approval: `{name, args, description, allowed}` each."""
        return pending_requests(self.trace.interrupts)


def settle(plan: RunPlan) -> list[str]:
    """Answer tool calls the thread left without results (see `settle_thread`)."""
    return settle_thread(plan.agent, plan.config)


def resume_payload(
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
    interrupts = plan.agent.get_state(plan.config).interrupts
    if not pending_requests(interrupts):
        msg = f"nothing is waiting for approval on thread {plan.thread!r}"
        raise ValueError(msg)
    return resume_command(interrupts, decision, message=message, edits=edits or {})


def run(
    plan: RunPlan,
    prompt: str,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    *,
    on_token: Callable[[str | None], None] | None = None,
    redact: Callable[[str], str] = str,
) -> RunOutcome:
    """Send `prompt` to the plan's thread and run until the answer, a pause or an interrupt.

    A thread left with unanswered tool calls (stopped mid-run, or an approval never given)
    is settled first, so the conversation stays valid for every provider.
    """
    import uuid

    from langchain_core.messages import HumanMessage

    notes = settle(plan)
    turn = plan.config.get("metadata", {}).get("agent_turn")  # its id tells a rewind where it is
    message = {"messages": [HumanMessage(content=prompt, id=turn or uuid.uuid4().hex)]}
    outcome = execute(plan, message, on_event, on_token, redact=redact)
    outcome.notes[:0] = notes
    return outcome


def execute(
    plan: RunPlan,
    payload: Any,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    on_token: Callable[[str | None], None] | None = None,
    *,
    redact: Callable[[str], str] = str,
) -> RunOutcome:
    """Run the plan's agent on `payload` (new messages, or a resume `Command`).

    `on_event` receives the run events; `on_token` the main agent's text as the model streams
    it (see `AnswerStream`); `redact` masks secrets in every run event and in the message of a
    failed model call.

    Raises:
        KeyboardInterrupt: The stop button; `.trace` holds the run so far.
        ModelCallFailed: The model call failed; `.trace` holds the run so far.
        Exception: Anything else, as raised, with `.trace` set when it can be.
    """
    from jupyter_deepagent.trace.run_trace import RunTrace, trace_run

    config = _saved_at_exit(plan.config)
    if on_token is not None:
        from jupyter_deepagent.jupyter.session.answer_stream import AnswerStream

        config = {**config, "callbacks": [AnswerStream(on_token)]}
    failure: ModelCallFailed | None = None
    try:
        with plan.stop_button.armed():
            trace = trace_run(
                plan.agent,
                payload,
                context=plan.context or None,
                config=config,
                on_event=on_event,
                redact=redact,
            )
    except BaseException as exc:
        partial = getattr(exc, "trace", None) or RunTrace()
        if isinstance(exc, KeyboardInterrupt):  # a stop before the request was saved keeps it
            keep_stopped_request(plan.agent, plan.config, payload)
        _settle_partial(partial, plan)
        settle_thread(plan.agent, plan.config, interrupted=True)
        if isinstance(exc, Exception) and _from_model_call(exc):
            failure = _model_call_failed(plan.model_label, exc, redact)
            failure.trace = partial  # type: ignore[attr-defined]
        else:
            _attach(exc, partial)
            raise
    if failure is not None:
        raise failure  # outside the handler, so the provider's exception is not its context
    return RunOutcome(plan, trace, outputs=plan.outputs.files)


def _saved_at_exit(config: dict[str, Any]) -> dict[str, Any]:
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


def _settle_partial(partial: Any, plan: RunPlan) -> None:
    """Complete a stopped run's trace with its state if none came (its events are masked)."""
    if not partial.state:
        partial.state = _state_values(plan)


def _attach(exc: BaseException, partial: Any) -> None:
    if getattr(exc, "trace", None) is None:
        try:
            exc.trace = partial  # type: ignore[attr-defined]
        except AttributeError:  # an exception type with __slots__
            pass


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
    except Exception:
        return {}
