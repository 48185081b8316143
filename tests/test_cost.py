"""What each model call costs: the price table and how a model finds its entry, the cost of a call
from its reported usage (cached tokens at the cached price, cache writes at the write price, the
long-context tier), the cost in the `model_call` events, the run's totals and `RunTrace.cost`
(subagents included), "price unknown" for a model without a price, a replay that spends nothing,
and the `[prices]` overrides of `.deepagent.toml`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import cast

import pytest

from jupyter_deepagent import ScriptedChatModel, SubAgent, create_research_agent, trace_run
from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.events import RunEvent
from jupyter_deepagent.harness.pricing.call_cost import CallUsage, price_usage
from jupyter_deepagent.harness.pricing.defaults import DEFAULT_PRICES, PRICES_TAKEN
from jupyter_deepagent.harness.pricing.table import ModelPrice, PriceTable, Rates
from jupyter_deepagent.harness.run_events.model_call_event import SERVED_FROM_LOG_KEY
from jupyter_deepagent.project.settings.agent_config import file_layers, resolve_config
from jupyter_deepagent.project.settings.spending import price_table
from jupyter_deepagent.trace.figures import figures_text
from jupyter_deepagent.trace.research_log.replay import (
    SERVED_FROM_LOG,
    CallLedger,
    ReplayChatModel,
)
from jupyter_deepagent.trace.run_totals import RunCost
from jupyter_deepagent.trace.run_trace import RunTrace

ASK = {"messages": [{"role": "user", "content": "Write the notes."}]}
PRICED = PriceTable({"scripted:priced": ModelPrice(Rates(input=2.0, output=10.0))})


def usage(tokens_in: int, tokens_out: int, **details: int) -> dict[str, object]:
    found: dict[str, object] = {"input_tokens": tokens_in, "output_tokens": tokens_out}
    if details:
        found["input_token_details"] = details
    return found


def notes_script() -> list[object]:
    write = {"name": "write_file", "args": {"file_path": "/a.md", "content": "a"}}
    return [
        {"tool_calls": [write], "usage": usage(1_000, 200)},
        {"content": "Done.", "usage": usage(3_000, 100)},
    ]


def scripted(name: str, steps: list[object] | None = None) -> ScriptedChatModel:
    script = notes_script() if steps is None else steps
    return ScriptedChatModel(script=script, name=name, profile={"max_input_tokens": 100_000})


# -- the table -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("label", "key"),
    [
        ("anthropic:claude-sonnet-4-5", "anthropic:claude-sonnet-4-5"),
        ("anthropic:claude-sonnet-4-5-20250929", "anthropic:claude-sonnet-4-5"),
        ("anthropic:claude-sonnet-4-20250514", "anthropic:claude-sonnet-4"),
        ("openai:gpt-4.1-2025-04-14", "openai:gpt-4.1"),
        ("openai:gpt-5-mini-2025-08-07", "openai:gpt-5-mini"),
        ("google_genai:models/gemini-2.5-pro", "google_genai:gemini-2.5-pro"),
    ],
)
def test_a_label_finds_its_entry_exactly_or_by_a_documented_rule(label: str, key: str) -> None:
    found = DEFAULT_PRICES.lookup(label)
    assert found is not None and found[0] == key
    assert found[1].taken == PRICES_TAKEN and found[1].source.startswith("https://")


@pytest.mark.parametrize(
    "label",
    [
        "google_vertexai:gemini-2.5-pro",  # another provider, priced differently
        "google_genai:gemini-2.5-flash-preview-05-20",  # a preview is not its stable model
        "anthropic:claude-sonnet-4-5-beta",
        "openai:gpt-5-pro",
        "openai:o3",  # left out: its cached price could not be confirmed
        "scripted:scripted",
    ],
)
def test_nothing_fuzzy_finds_a_price(label: str) -> None:
    assert DEFAULT_PRICES.lookup(label) is None


def test_cached_tokens_and_cache_writes_are_priced_at_their_own_rates() -> None:
    _, sonnet = DEFAULT_PRICES.lookup("anthropic:claude-sonnet-4-5-20250929") or ("", None)
    assert sonnet is not None
    # 10,000 input: 6,000 read from the cache, 2,000 written for 5 minutes, 1,000 for an hour
    call = CallUsage(10_000, 500, cached=6_000, cache_write=2_000, cache_write_1h=1_000)
    expected = (1_000 * 3 + 6_000 * 0.30 + 2_000 * 3.75 + 1_000 * 6 + 500 * 15) / 1e6
    assert price_usage(sonnet, call) == pytest.approx(expected)


def test_a_long_prompt_is_priced_at_the_long_context_tier() -> None:
    _, pro = DEFAULT_PRICES.lookup("google_genai:gemini-2.5-pro") or ("", None)
    assert pro is not None
    assert price_usage(pro, CallUsage(100_000, 1_000)) == pytest.approx(0.125 + 0.01)
    assert price_usage(pro, CallUsage(300_000, 1_000)) == pytest.approx(0.75 + 0.015)


def test_an_override_without_a_long_context_tier_prices_no_longer_prompt() -> None:
    # the shipped entry prices prompts over 200k higher: a flat override would say too little
    override = ModelPrice(Rates(input=1.0, output=10.0), source=".deepagent.toml")
    table = DEFAULT_PRICES.with_overrides({"google_genai:gemini-2.5-pro": override})
    _, pro = table.lookup("google_genai:gemini-2.5-pro") or ("", None)
    assert pro is not None
    assert price_usage(pro, CallUsage(100_000, 1_000)) == pytest.approx(0.1 + 0.01)
    assert price_usage(pro, CallUsage(300_000, 1_000)) is None  # price unknown, not a guess


def test_tokens_whose_price_is_not_listed_make_the_cost_unknown() -> None:
    _, lite = DEFAULT_PRICES.lookup("google_genai:gemini-2.5-flash-lite") or ("", None)
    assert lite is not None
    assert price_usage(lite, CallUsage(1_000, 100)) == pytest.approx(0.00014)
    assert price_usage(lite, CallUsage(1_000, 100, cached=500)) is None


# -- a run ---------------------------------------------------------------------------------------
def test_each_call_and_the_run_carry_the_cost_of_a_priced_model() -> None:
    trace = trace_run(create_research_agent(scripted("priced")), ASK, prices=PRICED)

    calls = trace.of_type("model_call")
    assert [c["cost"] for c in calls] == [
        pytest.approx((1_000 * 2 + 200 * 10) / 1e6),
        pytest.approx((3_000 * 2 + 100 * 10) / 1e6),
    ]
    assert {c["price"] for c in calls} == {"scripted:priced"}
    finished = trace.of_type("run_finished")[-1]
    assert finished["cost"] == pytest.approx(0.011)
    assert finished["cost_unpriced_calls"] == 0
    assert trace.cost.usd == pytest.approx(0.011) and trace.cost.text == "$0.0110"


def test_a_model_without_a_price_says_price_unknown_never_a_number() -> None:
    trace = trace_run(create_research_agent(scripted("nameless")), ASK, prices=PRICED)

    assert [(c["cost"], c["price"]) for c in trace.of_type("model_call")] == [(None, None)] * 2
    finished = trace.of_type("run_finished")[-1]
    assert finished["cost"] is None and finished["cost_unpriced_calls"] == 2
    assert trace.cost.text == "price unknown"


def test_the_cost_of_a_run_from_recorded_usage_alone() -> None:
    # events as an older research log holds them: tokens, no cost
    recorded = [
        {
            "type": "model_call",
            "agent": "main",
            "task_id": None,
            "purpose": "agent",
            "model": "google_genai:gemini-2.5-flash",
            "tokens_in": 10_000,
            "tokens_out": 1_000,
            "tokens_in_cached": 4_000,
        },
        {
            "type": "model_call",
            "agent": "main",
            "task_id": None,
            "purpose": "agent",
            "model": "scripted:scripted",
            "tokens_in": 500,
            "tokens_out": 50,
        },
    ]
    cost = RunTrace.from_events(cast("list[RunEvent]", recorded)).cost

    assert cost.usd == pytest.approx((6_000 * 0.30 + 4_000 * 0.03 + 1_000 * 2.50) / 1e6)
    assert cost.unpriced_calls == 1
    assert cost.text == "$0.0044 + price unknown for 1 call"


def test_subagent_calls_count_in_the_run_and_in_their_own_part() -> None:
    lead = scripted(
        "priced",
        [
            {
                "tool_calls": [
                    {
                        "name": "task",
                        "args": {"description": "Look it up.", "subagent_type": "helper"},
                    }
                ],
                "usage": usage(1_000, 100),
            },
            {"content": "Reported.", "usage": usage(1_000, 100)},
        ],
    )
    helper = SubAgent(
        name="helper",
        description="Looks things up.",
        system_prompt="You help.",
        model=scripted("priced", [{"content": "Found it.", "usage": usage(2_000, 100)}]),
    )
    trace = trace_run(create_research_agent(lead, subagents=[helper]), ASK, prices=PRICED)

    assert trace.cost.by_part["subagents"] == pytest.approx((2_000 * 2 + 100 * 10) / 1e6)
    assert trace.cost.by_part["main"] == pytest.approx(2 * (1_000 * 2 + 100 * 10) / 1e6)
    assert trace.of_type("run_finished")[-1]["cost"] == pytest.approx(0.011)


# -- replay --------------------------------------------------------------------------------------
def test_replay_spends_nothing_and_keeps_what_the_call_cost_when_recorded() -> None:
    assert SERVED_FROM_LOG_KEY == SERVED_FROM_LOG

    def wrapped(inner: ScriptedChatModel, ledger: CallLedger) -> ReplayChatModel:
        return ReplayChatModel(
            inner=inner, ledger=ledger, label="scripted:priced", profile=inner.profile
        )

    recording = CallLedger([], "off", "the cell")
    live = trace_run(create_research_agent(wrapped(scripted("x"), recording)), ASK, prices=PRICED)
    replay = CallLedger([json.loads(json.dumps(recording.as_record()))], "strict", "the cell")
    replayed = trace_run(
        create_research_agent(wrapped(scripted("x", []), replay)), ASK, prices=PRICED
    )

    paid = [c["cost"] for c in live.of_type("model_call")]
    assert all(cost for cost in paid)
    assert [c["cost"] for c in replayed.of_type("model_call")] == [0.0, 0.0]
    assert [c["cost_recorded"] for c in replayed.of_type("model_call")] == paid
    assert replayed.cost.usd == 0.0
    assert replayed.cost.replayed_recorded == pytest.approx(sum(paid))
    assert replayed.cost.text == "$0"  # nothing paid, not a rounded-away "$0.0000"


@pytest.mark.parametrize(
    ("usd", "shown"),
    [(0.0, "$0"), (0.00002, "<$0.0001"), (0.00005, "$0.0001"), (0.0123, "$0.0123")],
)
def test_a_cost_too_small_for_four_places_is_not_shown_as_nothing(usd: float, shown: str) -> None:
    assert RunCost(usd, 0, 1).text == shown
    assert figures_text({"model_calls": 1, "cost": usd}).endswith(f" · {shown}")


# -- overrides -----------------------------------------------------------------------------------
def test_deepagent_toml_overrides_a_price_and_a_dated_label_finds_it(tmp_path: Path) -> None:
    (tmp_path / ".deepagent.toml").write_text(
        'budget = "$0.50"\n\n'
        '[prices."anthropic:claude-sonnet-4-5"]\n'
        "input = 2.0\ncached_input = 0.2\ncache_write = 2.5\noutput = 12.0\n\n"
        '[prices."scripted:priced"]\ninput = 1\noutput = 5\n',
        encoding="utf-8",
    )
    config, sources = resolve_config(file_layers(tmp_path))

    table = price_table(config.prices)
    key, sonnet = table.lookup("anthropic:claude-sonnet-4-5-20250929") or ("", None)
    assert key == "anthropic:claude-sonnet-4-5" and sonnet is not None
    assert sonnet.rates == Rates(input=2.0, output=12.0, cached_input=0.2, cache_write=2.5)
    assert sonnet.long_context is None and sonnet.source == ".deepagent.toml"
    assert table.lookup("scripted:priced") is not None
    assert table.lookup("openai:gpt-5") == DEFAULT_PRICES.lookup("openai:gpt-5")
    assert str(config.budget) == "$0.50" and sources["prices"] == ".deepagent.toml"


@pytest.mark.parametrize(
    ("entry", "complaint"),
    [
        ("input = 1", "needs output"),
        ('input = 1\noutput = "cheap"', "output must be a number"),
        ("input = -1\noutput = 2", "input must be 0 or more"),
        ("input = 1\noutput = 2\ncached = 0.1", "unknown rate cached"),
    ],
)
def test_a_wrong_price_is_an_input_error_naming_the_file(
    tmp_path: Path, entry: str, complaint: str
) -> None:
    (tmp_path / ".deepagent.toml").write_text(
        f'[prices."openai:gpt-5"]\n{entry}\n', encoding="utf-8"
    )
    with pytest.raises(InputError, match=complaint) as caught:
        file_layers(tmp_path)
    assert ".deepagent.toml" in str(caught.value)
