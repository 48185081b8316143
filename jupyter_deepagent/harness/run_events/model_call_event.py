"""The `model_call` event, built the same way for the agent's own calls and the summarizer's.

It carries the whole reply (`message_to_dict`), so a recorded run holds what is needed to play it
again without the model, and its cost, priced from the reported usage by the run's price table
(`current_prices`); each call is also counted in the run's budget ledger, if it has one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from langchain_core.messages import AIMessage, BaseMessage, message_to_dict

from jupyter_deepagent.events import MODEL_CALL
from jupyter_deepagent.harness.budget.ledger import current_ledger, part_of
from jupyter_deepagent.harness.compression.tokens import messages_tokens
from jupyter_deepagent.harness.models.label import model_label
from jupyter_deepagent.harness.pricing.call_cost import call_cost, usage_from_metadata
from jupyter_deepagent.harness.pricing.run_prices import current_prices
from jupyter_deepagent.harness.run_events.event_stream import current_agent, emit_event

__all__ = ["SERVED_FROM_LOG_KEY", "as_ai_message", "emit_model_call"]

SERVED_FROM_LOG_KEY = "jupyter_deepagent_from_research_log"
"""The `response_metadata` key the research log's replay sets on each reply it serves (the same
string as `trace.research_log.replay.SERVED_FROM_LOG`, which a test checks): such a reply cost
nothing now."""


def emit_model_call(
    *,
    step: int,
    model: object,
    sent: Sequence[BaseMessage],
    reply: AIMessage | None,
    seconds: float,
    purpose: Literal["agent", "summarize"],
) -> None:
    """Emit the `model_call` event of one request: `sent` (system message included) and its reply.

    Raises:
        ValueError: Never for a well-formed call (the event is checked against the schema).
    """
    usage: Mapping[str, object] = (reply.usage_metadata if reply is not None else None) or {}
    tokens_in = usage.get("input_tokens")
    estimated = tokens_in is None
    if estimated:
        tokens_in = messages_tokens(list(sent))
    label = model_label(model)
    counted = usage_from_metadata(usage, tokens_in=tokens_in if isinstance(tokens_in, int) else 0)
    priced = call_cost(label, counted, current_prices())
    served = reply is not None and bool(reply.response_metadata.get(SERVED_FROM_LOG_KEY))
    costs: dict[str, object] = {"cost": 0.0 if served else priced.usd, "price": priced.price}
    if served:
        costs["cost_recorded"] = priced.usd
    ledger = current_ledger()
    if ledger is not None:
        agent, task_id = current_agent()
        ledger.record(
            part=part_of(agent, task_id, purpose),
            lane=(agent, task_id),
            cost=priced.usd,
            tokens_in=counted.tokens_in,
            tokens_out=counted.tokens_out,
            replayed=served,
        )
    emit_event(
        MODEL_CALL,
        step=step,
        purpose=purpose,
        model=label,
        tokens_in=tokens_in,
        tokens_in_estimated=estimated,
        tokens_out=usage.get("output_tokens", 0),
        **_cache_details(usage),
        **costs,
        seconds=round(seconds, 6),
        messages=len(sent),
        tool_calls=[call["name"] for call in (reply.tool_calls if reply else [])],
        reply=_jsonable(message_to_dict(reply)) if reply is not None else None,
    )


def _cache_details(usage: Mapping[str, object]) -> dict[str, int]:
    """The prompt-cache counts of a reply's `usage_metadata` as `model_call` fields: the tokens
    read from the cache (`tokens_in_cached`) and written to it (`tokens_in_cache_write`), each
    only when the provider reported it. LangChain's Anthropic model reports writes by lifetime
    (`ephemeral_5m_input_tokens`, `ephemeral_1h_input_tokens`) and `cache_creation` as 0."""
    details = usage.get("input_token_details")
    if not isinstance(details, Mapping):
        return {}
    counts = {key: value for key, value in details.items() if _is_count(value)}
    fields = {}
    if "cache_read" in counts:
        fields["tokens_in_cached"] = counts["cache_read"]
    by_lifetime = [counts[key] for key in _WRITES_BY_LIFETIME if key in counts]
    if by_lifetime or "cache_creation" in counts:
        fields["tokens_in_cache_write"] = counts.get("cache_creation") or sum(by_lifetime)
    return fields


_WRITES_BY_LIFETIME = ("ephemeral_5m_input_tokens", "ephemeral_1h_input_tokens")


def _is_count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def as_ai_message(response: object) -> AIMessage | None:
    """The AI message of a model's response (a message, a `ModelResponse` or an extended one)."""
    if isinstance(response, AIMessage):
        return response
    inner = getattr(response, "model_response", response)
    for message in reversed(getattr(inner, "result", []) or []):
        if isinstance(message, AIMessage):
            return message
    return None


def _jsonable(value: object) -> object:
    """`value` with anything JSON cannot hold (a provider's enum, say) as text; strings are
    shared, not copied, so a long tool argument costs no second copy."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(item) for item in value]
    return str(value)
