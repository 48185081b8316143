"""`BudgetMiddleware`: before each model call of a run with a budget, pause (or stop) the run when
the call would pass it.

The next call is estimated, not known: its input as this agent's last call reported it plus the
messages added since (an agent's first call: its messages and system message counted here), all
at the full input price (no cache discount assumed), plus 4,000 output tokens (fewer when the
model's `max_tokens` is lower), at the tier its input falls in. A token budget counts the same
tokens. The summarizer's calls are counted as they are made (they happen inside the step this
check admitted), so a summary can pass the budget by its one call before the next check.

When the estimate would pass the budget, the run pauses like an approval: a LangGraph
`interrupt` holding a `BudgetPause`, after a `budget_reached` event. A resume answers it:
`{"action": "continue"}` lets this call go ahead (the next call that would pass asks again),
`{"action": "raise", "budget": "$1"}` sets a new budget and checks again, `{"action": "stop"}`
ends the run: this call, and every later one of the run, is answered without a model call by an
AI message saying the run stopped at its budget, so the thread ends on a plain answer and the next
run on it starts normally. A ledger made with `pause=False` stops at once instead of pausing, and
so does an agent without a checkpointer (nothing could resume its pause).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import cast

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain.agents.middleware.types import ExtendedModelResponse
from langchain_core.messages import AIMessage

from jupyter_deepagent.events import (
    BUDGET_ACTIONS,
    BUDGET_DECIDED,
    BUDGET_PAUSE,
    BUDGET_REACHED,
    WARNING,
    BudgetPause,
)
from jupyter_deepagent.harness.budget.ledger import BudgetLedger, current_ledger
from jupyter_deepagent.harness.compression.tokens import messages_tokens
from jupyter_deepagent.harness.models.label import model_label
from jupyter_deepagent.harness.pricing.run_prices import current_prices
from jupyter_deepagent.harness.run_events.event_stream import (
    current_agent,
    emit_event,
    first_in_run,
    run_step,
)

__all__ = ["BUDGET_STOP_KEY", "OUTPUT_GUESS", "BudgetMiddleware", "budget_status"]

OUTPUT_GUESS = 4_000
"""Output tokens a next call is assumed to write (fewer when the model's `max_tokens` is lower)."""

BUDGET_STOP_KEY = "jupyter_deepagent_budget"
"""`response_metadata` key ("stopped") of the AI message that ends a run at its budget."""

_Lane = tuple[str, str | None]


class BudgetMiddleware(AgentMiddleware):
    """Checks the run's budget (`current_ledger`) before each model call; a no-op without one.

    Args:
        can_pause: The agent has a checkpointer, so a pause can be resumed; False: it stops at
            its budget instead.
    """

    def __init__(self, *, can_pause: bool = True) -> None:
        super().__init__()
        self.can_pause = can_pause

    def wrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], ModelResponse]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        ledger = current_ledger()
        if ledger is None or (ledger.budget is None and not ledger.stopped):
            return handler(request)
        lane = current_agent()
        reservation = _admit(request, ledger, lane, can_pause=self.can_pause)
        if reservation is None:
            return _stopped_message(ledger)
        try:
            response = handler(request)
        finally:
            ledger.release(reservation)
        ledger.note_request(lane, len(request.messages))
        return response

    async def awrap_model_call(
        self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[ModelResponse]]
    ) -> ModelResponse | AIMessage | ExtendedModelResponse:
        ledger = current_ledger()
        if ledger is None or (ledger.budget is None and not ledger.stopped):
            return await handler(request)
        lane = current_agent()
        reservation = _admit(request, ledger, lane, can_pause=self.can_pause)
        if reservation is None:
            return _stopped_message(ledger)
        try:
            response = await handler(request)
        finally:
            ledger.release(reservation)
        ledger.note_request(lane, len(request.messages))
        return response


def _admit(
    request: ModelRequest, ledger: BudgetLedger, lane: _Lane, *, can_pause: bool
) -> int | None:
    """A reservation for the call, after a pause if needed; None when the run stops here."""
    if ledger.stopped or ledger.budget is None:
        return None
    label = model_label(request.model)
    step = run_step(request.state["messages"]) + 1
    while True:
        estimate = _estimate(request, ledger, lane, label)
        reservation = ledger.reserve(estimate)
        if reservation is not None:
            return reservation
        status = budget_status(ledger, estimate, label, lane[0])
        if not (ledger.pause and can_pause):
            emit_event(BUDGET_REACHED, step=step, **_facts(status), paused=False, interrupt_id=None)
            ledger.stop()
            return None
        answer = _ask(status, step)
        action = answer.get("action")
        if action not in BUDGET_ACTIONS:
            msg = f"a budget pause takes {', '.join(BUDGET_ACTIONS)} as its action, not {action!r}"
            raise ValueError(msg)
        if action == "raise":
            ledger.raise_to(cast("str | float", answer.get("budget")))
        budget = ledger.budget.text if ledger.budget is not None else ""
        emit_event(BUDGET_DECIDED, step=step, action=action, budget=budget)
        if action == "continue":
            return ledger.force_reserve(estimate)
        if action == "stop":
            ledger.stop()
            return None


