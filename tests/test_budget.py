"""A budget that pauses: the forms a budget takes, a scripted run paused before the call that would
pass it (what the pause says), a resume that continues or raises it, a stop that leaves the thread
usable, parallel subagents that stay within one call each of the budget, a money budget for a
model without a price, and the exit code of a headless run stopped at its budget."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain.tools import tool
from langchain_core.outputs import ChatGenerationChunk, ChatResult
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.types import Command

from jupyter_deepagent import ScriptedChatModel, SubAgent, create_research_agent, trace_run
from jupyter_deepagent._exceptions import InputError
from jupyter_deepagent.cli.headless import RunReport
from jupyter_deepagent.harness.budget.ledger import BudgetLedger
from jupyter_deepagent.harness.budget.limit import Budget, parse_budget
from jupyter_deepagent.harness.budget.middleware import BUDGET_STOP_KEY
from jupyter_deepagent.project.settings.spending import budget_option
from jupyter_deepagent.trace.research_log.record import run_record, run_summary

CALL_IN, CALL_OUT = 1_000, 100
"""Every scripted call reports these tokens: 1,100 a call against a token budget."""


def usage() -> dict[str, int]:
    return {"input_tokens": CALL_IN, "output_tokens": CALL_OUT}


def note(number: int) -> dict[str, object]:
    write = {"name": "write_file", "args": {"file_path": f"/n{number}.md", "content": "x"}}
    return {"tool_calls": [write], "usage": usage()}


def agent_of(steps: list[object]) -> tuple[object, dict[str, object]]:
    model = ScriptedChatModel(script=steps, profile={"max_input_tokens": 100_000})
    agent = create_research_agent(model, checkpointer=InMemorySaver())
    return agent, {"configurable": {"thread_id": "budget"}}


def ask(text: str) -> dict[str, object]:
    return {"messages": [{"role": "user", "content": text}]}


FIVE_STEPS = [note(1), note(2), note(3), note(4), {"content": "All written.", "usage": usage()}]
# 8,000 tokens: three calls (3,300) go through; the fourth is estimated at its input as the third
# sent it plus what came since, plus 4,000 output tokens: 3,300 + 5,000-odd > 8,000
BUDGET = "8k tokens"


# -- the forms ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("given", "budget"),
    [
        ("$0.50", Budget(0.5)),
        ("0.5", Budget(0.5)),
        (0.5, Budget(0.5)),
        ("0.50 USD", Budget(0.5)),
        ("200k tokens", Budget(200_000, "tokens")),
        ("1.5M tokens", Budget(1_500_000, "tokens")),
        ("200,000 tokens", Budget(200_000, "tokens")),
    ],
)
def test_a_budget_is_money_or_tokens(given: object, budget: Budget) -> None:
    assert parse_budget(given) == budget


@pytest.mark.parametrize("given", ["fifty cents", "-1", "$0", True, "200 kilotokens"])
def test_anything_else_is_refused_with_the_forms_it_takes(given: object) -> None:
    with pytest.raises(ValueError, match="budget"):
        parse_budget(given)


def test_the_option_text_is_checked_in_the_settings() -> None:
    assert budget_option("$0.25") == Budget(0.25)
    assert budget_option("none") is None
    with pytest.raises(InputError, match="--budget"):
        budget_option("lots")


# -- pause, continue, raise, stop -----------------------------------------------------------------
def test_a_run_pauses_before_the_call_that_would_pass_its_budget() -> None:
    agent, config = agent_of(FIVE_STEPS)
    paused = trace_run(agent, ask("Write four notes."), config=config, budget=BUDGET)

    assert paused.status == "interrupted"
    assert len(paused.of_type("model_call")) == 3
    (pause,) = [i.value for i in paused.interrupts]
    assert pause["type"] == "budget_pause" and pause["budget"] == "8,000 tokens"
    assert pause["spent"] == pause["spent_main"] == 3 * (CALL_IN + CALL_OUT)
    assert pause["spent"] + pause["next_call"] > 8_000
    assert pause["actions"] == ["continue", "raise", "stop"]
    (reached,) = paused.of_type("budget_reached")
    assert reached["paused"] and reached["interrupt_id"] == paused.interrupts[0].id
    assert paused.of_type("run_finished")[-1]["budget"] == "paused"
    assert paused.ledger is not None


def test_continue_lets_the_call_go_and_the_next_one_asks_again() -> None:
    agent, config = agent_of(FIVE_STEPS)
    paused = trace_run(agent, ask("Write four notes."), config=config, budget=BUDGET)
    resumed = trace_run(
        agent, Command(resume={"action": "continue"}), config=config, budget=paused.ledger
    )

    assert [e["action"] for e in resumed.of_type("budget_decided")] == ["continue"]
    assert len(resumed.of_type("model_call")) == 1  # the fourth call
    assert resumed.status == "interrupted"  # the fifth would pass the budget too
    assert resumed.interrupts[0].value["spent"] == 4 * (CALL_IN + CALL_OUT)


def test_raise_sets_a_new_budget_and_the_run_finishes() -> None:
    agent, config = agent_of(FIVE_STEPS)
    paused = trace_run(agent, ask("Write four notes."), config=config, budget=BUDGET)
    resumed = trace_run(
        agent,
        Command(resume={"action": "raise", "budget": "50k tokens"}),
        config=config,
        budget=paused.ledger,
    )

    assert resumed.status == "ok" and resumed.final_text == "All written."
    assert resumed.of_type("budget_decided")[0]["budget"] == "50,000 tokens"
    assert len(resumed.of_type("model_call")) == 2


def test_stop_ends_the_run_and_the_thread_stays_usable() -> None:
    agent, config = agent_of([*FIVE_STEPS[:3], "Fresh start."])
    paused = trace_run(agent, ask("Write four notes."), config=config, budget=BUDGET)
    stopped = trace_run(
        agent, Command(resume={"action": "stop"}), config=config, budget=paused.ledger
    )

    assert stopped.status == "ok" and stopped.of_type("model_call") == []
    assert stopped.final_text.startswith("The run stopped at its budget of 8,000 tokens")
    assert stopped.messages[-1].response_metadata[BUDGET_STOP_KEY] == "stopped"
    assert stopped.of_type("run_finished")[-1]["budget"] == "stopped"

    after = trace_run(agent, ask("Something else."), config=config)
    assert after.status == "ok" and after.final_text == "Fresh start."


def test_without_anyone_to_ask_the_run_stops_at_its_budget() -> None:
    agent, config = agent_of(FIVE_STEPS)
    stopped = trace_run(
        agent, ask("Write four notes."), config=config, budget=BudgetLedger(BUDGET, pause=False)
    )

    assert stopped.status == "ok" and stopped.interrupts == []
    assert len(stopped.of_type("model_call")) == 3
    assert [e["paused"] for e in stopped.of_type("budget_reached")] == [False]
    assert stopped.final_text.startswith("The run stopped at its budget")


def test_an_agent_without_a_checkpointer_stops_at_its_budget_rather_than_pause() -> None:
    model = ScriptedChatModel(script=FIVE_STEPS, profile={"max_input_tokens": 100_000})
    stopped = trace_run(create_research_agent(model), ask("Write four notes."), budget=BUDGET)

    assert stopped.status == "ok" and stopped.interrupts == []
    assert stopped.final_text.startswith("The run stopped at its budget")


def test_a_money_budget_warns_that_it_cannot_count_a_model_without_a_price() -> None:
    agent, config = agent_of(FIVE_STEPS)
    trace = trace_run(agent, ask("Write four notes."), config=config, budget="$0.01")

    assert trace.status == "ok" and trace.of_type("budget_reached") == []
    assert any("has no known price" in warning for warning in trace.warnings)


# -- parallel subagents ---------------------------------------------------------------------------
RESEARCHER = "You research one topic, at length."
in_flight = {"now": 0, "most": 0}
_guard = threading.Lock()


@tool
def lookup(topic: str) -> str:
    """Look a topic up."""
    with _guard:
        in_flight["now"] += 1
        in_flight["most"] = max(in_flight["most"], in_flight["now"])
    time.sleep(0.05)
    with _guard:
        in_flight["now"] -= 1
    return f"three papers on {topic}"


class SlowScripted(ScriptedChatModel):
    """A scripted model whose calls take a while (so several are in flight at once) and that
    writes at most `max_tokens` (so the budget's estimate of a call is close to what it uses)."""

    max_tokens: int = CALL_OUT

    def _generate(self, *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(0.05)
        return super()._generate(*args, **kwargs)

    def _stream(self, *args: Any, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        time.sleep(0.05)
        yield from super()._stream(*args, **kwargs)


def test_parallel_subagents_stay_within_one_call_each_of_the_budget() -> None:
    topics = ("ice", "sea", "air", "soil")
    forever = {"tool_calls": [{"name": "lookup", "args": {"topic": "more"}}], "usage": usage()}
    researcher = SubAgent(
        name="researcher",
        description="Researches one topic.",
        system_prompt=RESEARCHER,
        tools=[lookup],
        model=SlowScripted(
            rules=[{"when_system": RESEARCHER, "reply": forever, "repeat": True}],
            profile={"max_input_tokens": 100_000},
        ),
    )
    launch = [
        {"name": "task", "args": {"description": f"Topic: {t}.", "subagent_type": "researcher"}}
        for t in topics
    ]
    lead = ScriptedChatModel(
        script=[{"tool_calls": launch, "usage": usage()}, "Done."],
        profile={"max_input_tokens": 100_000},
    )
    agent = create_research_agent(lead, subagents=[researcher], max_parallel_subagents=4)
    ledger = BudgetLedger("40k tokens", pause=False)
    trace = trace_run(agent, ask("Research four topics."), budget=ledger)

    calls = trace.of_type("model_call")
    spent = sum(c["tokens_in"] + c["tokens_out"] for c in calls)
    assert ledger.stopped and spent == ledger.spent
    assert len([c for c in calls if c["task_id"]]) > len(topics)  # they ran more than once
    assert spent <= 40_000 + len(topics) * (CALL_IN + CALL_OUT)  # at most one call each
    # and, the estimates being close, not at all: calls in flight hold their room in the ledger
    assert spent <= 40_000
    assert in_flight["most"] > 1
    assert len(trace.of_type("subagent_finished")) == len(topics)


def test_a_subagent_that_reaches_the_budget_pauses_the_run_and_a_resume_continues_it() -> None:
    researcher = SubAgent(
        name="researcher",
        description="Researches one topic.",
        system_prompt=RESEARCHER,
        tools=[lookup],
        model=ScriptedChatModel(
            script=[
                {"tool_calls": [{"name": "lookup", "args": {"topic": "ice"}}], "usage": usage()},
                {"tool_calls": [{"name": "lookup", "args": {"topic": "sea"}}], "usage": usage()},
                {"content": "Ice and sea: done.", "usage": usage()},
            ],
            profile={"max_input_tokens": 100_000},
        ),
    )
    task = {"name": "task", "args": {"description": "Topic: ice.", "subagent_type": "researcher"}}
    lead = ScriptedChatModel(
        script=[{"tool_calls": [task], "usage": usage()}, {"content": "Done.", "usage": usage()}],
        profile={"max_input_tokens": 100_000},
    )
    agent = create_research_agent(lead, subagents=[researcher], checkpointer=InMemorySaver())
    config = {"configurable": {"thread_id": "subagent-budget"}}
    paused = trace_run(agent, ask("Research ice."), config=config, budget="7k tokens")

    assert paused.status == "interrupted"  # it waits for an answer: it does not stop the run
    (pause,) = [i.value for i in paused.interrupts]
    assert pause["type"] == "budget_pause" and pause["spent_subagents"] > 0
    resumed = trace_run(
        agent, Command(resume={"action": "raise", "budget": "50k tokens"}), config=config,
        budget=paused.ledger,
    )
    assert resumed.status == "ok", resumed.status
    assert resumed.final_text == "Done."
    assert [e["action"] for e in resumed.of_type("budget_decided")] == ["raise"]


# -- headless -------------------------------------------------------------------------------------
def test_a_headless_run_over_budget_exits_with_its_own_code() -> None:
    agent, config = agent_of(FIVE_STEPS)
    stopped = trace_run(
        agent, ask("Write four notes."), config=config, budget=BudgetLedger(BUDGET, pause=False)
    )
    record = run_record(
        events=stopped.events,
        calls=[],
        messages={},
        tools={},
        cell_id="c1",
        source_key="k",
        thread="budget",
        mode="off",
        outcome="live",
        model="scripted:scripted",
        profile=None,
    )

    summary = run_summary(record)
    assert summary["budget"] == "stopped" and summary["cost"] is None
    assert RunReport(over_budget=True).exit_code == 3
    assert RunReport(over_budget=True, error="boom").exit_code == 2
    assert RunReport(over_budget=True, mismatch=True).exit_code == 1
    assert RunReport().exit_code == 0


# -- the summarizer -------------------------------------------------------------------------------
@tool
def fetch(key: str) -> str:
    """Return a chunk of research notes named `key`."""
    return "\n".join(f"{key} line {i:03d} " + "y" * 55 for i in range(70))


def test_the_summarizers_calls_count_against_the_same_budget() -> None:
    from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER

    steps = [{"tool_calls": [{"name": "fetch", "args": {"key": f"n{i}"}}]} for i in range(6)]
    model = ScriptedChatModel(
        script=[*steps, "done"],
        rules=[{"when": SUMMARY_MARKER, "reply": "## Session intent\nRead.", "repeat": True}],
        profile={"max_input_tokens": 8_000},
    )
    agent = create_research_agent(model, tools=[fetch], age_token_limit=None)
    trace = trace_run(agent, ask("survey the notes"), budget="1M tokens")

    summaries = [c for c in trace.of_type("model_call") if c["purpose"] == "summarize"]
    assert summaries and trace.ledger is not None
    counted = trace.ledger.spent_by()
    assert counted["summarizer"] == sum(c["tokens_in"] + c["tokens_out"] for c in summaries)
    everything = sum(c["tokens_in"] + c["tokens_out"] for c in trace.of_type("model_call"))
    assert trace.ledger.spent == everything
