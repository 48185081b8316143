"""A run's totals, from its events alone: tokens, prompt-cache tokens, calls, and what it cost
(the calls with a known price, how many had none, the part each agent had, how the budget ended
the run), for `run_finished` and `RunTrace.cost`.

Events recorded before prices existed have no `cost`: they are priced now from their tokens by
the shipped table (or the one given), so an old research log still shows its cost.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from jupyter_deepagent.events import (
    BUDGET_DECIDED,
    BUDGET_PAUSE,
    BUDGET_REACHED,
    MODEL_CALL,
    TOOL_CALL,
)
from jupyter_deepagent.harness.budget.ledger import Part, part_of
from jupyter_deepagent.harness.pricing.call_cost import event_cost
from jupyter_deepagent.harness.pricing.defaults import DEFAULT_PRICES
from jupyter_deepagent.harness.pricing.table import PriceTable
from jupyter_deepagent.trace.figures import cost_text

__all__ = ["RunCost", "budget_outcome", "finished_totals", "run_cost"]


@dataclass(frozen=True)
class RunCost:
    """A run's cost in US dollars."""

    usd: float | None
    """The calls with a known price (served replies at 0); None when calls were made and none
    had a known price."""
    unpriced_calls: int
    """Calls whose price is unknown, left out of `usd`: views add "price unknown"."""
    calls: int
    """Model calls in all."""
    by_part: dict[Part, float] = field(default_factory=dict)
    """`usd` by part: main agent, subagents, summarizer."""
    replayed_recorded: float = 0.0
    """What the calls the research log served would cost now (their recorded usage at the run's
    prices); nothing was paid for them."""

    @property
    def text(self) -> str:
        """The cost as a view writes it (`figures.cost_text`): "$0.0123", "$0", "$0.0123 +
        price unknown for 2 calls", "price unknown"."""
        return cost_text(self.usd, self.unpriced_calls)


def run_cost(events: Iterable[Mapping[str, object]], table: PriceTable | None = None) -> RunCost:
    """The cost of the `model_call` events among `events` (`table`: for events without a cost;
    the shipped one by default)."""
    prices = table or DEFAULT_PRICES
    total, unpriced, calls, replayed = 0.0, 0, 0, 0.0
    by_part: dict[Part, float] = {"main": 0.0, "subagents": 0.0, "summarizer": 0.0}
    for event in events:
        if event.get("type") != MODEL_CALL:
            continue
        calls += 1
        cost = event_cost(event, prices)
        recorded = event.get("cost_recorded")
        if isinstance(recorded, (int, float)):
            replayed += float(recorded)
        if cost is None:
            unpriced += 1
            continue
        total += cost
        part = part_of(
            str(event.get("agent", "main")),
            _text(event.get("task_id")),
            str(event.get("purpose", "agent")),
        )
        by_part[part] += cost
    usd = None if calls and unpriced == calls else round(total, 9)
    return RunCost(
        usd,
        unpriced,
        calls,
        {part: round(value, 9) for part, value in by_part.items()},
        round(replayed, 9),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) else None


def budget_outcome(
    events: Iterable[Mapping[str, object]], interrupts: Iterable[object] = ()
) -> Literal["paused", "stopped"] | None:
    """How the budget ended the run: "paused" (an interrupt holds a budget pause), "stopped" (it
    stopped at its budget), or None (it did not)."""
    for pending in interrupts:
        value = getattr(pending, "value", None)
        if isinstance(value, Mapping) and value.get("type") == BUDGET_PAUSE:
            return "paused"
    for event in events:
        kind = event.get("type")
        if kind == BUDGET_DECIDED and event.get("action") == "stop":
            return "stopped"
        if kind == BUDGET_REACHED and event.get("paused") is False:
            return "stopped"
    return None


def finished_totals(
    events: Iterable[Mapping[str, object]], interrupts: Iterable[object] = ()
) -> dict[str, object]:
    """The totals of a `run_finished` event: tokens (and the prompt-cache ones, each only when
    some call reported it), cost, calls, and `budget` when the budget ended the run."""
    events = list(events)
    calls = [event for event in events if event.get("type") == MODEL_CALL]
    totals: dict[str, object] = {
        "tokens_in": sum(_count(e.get("tokens_in")) for e in calls),
        "tokens_out": sum(_count(e.get("tokens_out")) for e in calls),
    }
    for key in ("tokens_in_cached", "tokens_in_cache_write"):
        reported = [_count(e[key]) for e in calls if key in e]
        if reported:
            totals[key] = sum(reported)
    cost = run_cost(calls)
    totals.update(cost=cost.usd, cost_unpriced_calls=cost.unpriced_calls)
    outcome = budget_outcome(events, interrupts)
    if outcome is not None:
        totals["budget"] = outcome
    totals["model_calls"] = len(calls)
    totals["tool_calls"] = sum(1 for event in events if event.get("type") == TOOL_CALL)
    return totals


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