def _estimate(request: ModelRequest, ledger: BudgetLedger, lane: _Lane, label: str) -> float:
    """The next call's estimate in the budget's unit (see the module)."""
    messages = list(request.messages)
    last = ledger.last_call(lane)
    if last is not None and last.messages and last.messages <= len(messages):
        tokens_in = last.tokens_in + messages_tokens(messages[last.messages :])
    else:
        system = [request.system_message] if request.system_message is not None else []
        tokens_in = messages_tokens([*system, *messages])
    tokens_out = _output_guess(request.model)
    if ledger.budget is not None and ledger.budget.unit == "tokens":
        return float(tokens_in + tokens_out)
    found = current_prices().lookup(label)
    if found is None:
        if first_in_run(("budget-unpriced", label), otherwise=True):
            emit_event(
                WARNING,
                message=(
                    f"the model {label} has no known price, so the budget "
                    f"{ledger.budget.text if ledger.budget else ''} cannot count its calls: "
                    "give it a price ([prices] in .deepagent.toml) or a budget in tokens "
                    '("200k tokens")'
                ),
                source="budget",
            )
        return 0.0
    rates = found[1].rates_for(tokens_in)
    return (tokens_in * rates.input + tokens_out * rates.output) / 1_000_000


def _output_guess(model: object) -> int:
    bound = getattr(model, "bound", model)
    for name in ("max_tokens", "max_output_tokens", "max_completion_tokens"):
        value = getattr(bound, name, None)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return min(value, OUTPUT_GUESS)
    return OUTPUT_GUESS


def budget_status(ledger: BudgetLedger, estimate: float, model: str, agent: str) -> BudgetPause:
    """What a pause says: the budget, what was spent and on what, and the next call."""
    budget = ledger.budget
    by = ledger.spent_by()
    return {
        "type": BUDGET_PAUSE,
        "budget": budget.text if budget is not None else "",
        "unit": budget.unit if budget is not None else "usd",
        "limit": budget.amount if budget is not None else 0.0,
        "spent": _round(sum(by.values())),
        "spent_main": _round(by["main"]),
        "spent_subagents": _round(by["subagents"]),
        "spent_summarizer": _round(by["summarizer"]),
        "spent_replayed": _round(ledger.replayed),
        "unpriced_calls": ledger.unpriced_calls,
        "next_call": _round(estimate),
        "model": model,
        "agent": agent,
        "actions": list(BUDGET_ACTIONS),
    }


def _round(value: float) -> float:
    return round(value, 9)


def _facts(status: BudgetPause) -> dict[str, object]:
    """The `budget_reached` fields of a pause (the event's own `agent` stamps who paused)."""
    return {key: value for key, value in status.items() if key not in ("type", "agent", "actions")}


def _ask(status: BudgetPause, step: int) -> Mapping[str, object]:
    """Pause the run with `status`; the answer of the resume (a mapping)."""
    from langgraph.errors import GraphInterrupt
    from langgraph.types import interrupt

    try:
        answer = interrupt(status)
    except GraphInterrupt as paused:
        pending = paused.args[0] if paused.args else ()
        interrupt_id = getattr(pending[0], "id", None) if pending else None
        emit_event(
            BUDGET_REACHED, step=step, **_facts(status), paused=True, interrupt_id=interrupt_id
        )
        raise
    if not isinstance(answer, Mapping):
        msg = (
            'a budget pause is answered with {"action": "continue"}, {"action": "raise", '
            f'"budget": ...}} or {{"action": "stop"}}, not {answer!r}'
        )
        raise ValueError(msg)
    return answer


def _stopped_message(ledger: BudgetLedger) -> AIMessage:
    """The answer to a model call of a run stopped at its budget (no model is called)."""
    budget = ledger.budget
    by = ledger.spent_by()
    if budget is not None and budget.unit == "tokens":
        spent = f"{int(sum(by.values())):,} tokens used"
    else:
        spent = f"${sum(by.values()):.4f} spent"
    parts = ", ".join(
        f"{part} {value:,.0f}" if budget and budget.unit == "tokens" else f"{part} ${value:.4f}"
        for part, value in by.items()
    )
    limit = budget.text if budget is not None else "its budget"
    return AIMessage(
        content=f"The run stopped at its budget of {limit}: {spent} ({parts}).",
        response_metadata={BUDGET_STOP_KEY: "stopped"},
    )
