"""`Budget`: how much a run may spend, in US dollars or in tokens, and how it is written.

A budget is written as money (`"$0.50"`, `"0.5"`, `0.5`, `"0.50 USD"`) or as tokens
(`"200k tokens"`, `"1.5M tokens"`, `"200000 tokens"`), the latter for models without a known
price. A token budget counts every input and output token of every call.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["Budget", "parse_budget"]

_MONEY = re.compile(r"^\$?\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:usd|\$)?$", re.IGNORECASE)
_TOKENS = re.compile(r"^(\d+(?:\.\d*)?|\.\d+)\s*([km]?)\s*tokens?$", re.IGNORECASE)
_SCALE = {"": 1, "k": 1_000, "m": 1_000_000}


@dataclass(frozen=True)
class Budget:
    """A limit on what one run spends: `amount` US dollars, or `amount` tokens."""

    amount: float
    unit: Literal["usd", "tokens"] = "usd"

    @property
    def text(self) -> str:
        """The budget as the views write it: "$0.50", "200,000 tokens"."""
        if self.unit == "tokens":
            return f"{int(self.amount):,} tokens"
        return f"${self.amount:,.2f}" if self.amount >= 0.01 else f"${self.amount:g}"

    def __str__(self) -> str:
        return self.text


def parse_budget(value: object) -> Budget:
    """The budget `value` writes: a `Budget`, a number of US dollars, or a text as the module
    describes.

    Raises:
        ValueError: `value` is not a budget (a negative or non-finite amount, a bool, a text of
            another form); the message shows the forms it takes.
    """
    if isinstance(value, Budget):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _checked(float(value), "usd", value)
    if isinstance(value, str):
        text = value.strip().replace(",", "").replace("_", "")
        money = _MONEY.match(text)
        if money:
            return _checked(float(money.group(1)), "usd", value)
        tokens = _TOKENS.match(text)
        if tokens:
            count = float(tokens.group(1)) * _SCALE[tokens.group(2).lower()]
            return _checked(float(round(count)), "tokens", value)
    msg = f"a budget is money or tokens, e.g. '$0.50', 0.5 or '200k tokens', not {value!r}"
    raise ValueError(msg)


def _checked(amount: float, unit: Literal["usd", "tokens"], given: object) -> Budget:
    if not math.isfinite(amount) or amount <= 0:
        msg = f"a budget must be more than 0, not {given!r}"
        raise ValueError(msg)
    return Budget(amount, unit)
