"""What a thread's checkpoint says, and how to leave it valid: tool calls that never got a result
(the run was stopped, or an approval was never given), and tool calls waiting for approval.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["pending_requests", "resume_command", "settle_thread"]

_INTERRUPTED_CALL = (
    "This tool call was interrupted by the user (the notebook's stop button) before it finished; "
    "it did not complete."
)
_ABANDONED_CALL = "The user did not answer the approval request for this call and moved on; it did not run."


def pending_requests(interrupts: Any) -> list[dict[str, Any]]:
    """The action requests of human-in-the-loop interrupts, with the decisions each allows."""
    requests = []
    for interrupt in interrupts or ():
        value = getattr(interrupt, "value", None)
        if not isinstance(value, dict):
            continue
        allowed = {c["action_name"]: c["allowed_decisions"] for c in value.get("review_configs", [])}
        for action in value.get("action_requests", []):
            default = ["approve", "edit", "reject"]
            requests.append({**action, "allowed": list(allowed.get(action["name"], default))})
    return requests


def resume_command(
    interrupts: Any, decision: str, *, message: str = "", edits: Mapping[str, Any]
) -> Any:
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
    decision: str, request: dict[str, Any], message: str, edits: Mapping[str, Any]
) -> dict[str, Any]:
    if decision == "approve":
        return {"type": "approve"}
    if decision == "reject":
        return {"type": "reject", "message": message} if message else {"type": "reject"}
    args = {**request.get("args", {}), **edits}
    return {"type": "edit", "edited_action": {"name": request["name"], "args": args}}


def settle_thread(agent: Any, config: dict[str, Any], *, interrupted: bool = False) -> list[str]:
    """Answer tool calls the thread's last AI message left without results; say what was done.

    After a stop mid-run, the checkpoint ends with an AI message whose tool calls never ran;
    providers refuse such a conversation. Each gets an error tool message saying why.
    """
    from langchain_core.messages import AIMessage, ToolMessage

    try:
        state = agent.get_state(config)
    except Exception:  # noqa: BLE001 - nothing to settle on a thread that cannot be read
        return []
    messages = list(state.values.get("messages", []))
    answered = {m.tool_call_id for m in messages if isinstance(m, ToolMessage)}
    last_ai = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    if last_ai is None:
        return []
    missing = [call for call in last_ai.tool_calls if call.get("id") not in answered]
    if not missing:
        return []
    waiting = bool(state.interrupts) and not interrupted
    text = _ABANDONED_CALL if waiting else _INTERRUPTED_CALL
    results = [
        ToolMessage(content=text, tool_call_id=call["id"], name=call["name"], status="error")
        for call in missing
    ]
    agent.update_state(config, {"messages": results}, as_node="tools")
    names = ", ".join(call["name"] for call in missing)
    if waiting:
        return [f"the call waiting for approval ({names}) was dropped: a new request was sent"]
    return [f"the interrupted call ({names}) was marked as not completed"]
