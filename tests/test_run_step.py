"""`run_step` (the step every event carries) remembers what it counted: its answers must be those
of counting from scratch, whatever list comes next (longer, a new turn, rewound, another one)."""

from __future__ import annotations

import random

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

from jupyter_deepagent.harness.run_events.event_stream import run_step


def counted(messages: list[BaseMessage]) -> int:
    steps = 0
    for message in reversed(messages):
        if message.type == "human":
            break
        steps += message.type == "ai"
    return steps


def test_the_step_is_the_replies_since_the_last_human_message_whatever_came_before() -> None:
    rng = random.Random(7)
    kinds = [
        lambda: HumanMessage("q"),
        lambda: AIMessage("a"),
        lambda: ToolMessage("r", tool_call_id="c"),
    ]
    thread: list[BaseMessage] = []
    for _ in range(400):
        move = rng.random()
        if move < 0.6:  # the run goes on: the same messages and a new one
            thread = [*thread, rng.choice(kinds)()]
        elif move < 0.75:  # rewound to an earlier point
            thread = thread[: rng.randrange(len(thread) + 1)]
        elif move < 0.85:  # one message replaced (same length, another object)
            if thread:
                thread = list(thread)
                thread[rng.randrange(len(thread))] = rng.choice(kinds)()
        else:  # another conversation altogether
            thread = [rng.choice(kinds)() for _ in range(rng.randrange(8))]
        assert run_step(thread) == counted(thread)
        assert run_step(thread) == counted(thread)  # asked again, same list
