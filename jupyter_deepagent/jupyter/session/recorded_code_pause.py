"""The pause for code a research log served: `RecordedCodeApproval`, a human-in-the-loop
middleware that asks about code-running calls whose code comes from the log and was not approved
in this kernel, whatever the run's own approvals (`interrupt_on`, `python_approval`) say. The
rules are `recorded_code`'s."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallRequest
from langchain.agents.middleware.human_in_the_loop import InterruptOnConfig

from jupyter_deepagent.jupyter.session.recorded_code import FROM_LOG_DESCRIPTION, RecordedCode

__all__ = ["RecordedCodeApproval"]

_EDITED_KEY = "hitl_edited_tool_calls"  # LangChain's human-in-the-loop state channel


def _answered(call_id: object, state: Mapping[str, Any]) -> bool:
    """Tell whether a call of the last model reply has a result already (the run's own approval
    rejected it) or an edit the user typed. Only results after that reply count: ids recur
    across turns, and a log may choose them."""
    if call_id in (state.get(_EDITED_KEY) or {}):
        return True
    after: list[Any] = []
    for message in reversed(state.get("messages", [])):
        if message.type == "ai":
            break
        after.append(message)
    return any(m.type == "tool" and getattr(m, "tool_call_id", None) == call_id for m in after)


class RecordedCodeApproval(HumanInTheLoopMiddleware):
    """Pauses, like an approval, on code-running calls served from the research log that were
    not approved in this kernel, whatever the run's own approvals say.

    It runs after the run's own human-in-the-loop middleware, so code that one already asked
    about (and the user approved, which `RecordedCode` remembers) is not asked about twice.

    Args:
        recorded: The kernel's `RecordedCode`.
        names: The run's code-running tools.
    """

    def __init__(self, recorded: RecordedCode, names: Iterable[str]) -> None:
        self.recorded = recorded
        config: InterruptOnConfig = {
            "allowed_decisions": ["approve", "edit", "reject"],
            "when": self._asks,
            "description": FROM_LOG_DESCRIPTION,
        }
        super().__init__(dict.fromkeys(names, config), description_prefix=FROM_LOG_DESCRIPTION)

    def _asks(self, request: ToolCallRequest) -> bool:
        call = request.tool_call
        return self.recorded.needs_approval(call["name"], call.get("args") or {}) and not (
            _answered(call.get("id"), request.state or {})
        )

    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        """Pause when a call of the last model reply needs this kernel's approval (else do
        nothing, leaving the run's own approvals' edits as they are)."""
        from langchain_core.messages import AIMessage

        last = next(
            (m for m in reversed(state.get("messages", [])) if isinstance(m, AIMessage)), None
        )
        calls = [
            c for c in getattr(last, "tool_calls", None) or [] if c["name"] in self.interrupt_on
        ]
        if not any(
            self.recorded.needs_approval(c["name"], c.get("args") or {})
            and not _answered(c.get("id"), state)
            for c in calls
        ):
            return None
        update = super().after_model(state, runtime)
        if update and _EDITED_KEY in update:
            update[_EDITED_KEY] = {**(state.get(_EDITED_KEY) or {}), **update[_EDITED_KEY]}
        return update
