"""Run events of the budget: the next model call would pass it (the run pauses, or stops), and the
answer to a pause. `BudgetPause` is what the pause's LangGraph interrupt holds, and
`BudgetAnswer` what a resume `Command` gives it."""

from typing import Final, Literal, NotRequired

from typing_extensions import TypedDict

from jupyter_deepagent.events.common import EventStamp

__all__ = [
    "BUDGET_ACTIONS",
    "BUDGET_DECIDED",
    "BUDGET_PAUSE",
    "BUDGET_REACHED",
    "BudgetAnswer",
    "BudgetDecidedEvent",
    "BudgetPause",
    "BudgetReachedEvent",
]

BUDGET_REACHED: Final = "budget_reached"
BUDGET_DECIDED: Final = "budget_decided"
BUDGET_PAUSE: Final = "budget_pause"
"""The `type` of a `BudgetPause` interrupt value."""
BUDGET_ACTIONS: Final = ("continue", "raise", "stop")
"""The answers a budget pause takes."""


class BudgetReachedEvent(EventStamp):
    """The next model call would pass the run's budget: what was spent, on what, and whether the
    run waits for an answer (continue, raise the budget, stop) or stops here."""

    type: Literal["budget_reached"]
    budget: str
    """The budget as the user gave it back: "$0.50" or "200,000 tokens"."""
    unit: Literal["usd", "tokens"]
    """What the budget counts: US dollars, or input and output tokens."""
    limit: float
    """The budget in its unit."""
    spent: float
    """What the run's model calls have used so far, in the budget's unit (main agent, subagents
    and summarizer; a reply the research log served counts its recorded usage, as if paid)."""
    spent_main: float
    """Of `spent`, the main agent's own calls."""
    spent_subagents: float
    """Of `spent`, the subagents' calls."""
    spent_summarizer: float
    """Of `spent`, the summarizer's calls."""
    spent_replayed: float
    """Of `spent`, replies the research log served: nothing was paid for them now."""
    unpriced_calls: int
    """Calls of a model with no known price, not in `spent` (a money budget cannot count them)."""
    next_call: float
    """The estimate of the call it stopped before, in the budget's unit."""
    model: str
    """The model of that call, as "provider:model"."""
    paused: bool
    """True: the run waits for an answer (`interrupt_id`); False: it stops here, as it was set to
    (headless runs)."""
    interrupt_id: str | None
    """The LangGraph interrupt that holds the pause (None when the run stops)."""


class BudgetDecidedEvent(EventStamp):
    """The answer to a budget pause, as the resumed run takes it."""

    type: Literal["budget_decided"]
    action: Literal["continue", "raise", "stop"]
    """continue: this call goes ahead (the next one that would pass the budget asks again);
    raise: the budget is now `budget`; stop: the run ends here, the thread stays usable."""
    budget: str
    """The budget from now on."""


class BudgetPause(TypedDict):
    """The value of a budget pause's interrupt (`RunTrace.interrupts`): the `budget_reached`
    event's facts, for the face that asks."""

    type: Literal["budget_pause"]
    budget: str
    unit: Literal["usd", "tokens"]
    limit: float
    spent: float
    spent_main: float
    spent_subagents: float
    spent_summarizer: float
    spent_replayed: float
    unpriced_calls: int
    next_call: float
    model: str
    agent: str
    """The agent that was about to call: "main" or the subagent's name."""
    actions: list[str]
    """The answers it takes: continue, raise, stop."""


class BudgetAnswer(TypedDict):
    """A resume value for a budget pause: `Command(resume={"action": "continue"})`,
    `{"action": "raise", "budget": "$1"}` or `{"action": "stop"}`."""

    action: Literal["continue", "raise", "stop"]
    budget: NotRequired[str | float]
    """The new budget ("$1", 1.0, "500k tokens"), for "raise"."""
