"""The prices shipped with the package: US dollars per million tokens, standard (not batch)
tier, taken on 2026-12-01 from the providers' pricing pages as stored copies showed them:

- Google, https://ai.google.dev/gemini-api/docs/pricing (Gemini Developer API, paid tier):
  Gemini 2.5 Pro, Flash and Flash-Lite. Gemini 2.5 Pro's prices for prompts over 200,000 tokens
  are its long-context tier. Flash-Lite's context-caching price could not be confirmed, so a
  Flash-Lite call that reads its cache has no known cost (set it in `.deepagent.toml`).
- OpenAI, https://developers.openai.com/api/docs/pricing (standard tier): the GPT-4.1 and GPT-5
  families; cached input is a quarter of the input price for GPT-4.1 and a tenth for GPT-5, as
  the page lists them. The o-series is left out: its cached-input prices could not be confirmed.
- Anthropic, https://platform.claude.com/docs/en/about-claude/pricing: Claude Opus 4, 4.1, 4.5
  and 4.6, Sonnet 4, 4.5 and 4.6, Haiku 4.5, with 5-minute and 1-hour cache writes and cache
  hits. Sonnet 4 and 4.5 requests over 200,000 input tokens (the 1M-token context beta) are
  billed at $6 input and $22.50 output; their cache prices in that tier could not be confirmed,
  so such a request that reads or writes the cache has no known cost.

Prices change: a `[prices."provider:model"]` table in `.deepagent.toml` overrides an entry.
"""

from __future__ import annotations

from typing import Final

from jupyter_deepagent.harness.pricing.table import ModelPrice, PriceTable, Rates

__all__ = ["DEFAULT_PRICES", "PRICES_TAKEN"]

PRICES_TAKEN: Final = "2026-12-01"
"""The date the shipped prices were taken."""

_GOOGLE: Final = "https://ai.google.dev/gemini-api/docs/pricing"
_OPENAI: Final = "https://developers.openai.com/api/docs/pricing"
_ANTHROPIC: Final = "https://platform.claude.com/docs/en/about-claude/pricing"


def _price(rates: Rates, source: str, long_context: Rates | None = None) -> ModelPrice:
    return ModelPrice(rates, long_context=long_context, taken=PRICES_TAKEN, source=source)


def _anthropic(input: float, output: float, *, long_context: Rates | None = None) -> ModelPrice:
    """Anthropic's cache prices follow its multipliers of the input price: 5-minute writes 1.25x,
    1-hour writes 2x, cache hits 0.1x (the page lists each)."""
    rates = Rates(
        input=input,
        output=output,
        cached_input=round(input * 0.1, 6),
        cache_write=round(input * 1.25, 6),
        cache_write_1h=round(input * 2, 6),
    )
    return _price(rates, _ANTHROPIC, long_context)


_SONNET_LONG: Final = Rates(input=6.0, output=22.5)

_ENTRIES: Final[dict[str, ModelPrice]] = {
    # Google
    "google_genai:gemini-2.5-pro": _price(
        Rates(input=1.25, output=10.0, cached_input=0.125),
        _GOOGLE,
        long_context=Rates(input=2.5, output=15.0, cached_input=0.25),
    ),
    "google_genai:gemini-2.5-flash": _price(
        Rates(input=0.30, output=2.50, cached_input=0.03), _GOOGLE
    ),
    "google_genai:gemini-2.5-flash-lite": _price(Rates(input=0.10, output=0.40), _GOOGLE),
    # OpenAI
    "openai:gpt-4.1": _price(Rates(input=2.0, output=8.0, cached_input=0.50), _OPENAI),
    "openai:gpt-4.1-mini": _price(Rates(input=0.40, output=1.60, cached_input=0.10), _OPENAI),
    "openai:gpt-4.1-nano": _price(Rates(input=0.10, output=0.40, cached_input=0.025), _OPENAI),
    "openai:gpt-5": _price(Rates(input=1.25, output=10.0, cached_input=0.125), _OPENAI),
    "openai:gpt-5-mini": _price(Rates(input=0.25, output=2.0, cached_input=0.025), _OPENAI),
    "openai:gpt-5-nano": _price(Rates(input=0.05, output=0.40, cached_input=0.005), _OPENAI),
    # Anthropic (each model's alias; dated ids such as claude-sonnet-4-5-20250929 find it)
    "anthropic:claude-opus-4-6": _anthropic(5.0, 25.0),
    "anthropic:claude-opus-4-5": _anthropic(5.0, 25.0),
    "anthropic:claude-opus-4-1": _anthropic(15.0, 75.0),
    "anthropic:claude-opus-4": _anthropic(15.0, 75.0),
    "anthropic:claude-opus-4-0": _anthropic(15.0, 75.0),
    "anthropic:claude-sonnet-4-6": _anthropic(3.0, 15.0),
    "anthropic:claude-sonnet-4-5": _anthropic(3.0, 15.0, long_context=_SONNET_LONG),
    "anthropic:claude-sonnet-4": _anthropic(3.0, 15.0, long_context=_SONNET_LONG),
    "anthropic:claude-sonnet-4-0": _anthropic(3.0, 15.0, long_context=_SONNET_LONG),
    "anthropic:claude-haiku-4-5": _anthropic(1.0, 5.0),
}

DEFAULT_PRICES: Final = PriceTable(_ENTRIES)
"""The shipped price table (see the module for the sources)."""
