"""Answering a run paused at its budget, from a button or `%agent resume continue|raise|stop`.

A budget pause is a LangGraph interrupt holding a `BudgetPause` (the next model call would pass
the run's budget). The answer goes back as the resume value `{"action": "continue"}`,
`{"action": "raise", "budget": "$1"}` or `{"action": "stop"}`, one per pause when several wait
(parallel subagents); the budget middleware then emits the `budget_decided` event in the resumed
run, which the research log keeps as that resume's decision. The resumed run goes on with the
paused run's ledger (`RunTrace.ledger`), so what was spent before the pause still counts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, TypedDict, cast

from jupyter_deepagent.events import BUDGET_ACTIONS, BUDGET_PAUSE

if TYPE_CHECKING:
    from langgraph.types import Command, Interrupt

    from jupyter_deepagent.events import BudgetAnswer, BudgetPause

__all__ = [
    "BudgetDecision",
    "budget_command",
    "budget_decision",
    "budget_pauses",
]


class BudgetDecision(TypedDict):
    """A resume's answer to a budget pause, as the research log keeps it (`decision`)."""

    decision: str
    """continue, raise or stop."""
    budget: str | None
    """The new budget of a raise, as `Budget.text` words it ("$1.00"); else None."""
    via: str
    """Who answered: "button" or "%agent resume"."""


def budget_pauses(interrupts: Sequence[Interrupt] | None) -> list[BudgetPause]:
    """The budget pauses among a thread's pending interrupts, in order."""
    return [
        cast("BudgetPause", value)
        for value in (getattr(i, "value", None) for i in interrupts or ())
        if isinstance(value, Mapping) and value.get("type") == BUDGET_PAUSE
    ]


def budget_decision(
    action: str, budget: str | None, *, via: str, pause: Mapping[str, object] | None = None
) -> BudgetDecision:
    """The decision a resume gives a budget pause (`budget`: a raise's new budget as written;
    `pause`: the pause it answers, whose unit a raise keeps).

    Raises:
        ValueError: `action` is none of continue, raise, stop, or a raise has no valid budget,
            or one in another unit than the pause's.
    """
    from jupyter_deepagent.harness.budget.limit import parse_budget

    if action not in BUDGET_ACTIONS:
        msg = f"a budget pause is answered with {', '.join(BUDGET_ACTIONS)}, not {action!r}"
        raise ValueError(msg)
    if action != "raise":
        return {"decision": action, "budget": None, "via": via}
    if not budget:
        msg = 'raise needs the new budget, e.g. "$1" or "500k tokens"'
        raise ValueError(msg)
    new = parse_budget(budget)
    if pause is not None and pause.get("unit") not in (None, new.unit):
        msg = f"the run's budget is {pause.get('budget')}; raise it in the same unit, not {new}"
        raise ValueError(msg)
    return {"decision": action, "budget": new.text, "via": via}


def budget_command(interrupts: Sequence[Interrupt], decision: BudgetDecision) -> Command:
    """The LangGraph `Command` giving `decision` to every budget pause of `interrupts` (other
    pending interrupts, approvals, stay waiting)."""
    from langgraph.types import Command

    answer = cast("BudgetAnswer", {"action": decision["decision"]})
    if decision["budget"] is not None:
        answer["budget"] = decision["budget"]
    ids = [
        str(i.id)
        for i in interrupts
        if isinstance(getattr(i, "value", None), Mapping) and i.value.get("type") == BUDGET_PAUSE
    ]
    if len(ids) == 1 and len(interrupts) == 1:
        return Command(resume=answer)
    return Command(resume={interrupt_id: dict(answer) for interrupt_id in ids})
