"""What a thread's checkpoint says, and how to leave it valid: tool calls that never got a result
(the run was stopped, or an approval was never given), and tool calls waiting for approval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NotRequired, Protocol, TypedDict, cast

if TYPE_CHECKING:
    from langchain_core.messages import BaseMessage, ToolMessage
    from langchain_core.runnables import RunnableConfig
    from langgraph.types import Command, Interrupt, StateSnapshot

__all__ = [
    "CodeCall",
    "PendingCall",
    "ThreadAgent",
    "keep_stopped_request",
    "pending_requests",
    "resume_command",
    "settle_thread",
    "unanswered_calls",
]


class ThreadAgent(Protocol):
    """A compiled agent (LangGraph's `Pregel`) as far as its thread's checkpoints go."""

    def get_state(self, config: RunnableConfig) -> StateSnapshot:
        """The thread's latest state: its values, and the interrupts waiting."""

    def update_state(
        self, config: RunnableConfig, values: object, as_node: str | None = None
    ) -> RunnableConfig:
        """Write a new checkpoint, as if `as_node` had returned `values`."""


class CodeCall(TypedDict):
    """A tool call as approvals and refusals show it: the tool's name and its arguments."""

    name: str
    args: dict[str, object]


class PendingCall(CodeCall):
    """A tool call waiting for approval (an interrupt's action request), with the decisions its
    tool allows."""

    description: NotRequired[str]
    allowed: list[str]


_INTERRUPTED_CALL = (
    "This tool call was interrupted by the user (the notebook's stop button) before it finished; "
    "it did not complete."
)
_ABANDONED_CALL = (
    "The user did not answer the approval request for this call and moved on; it did not run."
)


def pending_requests(interrupts: Sequence[Interrupt] | None) -> list[PendingCall]:
    """The action requests of human-in-the-loop interrupts, with the decisions each allows."""
    requests: list[PendingCall] = []
    for interrupt in interrupts or ():
        value = getattr(interrupt, "value", None)
        if not isinstance(value, dict):
            continue
        allowed = {
            c["action_name"]: c["allowed_decisions"] for c in value.get("review_configs", [])
        }
        for action in value.get("action_requests", []):
            default = ["approve", "edit", "reject"]
            allows = list(allowed.get(action["name"], default))
            requests.append(cast("PendingCall", {**action, "allowed": allows}))
    return requests


def resume_command(
    interrupts: Sequence[Interrupt],
    decision: str,
    *,
    message: str = "",
    edits: Mapping[str, object],
) -> Command:
    """The LangGraph `Command` giving `decision` to every pending tool call of `interrupts`.

    Raises:
        ValueError: A pending call does not allow this decision.
    """
    from langgraph.types import Command

    answers = {}
    for interrupt in interrupts:
        decisions = []
        for request in pending_requests([interrupt]):
            if decision not in request["allowed"]:
                allowed = ", ".join(request["allowed"])
                msg = f"{request['name']} allows only: {allowed} (not {decision})"
                raise ValueError(msg)
            decisions.append(_decision(decision, request, message, edits))
        answers[interrupt.id] = {"decisions": decisions}
    return Command(resume=next(iter(answers.values())) if len(answers) == 1 else answers)


def _decision(
    decision: str, request: PendingCall, message: str, edits: Mapping[str, object]
) -> dict[str, object]:
    if decision == "approve":
        return {"type": "approve"}
    if decision == "reject":
        return {"type": "reject", "message": message} if message else {"type": "reject"}
    args = {**request.get("args", {}), **edits}
    return {"type": "edit", "edited_action": {"name": request["name"], "args": args}}


def unanswered_calls(messages: Sequence[BaseMessage]) -> list[tuple[int, list[dict[str, Any]]]]:
    """The tool calls no result answers, found by position: `(index of the AI message, calls)`.

    A call's results are the tool messages right after its AI message, up to the next message of
    another kind, so an id used again in a later turn (providers reuse them; a scripted model
    starts again at `call_1`) never counts as answered by the earlier turn's result. Within
    one AI message a result answers one call with its id.
    """
    from langchain_core.messages import AIMessage, ToolMessage

    found: list[tuple[int, list[dict[str, Any]]]] = []
    for index, message in enumerate(messages):
        if not isinstance(message, AIMessage) or not message.tool_calls:
            continue
        waiting = list(message.tool_calls)
        for result in messages[index + 1 :]:
            if not isinstance(result, ToolMessage):
                break
            match = next((c for c in waiting if c.get("id") == result.tool_call_id), None)
            if match is not None:
                waiting.remove(match)
        if waiting:
            found.append((index, [dict(call) for call in waiting]))
    return found


def settle_thread(
    agent: ThreadAgent, config: RunnableConfig, *, interrupted: bool = False
) -> list[str]:
    """Answer every tool call the thread left without a result; say what was done.

    After a stop mid-run, the checkpoint ends with an AI message whose tool calls never ran;
    providers refuse such a conversation. Each gets an error tool message saying why, placed
    right after its AI message (pairs are found by position, not by id: see `unanswered_calls`).
    """
    from langchain_core.messages import ToolMessage

    try:
        state = agent.get_state(config)
    except Exception:
        return []
    messages = list(state.values.get("messages", []))
    gaps = unanswered_calls(messages)
    if not gaps:
        return []
    waiting = bool(state.interrupts) and not interrupted
    text = _ABANDONED_CALL if waiting else _INTERRUPTED_CALL
    answers = {
        index: [
            ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error")
            for call in calls
        ]
        for index, calls in gaps
    }
    last_index, _ = gaps[-1]
    results_follow = all(m.type == "tool" for m in messages[last_index + 1 :])
    if len(gaps) == 1 and results_follow:  # the usual stop: the last turn's calls, at the end
        agent.update_state(config, {"messages": answers[last_index]}, as_node="tools")
    else:  # an earlier turn left calls open too: rewrite the list with results in place
        agent.update_state(config, {"messages": _with_answers(messages, answers)}, as_node="tools")
    missing = [call for _, calls in gaps for call in calls]
    names = ", ".join(call["name"] for call in missing)
    if waiting:
        return [f"the call waiting for approval ({names}) was dropped: a new request was sent"]
    if len(missing) == 1:
        return [f"the interrupted call ({names}) was marked as not completed"]
    return [f"the {len(missing)} interrupted calls ({names}) were marked as not completed"]


def keep_stopped_request(agent: ThreadAgent, config: RunnableConfig, payload: object) -> bool:
    """Save the request of a run stopped before LangGraph saved it, so the turn is not lost.

    A stop that lands as the run starts (the first run of a kernel spends seconds importing)
    leaves the thread without the request; the next run would not know it was asked. Messages
    of `payload` (`{"messages": [...]}` with ids) missing from the thread are appended.

    Returns:
        Whether anything was saved.
    """
    sent = payload.get("messages") if isinstance(payload, Mapping) else None
    if not sent:
        return False
    try:
        saved = {message.id for message in agent.get_state(config).values.get("messages", [])}
    except Exception:
        return False
    missing = [m for m in sent if getattr(m, "id", None) and m.id not in saved]
    if missing:
        agent.update_state(config, {"messages": missing}, as_node="tools")
    return bool(missing)


def _with_answers(
    messages: list[BaseMessage], answers: dict[int, list[ToolMessage]]
) -> list[BaseMessage]:
    """The whole message list, replacing the old one, with each AI message's missing results
    inserted after the results it has."""
    from langchain_core.messages import RemoveMessage
    from langgraph.graph.message import REMOVE_ALL_MESSAGES

    rebuilt: list[BaseMessage] = [RemoveMessage(id=REMOVE_ALL_MESSAGES)]
    pending: list[BaseMessage] = []
    for index, message in enumerate(messages):
        if pending and message.type != "tool":
            rebuilt += pending
            pending = []
        rebuilt.append(message)
        pending += answers.get(index, [])
    return rebuilt + pending
