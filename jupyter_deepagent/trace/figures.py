"""A run's figures as every view says them: model calls, tokens in, tokens out, cost and duration.

The cell's header, the inspector (widget, static HTML, text), the JupyterLab sidebar (the same
HTML) and the command line (`run`'s table, `log`'s timeline) word a run's numbers with these
functions, read from the same place: the run's `run_finished` event, or the research log's record
of it (which copies that event's totals). So one run has one duration everywhere: `seconds`, the
wall time of the run from its `run_started` to its `run_finished`, measured once by
`trace.run_trace` (not the cell's time, which adds the rewinding before the run and the research
log's writing after it). Tokens are "tokens in" and "tokens out", never their sum.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "call_cost_text",
    "cost_parts_text",
    "cost_text",
    "duration",
    "figures_text",
    "token_count",
]


def token_count(count: float) -> str:
    """A token count as "950", "12.3k", "128k" or "1.05M"."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.2f}M"
    if count >= 100_000:
        return f"{count / 1000:.0f}k"
    return f"{count / 1000:.1f}k" if count >= 1000 else f"{count:.0f}"


def duration(seconds: float) -> str:
    """Seconds as "12 ms" or "3.4 s"."""
    return f"{seconds * 1000:.0f} ms" if seconds < 1 else f"{seconds:.1f} s"


def cost_text(usd: object, unpriced_calls: object = 0) -> str:
    """A cost as every view writes it: "$0.0123", "$0" (nothing paid: replies the research log
    served, a model priced at zero), "<$0.0001" (paid, but less than shown to four places),
    "$0.0123 + price unknown for 2 calls", or "price unknown" (`usd` None: no call had a known
    price)."""
    if not isinstance(usd, (int, float)) or isinstance(usd, bool):
        return "price unknown"
    text = "$0" if usd == 0 else "<$0.0001" if 0 < usd < 0.00005 else f"${usd:.4f}"
    unpriced = _count(unpriced_calls)
    if unpriced:
        text += f" + price unknown for {unpriced} call{'' if unpriced == 1 else 's'}"
    return text


def call_cost_text(call: Mapping[str, object]) -> str:
    """One model call's cost: "$0.0030", "price unknown", or for a reply the research log served
    "replayed, $0 (would cost $0.0030)"."""
    if call.get("served"):
        recorded = call.get("cost_recorded")
        would = cost_text(recorded) if isinstance(recorded, (int, float)) else "price unknown"
        return f"replayed, $0 (would cost {would})"
    return cost_text(call.get("cost"))


def cost_parts_text(by_part: object) -> str:
    """A run's cost by part: "main $0.0120 / subagents $0.0030 / summarizer $0"."""
    parts = by_part if isinstance(by_part, Mapping) else {}
    return " / ".join(
        f"{part} {cost_text(parts.get(part, 0.0))}" for part in ("main", "subagents", "summarizer")
    )


def _count(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def figures_text(figures: Mapping[str, object], *, seconds: bool = True, cached: str = "") -> str:
    """ "3 model calls · 12.5k tokens in · 112 tokens out · $0.0123 · 77 ms" from a run's totals
    (`model_calls`, `tokens_in`, `tokens_out`, `cost`, `cost_unpriced_calls`, `seconds`, as
    `run_finished`, the inspector's `run` and the research log's records hold them); the cost
    when the totals have one, the duration only when known and asked.
    `cached`, a note on the prompt cache, follows the tokens in ("12.5k tokens in (71% cached)")."""
    calls = _count(figures.get("model_calls"))
    parts = [
        f"{calls} model call{'' if calls == 1 else 's'}",
        f"{token_count(_count(figures.get('tokens_in')))} tokens in{cached}",
        f"{token_count(_count(figures.get('tokens_out')))} tokens out",
    ]
    if "cost" in figures:  # totals from before prices existed have none
        parts.append(cost_text(figures["cost"], figures.get("cost_unpriced_calls")))
    spent = figures.get("seconds")
    if seconds and isinstance(spent, (int, float)) and not isinstance(spent, bool):
        parts.append(duration(float(spent)))
    return " · ".join(parts)
