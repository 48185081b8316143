"""The price table: what a million tokens of each kind cost for each model, and how a model's
label finds its entry.

A label ("provider:model", as `model_label` names a model) finds its entry by these rules, in
order, and by nothing looser: the label itself; the label with Google's `models/` prefix taken off
the model's name (`google_genai:models/gemini-2.5-pro` -> `google_genai:gemini-2.5-pro`); the label
with a dated snapshot suffix taken off (`anthropic:claude-sonnet-4-5-20250929` ->
`anthropic:claude-sonnet-4-5`, `openai:gpt-4.1-2025-04-14` -> `openai:gpt-4.1`). The provider part
always matches exactly, so `google_vertexai:gemini-2.5-pro` (priced differently) finds nothing. A
label that finds nothing has no known price: its calls cost "price unknown", never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace

__all__ = ["ModelPrice", "PriceTable", "Rates", "price_keys"]

_DATED = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2})$")
"""A snapshot date at the end of a model's name: Anthropic's -20250929, OpenAI's -2025-04-14."""


@dataclass(frozen=True)
class Rates:
    """US dollars per million tokens of each kind, for one price tier. None: the provider lists no
    such price (or it could not be confirmed), so a call with such tokens has no known cost."""

    input: float
    """Input tokens not read from or written to a prompt cache."""
    output: float
    """Output tokens, reasoning ("thinking") tokens included."""
    cached_input: float | None = None
    """Input tokens read from the provider's prompt cache."""
    cache_write: float | None = None
    """Input tokens written to a prompt cache (Anthropic's 5-minute writes; a write whose lifetime
    is not reported is priced here)."""
    cache_write_1h: float | None = None
    """Input tokens written to a 1-hour prompt cache (Anthropic)."""


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices: its rates, a long-context tier where the provider has one, and where
    the numbers come from."""

    rates: Rates
    long_context: Rates | None = None
    """The rates of a request whose prompt (all its input tokens) is over `long_context_above`."""
    long_context_above: int = 200_000
    taken: str = ""
    """The date the prices were taken (ISO), or "" for an override from `.deepagent.toml`."""
    source: str = ""
    """Where they come from: the provider's pricing page, or the settings file of an override."""
    priced_up_to: int | None = None
    """A prompt over this many input tokens has no known price: an override that gives no
    long-context tier for a model whose provider prices long prompts higher."""

    def rates_for(self, prompt_tokens: int) -> Rates:
        """The rates of a request with `prompt_tokens` input tokens in all."""
        if self.long_context is not None and prompt_tokens > self.long_context_above:
            return self.long_context
        return self.rates


def price_keys(label: str) -> Iterator[str]:
    """The table keys a model label may find, in the order they are tried (see the module)."""
    provider, colon, name = label.partition(":")
    if not colon:
        yield label
        return
    yield label
    undated = name.removeprefix("models/")
    for form in dict.fromkeys((undated, _DATED.sub("", undated))):
        if f"{provider}:{form}" != label:
            yield f"{provider}:{form}"


class PriceTable:
    """Prices by "provider:model" key; `lookup` finds a label's entry by the module's rules.

    Args:
        entries: key -> price.
    """

    def __init__(self, entries: Mapping[str, ModelPrice]) -> None:
        self._entries = dict(entries)
        self._found: dict[str, tuple[str, ModelPrice] | None] = {}  # label -> its entry

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> dict[str, ModelPrice]:
        """A copy of every entry, by key."""
        return dict(self._entries)

    def lookup(self, label: str) -> tuple[str, ModelPrice] | None:
        """The key and price of `label`'s entry; None when no entry matches (price unknown)."""
        if label in self._found:
            return self._found[label]
        match = next(
            ((key, self._entries[key]) for key in price_keys(label) if key in self._entries), None
        )
        self._found[label] = match
        return match

    def with_overrides(self, overrides: Mapping[str, ModelPrice]) -> PriceTable:
        """A new table: this one with `overrides` added, each replacing any entry of its key. An
        override without a long-context tier, of an entry that has one, prices only prompts up
        to the tier (a longer one costs more than it says, so its price is unknown)."""
        entries = dict(self._entries)
        for key, price in overrides.items():
            shipped = entries.get(key)
            if shipped is not None and shipped.long_context and price.long_context is None:
                price = replace(price, priced_up_to=shipped.long_context_above)
            entries[key] = price
        return PriceTable(entries)
