"""`BudgetLedger`: what one run has spent against its budget, shared by every agent of the run.

Every `model_call` event of the run is counted here as it is emitted (main agent, subagents,
summarizer), in the budget's unit: US dollars at the run's prices, or input and output tokens. A
reply the research log served counts its recorded usage as if it were paid, so a replay pauses
where the recorded run paused, though it spends nothing (its events say so). A money budget cannot count a
call of unknown price: such calls are only counted in `unpriced_calls`.

Before each model call the budget middleware reserves the call's estimate under the ledger's
lock, so calls made at once (parallel subagents) are admitted one by one against what is spent
and reserved: together they pass the budget by at most what their estimates fell short.

A run's ledger is installed with `budget_scope` (`trace_run(budget=...)` does it); a resume of a
paused run goes on with the same ledger (`RunTrace.ledger`), so what was spent before the pause
still counts.
"""

from __future__ import annotations

import contextvars
import itertools
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Literal

from jupyter_deepagent.harness.budget.limit import Budget, parse_budget

__all__ = [
    "BudgetLedger",
    "LaneCall",
    "Part",
    "as_ledger",
    "budget_scope",
    "current_ledger",
    "part_of",
]

Part = Literal["main", "subagents", "summarizer"]
"""What a call was spent on."""


def part_of(agent: str, task_id: str | None, purpose: str) -> Part:
    """The part a call belongs to: the summarizer's (any agent's), a subagent's, or the main's."""
    if purpose == "summarize":
        return "summarizer"
    return "main" if task_id is None and agent == "main" else "subagents"


@dataclass(frozen=True)
class LaneCall:
    """The last model call of one agent in the run: its reported input tokens and how many
    messages its request had (the next request repeats them, plus what came since)."""

    tokens_in: int
    messages: int


class BudgetLedger:
    """What one run spent, by part, against `budget`; thread-safe.

    Args:
        budget: The limit (a `Budget`, US dollars, or a text such as "$0.50" or "200k tokens");
            None: the run is only counted, never paused.
        pause: Pause the run (a LangGraph interrupt, answered with continue, raise or stop) when
            the next call would pass the budget; False: stop there without asking (headless).

    Raises:
        ValueError: `budget` is not a budget (see `parse_budget`).
    """

    def __init__(self, budget: Budget | str | float | None, *, pause: bool = True) -> None:
        self.budget: Budget | None = parse_budget(budget) if budget is not None else None
        self.pause = pause
        self._lock = threading.Lock()
        self._spent: dict[Part, float] = {"main": 0.0, "subagents": 0.0, "summarizer": 0.0}
        self._replayed = 0.0
        self._unpriced = 0
        self._reserved: dict[int, float] = {}
        self._ids = itertools.count(1)
        self._lanes: dict[tuple[str, str | None], LaneCall] = {}
        self._stopped = False

    # -- counting ---------------------------------------------------------------------------------
    def record(
        self,
        *,
        part: Part,
        lane: tuple[str, str | None],
        cost: float | None,
        tokens_in: int,
        tokens_out: int,
        replayed: bool = False,
    ) -> None:
        """Count one call that was made (`cost`: US dollars, None when unknown)."""
        amount = self._amount(cost, tokens_in + tokens_out)
        with self._lock:
            if amount is None:
                self._unpriced += 1
            else:
                self._spent[part] += amount
                if replayed:
                    self._replayed += amount
            if part != "summarizer":
                known = self._lanes.get(lane)
                self._lanes[lane] = LaneCall(tokens_in, known.messages if known else 0)

    def note_request(self, lane: tuple[str, str | None], messages: int) -> None:
        """The lane's last call was sent `messages` messages (after its `record`)."""
        with self._lock:
            known = self._lanes.get(lane)
            if known is not None:
                self._lanes[lane] = LaneCall(known.tokens_in, messages)

    def last_call(self, lane: tuple[str, str | None]) -> LaneCall | None:
        """The lane's last recorded call (None before its first)."""
        with self._lock:
            return self._lanes.get(lane)

    def _amount(self, cost: float | None, tokens: int) -> float | None:
        if self.budget is not None and self.budget.unit == "tokens":
            return float(tokens)
        return cost

    @property
    def spent(self) -> float:
        """What the run has used, in the budget's unit (US dollars without a budget)."""
        with self._lock:
            return sum(self._spent.values())

    def spent_by(self) -> dict[Part, float]:
        """`spent` by part."""
        with self._lock:
            return dict(self._spent)

    @property
    def replayed(self) -> float:
        """Of `spent`, replies the research log served (nothing paid for them now)."""
        with self._lock:
            return self._replayed

    @property
    def unpriced_calls(self) -> int:
        """Calls a money budget could not count: their model has no known price."""
        with self._lock:
            return self._unpriced

    # -- admitting --------------------------------------------------------------------------------
    def reserve(self, estimate: float) -> int | None:
        """Hold `estimate` for a call about to be made; None when it would pass the budget.

        What is spent and what other calls in flight hold count, under one lock, so parallel
        calls cannot all pass on the same room.
        """
        with self._lock:
            if self.budget is not None:
                held = sum(self._spent.values()) + sum(self._reserved.values())
                if held + estimate > self.budget.amount:
                    return None
            return self._hold(estimate)

    def force_reserve(self, estimate: float) -> int:
        """Hold `estimate` whatever the budget (the answer to a pause was "continue")."""
        with self._lock:
            return self._hold(estimate)

    def _hold(self, estimate: float) -> int:
        reservation = next(self._ids)
        self._reserved[reservation] = estimate
        return reservation

    def release(self, reservation: int) -> None:
        """The call is done (what it cost was `record`ed) or failed: let its estimate go."""
        with self._lock:
            self._reserved.pop(reservation, None)

    def raise_to(self, budget: Budget | str | float) -> None:
        """Set a new budget (the answer "raise"); its unit is kept.

        Raises:
            ValueError: `budget` is not a budget, or is in another unit than the run's.
        """
        new = parse_budget(budget)
        if self.budget is not None and new.unit != self.budget.unit:
            msg = f"the run's budget is {self.budget.text}; raise it in the same unit, not {new}"
            raise ValueError(msg)
        with self._lock:
            self.budget = new

    def stop(self) -> None:
        """End the run at its budget: every later model call of the run is answered, without a
        call, by a message saying so."""
        with self._lock:
            self._stopped = True

    @property
    def stopped(self) -> bool:
        """Whether the run was stopped at its budget."""
        with self._lock:
            return self._stopped


def as_ledger(budget: BudgetLedger | Budget | str | float | None) -> BudgetLedger | None:
    """A run's ledger for `budget`: the ledger itself (a resume's), a new one for a limit, or None.

    Raises:
        ValueError: `budget` is not a budget (see `parse_budget`).
    """
    if budget is None or isinstance(budget, BudgetLedger):
        return budget
    return BudgetLedger(budget)


_ledger: contextvars.ContextVar[BudgetLedger | None] = contextvars.ContextVar(
    "jupyter_deepagent_budget_ledger", default=None
)


def current_ledger() -> BudgetLedger | None:
    """The ledger of the run in progress (None outside `budget_scope`)."""
    return _ledger.get()


@contextmanager
def budget_scope(ledger: BudgetLedger | None) -> Iterator[None]:
    """Count the model calls made inside the block (subagents' too) against `ledger`."""
    token = _ledger.set(ledger)
    try:
        yield
    finally:
        _ledger.reset(token)
