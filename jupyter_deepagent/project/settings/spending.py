"""The settings of what runs spend: `budget` (a limit per run) and `prices` (overrides of the
shipped price table), checked here as every setting is, and the option text of a run's own
budget (`%%agent --budget "$0.50"`), which the magic passes on as written.

In `.deepagent.toml`:

    budget = "$0.50"                        # or 0.5, or "200k tokens"

    [prices."google_genai:gemini-2.5-flash"]
    input = 0.30                            # US dollars per million tokens
    cached_input = 0.03
    output = 2.50

An override replaces the shipped entry of its key and is found by the same rules (an override of
an entry with a long-context tier prices only prompts up to the tier: a longer one is "price
unknown") (a dated snapshot finds its undated entry); `cache_write` and `cache_write_1h` price
prompt-cache writes (Anthropic). A key without a provider gets the default one, as a model string
does.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, TypeAlias

from jupyter_deepagent._exceptions import InputError

if TYPE_CHECKING:  # the harness loads with the first run, not with the settings
    from jupyter_deepagent.harness.budget.limit import Budget
    from jupyter_deepagent.harness.pricing.table import ModelPrice, PriceTable

__all__ = ["PriceOverrides", "budget_limit", "budget_option", "price_overrides", "price_table"]

PriceOverrides: TypeAlias = "tuple[tuple[str, ModelPrice], ...]"
"""The `prices` setting: (key, price) pairs, in the file's order."""

_RATES = ("input", "output", "cached_input", "cache_write", "cache_write_1h")
_REQUIRED = ("input", "output")


def budget_limit(name: str, value: object, source: str) -> Budget | None:
    """The `budget` setting: money or tokens; "none", "" or 0 for no limit.

    Raises:
        InputError: Not a budget; the message names the source and the forms it takes.
    """
    from jupyter_deepagent.harness.budget.limit import Budget, parse_budget

    if value is None or (isinstance(value, str) and value.strip().lower() in ("", "none")):
        return None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value == 0:
        return None
    if isinstance(value, Budget):
        return value
    try:
        return parse_budget(value)
    except ValueError as exc:
        msg = f"{source}: {name} = {value!r}: {exc} (none: no limit)"
        raise InputError(msg, source=source) from None


def budget_option(text: str, source: str = "%%agent --budget") -> Budget | None:
    """A run's own budget as its option was written ("$0.50", "0.5", "200k tokens", "none").

    Raises:
        InputError: Not a budget.
    """
    return budget_limit("budget", text, source)


def price_overrides(name: str, value: object, source: str) -> PriceOverrides:
    """The `prices` setting: a table of `"provider:model"` tables of rates (US dollars per
    million tokens).

    Raises:
        InputError: Not such a table, a rate that is not a number of 0 or more, an unknown rate,
            or a missing `input` or `output`; the message names the source and the entry.
    """
    from jupyter_deepagent.harness.models.label import model_label
    from jupyter_deepagent.harness.pricing.table import ModelPrice

    if isinstance(value, tuple) and all(
        isinstance(pair, tuple) and len(pair) == 2 and isinstance(pair[1], ModelPrice)
        for pair in value
    ):
        return value  # already checked: the default, or an AgentConfig's own
    if isinstance(value, str):
        msg = (
            f"{source}: {name} is a table of prices; set it in .deepagent.toml as "
            '[prices."provider:model"] with input = ..., output = ...'
        )
        raise InputError(msg, source=source)
    if not isinstance(value, Mapping):
        msg = f'{source}: {name} must be a table of [prices."provider:model"] tables'
        raise InputError(msg, source=source)
    return tuple(
        (model_label(str(key)), _price(f"{source} [{name}.{key!r}]", entry, source))
        for key, entry in value.items()
    )


def _price(where: str, entry: object, source: str) -> ModelPrice:
    from jupyter_deepagent.harness.pricing.table import ModelPrice, Rates

    if not isinstance(entry, Mapping):
        msg = f"{where}: must be a table of rates ({', '.join(_RATES)}), got {entry!r}"
        raise InputError(msg, source=source)
    unknown = sorted(set(entry) - set(_RATES))
    if unknown:
        msg = f"{where}: unknown rate {', '.join(unknown)}; known: {', '.join(_RATES)}"
        raise InputError(msg, source=source)
    missing = [rate for rate in _REQUIRED if rate not in entry]
    if missing:
        msg = f"{where}: needs {' and '.join(missing)} (US dollars per million tokens)"
        raise InputError(msg, source=source)
    rates: dict[str, float] = {}
    for rate, amount in entry.items():
        if isinstance(amount, bool) or not isinstance(amount, (int, float)):
            msg = f"{where}: {rate} must be a number (US dollars per million tokens)"
            raise InputError(msg, source=source)
        if not math.isfinite(amount) or amount < 0:
            msg = f"{where}: {rate} must be 0 or more, not {amount!r}"
            raise InputError(msg, source=source)
        rates[str(rate)] = float(amount)
    return ModelPrice(Rates(**rates), source=source)


def price_table(overrides: PriceOverrides) -> PriceTable:
    """The table a notebook's runs are priced by: the shipped one with its `prices` overrides."""
    from jupyter_deepagent.harness.pricing.defaults import DEFAULT_PRICES

    return DEFAULT_PRICES.with_overrides(dict(overrides)) if overrides else DEFAULT_PRICES
