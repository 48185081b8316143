"""The cost of one model call from the usage its provider reported.

Of a call's input tokens (LangChain's `input_tokens`, which include the cache's), those read from
the prompt cache are priced at the cached price, those written to it at the write price (by
lifetime when reported, else at the 5-minute price), the rest at the input price; its output
tokens, reasoning included, at the output price. The tier is chosen by the prompt's size (all its
input tokens). A call whose tokens need a price the entry does not have, or whose model has no
entry, has no known cost: None, never a wrong number.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from jupyter_deepagent.harness.pricing.table import ModelPrice, PriceTable

__all__ = [
    "CallCost",
    "CallUsage",
    "call_cost",
    "event_cost",
    "price_usage",
    "usage_from_event",
    "usage_from_metadata",
]

_PER_MILLION = 1_000_000
_DIGITS = 9
"""US dollars are rounded to a billionth: exact enough to sum, short enough to read."""


@dataclass(frozen=True)
class CallUsage:
    """The tokens of one call, as a price needs them."""

    tokens_in: int
    """Every input token (cache reads and writes included)."""
    tokens_out: int
    """Output tokens, reasoning included."""
    cached: int = 0
    """Of `tokens_in`, read from the prompt cache."""
    cache_write: int = 0
    """Of `tokens_in`, written to the cache for 5 minutes (or for a lifetime not reported)."""
    cache_write_1h: int = 0
    """Of `tokens_in`, written to the cache for an hour."""


@dataclass(frozen=True)
class CallCost:
    """What one call cost."""

    usd: float | None
    """US dollars; None when the price is unknown."""
    price: str | None
    """The price-table entry it was priced by (None when no entry matches the model)."""


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def usage_from_metadata(usage: Mapping[str, object], *, tokens_in: int | None = None) -> CallUsage:
    """A call's usage from a reply's `usage_metadata` (`tokens_in`: the input count to use when
    the provider reported none)."""
    details = usage.get("input_token_details")
    counts = details if isinstance(details, Mapping) else {}
    by_lifetime_5m = _count(counts.get("ephemeral_5m_input_tokens"))
    by_lifetime_1h = _count(counts.get("ephemeral_1h_input_tokens"))
    written = _count(counts.get("cache_creation"))
    if by_lifetime_5m or by_lifetime_1h:
        write, write_1h = by_lifetime_5m, by_lifetime_1h
    else:
        write, write_1h = written, 0
    reported = usage.get("input_tokens")
    return CallUsage(
        tokens_in=_count(reported) if reported is not None else (tokens_in or 0),
        tokens_out=_count(usage.get("output_tokens")),
        cached=_count(counts.get("cache_read")),
        cache_write=write,
        cache_write_1h=write_1h,
    )


def usage_from_event(event: Mapping[str, object]) -> CallUsage:
    """A call's usage from its `model_call` event (cache writes at the 5-minute price: the event
    does not keep their lifetime)."""
    return CallUsage(
        tokens_in=_count(event.get("tokens_in")),
        tokens_out=_count(event.get("tokens_out")),
        cached=_count(event.get("tokens_in_cached")),
        cache_write=_count(event.get("tokens_in_cache_write")),
    )


def price_usage(price: ModelPrice, usage: CallUsage) -> float | None:
    """US dollars for `usage` at `price`; None when a price it needs is not in the entry."""
    if price.priced_up_to is not None and usage.tokens_in > price.priced_up_to:
        return None
    rates = price.rates_for(usage.tokens_in)
    plain = max(usage.tokens_in - usage.cached - usage.cache_write - usage.cache_write_1h, 0)
    parts: list[tuple[int, float | None]] = [
        (plain, rates.input),
        (usage.cached, rates.cached_input),
        (usage.cache_write, rates.cache_write),
        (usage.cache_write_1h, rates.cache_write_1h),
        (usage.tokens_out, rates.output),
    ]
    total = 0.0
    for tokens, rate in parts:
        if not tokens:
            continue
        if rate is None:
            return None
        total += tokens * rate
    return round(total / _PER_MILLION, _DIGITS)


def call_cost(label: str, usage: CallUsage, table: PriceTable) -> CallCost:
    """What a call of the model `label` with `usage` cost, by `table`."""
    found = table.lookup(label)
    if found is None:
        return CallCost(None, None)
    key, price = found
    return CallCost(price_usage(price, usage), key)


def event_cost(event: Mapping[str, object], table: PriceTable) -> float | None:
    """The cost of a `model_call` event: its own `cost` when it has one (0 for a reply the
    research log served), else priced now from its tokens (events recorded before prices
    existed); None when unknown."""
    if "cost" in event:
        value = event["cost"]
        return float(value) if isinstance(value, (int, float)) else None
    model = event.get("model")
    if not isinstance(model, str):
        return None
    return call_cost(model, usage_from_event(event), table).usd
