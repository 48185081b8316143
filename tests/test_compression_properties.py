"""Properties of compression over random runs: every request fits the window, and every byte of
every tool result stays reachable (in what the model is sent, in a file, or in the transcript)."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langchain.tools import tool

from jupyter_deepagent import ScriptedChatModel, create_research_agent, trace_run
from jupyter_deepagent.harness.compression.summarize import SUMMARY_MARKER
from jupyter_deepagent.harness.compression.tokens import messages_tokens, tools_tokens

WINDOW = 8_000

# a run: turns of 1 to 3 parallel tool calls, each returning a result of a random size
sizes = st.one_of(st.integers(0, 600), st.integers(600, 9_000), st.integers(9_000, 60_000))
turns = st.lists(st.lists(sizes, min_size=1, max_size=3), min_size=1, max_size=9)


def result_text(number: int, size: int) -> str:
    """A result of about `size` characters whose every line is unique to it."""
    rng = random.Random(number)
    out, total, line = [], 0, 0
    while total < size:
        text = f"R{number}-{line}:" + "".join(rng.choices("abcdefghij ,.;", k=rng.randint(5, 90)))
        out.append(text)
        total += len(text) + 1
        line += 1
    return "\n".join(out)[:size]


# repeatable: the same 30 runs every time, and no example database written into the repository
@settings(
    max_examples=30,
    deadline=None,
    database=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(
    run=turns,
    age_limit=st.sampled_from([None, 300, 2_000]),
    keep_turns=st.integers(1, 3),
)
def test_requests_fit_the_window_and_every_result_stays_reachable(
    run: list[list[int]], age_limit: int | None, keep_turns: int
) -> None:
    results: dict[int, str] = {}

    @tool
    def fetch(number: int) -> str:
        """Fetch result `number`."""
        return results[number]

    script: list = []
    for turn in run:
        calls = []
        for size in turn:
            number = len(results)
            results[number] = result_text(number, size)
            calls.append({"name": "fetch", "args": {"number": number}})
        script.append({"tool_calls": calls})
    script.append("done")
    model = ScriptedChatModel(
        script=script,
        rules=[{"when": SUMMARY_MARKER, "reply": "## Session intent\nread", "repeat": True}],
        profile={"max_input_tokens": WINDOW},
    )
    agent = create_research_agent(
        model, tools=[fetch], age_token_limit=age_limit, keep_recent_turns=keep_turns
    )
    trace = trace_run(agent, {"messages": [{"role": "user", "content": "read them all"}]},
                      config={"recursion_limit": 200})
    assert trace.final_text == "done"

    for request in model.requests:
        assert messages_tokens(request.messages) + tools_tokens(request.tools) <= WINDOW

    last_request = "\n".join(str(m.content) for m in model.requests[-1].messages)
    stored = "\n".join(data["content"] for data in trace.state.get("files", {}).values())
    for number, text in results.items():
        assert text in last_request or text in stored, f"result {number} is lost"
