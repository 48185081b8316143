"""The price table a run prices its calls by: the shipped one, unless the run was given its own
(`trace_run(prices=...)`, which a notebook's `[prices]` settings fill)."""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager

from jupyter_deepagent.harness.pricing.defaults import DEFAULT_PRICES
from jupyter_deepagent.harness.pricing.table import PriceTable

__all__ = ["current_prices", "prices_scope"]

_prices: contextvars.ContextVar[PriceTable | None] = contextvars.ContextVar(
    "jupyter_deepagent_prices", default=None
)


def current_prices() -> PriceTable:
    """The price table of the run in progress (the shipped one outside `prices_scope`)."""
    return _prices.get() or DEFAULT_PRICES


@contextmanager
def prices_scope(table: PriceTable | None) -> Iterator[None]:
    """Price the model calls made inside the block by `table` (None: the shipped table)."""
    token = _prices.set(table)
    try:
        yield
    finally:
        _prices.reset(token)
